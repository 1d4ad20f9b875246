"""The matcher contract and registry: each matcher is one small module with @register."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from migrate.model import Severity
from migrate.parse import Document


@dataclass(frozen=True)
class Hit:
    """Where a matcher fired; optional fields refine the rule's defaults for this one place."""

    line: int
    column: int
    end_line: int | None = None
    severity: Severity | None = None
    message: str | None = None  # replaces the rule's message
    note: str | None = None  # appended to the message
    hip: str | None = None
    symbol: str | None = None
    optional: bool = False  # in an optional part of the project (an extra of its package): not on its main path


class MatchFunction(Protocol):
    def __call__(self, doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]: ...


Validator = Callable[[Mapping[str, Any]], None]
Needles = Callable[[Mapping[str, Any]], "list[str] | None"]


class Code:
    """What the tests that decide whether to parse a file look at: a C/C++ file's code with comments and string
    literals blanked, and its #include paths; a Python file's text as written (its tests read string literals)."""

    def __init__(self, text: str, includes: Sequence[str], words: frozenset[str] = frozenset()) -> None:
        self.text = text
        self.includes = includes
        self.words = words  # C/C++: the identifiers of the matchers' `identifiers` that the lexer found in the code

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def with_includes(self) -> str:
        """The code followed by an `#include <path>` line for each include (the code has their paths blanked)."""
        if not self.includes:
            return self.text
        return "\n".join([self.text, *(f"#include <{path}>" for path in self.includes)])


CodeTest = Callable[[Code], bool]  # whether a rule may fire in this code
Candidates = Callable[[Mapping[str, Any]], CodeTest]
Identifiers = Callable[[Mapping[str, Any]], frozenset[str]]


@dataclass(frozen=True)
class Matcher:
    """A registered matcher: the function, a check for its rule parameters, its prefilter words, and for matchers
    that need a C/C++ file's tree, the test on its code that must pass for a rule to fire (else the file is not
    parsed for it)."""

    name: str
    function: MatchFunction
    validate: Validator | None = None
    needles: Needles | None = None
    candidates: Candidates | None = None
    identifiers: Identifiers | None = None  # C/C++ names the lexer finds for the rule (and its test, Code.words)


_REGISTRY: dict[str, Matcher] = {}
_loaded = False


def register(
    name: str, *, validate: Validator | None = None, needles: Needles | None = None,
    candidates: Candidates | None = None, identifiers: Identifiers | None = None,
) -> Callable[[MatchFunction], MatchFunction]:
    """Add a matcher under NAME. VALIDATE raises ValueError on bad rule params; NEEDLES lists
    strings one of which must occur in a file for the matcher to have any chance (None: always run);
    CANDIDATES gives the code test a C/C++ rule needs to pass before the file is parsed for it, and IDENTIFIERS
    the names the lexer finds for the rule in its one pass over the code (its token form and Code.words read
    them)."""

    def wrap(function: MatchFunction) -> MatchFunction:
        _REGISTRY[name] = Matcher(name, function, validate, needles, candidates, identifiers)
        return function

    return wrap


def names_in(names: frozenset[str]) -> CodeTest:
    """A code test: one of NAMES is an identifier in the code (they must be the matcher's `identifiers`)."""
    return lambda code: not names.isdisjoint(code.words)


def get(name: str) -> Matcher | None:
    _load_all()
    return _REGISTRY.get(name)


def names() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True
