"""A regex over a C/C++ file's text whose match starts at the opening quote of a string literal in code (an option
string a run-time compiler is given, `"--gpu-architecture=compute_"`), never in a comment; found on the lexer's
pass, with no parse."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import Any

from migrate.matchers import Hit, new_hit, register, require_regex_and_needles
from migrate.matchers.cuda_common import StringPlaces
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed, in_string_literal


def _validate(params: Mapping[str, Any]) -> None:
    if not str(params.get("pattern", "")).startswith('"'):
        raise ValueError("c-string needs 'pattern', a regex that starts with the literal's opening quote")
    require_regex_and_needles(params, "c-string", "a regex that starts with the literal's opening quote")


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@cache
def _needles(needles: tuple[str, ...]) -> Callable[[str], bool]:
    return _NEEDLES.any_of(needles)


_NEEDLES = StringPlaces()  # every c-string rule's needles


def string_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line where the rule's pattern matches from the opening quote of a string literal in code (asked by the
    scan only of a text that holds one of the rule's needles: prefilter.Plan.token_runs)."""
    done: set[int] = set()
    for match in _regex(params["pattern"]).finditer(text):
        start = match.start()
        if start + 1 >= len(text) or not in_string_literal(text, lexed.code, start + 1):
            continue
        line, column = lexed.point(start)
        if line not in done:
            done.add(line)
            yield new_hit(line, column, symbol=match.group()[:80])


@register("c-string", validate=_validate, needles=lambda p: list(p["needles"]), tokens=string_hits)
def match_c_string(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line of a C/C++ file where `pattern` matches from a string literal's opening quote."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    # a parsed file's rules are not sorted by their needles: one pass of an automaton of the needles (every rule's,
    # once per text) first, the regex only where one occurs
    if not _needles(tuple(params["needles"]))(doc.text):
        return iter(())
    return string_hits(doc.lexed_for(frozenset()), doc.text, params)
