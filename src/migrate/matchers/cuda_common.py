"""What the C/C++/CUDA token matchers share: the logical line of a directive, and tables made once per text."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

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
