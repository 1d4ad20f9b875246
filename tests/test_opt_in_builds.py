"""Code only an off-by-default CMake option builds: an add-on the default (and the ROCm) build never compiles."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import init_repo
from migrate.assessment import assess
from migrate.config import Settings
from migrate import finding_status
from migrate.finding_status import Context, status_of
from migrate.model import Severity
from migrate.opt_in_builds import opt_in, read_ahead
from migrate.scan import inputs, scan, scan_inputs, worker_count
from migrate.weights import load_weights

CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(engine LANGUAGES CXX)
option(ENGINE_WITH_CUDA "CUDA backend" OFF)
option(ENGINE_WITH_FASTCONV "vendor convolution library" {default})
set(GPU_SRCS src/core.cu src/util.cu)
if(ENGINE_WITH_CUDA)
  enable_language(CUDA)
  add_definitions(-DENGINE_GPU)
  if(ENGINE_WITH_FASTCONV)
    add_compile_definitions(ENGINE_HAS_FASTCONV)
    list(APPEND GPU_SRCS src/conv_fast.cu)
  endif()
  add_library(engine ${{GPU_SRCS}})
endif()
"""
UTIL = """\
#include <cuda_runtime.h>
#include "util.h"
#ifdef ENGINE_HAS_FASTCONV
#include <cudnn.h>
cudnnHandle_t conv_handle() {
  cudnnHandle_t handle;
  cudnnCreate(&handle);
  return handle;
}
#endif
#ifdef ENGINE_GPU
void plain() { cudaDeviceSynchronize(); }
#endif
"""
CONV = """\
#include "fast/tile.h"
#include "util.h"
__global__ void conv(float* x) { x[threadIdx.x] = tile_sum(x[threadIdx.x]); }
"""
TILE = """\
#pragma once
__device__ float tile_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  return v;
}
"""
CORE = """\
#include "util.h"
__global__ void scale(float* x) { x[threadIdx.x] *= 2.f; }
"""


def _tree(root: Path, default: str = "OFF") -> Path:
    files = {"CMakeLists.txt": CMAKE.format(default=default), "src/util.cu": UTIL, "src/conv_fast.cu": CONV,
             "src/fast/tile.h": TILE, "src/util.h": "#pragma once\nvoid plain();\n", "src/core.cu": CORE}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


PATHS = ("src/util.cu", "src/conv_fast.cu", "src/fast/tile.h", "src/util.h", "src/core.cu")


def test_an_off_by_default_option_s_macro_sources_and_their_headers_are_opted_in(tmp_path: Path) -> None:
    found = opt_in(_tree(tmp_path), (), PATHS)
    assert found.files == {"src/conv_fast.cu", "src/fast/tile.h"}  # util.h: core.cu includes it too
    assert dict(found.ranges) == {"src/util.cu": ((3, 10),)}  # the backend's own macro (ENGINE_GPU) is no add-on
    assert found.holds("src/util.cu", 7) and not found.holds("src/util.cu", 12)


def test_an_option_on_by_default_or_the_backend_switch_is_the_build_itself(tmp_path: Path) -> None:
    on = opt_in(_tree(tmp_path, default="ON"), (), PATHS)
    assert not on.files and not on.ranges
    backend = tmp_path / "backend"
    backend.mkdir()
    _tree(backend)
    cmake = (backend / "CMakeLists.txt").read_text().replace("ENGINE_WITH_FASTCONV", "ENGINE_WITH_CUDA")
    (backend / "CMakeLists.txt").write_text(cmake)
    assert opt_in(backend, (), PATHS).files == frozenset()


def test_the_assessment_reads_opted_in_cudnn_code_as_an_add_on(tmp_path: Path) -> None:
    record = assess(scan(init_repo(_tree(tmp_path / "engine")), Settings(jobs=1)))
    status = {(f.path, f.line, f.rule): status_of(f, record.context, record.weights) for f in record.result.findings
              if f.severity >= Severity.LOW}
    assert status[("src/util.cu", 7, "cudnn-api")] == "optional-gap"  # cudnnCreate under the opted-in macro
    assert status[("src/fast/tile.h", 3, "warp-full-mask")] == "optional-gap"  # only the opted-in source includes it
    # the CUDA backend itself, behind its own off-by-default switch, is the port
    assert status[("src/util.cu", 12, "cuda-runtime-api")] == "remaining"
    assert status[("CMakeLists.txt", 7, "cmake-cuda-language")] == "remaining"


def test_an_option_declared_at_the_root_and_tested_in_a_backend_folder_is_opted_in(tmp_path: Path) -> None:
    root_cmake = 'project(lib LANGUAGES C CXX)\noption(LIB_CUDA "CUDA backend" OFF)\n' \
                 'option(LIB_CUDA_ALL_TYPES "every type pair of the attention kernels" OFF)\nadd_subdirectory(src/cuda)\n'
    backend = 'if (LIB_CUDA_ALL_TYPES)\n    add_compile_definitions(LIB_CUDA_ALL_TYPES)\nendif()\n' \
              'add_library(lib-cuda attn.cu)\n'
    attn = '#include "attn.cuh"\n#ifdef LIB_CUDA_ALL_TYPES\nDECL_ATTN(q4_0, q8_0);\n#endif\nDECL_ATTN(f16, f16);\n'
    for name, text in {"CMakeLists.txt": root_cmake, "src/cuda/CMakeLists.txt": backend, "src/cuda/attn.cu": attn,
                       "src/cuda/attn.cuh": "#pragma once\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = opt_in(tmp_path, ("src/cuda",), ("src/cuda/attn.cu",))
    assert dict(found.ranges) == {"src/cuda/attn.cu": ((2, 4),)}
    assert found.holds("src/cuda/attn.cu", 3) and not found.holds("src/cuda/attn.cu", 5)


MAKEFILE = """\
GPU=1
FASTCONV={default}
DEBUG=0
ifeq ($(GPU), 1)
COMMON+= -DENGINE_GPU
ifeq ($(FASTCONV), 1)
COMMON+= -DENGINE_HAS_FASTCONV  # the vendor library's code
LDFLAGS+= -lcudnn
endif
endif
ifeq ($(DEBUG), 1)
CFLAGS+= -g
else
CFLAGS+= -DNDEBUG
endif
"""


def _make_tree(root: Path, default: str = "0", extra: str = "") -> Path:
    _tree(root)
    (root / "CMakeLists.txt").unlink()
    (root / "Makefile").write_text(MAKEFILE.format(default=default) + extra, encoding="utf-8")
    return root


def test_a_makefile_switch_left_at_zero_opts_its_macros_in(tmp_path: Path) -> None:
    found = opt_in(_make_tree(tmp_path), (), PATHS)
    assert dict(found.ranges) == {"src/util.cu": ((3, 10),)}  # ENGINE_GPU: the GPU switch is on, and the build itself
    assert found.holds("src/util.cu", 7) and not found.holds("src/util.cu", 12)


@pytest.mark.parametrize("default, extra", [
    ("1", ""),  # on by default: the build compiles it
    ("", ""),  # no value: nothing says it is off
    ("0", "FASTCONV=1\n"),  # turned on further down
    ("0", "CFLAGS+= -DENGINE_HAS_FASTCONV\n"),  # the macro is also added outside the switch
])
def test_a_makefile_switch_on_or_a_macro_added_anyway_is_the_build_itself(tmp_path: Path, default: str,
                                                                          extra: str) -> None:
    assert not opt_in(_make_tree(tmp_path, default, extra), (), PATHS).ranges


@pytest.mark.parametrize("make", [_tree, _make_tree])
def test_what_is_read_ahead_of_the_findings_gives_the_same_opt_in(tmp_path: Path, make: Callable[[Path], Path]) -> None:
    root = make(tmp_path)
    ahead = read_ahead(root, (), (*PATHS, "CMakeLists.txt", "Makefile"))
    assert ahead.read == set(PATHS) and dict(ahead.ranges) == {"src/util.cu": ((3, 10),)}
    for paths in (PATHS, PATHS[:1], PATHS[2:], ()):
        assert opt_in(root, (), paths, ahead) == opt_in(root, (), paths)


def test_a_file_the_reading_ahead_left_out_is_read_then(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    ahead = read_ahead(root, (), ("src/core.cu",))
    (root / "src/util.cu").write_text(UTIL.replace("ENGINE_HAS_FASTCONV", "ENGINE_HAS_FASTCONV\n"), encoding="utf-8")
    (root / "src/core.cu").write_text("#ifdef ENGINE_HAS_FASTCONV\n#endif\n", encoding="utf-8")
    found = opt_in(root, (), PATHS, ahead)
    assert dict(found.ranges) == {"src/util.cu": ((3, 11),)}  # read now; core.cu as it was read ahead


def test_the_assessment_takes_what_was_read_ahead_of_its_tree_once(tmp_path: Path) -> None:
    root = init_repo(_tree(tmp_path / "engine"))
    result = scan(root, Settings(jobs=1))
    weights = load_weights()
    finding_status.read_ahead(str(root), ["CMakeLists.txt"], PATHS, weights)
    (root / "CMakeLists.txt").write_text(CMAKE.format(default="ON"), encoding="utf-8")  # nothing opted in any more
    assert Context.of(result, weights).opt_in.files == {"src/conv_fast.cu", "src/fast/tile.h"}  # as read ahead
    assert not Context.of(result, weights).opt_in.files  # taken: read from the tree again
    for other in ((str(tmp_path), ["CMakeLists.txt"]), (str(root), ["src/CMakeLists.txt"])):
        finding_status.read_ahead(*other, PATHS, weights)  # another tree, other build units: not this tree's
        assert not Context.of(result, weights).opt_in.files


def test_a_large_scan_reads_ahead_while_its_workers_run_and_assesses_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    original = finding_status.read_ahead
    monkeypatch.setattr(finding_status, "read_ahead", lambda root, *rest: read.append(root) or original(root, *rest))
    root = _tree(tmp_path / "engine")
    for i in range(64):  # enough files for a pool
        (root / f"src/k{i:02d}.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n", encoding="utf-8")
    init_repo(root)
    settings = Settings(jobs=2)
    ahead = assess(scan_inputs(root, settings, inputs(root, settings), assessed=True))
    pooled = worker_count(settings) > 1  # a machine of one core scans in this process: nothing to read beside it
    assert read == ([str(root)] if pooled else []) and not finding_status._AHEAD  # read as the workers ran, taken
    plain = assess(scan_inputs(root, settings, inputs(root, settings)))
    assert ahead.context == plain.context and ahead.risk == plain.risk
    assert ahead.context.opt_in.files == {"src/conv_fast.cu", "src/fast/tile.h"}
