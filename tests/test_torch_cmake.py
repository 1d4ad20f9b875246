"""PyTorch C++ code built by CMake (find_package(Torch)) rather than torch.utils.cpp_extension: no hipify step runs,
so PyTorch's CUDA headers and stream/guard names are work there (low), and no work in a cpp_extension build (info)."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate import rocm_status
from migrate.config import Settings
from migrate.model import FileKind
from migrate.scan import scan

OP = """#include <torch/library.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

__global__ void twice(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

void twice_cuda(at::Tensor x) {
  const c10::cuda::OptionalCUDAGuard guard(x.device());
  auto stream = at::cuda::getCurrentCUDAStream();
  twice<<<(x.numel() + 255) / 256, 256, 0, stream>>>(x.data_ptr<float>(), x.numel());
}
"""
# a test that only names the device: ROCm's PyTorch keeps kCUDA, so nothing to rename here
DEVICE_ONLY = "#include <torch/torch.h>\n\nbool on_gpu(const at::Tensor& t) { return t.device().type() == at::kCUDA; }\n"
CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(graphops LANGUAGES CXX CUDA)\nfind_package(Torch REQUIRED)\n" \
        "file(GLOB_RECURSE SRCS csrc/*.cpp csrc/*.cu)\nadd_library(graphops SHARED ${SRCS})\n"
# setup.py that drives CMake with a build_ext of its own (no torch.utils.cpp_extension)
CMAKE_SETUP = ("import subprocess\nfrom setuptools import Extension, setup\nfrom setuptools.command.build_ext import "
               "build_ext\n\n\nclass CMakeBuild(build_ext):\n    def build_extension(self, ext):\n"
               "        # unlike torch.utils.cpp_extension, CMake compiles the sources\n"
               "        subprocess.check_call(['cmake', '-S', '.', '-B', self.build_temp])\n\n\n"
               "setup(name='graphops', ext_modules=[Extension('graphops', [])], cmdclass={'build_ext': CMakeBuild})\n")
EXTENSION_SETUP = ("from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
                   "setup(name='graphops', ext_modules=[CUDAExtension('graphops', ['csrc/op.cu'])],\n"
                   "      cmdclass={'build_ext': BuildExtension})\n")


def write(root: Path, relpath: str, text: str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("setup, severity", [
    (None, "low"),  # CMake alone
    (CMAKE_SETUP, "low"),  # setup.py driving CMake: its comment naming cpp_extension is no use of it
    (EXTENSION_SETUP, "info"),  # a cpp_extension build hipifies the sources on ROCm
])
def test_pytorch_cuda_api_is_work_where_cmake_builds_the_extension(tmp_path: Path, setup: str | None,
                                                                   severity: str) -> None:
    write(tmp_path, "CMakeLists.txt", CMAKE)
    write(tmp_path, "csrc/op.cu", OP)
    write(tmp_path, "csrc/test_device.cpp", DEVICE_ONLY)
    if setup is not None:
        write(tmp_path, "setup.py", setup)
    result = scan(tmp_path, Settings(jobs=1))
    found = sorted((f.path, f.line, f.rule, f.severity.label) for f in result.findings if f.rule.startswith("aten-"))
    assert found == [("csrc/op.cu", 2, "aten-cuda-include", severity), ("csrc/op.cu", 11, "aten-cuda-api", severity),
                     ("csrc/test_device.cpp", 3, "aten-cuda-api", "info")]
    low = [f for f in result.findings if f.rule.startswith("aten-") and f.severity.label == "low"]
    assert all("CMakeLists.txt finds Torch" in f.message for f in low)


def test_without_a_cmake_build_of_torch_the_api_stays_info(tmp_path: Path) -> None:
    write(tmp_path, "CMakeLists.txt", CMAKE.replace("find_package(Torch REQUIRED)\n", ""))
    write(tmp_path, "csrc/op.cu", OP)
    result = scan(tmp_path, Settings(jobs=1))
    assert {f.severity.label for f in result.findings if f.rule.startswith("aten-")} == {"info"}


@pytest.mark.parametrize("kind, path, text, expected", [
    (FileKind.CMAKE, "CMakeLists.txt", "find_package(Torch REQUIRED)\n", [("torch-cmake", 1)]),
    (FileKind.CMAKE, "cmake/torch.cmake", "if(NOT Torch_FOUND)\n  find_package( Torch 2.1 REQUIRED)\nendif()\n",
     [("torch-cmake", 2)]),
    (FileKind.CMAKE, "CMakeLists.txt", "# find_package(Torch) is left to the user\nfind_package(TorchVision)\n", []),
    (FileKind.SETUP_PY, "setup.py", "from torch.utils.cpp_extension import CUDAExtension\n", [("torch-hipify", 1)]),
    (FileKind.PYTHON, "ops/jit.py", "import torch\nfrom torch.utils import data\nimport torch.utils.cpp_extension\n",
     [("torch-hipify", 3)]),
    (FileKind.PYTHON, "ops/jit.py", "import torch\nops = torch.utils.cpp_extension.load('ops', ['ops.cu'])\n",
     [("torch-hipify", 2)]),
    (FileKind.PYTHON, "ops/jit.py", "# we never use torch.utils.cpp_extension.load here\nimport torch\n", []),
])
def test_torch_build_evidence(kind: FileKind, path: str, text: str, expected: list[tuple[str, int]]) -> None:
    found = [(e.kind, e.line) for e in rocm_status.evidence(kind, path, text)
             if e.kind in (rocm_status.TORCH_CMAKE, rocm_status.TORCH_HIPIFY)]
    assert found == expected
    assert rocm_status.TORCH_CMAKE in rocm_status.NOT_CITED and rocm_status.TORCH_HIPIFY in rocm_status.NOT_CITED
