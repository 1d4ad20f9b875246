"""#include of a CUDA header, with its HIP header (rules/data/hip_headers.yaml) as the suggestion."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate import tokenscan
from migrate.matchers import Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument


def _validate(params: Mapping[str, Any]) -> None:
    headers = params.get("headers")
    if not isinstance(headers, list) or not headers or not all(isinstance(h, str) and h for h in headers):
        raise ValueError("cuda-include needs a non-empty 'headers' list (a name, or a prefix ending in '/' or '*')")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted({h.rstrip("*").split("/")[0] or h for h in params["headers"]})


@register("cuda-include", validate=_validate, needles=_needles)
def match_cuda_include(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each #include of one of the rule's headers (the lexer's includes, as in every C/C++ file)."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return tokenscan.include_hits(tokenscan.lexed(doc, frozenset()), doc.text, params)
