"""The PyTorch-extension port: CUDA sources keep their names (a ROCm torch hipifies them at build time); nvcc-only
flags go behind IS_HIP_EXTENSION (buildflags.py), and PTX idioms and warp intrinsics get an `#ifdef USE_ROCM` branch."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tree_sitter

from migrate.model import FileKind, Finding, Severity, SourceFile
from migrate.port.plan import FileChange

if TYPE_CHECKING:
    from migrate.parse.cuda import CudaDocument
    from migrate.port.translate import Engine

RULE_LEFT = "rocm-guard-not-written"
_STATEMENTS = frozenset({"expression_statement", "declaration", "return_statement", "for_statement",
                         "while_statement", "do_statement", "if_statement"})
_STOP = frozenset({"compound_statement", "function_definition", "translation_unit", "preproc_def",
                   "preproc_function_def"})


@dataclass(frozen=True)
class _Branch:
    """Whole source lines [first, last] (0-based) and the edits that make their ROCm copy."""

    first: int
    last: int
    edits: tuple[tuple[int, int, str], ...]
    note: str


def extension_changes(
    sources: Sequence[SourceFile], *, side: tuple[list[FileChange], list[Finding]] | None,
) -> tuple[list[FileChange], list[Finding]]:
    """ROCm guards in the CUDA sources, ROCm-aware extension flags in the Python build files, and the side files."""
    from migrate.port.buildflags import build_flags
    from migrate.port.translate import is_translatable

    changes: dict[str, FileChange] = {c.relpath: c for c in (side[0] if side else [])}
    findings = list(side[1]) if side else []
    for source in sources:
        if source.vendored:
            continue
        if is_translatable(source.relpath):
            change, left = _guarded_source(source)
            findings += left
        elif side is not None and source.kind in (FileKind.SETUP_PY, FileKind.PYTHON):
            change, left = build_flags(source, changes.get(source.relpath))
            findings += left
        else:
            continue
        if change is not None:
            changes[change.relpath] = change
    return list(changes.values()), findings


# -- CUDA sources: #ifdef USE_ROCM branches --------------------------------------------------------------------------


@cache
def _data() -> dict[str, Any]:
    import yaml

    from migrate.ruleset import data_path

    return dict(yaml.safe_load(data_path("rocm_guards.yaml").read_text(encoding="utf-8")))


def _guarded_source(source: SourceFile) -> tuple[FileChange | None, list[Finding]]:

    try:
        data = source.path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None, []
    if b"\0" in data[:8192] or not any(name in text for name in [*_data()["warp"], "asm"]):
        return None, []
    new, findings = rocm_guards(text, source.relpath)
    if new is None:
        return None, findings
    return FileChange(source.relpath, data, new.encode("utf-8"), reason="ROCm branches (#ifdef USE_ROCM)"), findings


def rocm_guards(text: str, relpath: str) -> tuple[str | None, list[Finding]]:
    """TEXT with an `#ifdef USE_ROCM` branch beside each statement using PTX or a warp *_sync intrinsic."""
    from migrate.parse.cuda import CudaDocument, parse_cuda

    source = SourceFile(path=Path(relpath), relpath=relpath, kind=FileKind.CUDA, size=len(text))
    doc = parse_cuda(source, text)
    assert isinstance(doc, CudaDocument)
    branches: list[_Branch] = []
    findings: list[Finding] = []
    for node in _targets(doc.root):
        line = node.start_point.row + 1
        if doc.is_guarded(line) or (node.type == "call_expression" and _name(node) in doc.declared_names):
            continue  # already dual-path, or the file's own overload of the intrinsic
        branch, why = _branch(doc, node)
        if branch is None:
            findings.append(_left(doc, line, why))
        else:
            branches.append(branch)
    if not branches:
        return None, findings
    return _render(doc, _merged(branches)), findings


def _targets(root: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """The outermost PTX statements and warp intrinsic calls (a call nested in another is rewritten with it)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "gnu_asm_expression" or _is_warp_call(node):
            yield node
        else:
            stack.extend(reversed(node.children))


def _is_warp_call(node: tree_sitter.Node) -> bool:
    function = node.child_by_field_name("function") if node.type == "call_expression" else None
    return function is not None and function.type == "identifier" and _name(node) in _data()["warp"]


def _name(call: tree_sitter.Node) -> str:
    function = call.child_by_field_name("function")
    return (function.text or b"").decode() if function is not None else ""


def _branch(doc: CudaDocument, node: tree_sitter.Node) -> tuple[_Branch | None, str]:
    statement = _whole_line_statement(doc, node)
    if statement is None:
        return None, "shares its line with other code, or sits in a macro; add the ROCm branch by hand"
    if node.type == "gnu_asm_expression":
        return _ptx_branch(doc, node, statement)
    edit = _warp_edit(doc, node)
    note = "  // non-sync form: ROCm < 6.2 has no *_sync builtins" + (
        "; width 32 as on CUDA" if "lanes" in _data()["warp"][_name(node)] else "")
    return _Branch(statement.start_point.row, statement.end_point.row, (edit,), note), ""


def _whole_line_statement(doc: CudaDocument, node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The innermost statement around NODE that starts and ends its lines (only blanks around it)."""
    current: tree_sitter.Node | None = node
    while current is not None and current.type not in _STOP:
        if current.type in _STATEMENTS and _alone(doc, current):
            return current
        current = current.parent
    return None


def _alone(doc: CudaDocument, node: tree_sitter.Node) -> bool:
    data = doc.data
    start = data.rfind(b"\n", 0, node.start_byte) + 1
    end = data.find(b"\n", node.end_byte)
    after = data[node.end_byte : len(data) if end < 0 else end]
    return not data[start : node.start_byte].strip() and (not after.strip() or after.strip().startswith(b"//"))


def _warp_edit(doc: CudaDocument, node: tree_sitter.Node) -> tuple[int, int, str]:
    arguments = node.child_by_field_name("arguments")
    assert arguments is not None
    spec = _data()["warp"][_name(node)]
    if "call" in spec:
        return node.start_byte, node.end_byte, str(spec["call"])
    args = [_rewritten(doc, a) for a in arguments.named_children if a.type != "comment"][1:]
    if "lanes" in spec and len(args) == int(spec["lanes"]) - 1:
        args.append("32")
    return node.start_byte, node.end_byte, f"{spec['hip']}({', '.join(args)})"


def _rewritten(doc: CudaDocument, node: tree_sitter.Node) -> str:
    """NODE's text with the warp calls inside it in their HIP form."""
    text = doc.node_text(node)
    for inner in sorted(_targets(node), key=lambda n: n.start_byte, reverse=True):
        if _is_warp_call(inner):
            _, _, new = _warp_edit(doc, inner)
            start, end = inner.start_byte - node.start_byte, inner.end_byte - node.start_byte
            text = text[:start] + new + text[end:]
    return text


def _ptx_branch(doc: CudaDocument, node: tree_sitter.Node, statement: tree_sitter.Node) -> tuple[_Branch | None, str]:
    template = "".join(_string_value(doc, s) for s in node.children if s.type in ("string_literal", "concatenated_string"))
    shown = re.sub(r"(?:\\[nt]|\s)+", " ", template).strip()
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if statement.type != "expression_statement" or statement.named_child(0) != node:
        return None, "inline PTX inside a larger statement; add the ROCm branch by hand"
    operands = {"out": _operands(doc, node, "gnu_asm_output_operand"), "in": _operands(doc, node, "gnu_asm_input_operand")}
    for idiom in _data()["ptx"]:
        if re.match(idiom["match"], template):
            values = {f"{kind}{i}": v for kind, found in operands.items() for i, v in enumerate(found)}
            try:
                hip = str(idiom["hip"]).format(**values)
            except (KeyError, IndexError):
                break
            note = f"  // HIP builtin for PTX `{shown}`"
            return _Branch(statement.start_point.row, statement.end_point.row,
                           ((statement.start_byte, statement.end_byte, hip),), note), ""
    return None, f"inline PTX `{shown}` has no known HIP form; port it by hand"


def _string_value(doc: CudaDocument, node: tree_sitter.Node) -> str:
    if node.type == "concatenated_string":
        return "".join(_string_value(doc, c) for c in node.named_children if c.type == "string_literal")
    return doc.node_text(node)[1:-1]


def _operands(doc: CudaDocument, asm: tree_sitter.Node, kind: str) -> list[str]:
    found = []
    stack = list(asm.children)
    while stack:
        node = stack.pop(0)
        if node.type == kind:
            value = node.child_by_field_name("value")
            found.append(doc.node_text(value) if value is not None else "")
        else:
            stack[:0] = node.children
    return found


def _merged(branches: list[_Branch]) -> list[_Branch]:
    """Branches whose lines overlap become one."""
    out: list[_Branch] = []
    for branch in sorted(branches, key=lambda b: (b.first, b.last)):
        if out and branch.first <= out[-1].last:
            last = out[-1]
            out[-1] = replace(last, last=max(last.last, branch.last), edits=last.edits + branch.edits)
        else:
            out.append(branch)
    return out


def _render(doc: CudaDocument, branches: list[_Branch]) -> str:
    data = doc.data
    lines = data.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out: list[bytes] = []
    position = 0
    for branch in branches:
        begin, end = starts[branch.first], starts[branch.last + 1]
        newline = b"\r\n" if data[begin:end].endswith(b"\r\n") else b"\n"
        original = data[begin:end] if data[begin:end].endswith(b"\n") else data[begin:end] + newline
        rocm = original
        for start, stop, new in sorted(branch.edits, reverse=True):
            rocm = rocm[: start - begin] + new.encode("utf-8") + rocm[stop - begin :]
        directives = [f"#ifdef USE_ROCM{branch.note}".encode() + newline, b"#else" + newline, b"#endif" + newline]
        out += [data[position:begin], directives[0], rocm, directives[1], original, directives[2]]
        position = end
    out.append(data[position:])
    return b"".join(out).decode("utf-8")


def _left(doc: CudaDocument, line: int, why: str) -> Finding:
    return Finding(doc.source.relpath, line, 1, RULE_LEFT, "inline-ptx" if "PTX" in why else "warp-size-assumption",
                   Severity.MEDIUM, line, f"no #ifdef USE_ROCM branch written: {why}", doc.line_text(line))


# -- verify: compile as a ROCm torch builds the extension ------------------------------------------------------------


def as_torch_builds(tree: Path, engine: Engine) -> list[str]:
    """Hipify TREE in place as a ROCm torch does at build time; the flags its hipcc gets (torch's include
    directories when torch is installed beside migrate)."""
    from migrate.port.apply import translate_paths

    translate_paths([tree], engine, in_place=True)
    return ["-DUSE_ROCM=1", "-D__HIP_PLATFORM_AMD__=1", *_torch_includes()]


def _torch_includes() -> list[str]:
    import importlib.util
    import sysconfig

    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return []
    base = Path(spec.origin).parent / "include"
    found = [base, base / "torch" / "csrc" / "api" / "include", Path(sysconfig.get_paths()["include"])]
    return [f"-I{d}" for d in found if d.is_dir()]
