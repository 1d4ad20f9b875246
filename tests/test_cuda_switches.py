"""CUDA build switches with a ROCm twin in the same #if chain: code behind them is never compiled for HIP."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate import preproc
from migrate.config import Settings
from migrate.preproc import Directive
from migrate.scan import scan

TRACER = """\
#ifdef TRACE_CUPTI
#include <cupti.h>
#elif defined(TRACE_ROCTRACER)
#include <roctracer.h>
#endif
"""
# a second file: its #ifdef alone, the chain above is what says the two are never set together
PROBE = """\
int lanes() {
#ifdef TRACE_CUPTI
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  return p.warpSize;
#else
  return 64;
#endif
}
"""


def write(root: Path, relpath: str, text: str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def d(line: int, keyword: str, argument: str = "") -> Directive:
    return Directive(line, keyword, argument)


@pytest.mark.parametrize("tracer, status", [
    (TRACER, "guarded"),
    # the ROCm branch first: the CUDA switch may be set beside it (a ROCm build that sets both), so its code is work
    (TRACER.replace("TRACE_CUPTI", "@").replace("TRACE_ROCTRACER", "TRACE_CUPTI").replace("@", "TRACE_ROCTRACER"),
     "remaining"),
    ("#ifdef TRACE_CUPTI\n#include <cupti.h>\n#elif defined(WITH_MPS)\n#endif\n", "remaining"),  # no ROCm twin
    (TRACER + "#define TRACE_CUPTI 1\n", "remaining"),  # the repository sets it itself
])
def test_code_behind_a_cuda_switch_with_a_rocm_twin_is_guarded(tmp_path: Path, tracer: str, status: str) -> None:
    write(tmp_path, "src/tracer.h", tracer)
    write(tmp_path, "src/probe.cpp", PROBE)
    result = scan(tmp_path, Settings(jobs=1))
    every = [*result.findings, *result.guarded_findings]
    assert {f.status for f in every if f.path == "src/probe.cpp" and f.line in (3, 4)} == {status}


def test_cuda_switches_pairs_one_vendor_word_with_a_rocm_run_of_words() -> None:
    files = {
        "a.h": (d(1, "ifdef", "HAS_NVML"), d(2, "elif", "defined(HAS_ROCM_SMI)"), d(3, "endif")),
        "b.h": (d(1, "if", "KIT_ENABLE_CUDA"), d(2, "elif", "KIT_ENABLE_OPENMP"), d(3, "elif", "KIT_ENABLE_HIP"),
                d(4, "endif")),
        "c.h": (d(1, "if", "defined(USE_CUDA) || defined(USE_ROCM)"), d(2, "endif")),  # one branch: no pair
        "d.h": (d(1, "ifdef", "__HIP_PLATFORM_NVIDIA__"), d(2, "elif", "defined(__HIP_PLATFORM_AMD__)"), d(3, "endif")),
        "e.h": (d(1, "ifdef", "GPU_CUDA"), d(2, "elif", "defined(GPU_CUDA_HIP)"), d(3, "endif")),  # not a twin
    }
    assert preproc.cuda_switches(files) == frozenset({"HAS_NVML", "KIT_ENABLE_CUDA"})


def test_an_absent_switch_is_dead_for_hip_unless_the_repository_defines_it() -> None:
    probe = (d(1, "ifdef", "HAS_NVML"), d(3, "else"), d(5, "endif"))
    pair = (d(1, "ifdef", "HAS_NVML"), d(2, "elif", "defined(HAS_ROCM_SMI)"), d(3, "endif"))
    assert preproc.Settled({"b.cpp": probe}, absent={"HAS_NVML"}).dead_ranges("b.cpp") == ((1, 3),)
    assert preproc.cuda_switches({"a.h": pair, "c.h": (d(1, "define", "HAS_NVML 1"),)}) == frozenset()
