"""Lane masks of a warp ballot kept in 32-bit words (`bits[w] = mask;` with `unsigned int *bits`, `uint32_t
masks[4]`): the declarations of such a buffer and every place it is indexed, found on tokens in files that call
__ballot."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.lazyre import lazy_regex
from migrate.matchers import Hit, register
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed

_NARROW = r"(?:unsigned\s+int|unsigned|uint32_t|int32_t|int|uint|U32)"
_NARROW_WORDS = frozenset({"unsigned", "int", "uint32_t", "int32_t", "uint", "U32"})
_INDEX = r"(?:\s*\[[^\]\n;]*\])?"
_ASSIGN = r"\s*(?<![=!<>+\-*/%&|^])=(?!=)\s*"
# `mask = __ballot_sync(...)`, `masks[k] = __ballot(...)`: the name a ballot's lane mask is assigned to.
_BALLOT = lazy_regex(rf"\b([A-Za-z_]\w*){_INDEX}{_ASSIGN}__ballot(?:_sync)?\s*\(")
# `bits[i] = mask;`, `mask = bits[i];`: a plain copy of one name's value into another.
_COPY = lazy_regex(rf"\b([A-Za-z_]\w*){_INDEX}{_ASSIGN}([A-Za-z_]\w*){_INDEX}\s*;")
_ROUNDS = 4  # copies followed from a ballot: a mask reaches memory in one or two


def _validate(params: Mapping[str, Any]) -> None:
    if set(params) - {"matcher"}:
        raise ValueError("cuda-mask-words takes no parameters")


def mask_word_hits(lexed: Lexed, _text: str, _params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line that declares a 32-bit pointer or array a ballot's mask is assigned or copied into (a variable or
    member of that name), or indexes it: where a 64-lane wavefront's mask loses lanes 32-63, and where its word size
    is assumed."""
    code = lexed.code
    if "__ballot" not in code:  # the token pass runs on every file: most have no ballot
        return
    seeds = {m[1] for m in _BALLOT.finditer(code)}
    masks = {name for name in seeds if _narrow_value(code, name)}
    if not masks:
        return
    copies = [(m[1], m[2]) for m in _COPY.finditer(code)]
    frontier = set(masks)
    for _ in range(_ROUNDS):
        frontier = {target for target, source in copies if source in frontier} - masks
        if not frontier:
            break
        masks |= frontier
    lines: dict[int, tuple[int, str]] = {}
    for name in sorted(masks):
        declarations = list(_narrow_pointer(name).finditer(code))
        if not declarations:
            continue
        # a name the file also gives another type (`float* out` elsewhere): only its 32-bit declarations are sure
        uses = [] if _other_pointer(code, name) else list(_indexed(name).finditer(code))
        for match in [*declarations, *uses]:
            line, column = lexed.point(match.start())
            lines.setdefault(line, (column, name))
    for line in sorted(lines):
        column, name = lines[line]
        yield Hit(line, column, symbol=name)


def _narrow_value(code: str, name: str) -> bool:
    """NAME is declared as a 32-bit integer or an array of them."""
    return re.search(rf"\b{_NARROW}\s+(?:const\s+)?{name}{_INDEX}\s*[=;,)]", code) is not None


def _narrow_pointer(name: str) -> re.Pattern[str]:
    """A declaration of NAME as a pointer to 32-bit integers (a parameter, a member, a local) or an array of them."""
    return re.compile(rf"\b{_NARROW}\s*(?:const\s*)?\*\s*(?:(?:const|__restrict__|__restrict)\s+)*{name}\b"
                      rf"|\b{_NARROW}\s+{name}\s*\[")


def _other_pointer(code: str, name: str) -> bool:
    """NAME is also declared as a pointer or array of some other type."""
    for match in re.finditer(rf"\b([A-Za-z_]\w*)\s*(?:const\s*)?\*\s*(?:(?:const|__restrict__|__restrict)\s+)*{name}\b"
                             rf"|\b([A-Za-z_]\w*)\s+{name}\s*\[", code):
        word = match[1] or match[2]
        if word not in _NARROW_WORDS and word not in ("const", "return", "else", "case", "delete"):
            return True
    return False


def _indexed(name: str) -> re.Pattern[str]:
    """NAME indexed (`name[...]`), not a member of that name of something else."""
    return re.compile(rf"(?<![.>\w]){name}\s*\[")


@register("cuda-mask-words", validate=_validate, needles=lambda _p: ["__ballot"], tokens=mask_word_hits)
def match_cuda_mask_words(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each declaration and indexing of a 32-bit buffer that holds ballot masks."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    lexed = doc.lexed_for(frozenset())
    return mask_word_hits(lexed, lexed.code, params)
