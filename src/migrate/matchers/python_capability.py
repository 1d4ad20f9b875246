"""Compute-capability logic: capability queries, their results compared, `.major`/`.minor` of device properties."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import as_list, check_keys, has_name, hip_adjusted, last_parts
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_KEYS = {"matcher", "capability", "properties", "attributes"}


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "compute-capability")
    for key in ("capability", "properties", "attributes"):
        if not as_list(params.get(key)) or not all(isinstance(v, str) for v in as_list(params[key])):
            raise ValueError(f"compute-capability needs '{key}' (a list of names)")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted(set(last_parts(as_list(params["capability"]) + as_list(params["properties"]))))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """Every finding needs a call to one of the capability or properties functions."""
    names = as_list(params["capability"]) + as_list(params["properties"])
    return lambda code: any(has_name(code.text, name) for name in names)


@register("compute-capability", validate=_validate, needles=_needles, candidates=_code_test)
def match_capability(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Capability calls, comparisons of their results with numbers, and major/minor of device properties."""
    if not isinstance(doc, PythonDocument):
        return
    found = {**_calls(doc, params), **_comparisons(doc, params), **_attributes(doc, params)}
    for line in sorted(found):
        node, symbol = found[line]
        severity, message = hip_adjusted(doc, node)
        yield Hit(line, node.col_offset + 1, end_line=node.end_lineno, severity=severity, message=message,  # type: ignore[attr-defined]
                  symbol=symbol)


Found = dict[int, tuple[ast.AST, str]]


def _sources(doc: PythonDocument, names: list[str]) -> tuple[list[ast.Call], set[str]]:
    """The calls to NAMES, and the variables their results are assigned to (`major, minor = ...` too)."""
    calls = [s.node for s in doc.index.calls if s.name in names]
    variables: set[str] = set()
    ids = {id(c) for c in calls}
    for node in doc.index.assigns:
        if node.value is not None and id(node.value) in ids:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            variables.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return calls, variables


def _calls(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    calls, _ = _sources(doc, as_list(params["capability"]))
    return {c.lineno: (c, doc.dotted(c.func) or "") for c in reversed(calls)}


def _comparisons(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    calls, variables = _sources(doc, as_list(params["capability"]))
    ids = {id(c) for c in calls}
    found: Found = {}
    for node in doc.of_type(ast.Compare) if calls else ():
        sides = [node.left, *node.comparators]
        if any(_is_number(s) for s in sides) and any(_is_capability(s, variables, ids) for s in sides):
            found.setdefault(node.lineno, (node, "compute capability comparison"))
    return found


def _attributes(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    calls, variables = _sources(doc, as_list(params["properties"]))
    ids = {id(c) for c in calls}
    attributes = set(as_list(params["attributes"]))
    found: Found = {}
    inner = {id(a.value) for a in doc.of_type(ast.Attribute)} if variables else set()  # x.major in x.major.y
    for node in doc.of_type(ast.Attribute) if variables else ():
        if node.attr in attributes and isinstance(node.value, ast.Name) and node.value.id in variables:
            if id(node) not in inner and not doc.in_annotation(node):
                found.setdefault(node.lineno, (node, f"device properties .{node.attr}"))
    for node in doc.of_type(ast.Attribute) if calls else ():  # get_device_properties(0).major is no name chain
        if node.attr in attributes and id(node.value) in ids:
            found.setdefault(node.lineno, (node, f"device properties .{node.attr}"))
    return found


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_is_number(e) for e in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_capability(node: ast.AST, variables: set[str], calls: set[int]) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id in variables
    return id(node) in calls
