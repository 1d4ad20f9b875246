"""The matcher contract and registry: each matcher is one small module with @register."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
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


class MatchFunction(Protocol):
    def __call__(self, doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]: ...


Validator = Callable[[Mapping[str, Any]], None]
Needles = Callable[[Mapping[str, Any]], "list[str] | None"]


@dataclass(frozen=True)
class Matcher:
    """A registered matcher: the function, a check for its rule parameters, and its prefilter words."""

    name: str
    function: MatchFunction
    validate: Validator | None = None
    needles: Needles | None = None


_REGISTRY: dict[str, Matcher] = {}
_loaded = False


def register(
    name: str, *, validate: Validator | None = None, needles: Needles | None = None
) -> Callable[[MatchFunction], MatchFunction]:
    """Add a matcher under NAME. VALIDATE raises ValueError on bad rule params; NEEDLES lists
    strings one of which must occur in a file for the matcher to have any chance (None: always run)."""

    def wrap(function: MatchFunction) -> MatchFunction:
        _REGISTRY[name] = Matcher(name, function, validate, needles)
        return function

    return wrap


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
