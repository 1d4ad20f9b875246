"""PTX held in a C/C++ string literal outside any asm statement: what a compiler, code generator or JIT pastes into
the kernels it emits (Triton's PTXBuilder, TVM's code generator, a tracing JIT, CUDA source handed to NVRTC), found on
the file's text where the lexer's blanked code says the place is a literal, never a comment. PTX in an NVIDIA-only
branch of the emitted source (its own `#if cl_nv_compute_capability`, `#ifdef __CUDA_ARCH__`) that has an `#else` is
the fallback's twin: the AMD runtime compiler takes the other branch, so that place is low."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.lazyre import lazy_regex
from migrate.matchers import Hit, register
from migrate.model import Severity
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed, in_string_literal

_OPCODES = (
    "ld|ldu|st|cvt|cvta|mov|mma|wgmma|ldmatrix|stmatrix|shfl|vote|bar|barrier|red|atom|cp|mapa|prmt|lop3|fence|membar"
    "|elect|setmaxnreg|tcgen05|griddepcontrol|redux|mbarrier|fma|add|sub|mul|mad|div|rcp|sqrt|rsqrt|ex2|lg2|tanh|max"
    "|min|abs|neg|and|or|xor|not|shl|shr|shf|bfe|bfi|brev|popc|clz|selp|setp|dp4a|dp2a|multimem|prefetch|match"
    "|nanosleep|copysign|testp|isspacep"
)
# A modifier only PTX spells: a register type (.u32, .f16x2, .e4m3x2, .pred), a state space, .sync / .aligned, or
# one of the asynchronous copies' and barriers' (cp.async.wait_group, fence.proxy.async, mbarrier.arrive.expect_tx),
# which a code generator emits bare: `ptxBuilder.create<>("cp.async.commit_group")`.
_PTX_MODIFIER = (r"(?:[bsuf](?:8|16|32|64)(?:x[24])?|bf16(?:x2)?|e[45]m[23](?:x[24])?|pred|global|shared|local|param|sync"
                 r"|aligned|async|mma_async|commit_group|wait_group|wait_all|expect_tx)")
# a further modifier, or a code generator's placeholder for one (`.{shape}`, `{.dtype}`, `{satfinite}`)
_PART = r"(?:\.[a-z0-9_:]+|\.?\{\.?\w+\})"
# opcode, then dotted modifiers of which one is PTX's own, then the end of the literal, `;`, or an operand ($0, %r1,
# {a, b}, [addr], 240, `a0,`, `p0|p1`): a word after it that is none of these is prose ("red.global.f16 without ...")
_INSTRUCTION = lazy_regex(
    rf"(?<![\w.$%])(?:{_OPCODES})(?:{_PART})*?\.{_PTX_MODIFIER}(?:{_PART})*(?![\w.])"
    r"(?=\s*(?:$|[\";\\]|[$%{\[\d]|[A-Za-z_]\w*\s*[,;|]))"
)
_OPCODE = lazy_regex(r"%*(\w+)")  # the opcode or register name a candidate starts with
_MODIFIER = lazy_regex(rf"\.{_PTX_MODIFIER}(?![\w])")  # where PTX may be: a search that skips to each `.`
_REGISTER = lazy_regex(r"%%?(?:laneid|warpid|lanemask_(?:eq|lt|le|gt|ge)|smid|nsmid|clock64|globaltimer)\b")
# a preprocessor line inside the emitted source (in a string literal): `"#if cl_nv_compute_capability>=61"`,
# `#ifdef cl_nv_pragma_unroll` in a raw string. NVIDIA's OpenCL driver alone defines cl_nv_*, nvcc / NVRTC alone
# __CUDA_ARCH__ / __CUDACC__ / __NVCC__ (hipRTC and the AMD OpenCL compiler define none of them).
_SOURCE_DIRECTIVE = lazy_regex(r"#[ \t]*(ifdef|ifndef|if|elif|else|endif)\b([^\n\"\\]*)")
_NVIDIA_TEST = lazy_regex(r"\b(?:cl_nv_\w+|__CUDA_ARCH__|__CUDACC__|__NVCC__)\b")
_GUARDED_NOTE = ("This PTX sits in an NVIDIA-only branch of the source it emits (an #if on a macro only NVIDIA's "
                 "compiler defines) that has an #else: the AMD compiler builds the other branch, so the port keeps "
                 "it as it is; check the fallback's speed.")
_NEEDLES = [".u32", ".b32", ".s32", ".f32", ".u64", ".b64", ".s64", ".f64", ".f16", ".bf16", ".u16", ".b16", ".s16",
            ".u8", ".b8", ".s8", ".e4m3", ".e5m2", ".pred", ".global", ".shared", ".sync", ".aligned", ".local",
            ".param", ".async", ".mma_async", ".commit_group", ".wait_group", ".wait_all", ".expect_tx", "%laneid",
            "%warpid", "%lanemask", "%smid", "%clock64", "%globaltimer"]


def ptx_string_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line of a string literal in code that holds a PTX instruction or special register, outside the
    templates of asm statements (inline-ptx reports those)."""
    spans: tuple[list[int], list[int]] | None = None
    branches: list[tuple[int, int]] | None = None
    done: set[int] = set()
    for start in _candidates(lexed.code, text):
        line, column = lexed.point(start)
        if line in done:
            continue
        done.add(line)
        starts, ends = spans = spans or _asm_spans(lexed)
        index = bisect_right(starts, start) - 1
        if (index < 0 or start >= ends[index]) and in_string_literal(text, lexed.code, start):
            name = _OPCODE.match(text, start)
            symbol = name.group(1) if name else None
            branches = _nvidia_branches(lexed, text) if branches is None else branches
            if any(begin <= start < end for begin, end in branches):
                yield Hit(line, column, severity=Severity.LOW, note=_GUARDED_NOTE, symbol=symbol)
            else:
                yield Hit(line, column, symbol=symbol)


def _nvidia_branches(lexed: Lexed, text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the branches of the emitted source's conditionals (directives in string literals)
    that test an NVIDIA-only macro, not negated, and have an #else or #elif after them: each from its test to that
    other branch."""
    branches: list[tuple[int, int]] = []
    open_tests: list[int | None] = []  # per open conditional: where its NVIDIA-only branch began, or None
    for found in _SOURCE_DIRECTIVE.finditer(text):
        if not in_string_literal(text, lexed.code, found.start()):
            continue
        kind, test = found.groups()
        if kind in ("if", "ifdef", "ifndef"):
            nvidia = kind != "ifndef" and "!" not in test and _NVIDIA_TEST.search(test) is not None
            open_tests.append(found.end() if nvidia else None)
        elif open_tests:
            begin = open_tests.pop()
            if begin is not None and kind != "endif":
                branches.append((begin, found.start()))
            if kind != "endif":
                nvidia = kind == "elif" and "!" not in test and _NVIDIA_TEST.search(test) is not None
                open_tests.append(found.end() if nvidia else None)
    return branches


def _candidates(code: str, text: str) -> Iterator[int]:
    """Where each PTX instruction or special register starts in TEXT, on lines where CODE is blank there: a
    search for PTX's own modifiers (one literal character to skip to) finds the lines, the instruction's
    pattern then runs on those lines alone."""
    end = -1
    for modifier in _MODIFIER.finditer(text):
        # a line is searched once, from its first such modifier: the others would find the same instructions again
        if modifier.start() > end and code[modifier.start()].isspace():
            begin = text.rfind("\n", 0, modifier.start()) + 1
            end = text.find("\n", modifier.start()) % (len(text) + 1)
            for instruction in _INSTRUCTION.finditer(text, begin, end):
                yield instruction.start()
    for register in _REGISTER.finditer(text):
        yield register.start()


def _asm_spans(lexed: Lexed) -> tuple[list[int], list[int]]:
    """(starts, ends) of the asm statements, keyword to closing parenthesis (strings blanked, so a template built
    with a macro between its strings is inside), in the order of the text."""
    code = lexed.code
    spans = []
    for _, offset in lexed.asm:
        spans.append((offset, _closing(code, code.find("(", offset))))
    spans.sort()
    return [start for start, _ in spans], [end for _, end in spans]


def _closing(code: str, opened: int) -> int:
    """The offset past the parenthesis that closes the one at OPENED (the end of CODE when none does): from one `)`
    to the next, the `(` between them counted, as the depth cannot fall to zero before a `)`."""
    depth, at = 1, opened
    while depth:
        close = code.find(")", at + 1)
        if close == -1:
            return len(code)
        depth += code.count("(", at + 1, close) - 1
        at = close
    return at + 1


@register("ptx-strings", needles=lambda p: _NEEDLES, tokens=ptx_string_hits)
def match_ptx_strings(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line of a string literal in code holding PTX outside an asm statement."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return ptx_string_hits(doc.lexed_for(frozenset()), doc.text, params)
