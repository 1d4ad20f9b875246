"""Inline assembly (asm / asm volatile / __asm__) whose template is PTX, in code and in macro bodies."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from migrate.matchers import Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument, register_query

_ASM = register_query("(gnu_asm_expression assembly_code: (_) @code) @asm")
_MACRO_BODIES = register_query(
    "(preproc_function_def value: (preproc_arg) @body) (preproc_def value: (preproc_arg) @body)"
)
_MACRO_ASM = re.compile(
    r'\b(?:asm|__asm__|__asm)\s*(?:(?:volatile|__volatile__|goto|inline)\s*)*\(\s*((?:"(?:\\.|[^"\\])*"\s*)+)'
)
_LABEL_PARENTS = frozenset({"declaration", "field_declaration"})
_STRING = re.compile(r'"((?:\\.|[^"\\])*)"')
# AMD GCN/CDNA mnemonics (s_nop, v_add_f32, ds_swizzle_b32, ...): already-ported asm, not PTX.
_GCN = re.compile(r"^\s*(?:s|v|ds|buffer|global|flat|scratch|exp)_[a-z0-9_]+\b")


def _validate(params: Mapping[str, Any]) -> None:
    pattern = params.get("pattern")
    if not isinstance(pattern, (str, list)) or not pattern:
        raise ValueError("inline-asm needs a 'pattern': a regex over the assembly template, or a list of them")
    _compiled(_joined(pattern))
    if not isinstance(params.get("device_code", False), bool):
        raise ValueError("'device_code' must be true or false")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return ["asm"]


def _joined(pattern: str | list[str]) -> str:
    return pattern if isinstance(pattern, str) else "|".join(f"(?:{p})" for p in pattern)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@register("inline-asm", validate=_validate, needles=_needles)
def match_inline_asm(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each asm statement whose template matches PATTERN (or, with device_code, any non-empty one in device code)."""
    if not isinstance(doc, CudaDocument) or "asm" not in doc.text:
        return
    pattern = _compiled(_joined(params["pattern"]))
    device_code = params.get("device_code", False)
    for statement, code in _statements(doc):
        template = " ".join(_STRING.findall(code)).replace("\\n", "\n").replace("\\t", "\t")
        in_device = device_code and _unknown_device_asm(template) and doc.in_device_code(statement)
        if in_device or pattern.search(template):
            line, column = doc.point(statement)
            yield Hit(line, column)


def _unknown_device_asm(template: str) -> bool:
    """Non-empty asm that is not recognisably AMD's: in CUDA device code it can only be PTX."""
    return bool(template.strip()) and _GCN.match(template) is None


def _statements(doc: CudaDocument) -> Iterator[tuple[int, str]]:
    """(byte offset, template source) of each asm statement, in code and in macro bodies."""
    for groups in doc.matches(_ASM):
        node = groups["asm"][0]
        if node.parent is not None and node.parent.type in _LABEL_PARENTS:
            continue  # `int f(int) __asm("llvm.amdgcn...");` names a symbol (an asm label), it runs nothing
        yield node.start_byte, doc.node_text(groups["code"][0])
    for body in doc.captures(_MACRO_BODIES).get("body", []):
        text = doc.node_text(body)
        for match in _MACRO_ASM.finditer(text):
            yield body.start_byte + len(text[: match.start()].encode("utf-8")), match.group(1)
