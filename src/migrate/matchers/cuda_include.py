"""#include of a CUDA header, with its HIP header (rules/data/hip_headers.yaml) as the suggestion."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import yaml

from migrate.matchers import Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument, register_query
from migrate.ruleset import data_path

_INCLUDES = register_query("(preproc_include path: [(system_lib_string) (string_literal)] @path)")


def _validate(params: Mapping[str, Any]) -> None:
    headers = params.get("headers")
    if not isinstance(headers, list) or not headers or not all(isinstance(h, str) and h for h in headers):
        raise ValueError("cuda-include needs a non-empty 'headers' list (a name, or a prefix ending in '/' or '*')")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted({h.rstrip("*").split("/")[0] or h for h in params["headers"]})


@cache
def _hip_headers() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """The CUDA -> HIP header table shared with the translator; empty if the data file is absent."""
    path = data_path("hip_headers.yaml")
    if not path.is_file():
        return {}, ()
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return dict(raw.get("headers") or {}), tuple((raw.get("prefixes") or {}).items())


def hip_header(name: str) -> str | None:
    """The HIP header that replaces a CUDA header, if the table knows one."""
    headers, prefixes = _hip_headers()
    if name in headers:
        return headers[name]
    return next((hip for prefix, hip in prefixes if name.startswith(prefix)), None)


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
            hip = hip_header(name)
            line = node.start_point.row + 1
            yield Hit(line, node.start_point.column + 1, hip=f"#include <{hip}>" if hip else None, symbol=name)
