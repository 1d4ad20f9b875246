"""CUDA kernels, on tokens in every file: definitions (`__global__ ... name(...) {`) at the kernel's name, and
`<<<...>>>` launches at the kernel launched, in host or device code by the qualifiers of the functions around them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate import tokenscan
from migrate.matchers import Hit, register
from migrate.parse import Document

_FORMS = ("definition", "launch")
_GLOBAL = frozenset({"__global__"})
_WHERE = ("any", "device", "host")


def _validate(params: Mapping[str, Any]) -> None:
    if params.get("form") not in _FORMS:
        raise ValueError(f"cuda-kernel needs 'form': one of {', '.join(_FORMS)}")
    if params.get("where", "any") not in _WHERE:
        raise ValueError(f"'where' must be one of {', '.join(_WHERE)}")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return ["__global__"] if params["form"] == "definition" else ["<<<"]


@register("cuda-kernel", validate=_validate, needles=_needles, identifiers=lambda _p: _GLOBAL)
def match_cuda_kernel(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each kernel defined, or each launch in the code `where` asks for; once per line."""
    lexed = tokenscan.lexed(doc, _GLOBAL)
    return tokenscan.kernel_hits(lexed, lexed.code, params)
