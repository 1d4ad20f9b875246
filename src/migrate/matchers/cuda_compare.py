"""Comparisons of a macro (`__CUDA_ARCH__ >= 800`, `CUDA_VERSION < 12000`) in code and #if conditions, or its uses as a
value (`return CUDART_VERSION;`), found on
tokens in every file: tree-sitter reads an #if condition only where it makes sense of the code around it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate import tokenscan
from migrate.matchers import Hit, register
from migrate.parse import Document


def _validate(params: Mapping[str, Any]) -> None:
    names = params.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ValueError("cuda-compare needs 'names': a non-empty list of identifiers")
    if not isinstance(params.get("uses", False), bool):
        raise ValueError("'uses' must be true or false")


@register("cuda-compare", validate=_validate, needles=lambda p: list(p["names"]),
          identifiers=lambda p: frozenset(p["names"]))
def match_cuda_compare(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line comparing one of `names` with < <= > >= == or !=, at the comparison's left operand (with `uses`,
    each line of code using one as a value instead)."""
    lexed = tokenscan.lexed(doc, frozenset(params["names"]))
    return tokenscan.compare_hits(lexed, lexed.code, params)
