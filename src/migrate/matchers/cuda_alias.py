"""#define aliases that give a CUDA name its HIP meaning (`#define cudaMalloc hipMalloc`, `#define
__shfl_xor_sync(mask, v, l, w) __shfl_xor(v, l, w)`): the compat header of a project's own ROCm path, found on the
preprocessor lines of every C/C++/CUDA file."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed

# `NAME VALUE` or `NAME(params) VALUE`: the macro and the first identifier it expands to.
_ALIAS = re.compile(r"([A-Za-z_]\w*)(?:\([^)]*\))?\s+\(?\s*([A-Za-z_]\w*)")


def _validate(params: Mapping[str, Any]) -> None:
    for key in ("names", "values"):
        if not isinstance(params.get(key), str):
            raise ValueError(f"cuda-hip-alias needs '{key}': a regular expression")
        re.compile(params[key])
    if not (isinstance(params.get("needles"), list) and params["needles"]):
        raise ValueError("cuda-hip-alias needs 'needles': strings one of which a HIP alias holds")


def alias_hits(lexed: Lexed, _code: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each #define whose macro matches `names` (a CUDA name) and whose expansion starts with a name that matches
    `values` (its HIP counterpart)."""
    names, values = re.compile(params["names"]), re.compile(params["values"])
    for directive in lexed.directives:
        if directive.keyword != "define":
            continue
        alias = _ALIAS.match(directive.argument.strip())
        if alias and alias[1] != alias[2] and names.match(alias[1]) and values.match(alias[2]):
            yield Hit(directive.line, 1, symbol=alias[1], hip=alias[2])


@register("cuda-hip-alias", validate=_validate, needles=lambda p: list(p["needles"]), tokens=alias_hits)
def match_cuda_hip_alias(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each #define that aliases a CUDA name to its HIP counterpart."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    lexed = doc.lexed_for(frozenset())
    return alias_hits(lexed, lexed.code, params)
