"""Regexes compiled on first use: a module's patterns cost nothing in a process that never runs them (`migrate check`
on a few files imports many modules but runs few of their patterns)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from functools import cached_property


class LazyRegex:
    """PATTERN with FLAGS, compiled the first time it searches; otherwise used like the compiled pattern."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once)."""
        return re.compile(self.pattern, self.flags)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[str]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)


def lazy_regex(pattern: str, flags: int = 0) -> LazyRegex:
    """PATTERN to be compiled on its first use (for a module's patterns that `migrate check` seldom runs)."""
    return LazyRegex(pattern, flags)
