"""Code named after a CUDA library that is not the library's own API (`namespace cublas_gemmex`, `get_cudnn_version`,
`CUBLAS_CHECK`): a project's wrappers, macros and namespaces over cuBLAS or cuDNN, found on the lexer's code (comments,
strings and #include paths blanked) in every C/C++ file."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from migrate.apimap import api_map
from migrate.matchers import Hit, register
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed


def _validate(params: Mapping[str, Any]) -> None:
    words = params.get("words")
    if not isinstance(words, list) or not words or not all(isinstance(w, str) and w.isidentifier() for w in words):
        raise ValueError("cuda-library-names needs 'words': a non-empty list of library names (cublas, cudnn, ...)")


def _spellings(words: tuple[str, ...]) -> list[str]:
    """How code spells each library: cublas, CUBLAS, Cublas, cuBLAS, CuBLAS."""
    forms = (str.lower, str.upper, str.capitalize, lambda w: "cu" + w[2:].upper(), lambda w: "Cu" + w[2:].upper())
    return sorted({form(word) for word in words for form in forms})


@cache
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """An identifier that holds one of WORDS in one of its spellings (the needles, so the prefilter agrees)."""
    return re.compile(r"\b\w*?(?:" + "|".join(map(re.escape, _spellings(words))) + r")\w*")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return _spellings(tuple(params["words"]))


def library_name_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line of code with an identifier that names one of the rule's libraries and is not a name of any CUDA
    library's API (those are the API rules' findings), once per line."""
    api = api_map()
    seen: set[int] = set()
    for match in _pattern(tuple(params["words"])).finditer(lexed.code):
        name = match.group()
        if name in api or name[:1].isdigit():
            continue
        line, column = lexed.point(match.start())
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, symbol=name)


@register("cuda-library-names", validate=_validate, needles=_needles, tokens=library_name_hits)
def match_cuda_library_names(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line of code naming a CUDA library in an identifier that is not the library's API."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return library_name_hits(doc.lexed_for(frozenset()), doc.text, params)
