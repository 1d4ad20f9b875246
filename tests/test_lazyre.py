"""Regexes compiled on first use: nothing is compiled until a search, and the answers are those of `re`."""

from __future__ import annotations

import re

from migrate.lazyre import lazy_regex


def test_a_lazy_regex_compiles_on_its_first_search_and_answers_as_re_does() -> None:
    pattern = lazy_regex(r"warp(\w*)", re.I)
    assert "compiled" not in vars(pattern)
    text = "a WarpSize and a warp_id"
    compiled = re.compile(r"warp(\w*)", re.I)
    assert pattern.search(text).group(1) == "Size"  # type: ignore[union-attr]
    assert "compiled" in vars(pattern)
    assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert pattern.findall(text) == compiled.findall(text) == ["Size", "_id"]
    assert pattern.sub("W", text) == compiled.sub("W", text)
    assert pattern.match(text) is None and pattern.match(text, 2) is not None
    assert pattern.fullmatch("warpx") is not None and pattern.fullmatch("warp x") is None
    assert pattern.pattern == compiled.pattern
