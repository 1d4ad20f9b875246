"""CUDA runtime, driver, device and library names, looked up in the CUDA -> HIP map."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate import tokenscan
from migrate.apimap import api_map
from migrate.matchers import Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument

_NEEDLE_LENGTH = 4


def _validate(params: Mapping[str, Any]) -> None:
    libraries = params.get("libraries")
    if not isinstance(libraries, list) or not libraries:
        raise ValueError("cuda-api needs a non-empty 'libraries' list")
    known = {e.library for e in api_map().values()}
    unknown = set(libraries) - known
    if unknown:
        raise ValueError(f"unknown libraries: {', '.join(sorted(unknown))}")
    if params.get("with_hip") not in (True, False, "any"):
        raise ValueError("cuda-api needs 'with_hip': true (renames), false (no HIP equivalent) or any")


def _needles(params: Mapping[str, Any]) -> list[str]:
    names = tokenscan.api_names_of(frozenset(params["libraries"]), params["with_hip"])
    return sorted({name[:_NEEDLE_LENGTH] for name in names})


def _identifiers(params: Mapping[str, Any]) -> frozenset[str]:
    return tokenscan.api_name_set(frozenset(params["libraries"]), params["with_hip"])


@register("cuda-api", validate=_validate, needles=_needles, identifiers=_identifiers)
def match_cuda_api(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each use of a CUDA API name in code: a rename (with_hip) or a name HIP lacks (not with_hip). Decided on
    the lexer's tokens in every file (tokenscan.api_hits), so a parse changes nothing."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return tokenscan.api_hits(tokenscan.lexed(doc, _identifiers(params)), doc.text, params)
