"""The first NVIDIA SASS instruction of a .sass / .cuasm file (the file is NVIDIA machine code, one finding is
enough); a CSS Sass stylesheet, which shares the suffix, has no instruction lines and stays quiet."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from migrate.matchers import Hit, register, require_regex_and_needles
from migrate.parse import Document


def _validate(params: Mapping[str, Any]) -> None:
    require_regex_and_needles(params, "sass-listing", "a regex for one instruction line")


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


@register("sass-listing", validate=_validate, needles=lambda p: list(p["needles"]))
def match_sass_listing(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The first line that `pattern` matches (from its start), as one hit for the file."""
    found = _regex(params["pattern"]).search(doc.text)
    if found is None:
        return
    line = doc.text.count("\n", 0, found.start()) + 1
    column = found.start() - (doc.text.rfind("\n", 0, found.start()) + 1) + 1
    yield Hit(line, column, symbol="SASS")
