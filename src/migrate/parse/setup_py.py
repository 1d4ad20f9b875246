"""setup.py read as a syntax tree: requirements, CUDAExtension, nvcc flags, arch lists and CUDA_HOME gates."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import ENV, FACT, Item, arch_flag_items, optional, requirement_item
from migrate.parse.python import PythonDocument, parse_python

_REQUIREMENT_KEYWORDS = frozenset({"install_requires", "setup_requires", "extras_require", "tests_require"})
_OPTIONAL_KEYWORDS = frozenset({"extras_require", "tests_require"})
_EXTENSIONS = frozenset({"CUDAExtension", "cpp_extension.CUDAExtension", "torch.utils.cpp_extension.CUDAExtension"})
_ENV_READERS = frozenset({"os.environ.get", "os.getenv", "os.environ.setdefault", "os.environ.pop", "environ.get",
                          "getenv"})
_GATES = frozenset({"CUDA_HOME", "cpp_extension.CUDA_HOME", "torch.utils.cpp_extension.CUDA_HOME",
                    "torch.cuda.is_available"})


@dataclass
class SetupPyDocument(PythonDocument):
    """A setup.py: a Python module whose manifest items the manifest matchers read."""

    manifest: list[Item] = field(default_factory=list)


def _strings(node: ast.AST) -> Iterator[tuple[ast.Constant, str]]:
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child, child.value


def _requirements(doc: PythonDocument, value: ast.AST) -> Iterator[Item]:
    if isinstance(value, ast.Name):
        yield from _listed_in(_filled(doc, value.id))
        value = _assigned(doc, value.id) or value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):  # extras_require=get_extras()
        yield from _listed_requirements(_defined(doc, value.func.id))
        return
    for const, text in _strings(value):
        if isinstance(value, ast.Dict) and const in value.keys:
            continue
        item = requirement_item(text, const.lineno, const.col_offset + 2, strict=False)
        if item is not None:
            yield item


def _defined(doc: PythonDocument, name: str) -> ast.FunctionDef | None:
    return next((n for n in doc.module.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _listed_requirements(function: ast.FunctionDef | None) -> Iterator[Item]:
    """The requirements a setup.py helper lists: strings in its list and tuple literals, not those compared against
    (`if platform in ["cuda", "cpu"]:`)."""
    nodes = list(ast.walk(function)) if function else []
    compared = {id(side) for node in nodes if isinstance(node, ast.Compare) for side in (node.left, *node.comparators)}
    for node in nodes:
        if isinstance(node, (ast.List, ast.Tuple)) and id(node) not in compared:
            for const in node.elts:
                if isinstance(const, ast.Constant) and isinstance(const.value, str):
                    item = requirement_item(const.value, const.lineno, const.col_offset + 2, strict=False)
                    if item is not None:
                        yield item


def _filled(doc: PythonDocument, name: str) -> list[ast.AST]:
    """The values a module-level `NAME[key] = [...]` (or `+=`) puts in NAME: extras built one key at a time
    (`extra_deps = {}`, then `extra_deps['gpu'] = ['flash-attn==2.7.4']`, later `extras_require=extra_deps`)."""
    found: list[ast.AST] = []
    for node in doc.module.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AugAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name for t in targets):
            found.append(value)
    return found


def _listed_in(values: list[ast.AST]) -> Iterator[Item]:
    """The requirement strings written as items of the list, tuple or set literals among VALUES."""
    for value in values:
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            for const in value.elts:
                if isinstance(const, ast.Constant) and isinstance(const.value, str):
                    item = requirement_item(const.value, const.lineno, const.col_offset + 2, strict=False)
                    if item is not None:
                        yield item


def _assigned(doc: PythonDocument, name: str) -> ast.AST | None:
    for node in doc.module.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value
    return None


def _reference_items(doc: PythonDocument, node: ast.Name | ast.Attribute) -> Iterator[Item]:
    """CUDAExtension named without a call (`extension = CUDAExtension`, called later under another name)."""
    last = node.id if isinstance(node, ast.Name) else node.attr
    if last != "CUDAExtension" or not isinstance(node.ctx, ast.Load) or doc.in_annotation(node):
        return
    parent = doc.parents.get(node)
    if not (isinstance(parent, ast.Call) and parent.func is node) and not isinstance(parent, ast.Attribute):
        yield Item(FACT, "cuda-extension", node.lineno, node.col_offset + 1, value=doc.dotted(node) or last)


def _call_items(doc: PythonDocument, call: ast.Call) -> Iterator[Item]:
    name = doc.dotted(call.func) or ""
    if name in _EXTENSIONS or name.endswith(".CUDAExtension"):
        yield Item(FACT, "cuda-extension", call.lineno, call.col_offset + 1, value=name)
    if name.rsplit(".", 1)[-1] == "setup" or name == "setuptools.setup":
        for keyword in call.keywords:
            if keyword.arg in _OPTIONAL_KEYWORDS:
                yield from optional(_requirements(doc, keyword.value))
            elif keyword.arg in _REQUIREMENT_KEYWORDS:
                yield from _requirements(doc, keyword.value)
    if name in _ENV_READERS and call.args and isinstance(call.args[0], ast.Constant):
        key = call.args[0]
        if isinstance(key.value, str):
            yield Item(ENV, key.value, key.lineno, key.col_offset + 2, value="read")


def _env_subscript(doc: PythonDocument, node: ast.Subscript) -> Iterator[Item]:
    if doc.dotted(node.value) in ("os.environ", "environ") and isinstance(node.slice, ast.Constant):
        if isinstance(node.slice.value, str):
            yield Item(ENV, node.slice.value, node.slice.lineno, node.slice.col_offset + 2)


def _gate(doc: PythonDocument, node: ast.If | ast.IfExp | ast.Assert) -> Iterator[Item]:
    for child in ast.walk(node.test):
        name = doc.dotted(child) if isinstance(child, (ast.Name, ast.Attribute)) else _env_gate(doc, child)
        if name in _GATES or name in _ENV_GATES:
            yield Item(FACT, "cuda-home-gate", node.lineno, node.col_offset + 1, value=name)
            return


# a flag computed once and tested later (`WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None`): a test,
# not a copy (`home = CUDA_HOME`); torch.cuda.is_available() alone is true on a ROCm torch, CUDA_HOME is the fact
_TESTS = (ast.BoolOp, ast.Compare, ast.UnaryOp)
_HOME_GATES = _GATES - {"torch.cuda.is_available"}
_ROCM_NAME = re.compile(r"(?i)hip|rocm")


def _assigned_gate(doc: PythonDocument, node: ast.Assign | ast.AnnAssign, value: ast.expr) -> Iterator[Item]:
    """A flag assigned from a CUDA_HOME test, unless the test also accepts ROCm (torch.version.hip, ROCM_HOME)."""
    names = [doc.dotted(child) or "" for child in ast.walk(value) if isinstance(child, (ast.Name, ast.Attribute))]
    if any(_ROCM_NAME.search(name) for name in names):
        return
    for child in ast.walk(value):
        name = doc.dotted(child) if isinstance(child, (ast.Name, ast.Attribute)) else _env_gate(doc, child)
        if name in _HOME_GATES or name in _ENV_GATES:
            yield Item(FACT, "cuda-home-gate", node.lineno, node.col_offset + 1, value=name)
            return


# the environment variable itself tested: `"CUDA_HOME" in os.environ`, `os.getenv("CUDA_HOME")`,
# `os.environ.get("CUDA_PATH")` (a TensorFlow or plain setuptools build has no torch to ask)
_ENV_GATES = frozenset({"os.environ[CUDA_HOME]", "os.environ[CUDA_PATH]"})
_ENV_GETTERS = frozenset({"os.getenv", "os.environ.get", "getenv", "environ.get"})


def _env_gate(doc: PythonDocument, node: ast.AST) -> str | None:
    """"os.environ[NAME]" for a test of the environment variable NAME: a membership test or a read."""
    key: ast.AST | None = None
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        if doc.dotted(node.comparators[0]) in ("os.environ", "environ"):
            key = node.left
    elif isinstance(node, ast.Call) and node.args and doc.dotted(node.func) in _ENV_GETTERS:
        key = node.args[0]
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return f"os.environ[{key.value}]"
    return None


def setup_items(doc: PythonDocument) -> list[Item]:
    """Every manifest item of a setup.py."""
    found: list[Item] = []
    for node in doc.nodes:
        if isinstance(node, ast.Call):
            found.extend(_call_items(doc, node))
        elif isinstance(node, (ast.Name, ast.Attribute)):
            found.extend(_reference_items(doc, node))
        elif isinstance(node, ast.Subscript):
            found.extend(_env_subscript(doc, node))
        elif isinstance(node, (ast.If, ast.IfExp, ast.Assert)):
            found.extend(_gate(doc, node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, _TESTS):
            found.extend(_assigned_gate(doc, node, node.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in doc.docstrings:
            if node.value.strip() in ("-gencode", "--generate-code"):
                continue  # its value, the next list element, is reported
            words = [(w, node.lineno, node.col_offset + 2) for w in node.value.split()]
            found.extend(arch_flag_items(words))
        elif isinstance(node, ast.JoinedStr):
            found.extend(_formatted_arch_flags(node))
    return found


def _formatted_arch_flags(node: ast.JoinedStr) -> Iterator[Item]:
    """An f-string arch flag (`f"arch=compute_{cc},code=sm_{cc}"`, `f"-arch=sm_{major}{minor}"`): the number comes
    from a variable, the target is still NVIDIA's. Each `{...}` reads as `${}`, as a shell variable would."""
    text = "".join(part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else "${}"
                   for part in node.values)
    if "compute_" in text or "sm_" in text:
        yield from arch_flag_items([(w, node.lineno, node.col_offset + 1) for w in text.split()])


@register(FileKind.SETUP_PY)
def parse_setup_py(source: SourceFile, text: str) -> SetupPyDocument:
    """A setup.py as a Python tree (a syntax error is the skip reason) plus its manifest items."""
    module = parse_python(source, text)
    doc = SetupPyDocument(source=source, text=text, tree=module.tree)
    doc.manifest = setup_items(doc)
    doc.guarded_ranges = hip_branches(doc)
    return doc


# extra_ldflags: the link flags of torch.utils.cpp_extension.load / load_inline (a JIT-built extension)
_LINK_KEYWORDS = frozenset({"libraries", "extra_link_args", "extra_ldflags"})


def link_libraries(doc: PythonDocument) -> list[tuple[str, int, int]]:
    """(library, line, column) of each library a setup.py links: `libraries=[...]`, `-lX` in `extra_link_args`,
    lists named *librar* that it assigns, extends or appends to, and the `-lX` / `-l:libX.a` words of lists named
    *link* (`extra_link_args`, `nvcc_dlink`) that it builds the same way."""
    found: list[tuple[str, int, int]] = []
    for node in doc.nodes:
        values: list[tuple[ast.AST, bool]] = []  # (value, only its -l words)
        if isinstance(node, ast.Call):
            values += [(k.value, False) for k in node.keywords if k.arg in _LINK_KEYWORDS]
            func = node.func
            kind = _list_kind(func.value) if isinstance(func, ast.Attribute) and func.attr in _GROW else None
            values += [(arg, kind == "link") for arg in node.args] if kind else []
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            kinds = {_list_kind(t) for t in targets} - {None}
            if kinds:
                values.append((node.value, "librar" not in kinds))
        for value, flags_only in values:
            found.extend(_library_names(doc, value, flags_only=flags_only))
    return found


_GROW = frozenset({"append", "extend", "insert"})


def _list_kind(node: ast.AST) -> str | None:
    """"librar" for a list of library names (`libraries`, and the short `libs`, `cuda_libs`, `info['libs']`), "link"
    for a list of link flags (`extra_link_args`): a variable, an attribute (`ext.libraries`) or a dict entry with a
    constant key (`options['LIBRARIES']`)."""
    if isinstance(node, ast.Name):
        name = node.id.lower()
    elif isinstance(node, ast.Attribute):
        name = node.attr.lower()
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        name = node.slice.value.lower()
    else:
        name = ""
    if "librar" in name or name == "libs" or name.endswith("_libs"):
        return "librar"
    return "link" if "link" in name else None


def _library_names(doc: PythonDocument, value: ast.AST, *, flags_only: bool = False) -> Iterator[tuple[str, int, int]]:
    if isinstance(value, ast.Name):
        value = _assigned(doc, value.id) or value
    for const, text in _strings(value):
        if flags_only and not text.startswith("-l"):
            continue
        name = _linked_name(text[2:]) if text.startswith("-l") else _WINDOWS_LIBRARY.sub("", text)
        if name and " " not in name and id(const) not in doc.docstrings:
            yield name, const.lineno, const.col_offset + 2


_WINDOWS_LIBRARY = re.compile(r"(?<=\w)\.lib$")  # MSVC's link takes the import library: cublas.lib is cuBLAS


def _linked_name(flag: str) -> str:
    """The library of `-lX` (X) or of `-l:libX.a` / `-l:libX.so.3` (X, the exact-file form)."""
    exact = re.fullmatch(r":lib(\w[\w+-]*)\.(?:so|a)(?:\.[\d.]+)?", flag)
    return exact.group(1) if exact else flag


def hip_branches(doc: PythonDocument) -> list[tuple[int, int]]:
    """The if/elif chains of setup.py that test for ROCm (`if torch.version.hip:`, `if IS_HIP_EXTENSION:`):
    a finding there is already kept apart for the HIP build (guarded), like a `#ifdef USE_ROCM` in C++."""
    return doc.hip_guarded_ranges
