"""Op-builder flag methods: the functions whose returned lists a torch extension build, in another file, hands to nvcc
(DeepSpeed's `nvcc_args()`, ColossalAI's `nvcc_flags()`, passed as `'nvcc'` or `extra_cuda_cflags`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from migrate.bounded import Refused, read_source
from migrate.model import FileKind, SourceFile

_NVCC_KEYWORD = "extra_cuda_cflags"  # torch.utils.cpp_extension.load/load_inline
_NVCC_KEY = "nvcc"  # CUDAExtension(extra_compile_args={"nvcc": ...})


def flag_providers(sources: Iterable[SourceFile]) -> frozenset[str]:
    """The names of the functions whose results the repository's torch extension builds pass to nvcc."""
    names: set[str] = set()
    for source in sources:
        if source.vendored or source.kind not in (FileKind.SETUP_PY, FileKind.PYTHON):
            continue
        try:
            text = read_source(source).decode("utf-8")
        except (OSError, Refused, UnicodeDecodeError):
            continue
        if "cpp_extension" in text:
            names.update(providers_in(text))
    return frozenset(names)


def providers_in(text: str) -> Iterator[str]:
    """The functions called (by name or as a method) inside what TEXT passes as nvcc flags."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for node in ast.walk(tree):
        for value in _nvcc_values(node):
            for call in ast.walk(value):
                if isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute)):
                    yield call.func.id if isinstance(call.func, ast.Name) else call.func.attr


def _nvcc_values(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Call):
        yield from (keyword.value for keyword in node.keywords if keyword.arg == _NVCC_KEYWORD)
    elif isinstance(node, ast.Dict):
        yield from (value for key, value in zip(node.keys, node.values)
                    if isinstance(key, ast.Constant) and key.value == _NVCC_KEY)


def provider_returns(tree: ast.Module, providers: frozenset[str]) -> Iterator[tuple[ast.expr, ast.FunctionDef]]:
    """What each function named in PROVIDERS returns (a call's positional arguments stand for the call: ColossalAI's
    `return append_nvcc_threads(ret)`), with the function."""
    for function in ast.walk(tree):
        if not (isinstance(function, ast.FunctionDef) and function.name in providers):
            continue
        for node in _own_nodes(function):
            if isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                yield from ((arg, function) for arg in (value.args if isinstance(value, ast.Call) else [value]))


def _own_nodes(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of FUNCTION's body outside the functions and lambdas nested in it."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        pending += [child for child in ast.iter_child_nodes(node)
                    if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))]
