"""Inline assembly (asm / asm volatile / __asm__) whose template is PTX, in code and in macro bodies: the statements
are the lexer's, in every C/C++ file; only an unknown template in device code needs the tree."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from migrate.matchers import Code, CodeTest, Hit, register, require_flags
from migrate.matchers.cuda_arch_fallback import ARCH_FALLBACK_NOTE, Ranges, arch_fallbacks
from migrate.model import Severity
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed, instruction_offset

# AMD GCN/CDNA mnemonics (s_nop, v_add_f32, ds_swizzle_b32, ...): already-ported asm, not PTX.
_GCN = re.compile(r"^\s*(?:s|v|ds|buffer|global|flat|scratch|exp)_[a-z0-9_]+\b")


def _validate(params: Mapping[str, Any]) -> None:
    pattern = params.get("pattern")
    if not isinstance(pattern, (str, list)) or not pattern:
        raise ValueError("inline-asm needs a 'pattern': a regex over the assembly template, or a list of them")
    asm_pattern(pattern)
    require_flags(params, "device_code")
    if "arch_fallback" in params:
        Severity.parse(str(params["arch_fallback"]))
    if "all_instructions" in params:
        if not isinstance(params["all_instructions"], str):
            raise ValueError("'all_instructions' must be a regex that each instruction of the template matches whole")
        _regex(params["all_instructions"])
    if "unless_all_instructions" in params:
        kinds = params["unless_all_instructions"]
        if not isinstance(kinds, (str, list)) or not kinds or not all(isinstance(k, str) for k in _kinds(kinds)):
            raise ValueError("'unless_all_instructions' must be a regex that each instruction of the template matches "
                             "whole, or a list of them (one kind each)")
        for kind in _kinds(kinds):
            _regex(kind)


def _kinds(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _needles(params: Mapping[str, Any]) -> list[str]:
    return ["asm"]


def _candidates(params: Mapping[str, Any]) -> CodeTest:
    """A device-code rule needs the tree where the code has asm the pattern does not find and that is not AMD's
    (only the tree tells device code from host code); on the pattern alone, tokens decide."""
    if not params.get("device_code"):
        return _never
    pattern = asm_pattern(params["pattern"])
    return lambda code: _may_hold_device_code(code.text) and any(
        unknown_device_asm(t) and not pattern.search(t) for t in code.asm
    )


# What makes a function device code is written in the file itself (CudaDocument._qualifiers): __global__ or
# __device__, a macro of the file whose body holds them, or a macro word with DEVICE or GLOBAL in it. A file with none
# of these (x86 and ARM asm in CPU code) cannot hold asm in device code, so it is not parsed for it.
_DEVICE_WORDS = ("__device__", "__global__", "DEVICE", "GLOBAL")


def _may_hold_device_code(text: str) -> bool:
    return any(word in text for word in _DEVICE_WORDS)


def _never(_code: Code) -> bool:
    return False


def asm_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each asm statement whose template the rule's pattern finds."""
    pattern = asm_pattern(params["pattern"])
    hits = [Hit(*lexed.point(instruction_offset(text, offset, pattern))) for offset, template in lexed.templates
            if pattern.search(template) and _instructions_fit(template, params)]
    yield from _with_fallbacks(hits, lexed, params)


@register("inline-asm", validate=_validate, needles=_needles, candidates=_candidates, tokens=asm_hits)
def match_inline_asm(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each asm statement whose template matches PATTERN (or, with device_code, any non-empty one in device code)."""
    if not isinstance(doc, CudaDocument) or "asm" not in doc.text:
        return
    lexed = doc.lexed_for(frozenset())
    pattern = asm_pattern(params["pattern"])
    device_code = params.get("device_code", False)
    hits = []
    for offset, template in lexed.templates:
        unknown = device_code and unknown_device_asm(template)
        in_device = unknown and doc.in_device_code(doc.byte_offset(offset))
        if (in_device or pattern.search(template)) and _instructions_fit(template, params):
            hits.append(Hit(*lexed.point(instruction_offset(doc.text, offset, pattern))))
    yield from _with_fallbacks(hits, lexed, params)


def _with_fallbacks(hits: list[Hit], lexed: Lexed, params: Mapping[str, Any]) -> Iterator[Hit]:
    """HITS, those in a branch a HIP build skips for a portable #else at the `arch_fallback` severity."""
    if not hits or "arch_fallback" not in params or "__CUDA_ARCH__" not in lexed.code:
        yield from hits
        return
    ranges: Ranges = arch_fallbacks(lexed)
    severity = Severity.parse(str(params["arch_fallback"]))
    for hit in hits:
        if any(first <= hit.line <= last for first, last in ranges):
            yield Hit(hit.line, hit.column, severity=severity, note=ARCH_FALLBACK_NOTE)
        else:
            yield hit


def _instructions_fit(template: str, params: Mapping[str, Any]) -> bool:
    """TEMPLATE's instructions are all of the kind `all_instructions` names, and not all of one kind that
    `unless_all_instructions` names (a block of plain cache-hinted loads and stores, or a bare trap, is its own
    rule's, not a rewrite of PTX)."""
    instructions = [i for line in template.split(";") if (i := line.strip(" \t\n{}"))]
    only, unless = params.get("all_instructions"), params.get("unless_all_instructions")
    if only is not None and not all(_regex(only).fullmatch(i) for i in instructions):
        return False
    return unless is None or not instructions or not any(
        all(_regex(kind).fullmatch(i) for i in instructions) for kind in _kinds(unless))


def asm_pattern(pattern: str | list[str]) -> re.Pattern[str]:
    """An inline-asm rule's pattern (a regex or a list of them), compiled once."""
    return _regex(pattern if isinstance(pattern, str) else "|".join(f"(?:{p})" for p in pattern))


@cache
def _regex(source: str) -> re.Pattern[str]:
    return re.compile(source)


def unknown_device_asm(template: str) -> bool:
    """Non-empty asm that is not recognisably AMD's: in CUDA device code it can only be PTX."""
    return bool(template.strip()) and _GCN.match(template) is None
