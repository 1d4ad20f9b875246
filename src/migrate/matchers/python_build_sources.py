"""The sources of a Python file's PyTorch extension builds: whether every build names its sources and none is a
CUDA file. torch.utils.cpp_extension hands a file to nvcc (hipcc on ROCm) only when it ends in .cu or .cuh, so the
"nvcc" flags of a build whose sources are all C++ are never used by any compiler."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from migrate.parse.python import PythonDocument

# The builders whose sources torch.utils.cpp_extension compiles (last part of the callee's dotted name).
_EXTENSIONS = frozenset({"CppExtension", "CUDAExtension", "Extension"})  # setuptools' Extension too: BuildExtension
_LOADERS = frozenset({"load", "cpp_extension.load", "torch.utils.cpp_extension.load"})
_HOST_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".c", ".C")
# Calls whose value names the same file as one of their arguments: the path's last part, a glob's pattern.
_LAST_ARGUMENT = frozenset({"join"})
_FIRST_ARGUMENT = frozenset({"glob", "iglob", "str", "Path", "abspath", "realpath", "normpath", "relpath", "sorted",
                             "list", "expanduser"})
_GROW = frozenset({"append", "extend", "insert"})
_DEPTH = 8
HOST_ONLY_NOTE = ("Here every extension build of this file lists its sources and none is a .cu / .cuh file: "
                  "torch.utils.cpp_extension hands only those to nvcc (hipcc on ROCm), so no compiler reads these "
                  "flags and the ROCm build needs nothing for them.")

Names = list[str] | None  # the file names (or glob patterns) a source list holds; None: not known here


def host_only_build(doc: PythonDocument) -> bool:
    """True when DOC calls at least one extension builder (load, load_inline, CppExtension, CUDAExtension) and
    every such call's sources are known from this file and all are C++ files (or globs of them): nothing in
    these builds is compiled by nvcc or hipcc. A source list from a parameter, a directory listing or another
    module is unknown, and any .cu / .cuh file or CUDA string source keeps the build a CUDA one."""
    cached = doc.__dict__.get(_CACHE)
    if cached is None:
        cached = doc.__dict__[_CACHE] = "cpp_extension" in doc.text and _host_only(doc)
    return bool(cached)


_CACHE = "_host_only_build"  # several rules ask about the same file


def _host_only(doc: PythonDocument) -> bool:
    found = False
    for call in doc.of_type(ast.Call):
        name = doc.dotted(call.func) or ""
        last = name.rsplit(".", 1)[-1]
        if last == "load_inline":  # C++ strings only, unless it has CUDA ones
            cuda = _argument(call, "cuda_sources", 2)
            if cuda is not None and not _is_none(cuda):
                return False
        elif name in _LOADERS or last in _EXTENSIONS:
            sources = _argument(call, "sources", 1)
            names = _names(doc, sources, call, {}, 0) if sources is not None else None
            if not names or not all(name.endswith(_HOST_SUFFIXES) for name in names):
                return False
        else:
            continue
        found = True
    return found


def _argument(call: ast.Call, keyword: str, position: int) -> ast.AST | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    return call.args[position] if len(call.args) > position else None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _names(doc: PythonDocument, node: ast.AST, site: ast.AST, bound: dict[str, ast.AST], depth: int) -> Names:
    """The file names NODE (an expression used at SITE) stands for; BOUND: comprehension variables."""
    if depth > _DEPTH:
        return None
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):  # f"{root}/ops/nms.cpp": the written tail names the file
        tail = node.values[-1] if node.values else None
        return [tail.value] if isinstance(tail, ast.Constant) and isinstance(tail.value, str) else None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return _joined(_names(doc, item, site, bound, depth + 1) for item in node.elts)
    if isinstance(node, ast.Starred):
        return _names(doc, node.value, site, bound, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _joined(_names(doc, side, site, bound, depth + 1) for side in (node.left, node.right))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # pathlib: root / "nms.cpp"
        return _names(doc, node.right, site, bound, depth + 1)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
        target = node.generators[0].target
        inner = dict(bound, **({target.id: node.generators[0].iter} if isinstance(target, ast.Name) else {}))
        return _names(doc, node.elt, site, inner, depth + 1)
    if isinstance(node, ast.Name):
        if node.id in bound:
            return _names(doc, bound[node.id], site, bound, depth + 1)
        values = _values(doc, node.id, site)
        return _joined(_names(doc, value, value, {}, depth + 1) for value in values) if values else None
    if isinstance(node, ast.Call):
        return _call_names(doc, node, site, bound, depth)
    return None


def _call_names(doc: PythonDocument, call: ast.Call, site: ast.AST, bound: dict[str, ast.AST], depth: int) -> Names:
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if last in _LAST_ARGUMENT and call.args:
        return _names(doc, call.args[-1], site, bound, depth + 1)
    if last in _FIRST_ARGUMENT and call.args:
        return _names(doc, call.args[0], site, bound, depth + 1)
    returned = [r.value for f in _defined(doc, last) for r in ast.walk(f) if isinstance(r, ast.Return) and r.value]
    return _joined(_names(doc, value, value, {}, depth + 1) for value in returned) if returned else None


def _defined(doc: PythonDocument, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions and methods of this file called NAME (a method's overrides in subclasses included)."""
    return [f for f in doc.of_type(ast.FunctionDef, ast.AsyncFunctionDef) if f.name == name]


def _values(doc: PythonDocument, name: str, site: ast.AST) -> list[ast.AST]:
    """What the function around SITE assigns to NAME, adds to it or appends to it, else what the module's own
    statements do; nothing for a parameter of that function (unknown, like a name from elsewhere)."""
    scope = doc.enclosing(site, ast.FunctionDef, ast.AsyncFunctionDef)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = scope.args
        if any(a.arg == name for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)):
            return []
        found = list(_assigned(ast.walk(scope), name))
        if found:
            return found
    statements = (n for top in doc.module.body if not isinstance(top, _DEFINITIONS) for n in ast.walk(top))
    return list(_assigned(statements, name))


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _assigned(nodes: Iterator[ast.AST], name: str) -> Iterator[ast.AST]:
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(isinstance(t, ast.Name) and t.id == name for t in targets):
                yield node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _GROW:
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == name and node.args:
                yield node.args[-1]  # one file (append, insert) or a list of them (extend)


def _joined(parts: Iterator[Names]) -> Names:
    """All the names of PARTS, or None when one of them is unknown."""
    found: list[str] = []
    for part in parts:
        if part is None:
            return None
        found.extend(part)
    return found
