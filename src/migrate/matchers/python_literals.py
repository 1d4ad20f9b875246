"""Literals that every match of a regex contains, so that plain searches rule a text out before the regex runs."""

from __future__ import annotations

import importlib
import re
import sys
from functools import lru_cache
from typing import Any

from migrate.parse.python import folded

# The stdlib's regex parser (re._parser from 3.11, sre_parse before: the same module, renamed).
_PARSER: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
_MAX_STRINGS = 64  # a larger set of literals costs more plain searches than the regex it would spare
_MIN_SIZE = 3  # shorter literals occur in most texts: no test
_MAX_CLASS = 16  # a character class of more characters ends a run of literals

Strings = frozenset[str]
Required = tuple[tuple[Strings, ...], bool]  # sets of literals (each: one must occur), and whether in lower case


def searches(regex: str, text: str) -> bool:
    """`re.search(REGEX, TEXT)` finds something: first ruled out, where it can be, by plain searches of TEXT for the
    literals that every match contains (a regex that starts with no literal tries every position of TEXT)."""
    found = required(regex)
    if found is not None:
        sets, lowered = found
        haystack = _lower(text) if lowered else text
        if haystack is not None and not all(any(s in haystack for s in strings) for strings in sets):
            return False
    return _compiled(regex).search(text) is not None


_compiled = lru_cache(maxsize=None)(re.compile)  # re's own cache holds 512: the rules' regexes may outgrow it


def _lower(text: str) -> str | None:
    """TEXT in lower case, where that holds every case-insensitive match's ASCII literals in lower case; else None.
    Kept for the last text: a file's tests ask for it several times."""
    if _LAST[0] is not text:
        _LAST[:] = [text, folded(text)]
    return _LAST[1]


_LAST: list[str | None] = [None, None]  # the last text and its lower case


@lru_cache(maxsize=None)
def required(regex: str) -> Required | None:
    """Sets of literals, one of each set in every match of REGEX (strongest first), and whether they are in lower
    case (to be searched in the text's lower case: REGEX ignores case somewhere); None when none is known."""
    parsed = _PARSER.parse(regex)
    lowered = bool(parsed.state.flags & re.IGNORECASE) or _ignores_case(parsed.data)
    try:
        sets = _sequence(parsed.data, lowered)
    except _Unknown:
        return None
    sets = sorted((s for s in sets if min(map(len, s)) >= _MIN_SIZE), key=lambda s: (-min(map(len, s)), len(s)))
    return (tuple(sets), lowered) if sets else None


class _Unknown(Exception):
    """A literal this module does not fold with certainty (beyond ASCII, in a regex that ignores case)."""


def _ignores_case(items: list[tuple[Any, Any]]) -> bool:
    for op, av in items:
        name = op.name
        if name == "SUBPATTERN" and (av[1] & re.IGNORECASE or _ignores_case(av[3].data)):
            return True
        if name == "BRANCH" and any(_ignores_case(branch.data) for branch in av[1]):
            return True
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and _ignores_case(av[2].data):
            return True
        if name in ("ASSERT", "ASSERT_NOT", "ATOMIC_GROUP"):
            if _ignores_case((av[1] if name != "ATOMIC_GROUP" else av).data):
                return True
    return False


def _sequence(items: list[tuple[Any, Any]], lowered: bool) -> list[Strings]:
    """Literal sets of which every match of the sequence ITEMS holds one member each: runs of items whose matches
    are few known strings (concatenated), and what mandatory groups inside it require."""
    found: list[Strings] = []
    run: Strings = frozenset({""})
    for op, av in items:
        name = op.name
        if name in ("AT", "ASSERT_NOT"):  # zero width: what stands on each side is adjacent in the text
            continue
        if name == "ASSERT":  # a lookaround that must match: what it requires is in the text too
            found.extend(_sequence(av[1].data, lowered))
            continue
        exact = _exact(op, av, lowered)
        if exact is not None and len(run) * len(exact) <= _MAX_STRINGS:
            run = frozenset(a + b for a in run for b in exact)
            continue
        found.append(run)
        if exact is not None:
            run = exact
        else:
            found.extend(_inside(op, av, lowered))
            run = frozenset({""})
    found.append(run)
    return [s for s in found if "" not in s]


def _inside(op: Any, av: Any, lowered: bool) -> list[Strings]:
    """What an item of unknown matches requires: its group's or its repeated part's sets, or one of each branch's."""
    name = op.name
    if name == "SUBPATTERN":
        return _sequence(av[3].data, lowered)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[0] >= 1:
        return _sequence(av[2].data, lowered)
    if name == "ATOMIC_GROUP":
        return _sequence(av.data, lowered)
    if name == "BRANCH":
        union: set[str] = set()
        for branch in av[1]:
            sets = _sequence(branch.data, lowered)
            if not sets:
                return []
            union |= max(sets, key=lambda s: min(map(len, s)))
        return [frozenset(union)] if len(union) <= _MAX_STRINGS else []
    return []


def _exact(op: Any, av: Any, lowered: bool) -> Strings | None:
    """Every string the item matches, when they are few and known; else None."""
    name = op.name
    if name == "LITERAL":
        return frozenset({_char(av, lowered)})
    if name == "IN":
        return _in(av, lowered)
    if name == "SUBPATTERN":
        return _exact_sequence(av[3].data, lowered)
    if name == "BRANCH":
        union: set[str] = set()
        for branch in av[1]:
            strings = _exact_sequence(branch.data, lowered)
            if strings is None:
                return None
            union |= strings
        return frozenset(union) if len(union) <= _MAX_STRINGS else None
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[1] <= 1:
        strings = _exact_sequence(av[2].data, lowered)
        if strings is None:
            return None
        return strings | {""} if av[0] == 0 else strings
    return None


def _exact_sequence(items: list[tuple[Any, Any]], lowered: bool) -> Strings | None:
    run: Strings = frozenset({""})
    for op, av in items:
        if op.name in ("AT", "ASSERT_NOT", "ASSERT"):
            continue
        exact = _exact(op, av, lowered)
        if exact is None or len(run) * len(exact) > _MAX_STRINGS:
            return None
        run = frozenset(a + b for a in run for b in exact)
    return run


def _in(items: list[tuple[Any, Any]], lowered: bool) -> Strings | None:
    """The characters of a class of a few literals and ranges (None for a negated class or a category)."""
    chars: set[str] = set()
    for op, av in items:
        if op.name == "LITERAL":
            chars.add(_char(av, lowered))
        elif op.name == "RANGE" and av[1] - av[0] < _MAX_CLASS:
            chars.update(_char(code, lowered) for code in range(av[0], av[1] + 1))
        else:
            return None
    return frozenset(chars) if len(chars) <= _MAX_CLASS else None


def _char(code: int, lowered: bool) -> str:
    char = chr(code)
    if not lowered:
        return char
    if not char.isascii():
        raise _Unknown
    return char.lower()
