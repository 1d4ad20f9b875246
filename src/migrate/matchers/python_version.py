"""Uses of a build-version attribute (torch.version.cuda) that break when it is None: tests, parsing, arithmetic."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import as_list, check_keys, has_name, hip_adjusted, in_nvidia_predicate, last_parts
from migrate.model import Severity
from migrate.parse import Document
from migrate.parse.python import PROSE_CALLS, PythonDocument

_PARSERS = frozenset({"parse", "Version", "LooseVersion", "StrictVersion", "float", "int", "tuple", "parse_version"})
_STRING_METHODS = frozenset({"split", "startswith", "endswith", "replace", "partition", "rsplit", "strip", "lstrip"})
_TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)
_LOGGED = "Only shown in a message (None on ROCm, printed as 'None'); nothing to port."
_PREDICATE = ("The project's own NVIDIA test (is_nvidia): torch.version.cuda is None on ROCm, so it answers False "
              "there as meant and the callers take their other path; nothing to port.")
_STORED = "Stored or passed on: torch.version.cuda is None on ROCm; check where this value is used."


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, {"matcher", "names"}, "torch-version-use")
    if not as_list(params.get("names")):
        raise ValueError("torch-version-use needs 'names' (dotted attributes such as torch.version.cuda)")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted(set(last_parts(as_list(params["names"]))))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    names = as_list(params["names"])
    return lambda code: "version" in code.text and any(has_name(code.text, name) for name in names)


@register("torch-version-use", validate=_validate, needles=_needles, candidates=_code_test)
def match_version_use(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each reference to the attribute, rated by how it is used and whether ROCm is already handled."""
    if not isinstance(doc, PythonDocument) or "version" not in doc.text:
        return
    names = set(as_list(params["names"]))
    best: dict[int, Hit] = {}  # one hit a line: the use that matters most
    for name, ref in ((n, r) for n in sorted(names) for r in doc.refs_by_prefix.get(n, ())):
        hit = _rated(doc, _inner(ref.node, ref.dotted.count(".") - name.count(".")), name)
        current = best.get(hit.line)
        if current is None or _rank(hit) > _rank(current):
            best[hit.line] = hit
    yield from (best[line] for line in sorted(best))


def _rated(doc: PythonDocument, node: ast.expr, name: str) -> Hit:
    if in_nvidia_predicate(doc, node):
        return Hit(node.lineno, node.col_offset + 1, end_line=node.end_lineno, severity=Severity.INFO,
                   message=_PREDICATE, symbol=name)
    severity, message = _usage(doc, node)
    lowered, why = hip_adjusted(doc, node)
    if lowered is not None and (severity is None or lowered < severity):
        severity, message = lowered, why
    return Hit(node.lineno, node.col_offset + 1, end_line=node.end_lineno, severity=severity, message=message,
               symbol=name)


def _rank(hit: Hit) -> int:
    """None means the rule's own severity, the highest this matcher gives."""
    return int(Severity.BLOCKER) + 1 if hit.severity is None else int(hit.severity)


def _inner(node: ast.expr, depth: int) -> ast.expr:
    """`torch.version.cuda.split` -> the `torch.version.cuda` inside it."""
    for _ in range(depth):
        node = node.value  # type: ignore[attr-defined]
    return node


def _usage(doc: PythonDocument, node: ast.AST) -> tuple[Severity | None, str | None]:
    """None (the rule's severity) for tests, parsing and arithmetic; lower for logging or storing."""
    child, parent = node, doc.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, (ast.FormattedValue, ast.JoinedStr)):
            return Severity.INFO, _LOGGED
        if isinstance(parent, (ast.Compare, ast.BoolOp, ast.BinOp, ast.Subscript)):
            return None, None
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            return None, None
        if isinstance(parent, _TESTS) and child is parent.test:
            return None, None
        if isinstance(parent, ast.Attribute) and parent.attr in _STRING_METHODS:
            return None, None
        if isinstance(parent, ast.Call) and child is not parent.func:
            callee = _callee(parent)
            if callee in PROSE_CALLS:
                return Severity.INFO, _LOGGED
            if callee in _PARSERS:
                return None, None
        child, parent = parent, doc.parents.get(parent)
    if isinstance(parent, (ast.If, ast.While, ast.Assert)) and child is parent.test:
        return None, None
    return Severity.LOW, _STORED


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
