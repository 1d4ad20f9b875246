"""A HIP branch that builds hipified twins of some CUDA sources (`src/gpu/hip/ops-hip.hip` for src/gpu/cuda/ops-cuda.cu,
written by a configure-time hipify step): the twinned source is built for ROCm, and a CUDA-only source it leaves out of
the same folder is a part the ROCm build lacks (optional-gap, at its own severity), not code it never needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate import rocm_status
from migrate.config import Settings
from migrate.scan import scan

KERNEL = """__global__ void reduce(float* out, const float* in) {
  float v = in[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
"""
CUDA_BRANCH = """cmake_minimum_required(VERSION 3.21)
project(engine LANGUAGES CXX)
option(USE_CUDA "CUDA" OFF)
option(USE_ROCM "ROCm" OFF)
set(SRCS src/engine.cpp)
if(USE_CUDA)
  enable_language(CUDA)
  set(GPU_SRCS src/gpu/cuda/ops-cuda.cu src/gpu/cuda/quant/int4.cu)
endif()
"""
TWIN_BRANCH = """if(USE_ROCM)
  enable_language(HIP)
  hipify(CUDA_SOURCE_DIR ${PROJECT_SOURCE_DIR}/src/gpu/cuda HIP_SOURCE_DIR ${PROJECT_SOURCE_DIR}/src/gpu/hip)
  set(GPU_SRCS src/gpu/hip/ops-hip.hip)
endif()
add_library(engine ${SRCS} ${GPU_SRCS})
"""
# a look-alike: the HIP branch builds a backend of its own, no twin of any CUDA source
BACKEND_BRANCH = """if(USE_ROCM)
  enable_language(HIP)
  set(GPU_SRCS src/gpu/rocm/ops_rocm.cpp)
endif()
add_library(engine ${SRCS} ${GPU_SRCS})
"""


def write(root: Path, relpath: str, text: str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("hip_branch, expected", [
    (TWIN_BRANCH, {"src/gpu/cuda/ops-cuda.cu": "remaining", "src/gpu/cuda/quant/int4.cu": "optional-gap"}),
    (BACKEND_BRANCH, {"src/gpu/cuda/ops-cuda.cu": "guarded", "src/gpu/cuda/quant/int4.cu": "guarded"}),
])
def test_sources_a_hip_branch_builds_as_twins(tmp_path: Path, hip_branch: str, expected: dict[str, str]) -> None:
    write(tmp_path, "CMakeLists.txt", CUDA_BRANCH + hip_branch)
    write(tmp_path, "src/engine.cpp", "int main() { return 0; }\n")
    write(tmp_path, "src/gpu/cuda/ops-cuda.cu", KERNEL)
    write(tmp_path, "src/gpu/cuda/quant/int4.cu", KERNEL)
    result = scan(tmp_path, Settings(jobs=1))
    every = [*result.findings, *result.guarded_findings]
    warp = [f for f in every if f.line == 3 and f.path.startswith("src/gpu/")]
    assert warp, "the fixture's warp reduction must be found"
    assert {f.path: f.status for f in warp} == expected
    if hip_branch is TWIN_BRANCH:  # the gap keeps the severity the rule gives it
        assert all(f.severity.label != "info" for f in warp)


def test_hip_twins() -> None:
    assert rocm_status.hip_twins("src/devices/cuda/fastllm-cuda.cu") == {
        "src/devices/cuda/fastllm-cuda.hip", "src/devices/cuda/fastllm-hip.hip", "src/devices/hip/fastllm-cuda.hip",
        "src/devices/hip/fastllm-hip.hip"}
    assert rocm_status.hip_twins("ops.cu") == {"ops.hip"}
    assert rocm_status.hip_twins("src/cuda/ops.cpp") == set()


def test_cmake_records_the_hip_branch_twins() -> None:
    found = rocm_status.cmake_sources("CMakeLists.txt", CUDA_BRANCH + TWIN_BRANCH)
    assert [(e.kind, e.path) for e in found if e.kind == "hip-twin-source"] == [
        ("hip-twin-source", "src/gpu/hip/ops-hip.hip")]
    # a .hip source listed outside the HIP branch is no twin that branch builds
    outside = CUDA_BRANCH + BACKEND_BRANCH + "set(EXTRA src/gpu/hip/ops-hip.hip)\n"
    assert not [e for e in rocm_status.cmake_sources("CMakeLists.txt", outside) if e.kind == "hip-twin-source"]


ROOT_WITH_INCLUDE = CUDA_BRANCH + "if(USE_ROCM)\n  include(cmake/rocm.cmake)\nendif()\nadd_library(engine ${SRCS} ${GPU_SRCS})\n"
# a file the root includes for its HIP build alone, writing the hipified copies into the build tree
ROCM_CMAKE = """enable_language(HIP)
set(GEN "${CMAKE_CURRENT_BINARY_DIR}/hip-src")
hipify(CUDA_SOURCE_DIR "${PROJECT_SOURCE_DIR}/src/gpu/cuda" HIP_SOURCE_DIR "${GEN}/hip")
set(GPU_SRCS ${GEN}/hip/ops-hip.hip src/gpu/rocm/fallbacks.hip)
"""


def test_twins_a_hip_only_cmake_file_writes_into_the_build_tree(tmp_path: Path) -> None:
    write(tmp_path, "CMakeLists.txt", ROOT_WITH_INCLUDE)
    write(tmp_path, "cmake/rocm.cmake", ROCM_CMAKE)
    write(tmp_path, "src/gpu/cuda/ops-cuda.cu", KERNEL)
    write(tmp_path, "src/gpu/cuda/quant/int4.cu", KERNEL)
    found = rocm_status.cmake_sources("cmake/rocm.cmake", ROCM_CMAKE)
    assert [e.path for e in found if e.kind == "hip-twin-source"] == ["src/gpu/cuda/ops-hip.hip",
                                                                     "src/gpu/rocm/fallbacks.hip"]
    result = scan(tmp_path, Settings(jobs=1))
    warp = [f for f in [*result.findings, *result.guarded_findings] if f.line == 3 and f.path.startswith("src/gpu/")]
    assert {f.path: f.status for f in warp} == {"src/gpu/cuda/ops-cuda.cu": "remaining",
                                                "src/gpu/cuda/quant/int4.cu": "optional-gap"}
