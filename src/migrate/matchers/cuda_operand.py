"""A struct field or a call used as an operand (`prop.major * 10`, `int cc = prop.major;`, `getSMVersion() >= 90`),
found by walking up the tree from each place its name is written: a cuda-query of the same shape matches ordinary
nodes everywhere, and tree-sitter takes ~50 ms to compile it, more than checking a few files costs."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import tree_sitter

from migrate.matchers import Hit, register
from migrate.matchers.cuda_query import code_candidates, hits_on_lines, query_needles, runs_on, validate_code_tests
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument

# Where an expression is an operand: its parent, and which child of it the expression is (a field expression's
# value is also kept when assigned or returned; a call's only when compared, combined or kept in a variable).
_CALL_PLACES = {"binary_expression": ("left", "right"), "init_declarator": ("value",)}
_FIELD_PLACES = {**_CALL_PLACES, "assignment_expression": ("right",)}
_WORD_END = re.compile(rb"\w*")


def _validate(params: Mapping[str, Any]) -> None:
    fields = params.get("fields")
    if not (isinstance(fields, list) and fields and all(isinstance(f, str) and f.isidentifier() for f in fields)):
        raise ValueError("cuda-operand needs 'fields', a list of C identifiers")
    for key in ("object", "calls", "call_words", *(("variables",) if "variables" in params else ())):
        if not isinstance(params.get(key), str):
            raise ValueError(f"cuda-operand needs '{key}', a regex")
        try:
            re.compile(params[key])
        except re.error as exc:
            raise ValueError(f"bad '{key}' regex {params[key]!r}: {exc}") from None
    validate_code_tests(params)


@register("cuda-operand", validate=_validate, needles=query_needles, candidates=code_candidates)
def match_cuda_operand(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line where one of `fields` of an object whose text matches `object` is an operand (of a binary
    operator, an initializer, an assignment's right side, a return), or where a call whose function's text matches
    `calls` is a binary operator's operand or an initializer, or where a variable or member whose name matches
    `variables` is compared with a number (`computeCapability >= 90`); the hit is the name or the function."""
    if not isinstance(doc, CudaDocument) or not runs_on(doc, params):
        return
    found = [*_field_operands(doc, params), *_compared_calls(doc, params), *_compared_variables(doc, params)]
    yield from hits_on_lines(doc, sorted(found, key=lambda n: n.start_byte))


def _field_operands(doc: CudaDocument, params: Mapping[str, Any]) -> Iterator[tree_sitter.Node]:
    # no \b before: a regex that starts with one is tried at every position; a name's start is checked on its node
    names = re.compile(b"(?:" + b"|".join(re.escape(f.encode()) for f in params["fields"]) + rb")\b")
    owner = re.compile(params["object"])
    for match in names.finditer(doc.data):
        node = doc.root.descendant_for_byte_range(match.start(), match.end())
        if node is None or node.type != "field_identifier" or node.start_byte != match.start():
            continue
        expression = node.parent
        if expression is None or expression.type != "field_expression" or expression.child_by_field_name("field") != node:
            continue
        argument = expression.child_by_field_name("argument")
        if argument is not None and _is_operand(expression, _FIELD_PLACES, returned=True) and owner.search(
                doc.node_text(argument)):
            yield node


def _is_operand(expression: tree_sitter.Node, places: dict[str, tuple[str, ...]], *, returned: bool = False) -> bool:
    parent = expression.parent
    if parent is None:
        return False
    if parent.type == "return_statement":
        return returned
    if parent.type == "binary_expression" and _written_to_stream(parent, expression):
        return False
    return any(parent.child_by_field_name(name) == expression for name in places.get(parent.type, ()))


def _written_to_stream(binary: tree_sitter.Node, expression: tree_sitter.Node) -> bool:
    """Whether EXPRESSION is what a `<<` inserts (`cout << "major " << prop.major`): printed, not compared; a field
    shifted (`prop.major << 4`) is the left side and stays an operand."""
    operator = binary.child_by_field_name("operator")
    return operator is not None and operator.type == "<<" and binary.child_by_field_name("right") == expression


def _compared_calls(doc: CudaDocument, params: Mapping[str, Any]) -> Iterator[tree_sitter.Node]:
    """Functions whose text matches `calls`, called as an operand (above): each is found from the
    last word of its text, which the rule says holds a match of `call_words`."""
    function_name = re.compile(params["calls"])
    data = doc.data
    for word in re.finditer(params["call_words"].encode(), data):
        end = _WORD_END.match(data, word.end()).end()  # type: ignore[union-attr]
        node = doc.root.descendant_for_byte_range(end - 1, end)
        while node is not None and node.end_byte == end:
            parent = node.parent
            if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == node:
                if _is_operand(parent, _CALL_PLACES) and function_name.search(doc.node_text(node)):
                    yield node
                break
            node = parent


_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})


def _compared_variables(doc: CudaDocument, params: Mapping[str, Any]) -> Iterator[tree_sitter.Node]:
    """Variables or members whose whole name matches `variables`, compared with a number literal: each is found
    from its name's text, then checked on the tree (a name in a comment or a string has no such node)."""
    if "variables" not in params:
        return
    for match in re.finditer(params["variables"].encode(), doc.data):
        node = doc.root.descendant_for_byte_range(match.start(), match.end())
        if node is None or node.type not in ("identifier", "field_identifier") or (
                node.start_byte, node.end_byte) != match.span():
            continue
        operand = node.parent if node.type == "field_identifier" else node
        if operand is not None and _compared_with_number(operand):
            yield node


def _compared_with_number(operand: tree_sitter.Node) -> bool:
    parent = operand.parent
    if parent is None or parent.type != "binary_expression":
        return False
    operator = parent.child_by_field_name("operator")
    if operator is None or operator.type not in _COMPARISONS:
        return False
    left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    other = right if left == operand else left
    return other is not None and other.type == "number_literal"
