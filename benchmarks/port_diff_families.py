"""Families of the hunks a scan misses, told from the hunk's file and the lines the port removed and wrote.

A reading aid for deciding what the scanner learns next, not a measurement: the first family whose test fits wins,
in the order of FAMILIES, content before form (a warp-size fix inside a new `#ifdef` is a warp-size fix).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from port_diff_figures import ROCM_WORDS, Hunk

_COMMENT = re.compile(r"^\s*(//|/\*|\*|#(?!\s*(if|else|elif|endif|define|include|pragma|undef))|$)")
_TEST_PATH = re.compile(r"(^|/)(tests?|testing|unittest)/|(^|/)test_[^/]*$|_test\.[a-z]+$")
_TEST_GATE = re.compile(r"skip|xfail|atol|rtol|toleran|assert_close|allclose|IS_HIP|HIP_ENVIRONMENT|torch\.version\.hip"
                        r"|is_hip|rocm|get_device_capability|compute_capability", re.IGNORECASE)
_WARP = re.compile(r"warp|lane|wavefront|__shfl|ballot|activemask|syncwarp|THREADS_PER_WARP|0xffffffff", re.IGNORECASE)
_ATOMIC = re.compile(r"atomic", re.IGNORECASE)
_LIBRARY = re.compile(r"cublas|cudnn|\bcub::|<cub/|nccl|curand|cusparse|cusolver|cufft|thrust|nvrtc|nvtx|cutlass|nvml"
                      r"|hipblas|rocblas|hipcub|rocprim|miopen|rccl|hiprand|rocrand|hipsparse|rocsolver|roctx|amdsmi",
                      re.IGNORECASE)
_DTYPE = re.compile(r"fp8|float8|e4m3|e5m2|fnuz|bfloat16|bf16|__half|half2|__nv_bfloat", re.IGNORECASE)
_TUNING = re.compile(r"num_warps|num_stages|waves_per_eu|matrix_instr|kpack|BLOCK_SIZE|block_size|launch_bounds"
                     r"|autotune|triton\.Config|threads_per_block|THREADS|kNThreads", re.IGNORECASE)
_PREPROCESSOR = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")
_DOC_SUFFIXES = (".md", ".rst", ".ipynb", ".txt", ".html", ".svg")


def _text(hunk: Hunk) -> str:
    return "\n".join((*hunk.block.removed, *hunk.block.added))


def _licence(hunk: Hunk) -> bool:
    added = [line for line in hunk.block.added if line.strip()]
    return bool(added) and all(_COMMENT.match(line) for line in added) and not any(
        _COMMENT.match(line) is None for line in hunk.block.removed if line.strip()
    ) and bool(re.search(r"copyright|advanced micro devices|license|modified", "\n".join(added), re.IGNORECASE))


def _comment_only(hunk: Hunk) -> bool:
    lines = [line for line in (*hunk.block.removed, *hunk.block.added) if line.strip()]
    return hunk.kind in ("cuda", "cpp", "python") and all(_COMMENT.match(line) for line in lines)


def _docs(hunk: Hunk) -> bool:
    lower = hunk.path.lower()
    return hunk.kind == "other" and (lower.endswith(_DOC_SUFFIXES) or "/docs/" in f"/{lower}")


def _is_test(hunk: Hunk) -> bool:
    return bool(_TEST_PATH.search(hunk.path))


def _test_gate(hunk: Hunk) -> bool:
    return _is_test(hunk) and bool(_TEST_GATE.search("\n".join(hunk.block.added)))


def _hipcc_strict(hunk: Hunk) -> bool:
    """A keyword or a constant-expression helper added to a line that otherwise stays (typename, template, casts)."""
    removed, added = " ".join(hunk.block.removed), " ".join(hunk.block.added)
    if not removed:
        return False
    for word in ("typename ", "template ", "static_cast<", "constexpr_min", "constexpr_max", "(void)"):
        if added.count(word) > removed.count(word):
            return True
    return "std::min" in removed and "std::min" not in added or "std::max" in removed and "std::max" not in added


def _code(hunk: Hunk) -> bool:
    return hunk.kind in ("cuda", "cpp", "python")


def _python_switch(hunk: Hunk) -> bool:
    return hunk.kind == "python" and bool(ROCM_WORDS.search("\n".join(hunk.block.added)))


def _build_branch(hunk: Hunk) -> bool:
    return hunk.kind == "build" and bool(ROCM_WORDS.search(_text(hunk)))


def _guard_only(hunk: Hunk) -> bool:
    """Added lines that are only preprocessor branches (an #ifdef USE_ROCM, or its #else/#endif far from the #if)."""
    added = [line for line in hunk.block.added if line.strip()]
    return hunk.kind in ("cuda", "cpp") and bool(added) and any(_PREPROCESSOR.match(line) for line in added) and all(
        _PREPROCESSOR.match(line) or _COMMENT.match(line) for line in added)


def _device_branch(hunk: Hunk) -> bool:
    return hunk.kind in ("cuda", "cpp") and any(_PREPROCESSOR.match(line) for line in hunk.block.added)


FAMILIES: tuple[tuple[str, Callable[[Hunk], bool]], ...] = (
    ("licence or copyright header", _licence),
    ("docs and notebooks", _docs),
    ("comment-only change in code", _comment_only),
    ("test skipped, gated or loosened on ROCm", _test_gate),
    ("warp size: constants, lane math, shuffles, warp counts", lambda h: _code(h) and bool(_WARP.search(_text(h)))),
    ("atomics", lambda h: _code(h) and bool(_ATOMIC.search(_text(h)))),
    ("hipcc-strict C++ (typename/template, constexpr min, casts)",
     lambda h: h.kind in ("cuda", "cpp") and _hipcc_strict(h)),
    ("CUDA library to ROCm library (BLAS, cuDNN, CUB, NCCL, ...)",
     lambda h: _code(h) and bool(_LIBRARY.search(_text(h)))),
    ("data types: fp8 formats, bf16/half dispatch", lambda h: _code(h) and bool(_DTYPE.search(_text(h)))),
    ("kernel launch and tuning (block sizes, num_warps, autotune configs)",
     lambda h: _code(h) and bool(_TUNING.search(_text(h)))),
    ("Python switch choosing a backend or feature on ROCm", _python_switch),
    ("build-file branch for HIP/ROCm", _build_branch),
    ("other build-file change", lambda h: h.kind == "build"),
    ("preprocessor branch alone (#ifdef USE_ROCM, far #else/#endif)", _guard_only),
    ("device code in a new HIP branch", _device_branch),
    ("test changed without a ROCm gate", _is_test),
    ("code change that names HIP/ROCm/AMD", lambda h: _code(h) and bool(ROCM_WORDS.search(_text(h)))),
    ("code change with no ROCm word (refactor, fork feature, upstream drift)", _code),
)


def family(hunk: Hunk) -> str:
    """The family of a missed hunk: the first of FAMILIES whose test fits, else 'other file'."""
    for name, fits in FAMILIES:
        if fits(hunk):
            return name
    return "other file (.gitignore, scripts, configs, MLIR tests)"


def count(missed: Iterable[dict[str, object]]) -> dict[str, int]:
    """Missed hunks per family, largest first."""
    return dict(Counter(str(m["family"]) for m in missed).most_common())
