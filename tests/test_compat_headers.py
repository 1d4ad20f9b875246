"""A project's own HIP compat macros in another header: which files see them, and the warp findings they answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate import compat_headers
from migrate.config import Settings
from migrate.preproc import Directive
from migrate.scan import scan

REDUCE = "__device__ float total(float v) {\n  return v + __shfl_xor_sync(0xffffffff, v, 16);\n}\n"
DRIVER = '#include "compat.cuh"\n#include "reduce.cuh"\n__global__ void k(float* x) { x[0] = total(x[0]); }\n'
RENAME = "#define __shfl_xor_sync(mask, v, lane) __shfl_xor(v, lane)\n"


def write(root: Path, relpath: str, text: str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def statuses(root: Path) -> list[tuple[str, int, str | None]]:
    result = scan(root, Settings(jobs=1))
    every = [*result.findings, *result.guarded_findings]
    return sorted((f.path, f.line, f.status) for f in every if f.rule == "warp-full-mask")


@pytest.mark.parametrize("compat, status", [
    (f"#if defined(USE_ROCM)\n{RENAME}#endif\n", "guarded"),  # the HIP build renames the call to the maskless one
    (f"#ifdef __HIP_PLATFORM_AMD__\n{RENAME}#else\n#define FULL 0xffffffff\n#endif\n", "guarded"),
    (f"#if __CUDA_ARCH__ < 300\n{RENAME}#endif\n", "remaining"),  # an old-CUDA shim, not the HIP build's
    (RENAME, "remaining"),  # unguarded: the CUDA build's macro as much as HIP's
    ("#if defined(USE_ROCM)\n#define SHFL_XOR(v, lane) __shfl_xor(v, lane)\n#endif\n", "remaining"),  # another name
])
def test_a_warp_call_is_handled_where_an_included_header_renames_it_for_hip(
    tmp_path: Path, compat: str, status: str
) -> None:
    write(tmp_path, "csrc/compat.cuh", compat)
    write(tmp_path, "csrc/reduce.cuh", REDUCE)  # included after the compat header by the one file that includes it
    write(tmp_path, "csrc/norm.cu", DRIVER)
    assert statuses(tmp_path) == [("csrc/reduce.cuh", 2, status)]


@pytest.mark.parametrize("guard", [True, False])
def test_a_header_included_only_by_the_hip_build_renames_every_macro_it_defines(tmp_path: Path, guard: bool) -> None:
    include = '#include "vendors/hip.h"\n'
    common = f"#if defined(MYLIB_USE_HIP)\n{include}#endif\n" if guard else include
    write(tmp_path, "src/gpu/vendors/hip.h", RENAME)
    write(tmp_path, "src/gpu/common.cuh", common)
    write(tmp_path, "src/gpu/sum.cu", '#include "common.cuh"\n' + REDUCE)
    assert statuses(tmp_path) == [("src/gpu/sum.cu", 3, "guarded" if guard else "remaining")]


def test_a_file_that_never_reaches_the_compat_header_keeps_its_findings(tmp_path: Path) -> None:
    write(tmp_path, "csrc/compat.cuh", f"#if defined(USE_ROCM)\n{RENAME}#endif\n")
    write(tmp_path, "csrc/norm.cu", DRIVER)
    write(tmp_path, "csrc/reduce.cuh", REDUCE)
    write(tmp_path, "csrc/other.cu", '#include "reduce.cuh"\n')  # a second includer without the compat header
    write(tmp_path, "tools/alone.cu", REDUCE)
    assert statuses(tmp_path) == [("csrc/reduce.cuh", 2, "remaining"), ("tools/alone.cu", 2, "remaining")]


def d(line: int, keyword: str, argument: str = "") -> Directive:
    return Directive(line, keyword, argument)


def test_seen_follows_includes_beside_the_file_from_the_root_and_by_a_unique_ending() -> None:
    files = {
        "lib/compat.h": (d(2, "define", "WARP_SYNC(x) x"), d(2, "define-hip", "WARP_SYNC")),
        "lib/a.cu": (d(1, "include", "compat.h"),),
        "app/b.cu": (d(1, "include", "lib/compat.h"),),
        "app/c.cu": (d(1, "include", "../lib/compat.h"),),
        "deep/d.cu": (d(1, "include", "nowhere/compat.h"),),
        "app/loop.h": (d(1, "include", "loop.h"), d(2, "include", "lib/compat.h")),
    }
    got = compat_headers.seen(files)
    assert got == {path: frozenset({"WARP_SYNC"}) for path in ("lib/compat.h", "lib/a.cu", "app/b.cu", "app/c.cu",
                                                               "app/loop.h")}


def test_seen_is_empty_without_a_hip_guarded_macro_or_include() -> None:
    assert compat_headers.seen({"a.cu": (d(1, "include", "b.h"),), "b.h": (d(1, "define", "X 1"),)}) == {}


def test_entries_mark_quoted_includes_and_macros_in_branches_only_hip_compiles() -> None:
    text = ('#include <cuda.h>\n#include "a.h"\n#ifdef USE_ROCM\n#include "b.h"\n#define X 1\n#else\n#include "c.h"\n'
            '#define Y 2\n#endif\n')
    includes = [("cuda.h", 9), *((n, text.index(f'"{n}"')) for n in ("a.h", "b.h", "c.h"))]
    directives = (d(3, "ifdef", "USE_ROCM"), d(5, "define", "X 1"), d(6, "else"), d(8, "define", "Y 2"), d(9, "endif"))
    got = compat_headers.entries(text, includes, directives, lambda o: text.count("\n", 0, o) + 1)
    assert got == (d(2, "include", "a.h"), d(4, "include-hip", "b.h"), d(7, "include", "c.h"), d(5, "define-hip", "X"))


@pytest.mark.parametrize("directives, hip_only", [
    ((d(1, "if", "defined(USE_ROCM)"), d(3, "endif")), [(1, 3)]),
    ((d(1, "ifndef", "__HIP_PLATFORM_AMD__"), d(3, "else"), d(5, "endif")), [(3, 5)]),
    ((d(1, "if", "defined(MYLIB_USE_HIP)"), d(3, "elif", "defined(MYLIB_USE_MUSA)"), d(5, "else"), d(7, "endif")),
     [(1, 3)]),
    ((d(1, "if", "defined(USE_ROCM) || defined(__CUDA_ARCH__)"), d(3, "endif")), []),  # the CUDA device pass too
    ((d(1, "ifdef", "__CUDACC__"), d(3, "elif", "defined(__HIPCC__)"), d(5, "endif")), []),  # hipcc may set both
])
def test_hip_only_branches(directives: tuple[Directive, ...], hip_only: list[tuple[int, int]]) -> None:
    assert compat_headers._hip_only(directives) == hip_only


def test_seen_follows_includers_up_and_leaves_out_includes_a_hip_build_never_compiles() -> None:
    files = {
        "sim/compat_hip.h": (d(3, "define", "__shfl_xor_sync(m, v, l, w) __shfl_xor(v, l)"),),
        "sim/container.h": (d(2, "include-hip", "compat_hip.h"), d(5, "include", "kernels.h"), d(6, "include", "ops.h")),
        "sim/ops.h": (d(4, "include", "kernels.h"),),  # gets the macro only from its includers
        "sim/kernels.h": (d(1, "define", "KERNELS_H"),),
        "sim/device.h": (d(1, "include", "container.h"), d(2, "include", "ops.h")),
        "net/contract.h": (d(1, "ifdef", "LIB_CUDA"), d(9, "include", "../sim/ops.h"), d(12, "endif")),
    }
    renamed = frozenset({"__shfl_xor_sync"})
    got = compat_headers.seen(files, dead=lambda path, line: path == "net/contract.h" and 1 <= line <= 12)
    assert {p for p, names in got.items() if names == renamed} == {
        "sim/compat_hip.h", "sim/container.h", "sim/ops.h", "sim/kernels.h", "sim/device.h"}
    # counted as compiled, the CUDA-only includer leaves ops.h, and kernels.h that ops.h includes, without the macro
    got = compat_headers.seen(files)
    assert "sim/ops.h" not in got and "sim/kernels.h" not in got and got["sim/device.h"] == renamed


MINIMUM = "__device__ unsigned pick(unsigned a, unsigned b) {\n  return umin(a, b);\n}\n"


def unsupported(root: Path) -> list[tuple[str, int, str | None, str]]:
    result = scan(root, Settings(jobs=1))
    every = [*result.findings, *result.guarded_findings]
    return sorted((f.path, f.line, f.status, f.severity.label) for f in every if f.rule == "cuda-unsupported-api")


@pytest.mark.parametrize("compat, status, severity", [
    # the HIP build gets a device function of the same name from the project's compat header
    ("#if defined(USE_HIP)\n// min of two: HIP has no such intrinsic; use min\n"
     "__device__ __forceinline__ unsigned int umin(unsigned int a, unsigned int b) { return min(a, b); }\n#endif\n",
     "guarded", "info"),
    ("#ifdef __HIP_PLATFORM_AMD__\ntemplate <typename T>\nstatic __device__ inline\nT umin(T a,\n       T b)\n{\n"
     "  return a < b ? a : b;\n}\n#endif\n", "guarded", "info"),
    # a host function of that name, or one for an old CUDA: the HIP build still lacks the device one
    ("#if defined(USE_HIP)\ninline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }\n#endif\n",
     "remaining", "medium"),
    ("#if __CUDA_ARCH__ < 300\n__device__ unsigned int umin(unsigned int a, unsigned int b) { return a; }\n#endif\n",
     "remaining", "medium"),
])
def test_a_cuda_function_hip_lacks_is_handled_where_the_compat_header_defines_it_for_hip(
    tmp_path: Path, compat: str, status: str, severity: str
) -> None:
    write(tmp_path, "src/compat.h", compat)
    write(tmp_path, "src/kernel.cu", '#include "compat.h"\n' + MINIMUM)
    assert unsupported(tmp_path) == [("src/kernel.cu", 3, status, severity)]


def test_entries_name_the_device_functions_of_hip_only_branches() -> None:
    text = ("#ifdef USE_ROCM\n__device__ int lane_min(int a, int b) { return a; }\nstatic __host__ __device__\n"
            "float clampf(float v);\n__device__ inline\nfloat\nclamp2(float v) { return v; }\n#endif\n")
    directives = (d(1, "ifdef", "USE_ROCM"), d(8, "endif"))
    got = compat_headers.entries(text, [], directives, lambda o: text.count("\n", 0, o) + 1)
    assert got == (d(2, "define-hip", "lane_min"), d(7, "define-hip", "clamp2"))  # a declaration defines nothing


UPLOAD = '#include "common.cuh"\nint up(float** p) { return cudaMalloc((void**)p, 64) != cudaSuccess; }\n'


@pytest.mark.parametrize("common, status", [
    ("#if defined(MYLIB_USE_HIP)\n#define cudaMalloc hipMalloc\n#define cudaSuccess hipSuccess\n#endif\n", "guarded"),
    ("#if defined(MYLIB_USE_HIP)\n#define WARP 64\n#endif\n", "remaining"),  # renames no cuda* name
    ("#define cudaMalloc myMalloc\n", "remaining"),  # not the HIP build's
])
def test_the_missing_runtime_header_is_handled_where_an_included_header_renames_cuda_names_for_hip(
    tmp_path: Path, common: str, status: str
) -> None:
    write(tmp_path, "src/common.cuh", common)
    write(tmp_path, "src/upload.cu", UPLOAD)
    result = scan(tmp_path, Settings(jobs=1))
    found = [(f.path, f.line, f.status) for f in [*result.findings, *result.guarded_findings]
             if f.rule == "cuda-implicit-runtime-header"]
    assert found == [("src/upload.cu", 1, status)]
