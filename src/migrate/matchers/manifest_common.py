"""Shared parameter checks and helpers of the manifest matchers (no matcher is registered here)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from functools import cache
from typing import Any


def check(params: Mapping[str, Any], *, lists: tuple[str, ...] = (), regexes: tuple[str, ...] = (),
          required: tuple[str, ...] = ()) -> None:
    """Raise ValueError unless list params are non-empty string lists and regex params compile."""
    matcher = params.get("matcher")
    for key in required:
        if key not in params:
            raise ValueError(f"{matcher} needs '{key}'")
    for key in (*lists, "needles"):
        value = params.get(key)
        if value is not None and (not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value)):
            raise ValueError(f"{matcher}: '{key}' must be a non-empty list of strings")
    for key in regexes:
        if key in params:
            if not isinstance(params[key], str):
                raise ValueError(f"{matcher}: '{key}' must be a regular expression string")
            re.compile(params[key])


@cache
def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def search(params: Mapping[str, Any], key: str, text: str) -> bool:
    """True when the optional regex param KEY is absent or found in TEXT."""
    pattern = params.get(key)
    return pattern is None or compiled(pattern).search(text) is not None


def name_matches(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def literal_prefixes(patterns: list[str]) -> list[str]:
    """The literal part of each glob before its first wildcard, in the spellings files use (- _ .)."""
    found = set()
    for pattern in patterns:
        prefix = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
        if len(prefix) >= 3:
            found.update({prefix, prefix.replace("-", "_"), prefix.replace("-", ".")})
        else:
            return []
    return sorted(found)


def needles(params: Mapping[str, Any], derived: list[str] | None) -> list[str] | None:
    """The rule's explicit needles, else DERIVED (None when nothing literal can be said)."""
    explicit = params.get("needles")
    if explicit:
        return list(explicit)
    return derived or None
