"""Python build files: nvcc flag lists get a hipcc variant behind IS_HIP_EXTENSION (or torch.version.hip), the
CUDA list kept as it was; so do the lists an op builder's flag methods return (flagproviders.py)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from migrate.bounded import Refused, read_source
from migrate.model import Finding, Severity, SourceFile
from migrate.port.flagproviders import provider_returns
from migrate.port.hipccflags import hipcc_word, is_dropped_prefix
from migrate.port.plan import RULE_LEFT, FileChange

HIP_FLAG = "IS_HIP_EXTENSION"
TORCH_HIP = "torch.version.hip"
_IMPORT = f"from torch.utils.cpp_extension import {HIP_FLAG}"
_ROCM_AWARE = (HIP_FLAG, TORCH_HIP, "ROCM_HOME")
_NOTE = "  # ROCm torch: hipcc gets --offload-arch from PYTORCH_ROCM_ARCH"
# keywords that carry nvcc flags to torch.utils.cpp_extension.load/load_inline, or to a helper that forwards them
_FORWARDED = frozenset({"extra_cuda_cflags"})
_EXITS = frozenset({"exit", "quit", "sys.exit", "os._exit"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class _Guard:
    """The test a ROCm variant sits behind, and the statements that must come before its first use."""

    test: str
    anchors: tuple[ast.stmt, ...]  # the imports of torch the test relies on (module or function scope)


def build_flags(source: SourceFile, earlier: FileChange | None,
                providers: frozenset[str] = frozenset()) -> tuple[FileChange | None, list[Finding]]:
    """SOURCE (or the EARLIER change to it) with its nvcc flag lists given a hipcc variant, and the lists left;
    PROVIDERS names the functions whose results the repository's extension builds pass to nvcc."""
    try:
        old = read_source(source)
        text = (earlier.new if earlier else old).decode("utf-8")
    except (OSError, Refused, UnicodeDecodeError):
        return earlier, []
    new, left = port_flag_lists(text, source.relpath, providers)
    if new is None:
        return earlier, left
    reason = f"nvcc flags behind {HIP_FLAG if HIP_FLAG in new else TORCH_HIP}" + (f"; {earlier.reason}" if earlier else "")
    return FileChange(source.relpath, old, new.encode("utf-8"), reason=reason), left


def rocm_build_flags(text: str) -> str | None:
    """TEXT with a hipcc variant of each nvcc flag list; None when nothing changes or it is already ROCm-aware."""
    return port_flag_lists(text, "")[0]


def port_flag_lists(text: str, relpath: str, providers: frozenset[str] = frozenset()) -> tuple[str | None, list[Finding]]:
    """A torch extension build script (or a file handing `extra_cuda_cflags` to a build helper, or defining one of the
    PROVIDERS, the flag methods another file's build passes to nvcc) whose nvcc-only flag lists get a ROCm variant
    (hipcc takes --offload-arch from PYTORCH_ROCM_ARCH, so arch flags go; nvcc options hipcc rejects are mapped or
    dropped); the lists it could not guard as findings."""
    defines = any(f"def {name}(" in text for name in providers)
    if any(word in text for word in _ROCM_AWARE) or ("cpp_extension" not in text and not _forwards(text) and not defines):
        return None, []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, []
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    guard = _guard(tree, text)
    edits: list[_Edit] = []
    findings: list[Finding] = []
    used: set[ast.stmt] = set()
    lazy: dict[int, _Edit] = {}
    for node, hip, function in _flag_lists(text, tree, parents, providers):
        anchor = _usable_anchor(guard, node, parents, lines) if guard else None
        if anchor is None and function is not None and _scope(node, parents) is function:
            at = _lazy_import(lines, function, newline)  # the op builder's file need not import torch: its method does
            if at is not None:
                lazy[id(function)] = at
                edits.append(_list_edit(text, lines, parents, node, hip, TORCH_HIP, newline))
                continue
        if guard is None or anchor is None:
            findings.append(_left(relpath, node, text, guard))
            continue
        used.add(anchor)
        edits.append(_list_edit(text, lines, parents, node, hip, guard.test, newline))
    if not edits:
        return None, findings
    edits += lazy.values()
    if guard is not None and guard.test == HIP_FLAG:
        for anchor in sorted(used, key=lambda s: s.lineno):
            edits += _import_edits(lines, parents, anchor, newline)
    out = text
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        out = out[: edit.start] + edit.text + out[edit.end :]
    try:
        ast.parse(out)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, findings
    return out, findings


def _forwards(text: str) -> bool:
    return any(f"{keyword}=" in text or f"{keyword} =" in text for keyword in _FORWARDED)


# -- which lists -------------------------------------------------------------------------------------------------


def _flag_lists(text: str, tree: ast.Module, parents: dict[ast.AST, ast.AST], providers: frozenset[str],
                ) -> Iterator[tuple[ast.List | ast.Tuple, str, ast.FunctionDef | None]]:
    """Each nvcc flag list with its hipcc form (and the flag method that returns it): any list in a file that uses
    torch.utils.cpp_extension, else the lists passed as `extra_cuda_cflags` or returned by one of the PROVIDERS
    (directly, added together, or through a name assigned in the same scope)."""
    candidates: list[tuple[ast.AST, ast.FunctionDef | None]]
    if "cpp_extension" in text:
        candidates = [(node, None) for node in ast.walk(tree)]
    else:
        candidates = [(node, None) for call in ast.walk(tree) if isinstance(call, ast.Call) for keyword in call.keywords
                      if keyword.arg in _FORWARDED for node in _reached(keyword.value, parents)]
        candidates += [(node, function) for value, function in provider_returns(tree, providers)
                       for node in _reached(value, parents)]
    seen: set[int] = set()
    for node, function in candidates:
        if isinstance(node, (ast.List, ast.Tuple)) and id(node) not in seen:
            seen.add(id(node))
            hip = _hip_flags(text, node)
            if hip is not None:
                yield node, hip, function


def _reached(expr: ast.AST, parents: dict[ast.AST, ast.AST]) -> Iterator[ast.AST]:
    """The list literals EXPR is made of: itself, the operands of `+`, and what a name is assigned in its scope."""
    if isinstance(expr, (ast.List, ast.Tuple)):
        yield expr
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        yield from _reached(expr.left, parents)
        yield from _reached(expr.right, parents)
    elif isinstance(expr, ast.Name):
        scope: ast.AST | None = _scope(expr, parents)
        while scope is not None:  # the name's own scope, else the module's (a global the function reads)
            values = [node.value for node in ast.walk(scope) if isinstance(node, ast.Assign) and len(node.targets) == 1
                      and isinstance(node.targets[0], ast.Name) and node.targets[0].id == expr.id
                      and _scope(node, parents) is scope]
            if values:
                for value in values:
                    yield from _reached(value, parents)
                return
            scope = None if isinstance(scope, ast.Module) else _module(scope, parents)


def _hip_flags(text: str, node: ast.List | ast.Tuple) -> str | None:
    """The hipcc version of a flag list, or None when it has no nvcc-only flag (or is a command, not flags)."""
    first = node.elts[0] if node.elts else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.lstrip().startswith("-"):
        return None  # ["nvcc", "--version"], a list of sources: not a flag list
    kept: list[str] = []
    changed = drop_next = False
    for element in node.elts:
        source = ast.get_source_segment(text, element) or ""
        if isinstance(element, ast.JoinedStr):
            head = element.values[0].value if element.values and isinstance(element.values[0], ast.Constant) else ""
            if drop_next or is_dropped_prefix(str(head)):
                drop_next, changed = False, True
            else:
                kept.append(source)
            continue
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            if drop_next:  # the value of an option hipcc does without (["--threads", n])
                drop_next, changed = False, True
            else:
                kept.append(source)
            continue
        words: list[str] = []
        for word in element.value.split():  # torch's ninja file splits an element at its spaces, as a shell does
            if drop_next:
                drop_next = False
                continue
            mapped = hipcc_word(word)
            if not (word.startswith("-") or mapped.arch):
                words.append(word)  # a value, a file name
                continue
            drop_next = mapped.drop_next
            words += [] if mapped.arch else list(mapped.words)
        new = " ".join(words)
        changed = changed or new != " ".join(element.value.split())
        if words:
            quote = "'" if source.startswith("'") and "'" not in new else '"'  # the list's own quotes
            kept.append(source if new == " ".join(element.value.split()) else f"{quote}{new}{quote}")
    if not changed:
        return None
    return f"[{', '.join(kept)}]" if isinstance(node, ast.List) else f"({', '.join(kept)}{',' if len(kept) == 1 else ''})"


# -- the guard and where it is defined ----------------------------------------------------------------------------


def _guard(tree: ast.Module, text: str) -> _Guard | None:
    """In a build file (one that uses torch.utils.cpp_extension): IS_HIP_EXTENSION, imported next to the file's own
    import of cpp_extension or of torch. Elsewhere: torch.version.hip where the file imports torch. None when torch
    is never imported."""
    imports = [s for s in ast.walk(tree) if isinstance(s, (ast.Import, ast.ImportFrom))]
    torch = [s for s in imports if isinstance(s, ast.Import) and any(
        (a.asname is None and a.name.split(".")[0] == "torch") or (a.name, a.asname) == ("torch", "torch") for a in s.names)]
    if "cpp_extension" in text:
        extension = [s for s in imports if _imports_extension(s)]  # preferred: IS_HIP_EXTENSION's own module
        anchors = (*extension, *(s for s in torch if s not in extension))
        return _Guard(HIP_FLAG, anchors) if anchors else None
    return _Guard(TORCH_HIP, tuple(torch)) if torch else None


def _imports_extension(statement: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(statement, ast.ImportFrom):
        return statement.level == 0 and (statement.module == "torch.utils.cpp_extension" or (
            statement.module == "torch.utils" and any(a.name == "cpp_extension" for a in statement.names)))
    return any(a.name == "torch.utils.cpp_extension" for a in statement.names)


def _usable_anchor(guard: _Guard, node: ast.AST, parents: dict[ast.AST, ast.AST], lines: list[str]) -> ast.stmt | None:
    """The import that binds the guard where NODE runs: in NODE's own function before it, or at module level before
    it (a function body runs later, after the module's imports)."""
    scope = _scope(node, parents)
    statement = _statement(node, parents)
    for anchor in guard.anchors:
        fallback = guard.test == HIP_FLAG  # the import we add gets a fallback in a handler that carries on
        if (fallback and not _starts_line(lines, anchor)) or not _binds_for(anchor, node, parents, fallback):
            continue  # `try: from torch.utils.cpp_extension import load` on one line: no place for a second import
        anchor_scope = _scope(anchor, parents)
        if anchor_scope is scope and (anchor.end_lineno or anchor.lineno) < statement.lineno:
            return anchor
        if isinstance(anchor_scope, ast.Module) and not isinstance(scope, ast.Module):
            return anchor
    return None


def _scope(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    current = parents.get(node)
    while current is not None and not isinstance(current, (*_SCOPES, ast.Module)):
        current = parents.get(current)
    assert current is not None
    return current


def _module(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    while node in parents:
        node = parents[node]
    return node


def _statement(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.stmt:
    current = node
    while not isinstance(current, ast.stmt):
        current = parents[current]
    return current


def _starts_line(lines: list[str], statement: ast.stmt) -> bool:
    """Whether nothing but indentation comes before STATEMENT on its line (not `try: import x`, not `a = 1; b = [..]`)."""
    line = lines[statement.lineno - 1].encode("utf-8") if statement.lineno <= len(lines) else b""
    return not line[: statement.col_offset].strip()


def _binds_for(anchor: ast.stmt, node: ast.AST, parents: dict[ast.AST, ast.AST], fallback: bool) -> bool:
    """Whether a name ANCHOR imports is bound where NODE runs: every block around ANCHOR (in its scope) also holds
    NODE, or is a `try` whose handlers leave (or get a FALLBACK value for the name)."""
    chain = set()
    current: ast.AST | None = node
    while current is not None:
        chain.add(id(current))
        current = parents.get(current)
    block = parents.get(anchor)
    while block is not None and not isinstance(block, (*_SCOPES, ast.Module)):
        if id(block) not in chain and not (isinstance(block, ast.Try) and (fallback or not _fallthrough(block))):
            return False
        block = parents.get(block)
    return True


def _left(relpath: str, node: ast.AST, text: str, guard: _Guard | None) -> Finding:
    line = getattr(node, "lineno", 1)
    why = ("torch is not imported in this file, so no ROCm test can be written here; branch on torch.version.hip where "
           "the list is built" if guard is None else
           f"no import of torch.utils.cpp_extension runs before this list in its scope (it comes later, sits in another "
           f"function, or shares its line with other code); test {guard.test} here by hand")
    evidence = text.splitlines()[line - 1].strip() if text.splitlines() else ""
    return Finding(relpath, line, 1, RULE_LEFT, "cuda-build-config", Severity.MEDIUM, line,
                   f"no ROCm flag list written: {why}", evidence)


# -- the edits ----------------------------------------------------------------------------------------------------


def _list_edit(text: str, lines: list[str], parents: dict[ast.AST, ast.AST], node: ast.List | ast.Tuple, hip: str,
               test: str, newline: str) -> _Edit:
    statement = parents.get(node)
    if (isinstance(statement, ast.Assign) and statement.value is node and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and _starts_line(lines, statement)):
        indent = " " * statement.col_offset
        at = _offset(lines, (statement.end_lineno or statement.lineno) + 1, 0)
        block = f"{indent}if {test}:{_NOTE}{newline}{indent}    {statement.targets[0].id} = {hip}{newline}"
        return _Edit(at, at, block)
    start = _offset(lines, node.lineno, node.col_offset)
    end = _offset(lines, node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
    return _Edit(start, end, f"({text[start:end]} if not {test} else {hip})")


def _lazy_import(lines: list[str], function: ast.FunctionDef, newline: str) -> _Edit | None:
    """`import torch` as FUNCTION's first statement (after its docstring), as op builders import torch in the methods
    that need it; None where that statement shares its line with other code."""
    body = function.body
    docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)
    first = body[1] if docstring and len(body) > 1 else body[0]
    if (first is body[0] and docstring) or not _starts_line(lines, first):
        return None
    at = _offset(lines, first.lineno, 0)
    return _Edit(at, at, f"{' ' * first.col_offset}import torch{newline}")


def _import_edits(lines: list[str], parents: dict[ast.AST, ast.AST], anchor: ast.stmt, newline: str) -> Iterator[_Edit]:
    """`from torch.utils.cpp_extension import IS_HIP_EXTENSION` right after ANCHOR, in its block; where ANCHOR sits in
    a `try` whose handler carries on without torch, that handler sets IS_HIP_EXTENSION = False so the name exists."""
    at = _offset(lines, (anchor.end_lineno or anchor.lineno) + 1, 0)
    yield _Edit(at, at, f"{' ' * anchor.col_offset}{_IMPORT}{newline}")
    for handler in _fallthrough_handlers(anchor, parents):
        last = handler.body[-1]
        at = _offset(lines, (last.end_lineno or last.lineno) + 1, 0)
        yield _Edit(at, at, f"{' ' * handler.body[0].col_offset}{HIP_FLAG} = False{newline}")


def _fallthrough_handlers(anchor: ast.stmt, parents: dict[ast.AST, ast.AST]) -> Iterator[ast.ExceptHandler]:
    child: ast.AST = anchor
    parent = parents.get(anchor)
    while parent is not None and not isinstance(parent, (*_SCOPES, ast.Module)):
        if isinstance(parent, ast.Try) and child in parent.body:
            yield from (h for h in parent.handlers if not _ends(h.body[-1]))
        child, parent = parent, parents.get(parent)


def _fallthrough(block: ast.Try) -> bool:
    return any(not _ends(h.body[-1]) for h in block.handlers)


def _ends(statement: ast.stmt) -> bool:
    """Whether STATEMENT leaves the block for good: raise, return, or sys.exit()/exit()."""
    if isinstance(statement, (ast.Raise, ast.Return)):
        return True
    call = statement.value if isinstance(statement, ast.Expr) else None
    return isinstance(call, ast.Call) and ast.unparse(call.func) in _EXITS


def _offset(lines: list[str], line: int, column: int) -> int:
    """The text offset of a 1-based LINE and a UTF-8 byte COLUMN (ast's positions)."""
    before = sum(len(text) for text in lines[: line - 1])
    if line - 1 >= len(lines):
        return before
    return before + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8", "ignore"))
