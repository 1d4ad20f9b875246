"""Code named after a CUDA library that is not the library's own API (`namespace cublas_gemmex`, `get_cudnn_version`,
`CUBLAS_CHECK`): a project's wrappers, macros and namespaces over cuBLAS or cuDNN, found on the lexer's code (comments,
strings and #include paths blanked) in every C/C++ file."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from ahocorasick_rs import AhoCorasick, MatchKind

from migrate.apimap import api_names
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
def _automaton(words: tuple[str, ...]) -> AhoCorasick:
    """One of WORDS in one of its spellings (the needles, so the prefilter agrees), found as the regex of the
    spellings in turn would find them (leftmost, the first spelling that matches there): one pass of an
    automaton, ~7 times faster than the regex, whose first letters c, C and n stop it all over C++ code; the
    identifier around it is found from there."""
    return AhoCorasick(_spellings(words), matchkind=MatchKind.LeftmostFirst)


_WORD_END = re.compile(r"\w*")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return _spellings(tuple(params["words"]))


def library_name_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line of code with an identifier that names one of the rule's libraries and is not a name of any CUDA
    library's API (those are the API rules' findings), once per line."""
    api, code = api_names(), lexed.code
    seen: set[int] = set()
    end = -1
    for _, start, stop in _automaton(tuple(params["words"])).find_matches_as_indexes(code):
        if start < end:
            continue  # a second spelling inside the identifier already judged
        while start and (code[start - 1].isalnum() or code[start - 1] == "_"):
            start -= 1
        end = _WORD_END.match(code, stop).end()  # type: ignore[union-attr]
        name = code[start:end]
        if name in api or name[:1].isdigit():
            continue
        line, column = lexed.point(start)
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, symbol=name)


@register("cuda-library-names", validate=_validate, needles=_needles, tokens=library_name_hits)
def match_cuda_library_names(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line of code naming a CUDA library in an identifier that is not the library's API."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return library_name_hits(doc.lexed_for(frozenset()), doc.text, params)


# A CUDA library's file as dlopen / LoadLibrary takes it: libcuda.so.1, libnvrtc.so.12, nvcuda.dll, cudart64_12.dll
_LIBRARY_FILE = re.compile(
    r'"((?:lib(?:cuda|cudart|nvrtc|nvrtc-builtins|cublas|cublasLt|cudnn\w*|cufft|curand|cusparse|cusolver|nccl'
    r"|nvidia-ml|nvJitLink|nvToolsExt|nvinfer\w*|nvcuvid|nvidia-encode|npp(?:c|ial|icc|idei|if|ig|im|ist|isu|itc|s))"
    r"\.so(?:\.[0-9.]+)?)"
    r'|nvcuda\.dll|nvml\.dll|nvcuvid\.dll|nvEncodeAPI(?:64)?\.dll'
    r'|(?:cudart|cublas|cublasLt|cudnn|nvrtc|cufft|curand|cusparse|cusolver|npp\w+)64_\w+\.dll)"'
)
_FILE_NEEDLES = ["libcu", "libnv", "libnccl", "libnpp", ".dll"]  # each file name holds one (not "64_": uint64_t)


def library_file_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each string literal in code (not in a comment) that is a CUDA library's file name."""
    for match in _LIBRARY_FILE.finditer(text):
        start = match.start()
        window = max(0, start - 4096)
        stop = window + len(lexed.code[window:start].rstrip())  # the end of the code before the literal
        if lexed.code[start] != " " or text[stop:start].strip():
            continue  # the quote is code (not a literal), or the literal sits in a comment
        line, column = lexed.point(start)
        yield Hit(line, column, symbol=match.group(1))


@register("cuda-library-files", needles=lambda p: _FILE_NEEDLES, tokens=library_file_hits)
def match_cuda_library_files(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each string literal in code naming a CUDA library's file (what dlopen or LoadLibrary loads)."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return library_file_hits(doc.lexed_for(frozenset()), doc.text, params)
