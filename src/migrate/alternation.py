"""One regex for many words: their alternation factored by common prefixes, longest match first."""

from __future__ import annotations

import re
from typing import Any


def longest_match(words: set[str]) -> str:
    """An alternation of WORDS factored by common prefixes, longest match first."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _branch(root)


def _branch(node: dict[str, Any]) -> str:
    branches = [re.escape(char) + _branch(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in node else body
