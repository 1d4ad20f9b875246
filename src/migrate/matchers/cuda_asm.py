"""Inline assembly (asm / asm volatile / __asm__) whose template is PTX, in code and in macro bodies."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate import tokenscan
from migrate.matchers import Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument


def _validate(params: Mapping[str, Any]) -> None:
    pattern = params.get("pattern")
    if not isinstance(pattern, (str, list)) or not pattern:
        raise ValueError("inline-asm needs a 'pattern': a regex over the assembly template, or a list of them")
    tokenscan.asm_pattern(pattern)
    if not isinstance(params.get("device_code", False), bool):
        raise ValueError("'device_code' must be true or false")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return ["asm"]


@register("inline-asm", validate=_validate, needles=_needles)
def match_inline_asm(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each asm statement whose template matches PATTERN (or, with device_code, any non-empty one in device code).
    The statements are the lexer's (as in every C/C++ file); only device code needs the tree."""
    if not isinstance(doc, CudaDocument) or "asm" not in doc.text:
        return
    lexed = tokenscan.lexed(doc, frozenset())
    pattern = tokenscan.asm_pattern(params["pattern"])
    device_code = params.get("device_code", False)
    for offset, template in tokenscan.asm_statements(lexed):
        unknown = device_code and tokenscan.unknown_device_asm(template)
        in_device = unknown and doc.in_device_code(doc.byte_offset(offset))
        if in_device or pattern.search(template):
            yield Hit(*lexed.point(offset))
