"""OpenACC directives in C and C++ sources (`#pragma acc parallel loop`), found on the lexer's code: ROCm's own
compilers (amdclang, hipcc) do not take them, so the file's offloaded loops need another compiler or OpenMP."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.lazyre import lazy_regex
from migrate.matchers import Hit, register
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed

_GAP = r"(?:[ \t]|\\\n)"
_DIRECTIVE = lazy_regex(rf"^{_GAP}*#{_GAP}*pragma{_GAP}+acc\b", re.MULTILINE)
# Led by a literal, so a file without the pragma is passed over at C speed
_PRAGMA_ACC = lazy_regex(rf"pragma{_GAP}+acc\b")


def openacc_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each `#pragma acc ...` line of the code (comments and strings are blank in it)."""
    code = lexed.code
    if _PRAGMA_ACC.search(code) is None:
        return
    for directive in _DIRECTIVE.finditer(code):
        yield Hit(*lexed.point(directive.end() - 3), symbol="#pragma acc")


@register("openacc-pragma", needles=lambda p: ["acc"], tokens=openacc_hits)
def match_openacc_pragma(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each OpenACC directive of a C or C++ source."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return openacc_hits(doc.lexed_for(frozenset()), doc.text, params)
