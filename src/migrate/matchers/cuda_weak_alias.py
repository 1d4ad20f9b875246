"""`#pragma weak NAME=TARGET` aliases in CUDA sources, with the definition of TARGET where the file has it (that is
the line a port changes: it defines NAME itself, or marks the definition weak), found on the lexer's code."""

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
_ALIAS = lazy_regex(rf"^{_GAP}*#{_GAP}*pragma{_GAP}+weak{_GAP}+(\w+){_GAP}*={_GAP}*(\w+)", re.MULTILINE)
# Led by a literal, so it skips most of a file at C speed: many files say `weak` (compare_exchange_weak) and have
# no such pragma, and _ALIAS alone would try every line's start in them.
_PRAGMA_WEAK = lazy_regex(rf"pragma{_GAP}+weak{_GAP}")


def weak_alias_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each `#pragma weak NAME=TARGET` line, and the line that defines TARGET when the file does."""
    code = lexed.code
    if _PRAGMA_WEAK.search(code) is None:
        return
    for alias in _ALIAS.finditer(code):
        yield Hit(*lexed.point(alias.start()), symbol=alias.group(1))
        definition = _definition(code, alias.group(2))
        if definition is not None:
            yield Hit(*lexed.point(definition), symbol=alias.group(2))


def _definition(code: str, name: str) -> int | None:
    """The offset of the first declarator of NAME after a type (`struct testEngine NAME = {`, `int NAME(...) {`)."""
    match = re.search(rf"(?m)^[^#\n]*?[\w*&>][ \t]+\**({name})[ \t]*[=({{\[]", code)
    return match.start(1) if match else None


@register("weak-alias", needles=lambda p: ["weak"], tokens=weak_alias_hits)
def match_weak_alias(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each `#pragma weak NAME=TARGET` line and the definition of TARGET."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return weak_alias_hits(doc.lexed_for(frozenset()), doc.text, params)
