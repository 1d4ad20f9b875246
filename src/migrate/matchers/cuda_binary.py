"""A prebuilt library in the tree that holds CUDA device code (its text is the list of nvcc's markers it holds, see
parse.document): one hit for the file, at its first line. `sources: beside` fires only for a library whose folder
holds CUDA sources (a build artifact committed with them), `sources: absent` (the default) only for one without."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.parse import Document
from migrate.parse.document import SOURCES_BESIDE

_NEEDLES = ["nv_fatbin", "__cudaRegister", "__fatbinwrap"]
_SOURCES = ("absent", "beside")


def _check(params: Mapping[str, Any]) -> None:
    if params.get("sources", "absent") not in _SOURCES:
        raise ValueError(f"cuda-binary: sources is one of {', '.join(_SOURCES)}")


@register("cuda-binary", needles=lambda _p: list(_NEEDLES), validate=_check)
def match_cuda_binary(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """One hit when the library holds any marker and its folder's sources are as the rule asks; the symbol names
    the markers."""
    markers = doc.text.split()
    beside = SOURCES_BESIDE in markers
    if beside:
        markers.remove(SOURCES_BESIDE)
    if markers and beside == (params.get("sources", "absent") == "beside"):
        yield Hit(1, 1, symbol=", ".join(markers))
