"""Settings chosen by an NVIDIA GPU's product name: `"A100" in torch.cuda.get_device_name()` and its variants."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import (
    as_list,
    check_keys,
    check_regex,
    hip_adjusted,
    names_code_test,
    names_needles,
)
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_KEYS = {"matcher", "sources", "models"}
_STRING_TESTS = frozenset({"startswith", "endswith", "find", "index", "count", "__contains__"})
_REGEX_TESTS = frozenset({"re.search", "re.match", "re.fullmatch", "re.findall"})


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "device-name-gate")
    if not as_list(params.get("sources")) or not all(isinstance(v, str) for v in as_list(params["sources"])):
        raise ValueError("device-name-gate needs 'sources' (dotted names of the calls that give a device name)")
    check_regex(params, "models", required=True)


def _needles(params: Mapping[str, Any]) -> list[str]:
    return names_needles(as_list(params["sources"]))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    return names_code_test(as_list(params["sources"]))


@register("device-name-gate", validate=_validate, needles=_needles, candidates=_code_test)
def match_device_name(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each test of a device name (from a source call, or a variable holding one) against an NVIDIA model name."""
    if not isinstance(doc, PythonDocument):
        return
    sources = set(as_list(params["sources"]))
    calls = {id(s.node) for s in doc.calls if s.name in sources}
    if not calls:
        return
    variables = _holders(doc, calls)
    models = re.compile(params["models"])
    seen: set[int] = set()
    for node, text, subject in _name_tests(doc):
        if node.lineno in seen or not models.search(text) or not _from_source(subject, calls, variables):
            continue
        seen.add(node.lineno)
        severity, message = hip_adjusted(doc, node)
        yield Hit(node.lineno, node.col_offset + 1, end_line=node.end_lineno, severity=severity, message=message,
                  symbol=text)


def _holders(doc: PythonDocument, calls: set[int]) -> set[str]:
    """Variables assigned from an expression that calls a source (`name = torch.cuda.get_device_name(0).lower()`)."""
    names: set[str] = set()
    for node in doc.assigns:
        if node.value is None or not any(id(n) in calls for n in ast.walk(node.value)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _name_tests(doc: PythonDocument) -> Iterator[tuple[ast.expr, str, ast.expr]]:
    """(the test, the string literal it checks for, the expression it checks): `"A100" in name`, `name == "..."`,
    `name.startswith("NVIDIA H100")`, `re.search("H100", name)`."""
    lists = _bound_lists(doc)
    for node in doc.of_type(ast.Compare):
        sides = [node.left, *node.comparators]
        texts = [s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
        others = [s for s in sides if not (isinstance(s, ast.Constant) and isinstance(s.value, str))]
        if not all(isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq)) for op in node.ops):
            continue
        if texts and others:
            yield node, texts[0], others[0]
        elif isinstance(node.left, ast.Name) and len(sides) == 2:
            # `any(g in name for g in ("A100", "H100"))`: each model of the list the loop walks
            yield from ((node, text, node.comparators[0]) for text in _walked(doc, node.left, lists))
    for node in doc.of_type(ast.Call):
        func = node.func
        literal = node.args[0] if node.args else None
        if not (isinstance(literal, ast.Constant) and isinstance(literal.value, str)):
            continue
        if isinstance(func, ast.Attribute) and func.attr in _STRING_TESTS:
            yield node, literal.value, func.value
        elif doc.dotted(func) in _REGEX_TESTS and len(node.args) > 1:
            yield node, literal.value, node.args[1]


def _bound_lists(doc: PythonDocument) -> dict[str, list[str]]:
    """Names bound to a literal list of strings: by an assignment or as a parameter's default."""
    lists: dict[str, list[str]] = {}
    for node in doc.assigns:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        strings = _strings(node.value)
        lists.update((t.id, strings) for t in targets if isinstance(t, ast.Name) and strings)
    for function in doc.of_type(ast.FunctionDef, ast.AsyncFunctionDef):
        positional = function.args.posonlyargs + function.args.args
        pairs = [*zip(positional[len(positional) - len(function.args.defaults):], function.args.defaults),
                 *zip(function.args.kwonlyargs, function.args.kw_defaults)]
        lists.update((arg.arg, strings) for arg, default in pairs if (strings := _strings(default)))
    return lists


def _walked(doc: PythonDocument, name: ast.Name, lists: dict[str, list[str]]) -> list[str]:
    """The strings NAME walks, when the nearest loop around it that binds it (a comprehension or a for statement)
    iterates over a literal list of strings, directly or through a name bound to one."""
    node: ast.AST | None = doc.parents.get(name)
    while node is not None:
        loops = node.generators if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) \
            else [node] if isinstance(node, ast.For) else []
        for loop in loops:
            if isinstance(loop.target, ast.Name) and loop.target.id == name.id:
                walked = loop.iter
                return _strings(walked) or (lists.get(walked.id, []) if isinstance(walked, ast.Name) else [])
        node = doc.parents.get(node)
    return []


def _strings(node: ast.expr | None) -> list[str]:
    """The items of a literal list, tuple or set of strings (none when any item is something else)."""
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)) or not node.elts:
        return []
    items = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return items if len(items) == len(node.elts) else []


def _from_source(node: ast.expr, calls: set[int], variables: set[str]) -> bool:
    return any(id(n) in calls or (isinstance(n, ast.Name) and n.id in variables) for n in ast.walk(node))
