"""Precision dispatch that knows some dtypes only: an if/elif chain on `p.dtype == torch.float16` whose final `else`
raises, with no arm for `torch.bfloat16`, so bf16 tensors are rejected. The same chain written with legacy type
strings (`p.type() == 'torch.cuda.HalfTensor'`) is reported at its raise: the type string itself has a rule."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import as_list, check_keys, hip_adjusted, names_code_test, names_needles
from migrate.matchers.python_literals import searches
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_KEYS = {"matcher", "accepted", "missing", "accepted_strings", "missing_strings"}


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "dtype-chain")
    for key in ("accepted", "missing"):
        values = as_list(params.get(key))
        if not values or not all(isinstance(v, str) for v in values):
            raise ValueError(f"dtype-chain needs '{key}' (dotted names of dtypes, torch.float16)")
    for key in ("accepted_strings", "missing_strings"):
        if not all(isinstance(v, str) and v for v in as_list(params.get(key))):
            raise ValueError(f"dtype-chain: '{key}' is a list of type strings (torch.cuda.HalfTensor)")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted({*names_needles(as_list(params["accepted"])), *as_list(params.get("accepted_strings"))})


_ELSE = r"\belse\s*:"


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """A chain this rule reports ends in an `else:` that raises: a file without both is not parsed for it."""
    named, strings = names_code_test(as_list(params["accepted"])), as_list(params.get("accepted_strings"))
    return lambda code: ("raise" in code.text and searches(_ELSE, code.text)
                         and (named(code) or any(s in code.text for s in strings)))


@register("dtype-chain", validate=_validate, needles=_needles, candidates=_code_test)
def match_dtype_chain(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The first test naming an accepted dtype in each chain that raises for the rest and never names a missing one."""
    if not isinstance(doc, PythonDocument):
        return
    accepted, missing = set(as_list(params["accepted"])), set(as_list(params["missing"]))
    accepted_strings, missing_strings = set(as_list(params.get("accepted_strings"))), set(as_list(params.get("missing_strings")))
    for head in doc.of_type(ast.If):
        parent = doc.parents.get(head)
        if isinstance(parent, ast.If) and parent.orelse == [head]:
            continue  # an elif: its chain is read from the head
        tests, rejection = _chain(head)
        if rejection is None:
            continue
        named = [(test, _dtypes(doc, test), _strings(test)) for test in tests]
        if any(names & missing or strings & missing_strings for _, names, strings in named):
            continue
        test = next((test for test, names, _ in named if names & accepted), None)
        if test is not None:
            severity, message = hip_adjusted(doc, test)
            # the place spans the chain down to its raise, whose message names the dtypes it takes
            yield Hit(test.lineno, test.col_offset + 1, end_line=rejection.end_lineno or rejection.lineno,
                      severity=severity, message=message, symbol=next(iter(sorted(_dtypes(doc, test) & accepted))))
            continue
        typed = next((strings & accepted_strings for _, _, strings in named if strings & accepted_strings), None)
        if typed:
            severity, message = hip_adjusted(doc, rejection)
            yield Hit(rejection.lineno, rejection.col_offset + 1, end_line=rejection.end_lineno or rejection.lineno,
                      severity=severity, message=message, symbol=f"else: raise (after {min(typed)})")


def _chain(head: ast.If) -> tuple[list[ast.expr], ast.Raise | None]:
    """The tests of an if/elif chain, and the raise of its final else (None when it does not raise)."""
    tests, node = [head.test], head
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        tests.append(node.test)
    return tests, next((statement for statement in node.orelse if isinstance(statement, ast.Raise)), None)


def _strings(test: ast.expr) -> set[str]:
    return {node.value for node in ast.walk(test) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def _dtypes(doc: PythonDocument, test: ast.expr) -> set[str]:
    return {name for node in ast.walk(test) if isinstance(node, ast.Attribute) and (name := doc.dotted(node))}
