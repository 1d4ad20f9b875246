"""#include of a CUDA header, with its HIP header (rules/data/hip_headers.yaml) as the suggestion."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.apimap import header_map
from migrate.matchers import Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument, register_query

_INCLUDES = register_query("(preproc_include path: [(system_lib_string) (string_literal)] @path)")


def _validate(params: Mapping[str, Any]) -> None:
    headers = params.get("headers")
    if not isinstance(headers, list) or not headers or not all(isinstance(h, str) and h for h in headers):
        raise ValueError("cuda-include needs a non-empty 'headers' list (a name, or a prefix ending in '/' or '*')")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted({h.rstrip("*").split("/")[0] or h for h in params["headers"]})


def _wanted(name: str, headers: list[str]) -> bool:
    for header in headers:
        if header.endswith(("/", "*")):
            if name.startswith(header.rstrip("*")):
                return True
        elif name == header:
            return True
    return False


@register("cuda-include", validate=_validate, needles=_needles)
def match_cuda_include(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each #include of one of the rule's headers."""
    if not isinstance(doc, CudaDocument):
        return
    for node in doc.captures(_INCLUDES).get("path", []):
        name = doc.node_text(node)[1:-1].strip()
        if _wanted(name, params["headers"]):
            hip = header_map().hip_header(name)
            line = node.start_point.row + 1
            yield Hit(line, node.start_point.column + 1, hip=f"#include <{hip}>" if hip else None, symbol=name)
