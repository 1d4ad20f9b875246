"""Python switches a ROCm port writes where code chooses a CUDA-only feature: compute-capability gates of NVIDIA
features from 8.9 on (FP8, TMA, wgmma, Hopper kernels), which AMD GPUs pass by accident (torch reports gfx90a as 9.0
and gfx942 as 9.4), read as "no such feature" on ROCm where a GPU of the port's targets would pass them; Triton
launches that ask for more than 16 warps (more than 1024 threads on a 64-lane wavefront) ask for 16; tests of
CUDA-only libraries are skipped on ROCm. Each edit keeps the CUDA path as it was: `torch.version.hip` is None there."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from migrate.defaults import DEFAULT_TARGETS
from migrate.model import Finding
from migrate.port.plan import Fix

HIP = "torch.version.hip"
FEATURE_FLOOR = (8, 9)  # Ada's FP8 and up; the gates below it (sm70/sm80: tensor cores, bf16) hold on CDNA too
MAX_WARPS = 16  # 1024 threads per block / 64 lanes
# scan rules naming a library with no ROCm build: a test using it is skipped on ROCm
CUDA_ONLY = {"python-tensorrt": "TensorRT", "python-pycuda": "PyCUDA", "python-numba-cuda": "numba.cuda",
             "python-cutlass-dsl": "the CUTLASS Python DSL", "python-nvidia-warp": "NVIDIA Warp"}
_CAPABILITY = "torch.cuda.get_device_capability"
_PROPERTIES = "torch.cuda.get_device_properties"
_POSITIVE = (ast.GtE, ast.Gt, ast.Eq, ast.In)
_FLIPPED: Mapping[type, type] = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
_WHOLE = (ast.If, ast.While, ast.Return, ast.Assign, ast.Assert, ast.Call, ast.keyword, ast.Expr)
_GFX = re.compile(r"gfx(\d+)([0-9a-f])[0-9a-f]$")
_COMPARE: Mapping[type, Callable[[Any, Any], Any]] = {
    ast.GtE: operator.ge, ast.Gt: operator.gt, ast.Eq: operator.eq, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.NotEq: operator.ne, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?/.*\.py|test_[^/]*\.py|[^/]*_test\.py)$")


def capability_helpers(texts: Mapping[str, str]) -> frozenset[str]:
    """Functions of the repository that only return the device's compute capability (torch's, or the major and
    minor of its device properties), as TransformerEngine's get_device_compute_capability() does."""
    found: set[str] = set()
    for text in texts.values():
        if "get_device_capability" not in text and "get_device_properties" not in text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        found |= {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and _returns_capability(node)}
    return frozenset(found)


def _returns_capability(function: ast.FunctionDef) -> bool:
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    properties = {t.id for n in ast.walk(function) if isinstance(n, ast.Assign)
                  and _dotted(n.value, call=True) == _PROPERTIES for t in n.targets if isinstance(t, ast.Name)}
    return bool(returns) and all(
        r.value is not None and (_dotted(r.value, call=True) == _CAPABILITY or _major_minor(r.value, properties))
        for r in returns)


def _major_minor(node: ast.expr, properties: set[str]) -> bool:
    return (isinstance(node, ast.Tuple) and [ast.unparse(e) for e in node.elts] in
            ([f"{p}.major", f"{p}.minor"] for p in properties))


def rocm_capability(gfx: str) -> tuple[int, int] | None:
    """The compute capability torch reports for an AMD GPU: its gfx number read as major and minor (gfx90a 9.0,
    gfx942 9.4, gfx1100 11.0); None for a name not of that shape."""
    found = _GFX.fullmatch(gfx)
    return (int(found.group(1)), int(found.group(2), 16)) if found else None


def switch_fixes(text: str, relpath: str, *, helpers: frozenset[str] = frozenset(),
                 findings: Sequence[Finding] = (), targets: Sequence[str] = DEFAULT_TARGETS) -> list[Fix]:
    """The switch edits of one Python file for the GPU TARGETS (none where it already branches on ROCm or does not
    import torch)."""
    if any(word in text for word in (HIP, "IS_HIP_EXTENSION", "is_hip")):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    torch = any(isinstance(s, ast.Import) and any(a.name == "torch" and a.asname in (None, "torch") for a in s.names)
                for s in tree.body)
    if not torch:
        return []
    capabilities = [c for c in map(rocm_capability, targets) if c is not None]
    fixes = list(_capability_fixes(tree, helpers, capabilities))
    if "triton" in text:
        fixes += _warp_count_fixes(tree)
    pytest = any(isinstance(s, ast.Import) and any(a.name == "pytest" for a in s.names) for s in tree.body)
    if pytest and _TEST_FILE.search(relpath):
        fixes += _skip_fixes(text, tree, findings)
    return sorted(fixes, key=lambda f: (f.line, f.start))


# -- compute-capability gates -------------------------------------------------------------------------------------


def _capability_fixes(
    tree: ast.Module, helpers: frozenset[str], capabilities: Sequence[tuple[int, int]],
) -> Iterator[Fix]:
    scopes = _capability_names(tree, helpers)
    for scope, parent, node in _compares(tree, tree):
        names = {**scopes.get(tree, {}), **scopes.get(scope, {})}
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if _kind(right, names, helpers) and not _kind(left, names, helpers) and type(op) in _FLIPPED:
            left, op, right = right, _FLIPPED[type(op)](), left
        threshold = _threshold(_kind(left, names, helpers), op, right)
        if threshold is None or threshold < FEATURE_FLOOR:
            continue
        if not _passed_on_rocm(left, op, right, names, helpers, capabilities):
            continue
        whole = isinstance(parent, _WHOLE)  # the comparison is all of an `if`, a return, an argument: no parentheses
        head = f"{HIP} is None and " if isinstance(op, _POSITIVE) else f"{HIP} is not None or "
        message = (f"compute capability {threshold[0]}.{threshold[1]}+ names an NVIDIA feature ROCm GPUs lack (they report "
                   "gfx numbers such as 9.4): this gate now reads as on a GPU without it")
        yield Fix(node.lineno, node.col_offset, node.col_offset, head if whole else f"({head}", True, message)
        if not whole:
            yield Fix(node.end_lineno or node.lineno, node.end_col_offset or 0, node.end_col_offset or 0, ")", True, message)


def _passed_on_rocm(left: ast.expr, op: ast.cmpop, right: ast.expr, names: Mapping[str, str],
                    helpers: frozenset[str], capabilities: Sequence[tuple[int, int]]) -> bool:
    """Whether a GPU of the targets (CAPABILITIES as torch reports them) reads the gate as having the feature: a gate
    they all fail already reads right on ROCm (`major == 10` on gfx942), so a maintainer leaves it."""
    kind = _kind(left, names, helpers)
    try:
        constant = ast.literal_eval(right)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return True
    for capability in capabilities:
        value = capability[0] if kind == "major" else capability
        try:
            holds = _COMPARE[type(op)](value, constant)
        except TypeError:
            return True
        if bool(holds) is isinstance(op, _POSITIVE):
            return True
    return False


def _compares(node: ast.AST, scope: ast.AST) -> Iterator[tuple[ast.AST, ast.AST, ast.Compare]]:
    """Each one-operator comparison with the function (or module) it runs in and the node that holds it."""
    for child in ast.iter_child_nodes(node):
        inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope
        if isinstance(child, ast.Compare) and len(child.ops) == 1:
            yield scope, node, child
        yield from _compares(child, inner)


def _capability_names(tree: ast.Module, helpers: frozenset[str]) -> dict[ast.AST, dict[str, str]]:
    """Per function (and the module), the names assigned the capability (`cap = torch.cuda.get_device_capability()`
    -> full) or its major (`major, minor = ...` -> major)."""
    names: dict[ast.AST, dict[str, str]] = {}
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        body = scope.body
        for node in (n for statement in body for n in _walk_scope(statement)):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and _kind(node.value, {}, helpers) == "full":
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    names.setdefault(scope, {})[target.id] = "full"
                elif isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name):
                    names.setdefault(scope, {})[target.elts[0].id] = "major"
    return names


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """NODE and what it holds, not entering nested functions or classes."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield from _walk_scope(child)


def _kind(node: ast.expr, names: Mapping[str, str], helpers: frozenset[str]) -> str | None:
    """'full' for a (major, minor) capability, 'major' for its first number, else None."""
    if _dotted(node, call=True) == _CAPABILITY or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                                                    and node.func.id in helpers):
        return "full"
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == 0
            and _kind(node.value, names, helpers) == "full"):
        return "major"
    return None


def _threshold(kind: str | None, op: ast.cmpop, constant: ast.expr) -> tuple[int, int] | None:
    """The lowest capability the comparison is about, as (major, minor)."""
    if kind is None:
        return None
    if isinstance(op, (ast.In, ast.NotIn)):
        elements = constant.elts if isinstance(constant, (ast.List, ast.Tuple, ast.Set)) else []
        versions = [v for e in elements if (v := _version(kind, e)) is not None]
        return min(versions) if versions and len(versions) == len(elements) else None
    version = _version(kind, constant)
    if version is None:
        return None
    if isinstance(op, (ast.Gt, ast.LtE)):  # `> 8.9` and `<= 8.9` are about 9.0 and up
        return (version[0] + 1, 0) if kind == "major" else (version[0], version[1] + 1)
    return version


def _version(kind: str, node: ast.expr) -> tuple[int, int] | None:
    if kind == "major" and isinstance(node, ast.Constant) and type(node.value) is int:
        return (node.value, 0)
    if (kind == "full" and isinstance(node, ast.Tuple) and len(node.elts) == 2
            and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)):
        return (node.elts[0].value, node.elts[1].value)  # type: ignore[attr-defined]
    return None


def _dotted(node: ast.expr, *, call: bool = False) -> str:
    """`a.b.c` for the expression a.b.c (or the call a.b.c(...) when CALL)."""
    if call:
        if not isinstance(node, ast.Call):
            return ""
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


# -- Triton warp counts ---------------------------------------------------------------------------------------------


def _warp_count_fixes(tree: ast.Module) -> Iterator[Fix]:
    """`num_warps=32` in a launch or config, and `num_warps = 32` assigned where a launch helper picks it (the
    `calculate_settings` of Liger-Kernel and unsloth)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            values = [k.value for k in node.keywords if k.arg == "num_warps"]
        elif isinstance(node, ast.Assign):
            values = [node.value] if [ast.unparse(t) for t in node.targets] == ["num_warps"] else []
        else:
            continue
        for value in values:
            if (isinstance(value, ast.Constant) and type(value.value) is int and value.value > MAX_WARPS
                    and value.lineno == value.end_lineno):
                text = f"{value.value} if {HIP} is None else {MAX_WARPS}"
                message = (f"{value.value} warps of 64 lanes exceed the 1024 threads of a block on AMD GPUs: "
                           f"{MAX_WARPS} there")
                yield Fix(value.lineno, value.col_offset, value.end_col_offset or value.col_offset, text, True, message)


# -- tests of CUDA-only libraries --------------------------------------------------------------------------------------


def _skip_fixes(text: str, tree: ast.Module, findings: Sequence[Finding]) -> Iterator[Fix]:
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    for test in _tests(tree):
        used = sorted({CUDA_ONLY[f.rule] for f in findings if f.rule in CUDA_ONLY
                       for line in (f.line, *(o.line for o in f.occurrences)) if test.lineno <= line <= (test.end_lineno or 0)})
        if not used or any(_mentions_hip(d) for d in test.decorator_list):
            continue
        first = min([test.lineno, *(d.lineno for d in test.decorator_list)])
        indent = " " * test.col_offset
        reason = f"{' and '.join(used)}: CUDA-only, no ROCm build"
        line = f'{indent}@pytest.mark.skipif({HIP} is not None, reason="{reason}"){newline}'
        yield Fix(first, 0, 0, line, True, f"test skipped on ROCm: {reason}")


def _tests(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            yield node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield from (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test"))


def _mentions_hip(node: ast.expr) -> bool:
    return "hip" in ast.unparse(node).lower() or "rocm" in ast.unparse(node).lower()
