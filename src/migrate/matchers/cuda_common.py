"""What the C/C++/CUDA matchers share: the logical line of a directive, tables made once per text, and where many
rules' strings occur, found in one pass per text."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ahocorasick_rs import AhoCorasick

from migrate.casefold import folded

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



class StringPlaces:
    """Where the strings that some rules' tests look for occur in a text, for all of them in one pass per text of an
    automaton of every string given (the rules' tests each read the whole text; one pass reads it once)."""

    def __init__(self) -> None:
        self._strings: list[str] = []  # every string given, by index
        self._index: dict[str, int] = {}
        self._search: list[Callable[[str], dict[int, list[int]]]] = []  # the current automaton's search, once made
        self._folded: list[Callable[[str], dict[int, list[int]] | None]] = []  # the same in a text's lower case

    def any_of(self, strings: Iterable[str]) -> Callable[[str], bool]:
        """A test of whether one of STRINGS occurs in a text (`any(s in text for s in STRINGS)`)."""
        indices = frozenset(self._indices(strings))
        return lambda text: not indices.isdisjoint(per_text(text, self._current()))

    def places_of(self, strings: Iterable[str]) -> Callable[[str], dict[str, list[int]]]:
        """Where each of STRINGS starts in a text (overlapping places too, in order), for those that occur."""
        given = list(strings)
        names = {index: string for string, index in zip(given, self._indices(given))}

        def places(text: str) -> dict[str, list[int]]:
            found = per_text(text, self._current())
            return {string: found[index] for index, string in names.items() if index in found}

        return places

    def folded_places_of(self, strings: Iterable[str]) -> Callable[[str], dict[str, list[int]] | None]:
        """Where each of STRINGS (in lower case) starts in a text's lower case, for those that occur; None for a text
        whose lower case cannot stand for it (casefold.folded). The places are the text's own offsets."""
        given = list(strings)
        names = {index: string for string, index in zip(given, self._indices(given))}

        def places(text: str) -> dict[str, list[int]] | None:
            found = per_text(text, self._current_folded())
            return None if found is None else {string: found[index] for index, string in names.items() if index in found}

        return places

    def _current_folded(self) -> Callable[[str], dict[int, list[int]] | None]:
        if not self._folded:
            search = self._current()

            def folded_search(text: str) -> dict[int, list[int]] | None:
                lower = folded(text)
                return None if lower is None else search(lower)

            self._folded.append(folded_search)
        return self._folded[0]

    def _indices(self, strings: Iterable[str]) -> list[int]:
        indices = []
        for string in strings:
            if string not in self._index:
                self._index[string] = len(self._strings)
                self._strings.append(string)
                self._search[:] = []  # a new automaton, with a new key for its per-text results
                self._folded[:] = []
            indices.append(self._index[string])
        return indices

    def _current(self) -> Callable[[str], dict[int, list[int]]]:
        if not self._search:
            automaton = AhoCorasick(self._strings)

            def search(text: str) -> dict[int, list[int]]:
                found: dict[int, list[int]] = {}
                for index, start, _ in automaton.find_matches_as_indexes(text, overlapping=True):
                    starts = found.get(index)
                    if starts is None:
                        found[index] = [start]
                    else:
                        starts.append(start)
                return found

            self._search.append(search)
        return self._search[0]
