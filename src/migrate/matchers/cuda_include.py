"""#include of a CUDA header, with its HIP header (rules/data/hip_headers.yaml) as the suggestion; decided on the
lexer's includes in every C/C++ file."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from migrate.apimap import header_map
from migrate.matchers import Hit, register
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed


def _validate(params: Mapping[str, Any]) -> None:
    if "unless_path" in params:  # files of the library's own tree, where its headers are its own (scan/findings.py)
        re.compile(params["unless_path"])
    if "path" in params:  # an include path the rule describes whole (an absolute path into a CUDA install)
        re.compile(params["path"])
        needles = params.get("needles")
        if not isinstance(needles, list) or not needles or not all(isinstance(n, str) and n for n in needles):
            raise ValueError("cuda-include with 'path' needs a non-empty 'needles' list (literals of every match)")
        return
    headers = params.get("headers")
    if not isinstance(headers, list) or not headers or not all(isinstance(h, str) and h for h in headers):
        raise ValueError("cuda-include needs a non-empty 'headers' list (a name, or a prefix ending in '/' or '*')")


def _needles(params: Mapping[str, Any]) -> list[str]:
    if "path" in params:
        return list(params["needles"])
    return sorted({h.rstrip("*").split("/")[0] or h for h in params["headers"]})


def include_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each #include of one of the rule's headers or a header under one of its prefixes, or (`path`) each
    #include whose whole path the rule's regex matches."""
    if "path" in params:
        yield from _path_hits(lexed, params["path"])
        return
    names, prefixes = _headers(tuple(params["headers"]))
    for name, offset in lexed.includes:
        if name in names or name.startswith(prefixes):
            hip = header_map().hip_header(name)
            line, column = lexed.point(offset)
            yield Hit(line, column, hip=f"#include <{hip}>" if hip else None, symbol=name)


@register("cuda-include", validate=_validate, needles=_needles, tokens=include_hits)
def match_cuda_include(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each #include of one of the rule's headers (the lexer's includes, as in every C/C++ file)."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return include_hits(doc.lexed_for(frozenset()), doc.text, params)


def _path_hits(lexed: Lexed, pattern: str) -> Iterator[Hit]:
    regex = re.compile(pattern)
    for name, offset in lexed.includes:
        if regex.search(name):
            header = name.rsplit("/", 1)[-1]
            hip = header_map().hip_header(header)
            line, column = lexed.point(offset)
            yield Hit(line, column, hip=f"#include <{hip}>" if hip else None, symbol=name)


@cache
def _headers(headers: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """A cuda-include rule's headers: (exact names, prefixes), from names and prefixes ending in `/` or `*`."""
    prefixes = tuple(h.rstrip("*") for h in headers if h.endswith(("/", "*")))
    return frozenset(h for h in headers if not h.endswith(("/", "*"))), prefixes
