"""The first #include of a C/C++/CUDA file, where a port puts the header the file lacks (a compat header that a file
calling the CUDA runtime through nvcc's implicit cuda_runtime.h needs on ROCm); decided on the lexer's pass alone.

The include counts when only comments, blank lines, #define, #undef and #pragma lines come before it (not the
include of a header guard's #ifndef, nor one after code). `if_code` must be found in the file's code (comments,
strings and include paths blanked), none of the `unless_words` (regexes that start with a literal, matched at the
start of a word: the search runs in C) may be, and no include path may match `unless_includes`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check, compiled
from migrate.matchers.cuda_query import prefix_search
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed

_HEAD_DIRECTIVES = frozenset({"define", "undef", "pragma"})
_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(\w*)")


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("needles", "unless_words"), regexes=("if_code", "unless_includes"), required=("needles",))
    for pattern in params.get("unless_words", ()):
        compiled(pattern)


def first_include_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The file's first #include, when it heads the file and the rule's code and include tests let it fire."""
    if not lexed.includes or not _applies(lexed, params):
        return
    name, offset = lexed.includes[0]
    if _heads_file(lexed.code, offset):
        line, column = lexed.point(offset)
        yield Hit(line, column, symbol=name)


def _applies(lexed: Lexed, params: Mapping[str, Any]) -> bool:
    code = lexed.code
    if "if_code" in params and not prefix_search(params["if_code"], code):
        return False
    if any(_word_found(compiled(p), code) for p in params.get("unless_words", ())):
        return False
    unwanted = compiled(params["unless_includes"]) if "unless_includes" in params else None
    return unwanted is None or not any(unwanted.search(path) for path, _ in lexed.includes)


def _word_found(pattern: re.Pattern[str], code: str) -> bool:
    """Whether PATTERN matches in CODE where a word starts (not `chipId` for `hip[A-Z]`)."""
    return any(m.start() == 0 or not (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_")
               for m in pattern.finditer(code))


def _heads_file(code: str, offset: int) -> bool:
    """Whether only blank lines and #define / #undef / #pragma lines (with their continuations) come before the
    line of OFFSET in CODE (comments are blank there)."""
    continued = False
    for line in code[: code.rfind("\n", 0, offset) + 1].splitlines():
        stripped = line.strip()
        if not continued and stripped:
            directive = _DIRECTIVE.match(line)
            if directive is None or directive.group(1) not in _HEAD_DIRECTIVES:
                return False
        continued = stripped.endswith("\\")
    return True


@register("cuda-first-include", validate=_validate, needles=lambda p: list(p["needles"]),
          candidates=lambda _p: lambda _code: False, tokens=first_include_hits)
def match_cuda_first_include(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The file's first #include, as first_include_hits decides it on the lexer's pass."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return first_include_hits(doc.lexed_for(frozenset()), doc.text, params)
