"""A struct field or a call used as an operand (`prop.major * 10`, `int cc = prop.major;`, `getSMVersion() >= 90`),
found by walking up the tree from each place its name is written: a cuda-query of the same shape matches ordinary
nodes everywhere, and tree-sitter takes ~50 ms to compile it, more than checking a few files costs."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import tree_sitter

from migrate.matchers import Code, CodeTest, Hit, register
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


def _candidates(params: Mapping[str, Any]) -> CodeTest:
    """The rule's own code test (needles, `code` regexes), then what one of the walks below needs to find around a
    name in the code: a field after `.` or `->`; a call whose whole name `calls` takes, before its `(`; a variable
    named by `variables` as a whole word beside a comparison (or a member's `.` / `->`). Each is a necessary condition
    of a hit, asked only of the files the rule's own test lets through (~250 of CUTLASS + CCCL's 10,900)."""
    gate = code_candidates(params)
    fields = re.compile("(?:" + "|".join(map(re.escape, params["fields"])) + r")(?![A-Za-z0-9_])")
    call_words, calls = re.compile(params["call_words"]), re.compile(params["calls"])
    folded = _folded(params["call_words"])
    variables = re.compile(params["variables"]) if "variables" in params else None

    def walkable(code: Code) -> bool:
        text = code.text
        return (_field_place(text, fields) or (variables is not None and _variable_place(text, variables))
                or _call_place(code, call_words, folded, calls))

    return lambda code: gate(code) and walkable(code)


def _folded(call_words: str) -> re.Pattern[str] | None:
    """CALL_WORDS without its `(?i:...)`, to search the lower-cased code with, when it is lower-case words and
    `_?` (a regex that ignores case tries every position of the text: ~1.4 CPU s over CUTLASS + CCCL's candidate
    files, ~0.2 this way)."""
    inner = re.fullmatch(r"\(\?i:([a-z0-9_?|]+)\)", call_words)
    return re.compile(inner.group(1)) if inner else None


def _field_place(text: str, fields: re.Pattern[str]) -> bool:
    """A field name as a field expression's field (`prop.major`, `p -> minor`): `.` or `->` before it."""
    for match in fields.finditer(text):
        start = match.start()
        if start and text[start - 1] in _WORD_CHARS:  # part of a longer word (the search has no lookbehind: fast)
            continue
        if _before(text, start) in _FIELD_OPERATOR:
            return True
    return False


def _call_place(
    code: Code, call_words: re.Pattern[str], folded: re.Pattern[str] | None, calls: re.Pattern[str]
) -> bool:
    """A called name (its `(` next) that `calls` takes: the function's text ends with the whole word around a
    `call_words` match, after `::`, `.`, `->` or nothing (every alternative of `calls` is led by one of them)."""
    text = code.text
    if folded is not None and len(lower := code.lower) == len(text):  # the same places (ASCII folds in place)
        places = folded.finditer(lower)
    else:
        places = call_words.finditer(text)
    for match in places:
        start, end = _word_start(text, match.start()), _word_end(text, match.end())
        if _after(text, end) == "(" and any(calls.search(lead + text[start:end]) for lead in _LEADS):
            return True
    return False


_LEADS = ("", "::", ".", ">")


def _variable_place(text: str, variables: re.Pattern[str]) -> bool:
    """A whole word `variables` takes, compared (`cc >= 90`, `90 <= cc`) or a member (`arch.cc < 90`): a comparison
    right after it, or a comparison, `.` or `->` right before it (a digit before it is let through: tree-sitter may
    end a number there)."""
    for match in variables.finditer(text):
        start, end = match.span()
        if start and (text[start - 1] == "_" or text[start - 1].isascii() and text[start - 1].isalpha()):
            continue
        if _word_end(text, end) != end:
            continue
        if _after(text, end) in _COMPARED_BY or _before(text, start) in _AFTER_OPERATOR:
            return True
    return False


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_FIELD_OPERATOR = frozenset(".>*")  # `.`, `->` (and the pointer-to-member forms)
_COMPARED_BY = frozenset("<>=!")  # the first character of a comparison operator
_AFTER_OPERATOR = frozenset("<>=.")  # the last character of one, or a member access (`.`, `->`)


def _word_start(text: str, offset: int) -> int:
    while offset and (text[offset - 1].isascii() and (text[offset - 1].isalnum() or text[offset - 1] == "_")):
        offset -= 1
    return offset


def _word_end(text: str, offset: int) -> int:
    while offset < len(text) and text[offset].isascii() and (text[offset].isalnum() or text[offset] == "_"):
        offset += 1
    return offset


def _before(text: str, offset: int) -> str:
    """The character before OFFSET past blanks and line continuations ("" at the start)."""
    offset -= 1
    while offset >= 0 and _is_blank(text, offset):
        offset -= 1
    return text[offset] if offset >= 0 else ""


def _after(text: str, offset: int) -> str:
    """The character at or after OFFSET past blanks and line continuations ("" at the end)."""
    while offset < len(text) and _is_blank(text, offset):
        offset += 1
    return text[offset] if offset < len(text) else ""


def _is_blank(text: str, offset: int) -> bool:
    """A blank, or the backslash of a line continuation."""
    char = text[offset]
    return char.isspace() or char == "\\" and text[offset + 1 : offset + 2] in ("\n", "\r")


@register("cuda-operand", validate=_validate, needles=query_needles, candidates=_candidates)
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
