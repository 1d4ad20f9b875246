"""Literals that every match of a regex contains, so that plain searches rule a text out before the regex runs."""

from __future__ import annotations

import importlib
import re
import sys
from functools import lru_cache
from typing import Any

from ahocorasick_rs import AhoCorasick

from migrate.casefold import folded

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
        if haystack is not None and not all(_holds(strings, haystack) for strings in sets):
            return False
        word = _whole_word(regex)
        if word is not None and haystack is not None and text.isascii():
            return _word_found(word, text, _places(sets[0], haystack))
    return _compiled(regex).search(text) is not None


def _holds(strings: Strings, haystack: str) -> bool:
    """One of STRINGS is in HAYSTACK: for many, one pass of an automaton of them (not a search each)."""
    if len(strings) <= _SEARCHED_ONE_BY_ONE:
        return any(s in haystack for s in strings)
    return bool(_automaton(strings).find_matches_as_indexes(haystack))


def _places(strings: Strings, haystack: str) -> list[tuple[int, int]]:
    """Where each of STRINGS occurs in HAYSTACK (start, end), overlapping ones too."""
    return [(start, end) for _, start, end in _automaton(strings).find_matches_as_indexes(haystack, overlapping=True)]


_SEARCHED_ONE_BY_ONE = 4  # a set of more strings is searched by an automaton


@lru_cache(maxsize=None)
def _automaton(strings: Strings) -> AhoCorasick:
    return AhoCorasick(sorted(strings))


def _word_found(word: re.Pattern[str], text: str, places: list[tuple[int, int]]) -> bool:
    """Whether a whole word of TEXT (ASCII) is a match of WORD, looked for only in the words around PLACES (where
    the literals are, one of which every match holds)."""
    tried: set[int] = set()
    end = len(text)
    for start, stop in places:
        while start and _is_word(text[start - 1]):
            start -= 1
        if start in tried:
            continue
        tried.add(start)
        while stop < end and _is_word(text[stop]):
            stop += 1
        if word.fullmatch(text, start, stop):
            return True
    return False


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


_WORD_START, _WORD_END = r"(?<!\w)", r"(?!\w)"


@lru_cache(maxsize=None)
def _whole_word(regex: str) -> re.Pattern[str] | None:
    r"""For REGEX `(?<!\w)X(?!\w)` where X matches one or more word characters only (a `switches` or `names`
    test): X, compiled; its matches are whole words of a text. None for any other regex."""
    if not (regex.startswith(_WORD_START) and regex.endswith(_WORD_END)):
        return None
    items = _PARSER.parse(regex).data
    if len(items) < 3 or not (_is_word_lookaround(items[0], -1) and _is_word_lookaround(items[-1], 1)):
        return None
    middle = regex[len(_WORD_START) : -len(_WORD_END)]
    try:
        parsed = _PARSER.parse(middle)
    except re.error:
        return None
    if parsed.state.flags & ~(re.UNICODE | re.IGNORECASE) or parsed.getwidth()[0] < 1 or not _word_only(parsed.data):
        return None
    return re.compile(middle)


def _is_word_lookaround(item: tuple[Any, Any], direction: int) -> bool:
    r"""ITEM is `(?<!\w)` (DIRECTION -1) or `(?!\w)` (1)."""
    op, av = item
    if op.name != "ASSERT_NOT" or av[0] != direction or len(av[1].data) != 1:
        return False
    inner_op, inner_av = av[1].data[0]
    return inner_op.name == "IN" and len(inner_av) == 1 and inner_av[0][0].name == "CATEGORY" and (
        inner_av[0][1].name == "CATEGORY_WORD")


def _word_only(items: list[tuple[Any, Any]]) -> bool:
    """Every string the sequence ITEMS matches is made of word characters (on ASCII text)."""
    for op, av in items:
        name = op.name
        if name == "LITERAL":
            if not _is_word(chr(av)):
                return False
        elif name == "IN":
            if not all(_word_class_item(o.name, a) for o, a in av):
                return False
        elif name == "SUBPATTERN":
            if av[1] & ~re.IGNORECASE or av[2] or not _word_only(av[3].data):
                return False
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            if not _word_only(av[2].data):
                return False
        elif name == "BRANCH":
            if not all(_word_only(branch.data) for branch in av[1]):
                return False
        else:  # any other item (a class of anything, an anchor, a lookaround, a group reference): not known
            return False
    return True


def _word_class_item(name: str, av: Any) -> bool:
    if name == "LITERAL":
        return _is_word(chr(av))
    if name == "RANGE":
        return all(_is_word(chr(code)) for code in range(av[0], av[1] + 1)) if av[1] - av[0] < 128 else False
    if name == "CATEGORY":
        return av.name in ("CATEGORY_WORD", "CATEGORY_UNI_WORD", "CATEGORY_DIGIT", "CATEGORY_UNI_DIGIT")
    return False


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
