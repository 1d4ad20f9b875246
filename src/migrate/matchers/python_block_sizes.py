"""Block sizes a GPU kernel accepts or defaults to, down to one warp's worth: `blocksize in [4096, ..., 128, 64]`,
`torch._check(blocksize in [...])`, `def quantize(A, blocksize=64)`, a config field `blocksize: int = 64`.
A parameter's default spans down to the body's first use of it: where ROCm ports resolve the size per platform
(`if blocksize is None: blocksize = 64 if not HIP_ENVIRONMENT else 128`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import as_list, check_bounds, check_keys, check_regex, check_words, has_word
from migrate.matchers.python_literals import searches
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_KEYS = {"matcher", "needles", "names", "at_least", "at_most", "if_file", "unless_file"}


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "block-size-choice")
    check_words(params, "needles", "block-size-choice needs 'needles' (the block-size names, as words)")
    check_regex(params, "names", required=True)
    wanted = as_list(params.get("if_file"))
    if not wanted:
        raise ValueError("block-size-choice needs 'if_file' (regexes that the module must all match)")
    for regex in wanted:
        check_regex({"if_file": regex}, "if_file", required=True)
    check_regex(params, "unless_file", required=False)
    check_bounds(params, "block-size-choice")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted(set(as_list(params["needles"])))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """A file that names a block size, matches every `if_file` regex and does not match `unless_file`."""
    needles = as_list(params["needles"])
    return lambda code: any(has_word(code.text, n) for n in needles) and _text_wanted(code.text, params)


def _text_wanted(text: str, params: Mapping[str, Any]) -> bool:
    if not all(searches(regex, text) for regex in as_list(params["if_file"])):
        return False
    return "unless_file" not in params or not searches(params["unless_file"], text)


@register("block-size-choice", validate=_validate, needles=_needles, candidates=_code_test)
def match_block_size_choice(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each list of accepted block sizes, and each default block size, that holds a size from `at_least` to
    `at_most` (a microscaling format's own block of 16 or 32 values is no kernel's choice)."""
    if not isinstance(doc, PythonDocument) or not _text_wanted(doc.text, params):
        return
    names, limit = re.compile(params["names"]), range(params["at_least"], params["at_most"] + 1)
    seen: set[int] = set()
    found = [*_accepted_lists(doc, names, limit), *_defaults(doc, names, limit)]
    for node, symbol, end in sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset)):
        if node.lineno not in seen:
            seen.add(node.lineno)
            yield Hit(node.lineno, node.col_offset + 1, end_line=end, symbol=symbol)


Found = Iterator[tuple[ast.expr, str, int | None]]


def _accepted_lists(doc: PythonDocument, names: re.Pattern[str], limit: range) -> Found:
    """`blocksize in [4096, 2048, ..., 64]` (or `not in`): a membership test against a literal list of sizes."""
    for node in doc.of_type(ast.Compare):
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.In, ast.NotIn)):
            continue
        name, sizes = _last_name(node.left), _int_items(node.comparators[0])
        if name and names.fullmatch(name) and len(sizes) >= 2 and any(s in limit for s in sizes):
            yield node, f"{name} in {sorted(sizes, reverse=True)}", None


def _defaults(doc: PythonDocument, names: re.Pattern[str], limit: range) -> Found:
    """`def f(A, blocksize=64)` and a class field `blocksize: int = 64`: a default within the limits."""
    for function in doc.of_type(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
                 *zip(arguments.kwonlyargs, arguments.kw_defaults)]
        for argument, default in pairs:
            if default is not None and names.fullmatch(argument.arg) and _small(default, limit):
                yield default, f"{argument.arg}={_value(default)}", _first_use(function, argument.arg)
    for klass in doc.of_type(ast.ClassDef):
        for statement in klass.body:
            if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                    and names.fullmatch(statement.target.id) and statement.value is not None
                    and _small(statement.value, limit)):
                yield statement.value, f"{statement.target.id} = {_value(statement.value)}", None


def _first_use(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, name: str) -> int | None:
    """The line where the body first reads parameter NAME (None when it never reads it)."""
    body = [function.body] if isinstance(function, ast.Lambda) else function.body
    lines = [node.lineno for statement in body for node in ast.walk(statement)
             if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)]
    return min(lines, default=None)


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _int_items(node: ast.expr) -> list[int]:
    """The integers of a literal list, tuple or set made only of integers (else nothing)."""
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return []
    values = [e.value for e in node.elts if isinstance(e, ast.Constant) and type(e.value) is int]
    return values if len(values) == len(node.elts) else []


def _small(node: ast.expr, limit: range) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value in limit


def _value(node: ast.expr) -> str:
    return str(node.value) if isinstance(node, ast.Constant) else "?"
