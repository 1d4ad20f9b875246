"""Half-precision GEMMs called from a backward pass (`bwd_cuda`, `Backward`, `backward_kernel_launcher`): each GEMM
call (a cuBLAS one, or the project's own wrapper of one) in the body of a function named for the backward pass that
handles fp16/bf16 data, found on tokens (comments and strings blanked) in files that name a GEMM."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.lazyre import lazy_regex
from migrate.matchers import Hit, register
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed

NEEDLES = ("gemm", "Gemm", "GEMM", "Matmul")
# the word that names a function for the backward pass (`bwd_cuda(`, `Backward(`, `attn_backward_impl(`, `mlp_bp(`,
# `dense_bprop(`, `linear_wgrad(`, `dgrad_gemm(`), searched as a literal and widened to its identifier
_BACKWARD = lazy_regex(r"bwd|Bwd|BWD|ackward|ACKWARD|bprop|_bp\b|_bp_|[dw]grad|[DW]grad|[DW]GRAD")
_BACKWARD_WORDS = ("bwd", "Bwd", "BWD", "ackward", "ACKWARD", "bprop", "_bp", "grad", "GRAD")
_LOWER_NEEDLES = ("gemm", "matmul")  # each of NEEDLES, lower-cased, holds one
_LOWER_BACKWARD_WORDS = ("bwd", "ackward", "bprop", "_bp", "grad")  # and each of _BACKWARD_WORDS
_WORD_END = lazy_regex(r"\w*\s*\(")
# a GEMM called by name (a cuBLAS/cuBLASLt entry point or a wrapper named for one), not a member of PyTorch's own
# namespaces (at::cuda::blas::gemm picks the ROCm flag itself) and not a method of some object
_GEMM_CALL = lazy_regex(
    r"(?<![\w.>:])((?:[A-Za-z_]\w*::)*(?![0-9])\w*?(?:gemm|Gemm|GEMM|LtMatmul)\w*)\s*(?:<[^;(){}]*>\s*)?\(")
_TORCH_NAMESPACE = lazy_regex(r"(?:at|torch|c10)::")
# fp16/bf16 data named in the function: the element types, cuBLAS data-type enums and ATen scalar types
_HALF = lazy_regex(
    r"\b(?:half2?|__half2?|__nv_bfloat162?|nv_bfloat162?|CUDA_R_16F|CUDA_R_16BF|CUBLAS_COMPUTE_16F|cublasHgemm\w*"
    r"|kHalf|kBFloat16|Half|BFloat16|at_half|__hip_bfloat16)\b")
_TEMPLATE = lazy_regex(r"\btemplate\s*<[^;{}]*>\s*(?:[\w:<>,*&\s]+?)$")
# the file already chooses rocBLAS's alternate fp16 path for the backward pass (or PyTorch's guard that says when)
_HANDLED = ("fp16_alt_impl", "BackwardPassGuard", "BACKWARD_PASS_GUARD")


def _validate(params: Mapping[str, Any]) -> None:
    if set(params) - {"matcher"}:
        raise ValueError("cuda-backward-gemm takes no parameters")


def backward_gemm_hits(lexed: Lexed, _text: str, _params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line of a backward function's body that calls a GEMM, where the function (or, for a template, the file)
    names fp16/bf16 data and the file does not already pick the alternate fp16 path."""
    code = lexed.code
    lower = code.lower()  # first the needles in lower case, fewer searches of it (most files hold none), then exact
    if not any(needle in lower for needle in _LOWER_NEEDLES) or not any(w in lower for w in _LOWER_BACKWARD_WORDS):
        return
    if not any(needle in code for needle in NEEDLES) or not any(w in code for w in _BACKWARD_WORDS):
        return
    if any(mark in code for mark in _HANDLED):
        return
    file_half: bool | None = None  # whether the file names fp16/bf16 data: looked up for a template only
    seen: set[int] = set()
    searched = 0  # where the last function's body ended: a name inside it is a call, not another definition
    for match in _BACKWARD.finditer(code):
        if match.start() < searched:
            continue
        name_start = _word_start(code, match.start())
        rest = _WORD_END.match(code, match.end())
        if rest is None or code[name_start].isdigit():
            continue
        body = _body_of(code, rest.end() - 1)
        if body is None:
            continue
        start, end = body
        searched = end
        if _HALF.search(code, name_start, end) is None:  # its parameters or its body
            if not _is_template(code, name_start):
                continue
            if file_half is None:
                file_half = _HALF.search(code) is not None
            if not file_half:
                continue
        for call in _GEMM_CALL.finditer(code, start, end):
            if _TORCH_NAMESPACE.match(call[1]):
                continue
            line, column = lexed.point(call.start(1))
            if line not in seen:
                seen.add(line)
                yield Hit(line, column, symbol=call[1])


def _word_start(code: str, offset: int) -> int:
    """The offset where the identifier holding OFFSET starts."""
    while offset > 0 and (code[offset - 1].isalnum() or code[offset - 1] == "_"):
        offset -= 1
    return offset


def _body_of(code: str, paren: int) -> tuple[int, int] | None:
    """The span of the braces that follow the parameter list opening at PAREN (a definition), or None (a call, a
    declaration)."""
    close = _matching(code, paren, "(", ")")
    if close is None:
        return None
    head = re.match(r"\s*(?:(?:const|override|final|noexcept|volatile|&&?)\s*)*(?:->\s*[\w:<>,*&\s]+?)?\s*\{",
                    code[close + 1 : close + 400])
    if head is None:
        return None
    brace = close + 1 + head.end() - 1
    end = _matching(code, brace, "{", "}")
    return None if end is None else (brace, end)


def _matching(code: str, start: int, opening: str, closing: str) -> int | None:
    """The offset of the bracket that closes the one at START (comments and strings are blank already)."""
    depth = 0
    for match in _BRACKETS[opening].finditer(code, start):
        depth += 1 if match[0] == opening else -1
        if depth == 0:
            return match.start()
    return None


_BRACKETS = {"(": re.compile(r"[()]"), "{": re.compile(r"[{}]")}


def _is_template(code: str, name_start: int) -> bool:
    """The function whose name starts at NAME_START is a template (its element type chosen by the caller)."""
    statement = max(code.rfind(";", 0, name_start), code.rfind("}", 0, name_start), code.rfind("{", 0, name_start))
    return _TEMPLATE.search(code[statement + 1 : name_start]) is not None


@register("cuda-backward-gemm", validate=_validate, needles=lambda _p: list(NEEDLES), tokens=backward_gemm_hits)
def match_cuda_backward_gemm(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each GEMM call in a backward function on fp16/bf16 data."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    lexed = doc.lexed_for(frozenset())
    return backward_gemm_hits(lexed, lexed.code, params)
