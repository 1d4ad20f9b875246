"""What the C/C++/CUDA token matchers share: the logical line of a directive, and tables made once per text."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ahocorasick_rs import AhoCorasick

_CONTINUATION = re.compile(r"\\\n")
_Table = TypeVar("_Table")
_TEXTS: list[tuple[str, dict[object, Any]]] = []  # the last two texts asked about, with their tables


def in_directive(code: str, offset: int) -> bool:
    """OFFSET lies on a preprocessor directive's logical line."""
    return directive_head(code, offset).startswith("#")


def directive_head(code: str, offset: int) -> str:
    """The logical line (followed back across line continuations) up to OFFSET, without leading blanks."""
    line_start = code.rfind("\n", 0, offset) + 1
    if line_start > 1 and code[line_start - 2] == "\\":
        line_start = per_text(code, _logical_starts).get(line_start, line_start)
    return code[line_start:offset].lstrip()


def _logical_starts(code: str) -> dict[int, int]:
    """The start of every line that continues another, to the start of its logical line: a #define continued over
    20,000 lines is walked once, not once per word in it."""
    starts: dict[int, int] = {}
    for match in _CONTINUATION.finditer(code):
        line_start = code.rfind("\n", 0, match.start()) + 1
        starts[match.end()] = starts.get(line_start, line_start)
    return starts


def per_text(text: str, build: Callable[[str], _Table]) -> _Table:
    """BUILD(TEXT), made once per text: a file's rules ask about its code and its text, each many times."""
    tables = next((kept for seen, kept in _TEXTS if seen is text), None)
    if tables is None:
        tables = {}
        _TEXTS[:] = [(text, tables), *_TEXTS[:1]]
    if build not in tables:
        tables[build] = build(text)
    return tables[build]  # type: ignore[no-any-return]


def any_of(strings: Iterable[str]) -> Callable[[str], bool]:
    """A test of whether one of STRINGS occurs in a text (`any(s in text for s in STRINGS)`), answered from one pass
    per text of an automaton of every string given to any_of in this process (the rules' tests each read the
    whole text; a pass for all of them reads it once)."""
    wanted = set()
    for string in strings:
        if string not in _STRING_INDEX:
            _STRING_INDEX[string] = len(_STRINGS)
            _STRINGS.append(string)
            _SEARCH[:] = []  # a new automaton, with a new key for its per-text results
        wanted.add(_STRING_INDEX[string])
    indices = frozenset(wanted)
    return lambda text: not indices.isdisjoint(per_text(text, _search()))


def _search() -> Callable[[str], set[int]]:
    """The search of the current automaton of every string: the indices of those found in a text."""
    if not _SEARCH:
        automaton = AhoCorasick(_STRINGS)

        def found(text: str) -> set[int]:
            return {index for index, _, _ in automaton.find_matches_as_indexes(text, overlapping=True)}

        _SEARCH.append(found)
    return _SEARCH[0]


_STRINGS: list[str] = []  # every string any_of was given, by index
_STRING_INDEX: dict[str, int] = {}
_SEARCH: list[Callable[[str], set[int]]] = []  # the search of an automaton of _STRINGS, once made
