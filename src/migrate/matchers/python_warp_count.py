"""Warp counts worked out from a block size for 32-lane warps: `if BLOCK_SIZE >= 2048: num_warps = 8`,
`num_warps = 8 if BLOCK_N > 1024 else 4`, `num_warps = min(max(BLOCK_N // 256, 1), 8)`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import (
    as_list, check_bounds, check_keys, check_regex, check_words, has_word, hip_adjusted,
)
from migrate.matchers.python_literals import searches
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_KEYS = {"matcher", "names", "sizes", "at_least", "at_most", "if_file"}
_DIVISIONS = (ast.FloorDiv, ast.Div, ast.RShift)


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "warp-count")
    check_words(params, "names", "warp-count needs 'names' (the settings that take a warp count, num_warps)")
    check_regex(params, "sizes", required=True)
    check_regex(params, "if_file", required=False)
    check_bounds(params, "warp-count")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted(set(as_list(params["names"])))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """A file that names a warp-count setting (and matches `if_file`)."""
    names, wanted = as_list(params["names"]), params.get("if_file")
    return lambda code: any(has_word(code.text, n) for n in names) and (
        wanted is None or searches(wanted, code.text))


@register("warp-count", validate=_validate, needles=_needles, candidates=_code_test)
def match_warp_count(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each warp count chosen by a block-size test, or divided out of a block size."""
    if not isinstance(doc, PythonDocument):
        return
    if "if_file" in params and not searches(params["if_file"], doc.text):
        return
    names, sizes = set(as_list(params["names"])), re.compile(params["sizes"])
    bounds = (params["at_least"], params["at_most"])
    seen: set[int] = set()
    for node, symbol in _chosen(doc, names, sizes, bounds):
        if node.lineno not in seen:
            seen.add(node.lineno)
            severity, message = hip_adjusted(doc, node)
            yield Hit(node.lineno, node.col_offset + 1, severity=severity, message=message, symbol=symbol)


Found = Iterator[tuple[ast.expr, str]]


def _chosen(doc: PythonDocument, names: set[str], sizes: re.Pattern[str], bounds: tuple[int, int]) -> Found:
    for name, value in _given(doc, names):
        yield from _counts(value, name, sizes, bounds, _in_size_branch(doc, value, sizes))


def _given(doc: PythonDocument, names: set[str]) -> Iterator[tuple[str, ast.expr]]:
    """(setting, value) for each assignment `num_warps = ...` and keyword `num_warps=...`."""
    for assign in doc.of_type(ast.Assign):
        yield from ((t.id, assign.value) for t in assign.targets if isinstance(t, ast.Name) and t.id in names)
    for keyword in doc.of_type(ast.keyword):
        if keyword.arg in names:
            yield keyword.arg, keyword.value


def _counts(value: ast.expr, name: str, sizes: re.Pattern[str], bounds: tuple[int, int], branch: bool) -> Found:
    """The literal counts in BOUNDS that VALUE gives under a block-size test (BRANCH: the statement sits in one;
    or one arm of `8 if BLOCK_N > 1024 else 4`), and VALUE itself when it divides a block size."""
    if isinstance(value, ast.IfExp):
        inner = branch or _names_size(value.test, sizes)
        yield from _counts(value.body, name, sizes, bounds, inner)
        yield from _counts(value.orelse, name, sizes, bounds, inner)
    elif isinstance(value, ast.Constant) and type(value.value) is int:
        if branch and bounds[0] <= value.value <= bounds[1]:
            yield value, f"{name}={value.value}"
    elif any(isinstance(n, ast.BinOp) and isinstance(n.op, _DIVISIONS) and _names_size(n.left, sizes)
             for n in ast.walk(value)):
        yield value, f"{name} from the block size"


def _in_size_branch(doc: PythonDocument, node: ast.AST, sizes: re.Pattern[str]) -> bool:
    """NODE's statement is in the body of an if/elif whose test names a block size (`if BLOCK_SIZE >= 2048:`)."""
    child, parent = node, doc.parents.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(parent, ast.If) and child in parent.body and _names_size(parent.test, sizes):
            return True
        child, parent = parent, doc.parents.get(parent)
    return False


def _names_size(node: ast.expr, sizes: re.Pattern[str]) -> bool:
    """NODE reads a variable or attribute the regex matches whole (`BLOCK_SIZE`, `meta["BLOCK_N"]` by its key)."""
    for item in ast.walk(node):
        name = item.id if isinstance(item, ast.Name) else item.attr if isinstance(item, ast.Attribute) else (
            item.value if isinstance(item, ast.Constant) and isinstance(item.value, str) else None)
        if name and sizes.fullmatch(name):
            return True
    return False
