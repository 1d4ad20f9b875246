"""A prebuilt library in the tree that holds CUDA device code (its text is the list of nvcc's markers it holds, see
parse.document): one hit for the file, at its first line."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.parse import Document

_NEEDLES = ["nv_fatbin", "__cudaRegister", "__fatbinwrap"]


@register("cuda-binary", needles=lambda _p: list(_NEEDLES))
def match_cuda_binary(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """One hit when the library holds any marker; the symbol names them."""
    markers = doc.text.split()
    if markers:
        yield Hit(1, 1, symbol=", ".join(markers))
