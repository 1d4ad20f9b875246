"""Golden verdicts of small hand-written repositories, one pair per rule of the verdict model: the repository the
rule is for, and a look-alike it must leave alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import init_repo
from migrate.cli import cli

SETUP_EXTENSION = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="rownorm",
    ext_modules=[CUDAExtension("rownorm._C", ["csrc/norm/binding.cpp", "csrc/norm/norm.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
"""
BINDING = """\
#include <torch/extension.h>
void launch_norm(float* x, int n);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("norm", [](torch::Tensor x) { launch_norm(x.data_ptr<float>(), x.numel()); });
}
"""
PLAIN_KERNEL = """\
#include <cuda_runtime.h>
__global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 0.5f;
}
void launch_norm(float* x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n); }
"""
WARP_KERNEL = """\
#include <cuda_runtime.h>
__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}
__global__ void row_sum_{n}(const float* x, float* out, int cols) {
    int lane = threadIdx.x % 32;
    float v = 0.f;
    for (int c = lane; c < cols; c += 32) v += x[blockIdx.x * cols + c];
    v = warp_sum(v);
    if (lane == 0) out[blockIdx.x] = v;
}
"""
GUARDED_WARP_KERNEL = """\
#include <cuda_runtime.h>
#if defined(USE_ROCM)
#define FULL_MASK 0xffffffffffffffffULL
#else
#define FULL_MASK 0xffffffffu
#endif
__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}
"""
PTX_KERNEL = """\
#include <cuda_runtime.h>
#include <cuda_fp16.h>
__device__ void mma_tile(unsigned const* a, unsigned const* b, float* c) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ unsigned lane_mask() {
    unsigned mask;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
    return mask;
}
"""
SETUP_TWO_BACKENDS = """\
import os
from setuptools import setup
from torch.utils.cpp_extension import IS_HIP_EXTENSION, BuildExtension, CUDAExtension

if IS_HIP_EXTENSION:
    sources = ["csrc/attn_ck/api.cpp", "csrc/attn_ck/fwd.cpp"]
else:
    sources = ["csrc/attn/api.cpp", "csrc/attn/fwd_sm80.cu", "csrc/attn/bwd_sm80.cu"]

setup(name="fastattn", ext_modules=[CUDAExtension("fastattn_2", sources)], cmdclass={"build_ext": BuildExtension})
"""
CK_SOURCE = """\
#ifdef USE_ROCM
#include <hip/hip_runtime.h>
#endif
#include <torch/extension.h>
void attn_fwd_ck(torch::Tensor q, torch::Tensor k, torch::Tensor v);
"""


def _repo(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return init_repo(root)


def _summary(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict:  # type: ignore[type-arg]
    monkeypatch.chdir(root.parent)
    done = CliRunner().invoke(cli, ["scan", root.name, "--format", "json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)["summary"]  # type: ignore[no-any-return]


def _verdict(tmp_path: Path, name: str, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    summary = _summary(_repo(tmp_path / name, files), monkeypatch)
    return summary["rocm_status"]["level"], summary["verdict"]


EXTENSION = {"setup.py": SETUP_EXTENSION, "csrc/norm/binding.cpp": BINDING, "csrc/norm/norm.cu": PLAIN_KERNEL}
VARIANTS = {f"dev/cuda/row_sum_v{n}.cu": WARP_KERNEL.replace("{n}", str(n)) for n in range(1, 9)}
TWO_BACKENDS = {
    "setup.py": SETUP_TWO_BACKENDS, "csrc/attn_ck/api.cpp": CK_SOURCE, "csrc/attn_ck/fwd.cpp": CK_SOURCE,
    "csrc/attn/api.cpp": BINDING, "csrc/attn/fwd_sm80.cu": PTX_KERNEL,
    "csrc/attn/bwd_sm80.cu": PTX_KERNEL + WARP_KERNEL.replace("{n}", "bwd"),
    "fastattn/__init__.py": "import torch\nif torch.version.hip:\n    BACKEND = 'ck'\nelse:\n    BACKEND = 'cuda'\n",
}
TRAINING = {
    "requirements.txt": "torch\ntransformers\npeft\nbitsandbytes\n",
    "Dockerfile": "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n"
                  "RUN pip install torch --index-url https://download.pytorch.org/whl/cu118\n",
}
FINETUNE = """\
from peft import LoraConfig, get_peft_model, prepare_model_for_int8_training
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("base", load_in_8bit=True, device_map="auto")
model = prepare_model_for_int8_training(model)
model = get_peft_model(model, LoraConfig(r=8))
"""
GENERATE = """\
import sys
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("base", load_in_8bit="--8bit" in sys.argv, device_map="auto")
"""


def test_a_development_folder_of_kernel_variants_is_not_the_main_path(tmp_path, monkeypatch) -> None:
    assert _verdict(tmp_path, "plain", EXTENSION, monkeypatch) == ("none", "easy")
    assert _verdict(tmp_path, "with-dev", {**EXTENSION, **VARIANTS}, monkeypatch) == ("none", "easy")
    on_main = {**EXTENSION, **{p.replace("dev/cuda/", "csrc/norm/"): t for p, t in VARIANTS.items()}}
    assert _verdict(tmp_path, "on-main", on_main, monkeypatch) == ("none", "moderate")


def test_cuda_kernels_a_separate_rocm_backend_replaces_count_in_full(tmp_path, monkeypatch) -> None:
    level, verdict = _verdict(tmp_path, "two-backends", TWO_BACKENDS, monkeypatch)
    assert level == "supported" and verdict in {"hard", "very-hard"}
    ported = {**TWO_BACKENDS, "csrc/attn/fwd_sm80.cu": GUARDED_WARP_KERNEL + PTX_KERNEL}  # the kernels know ROCm
    assert _verdict(tmp_path, "ported-kernels", ported, monkeypatch) == ("supported", "easy")


def test_a_partly_ported_component_with_its_own_rocm_branches_is_review(tmp_path, monkeypatch) -> None:
    guarded = {**EXTENSION, "csrc/norm/norm.cu": GUARDED_WARP_KERNEL + WARP_KERNEL.replace("{n}", "a") + PLAIN_KERNEL,
               "csrc/norm/compat.cuh": "#if defined(USE_ROCM)\n#include <hip/hip_fp16.h>\n#endif\n",
               "csrc/norm/graph.cuh": "#if defined(USE_ROCM)\n#define GRAPH_API hipGraph_t\n#endif\n",
               "rownorm/ext.py": "import torch\nif torch.version.hip:\n    FLAGS = ['-DUSE_ROCM']\n"}
    assert _verdict(tmp_path, "partial", guarded, monkeypatch) == ("partial", "easy")
    one_guard = {**guarded, "csrc/norm/compat.cuh": "#pragma once\n", "csrc/norm/graph.cuh": "#pragma once\n"}
    assert _verdict(tmp_path, "one-guard", one_guard, monkeypatch) == ("partial", "moderate")  # a guard or two
    unguarded = {**EXTENSION, "csrc/norm/norm.cu": WARP_KERNEL.replace("{n}", "a") + PLAIN_KERNEL}
    assert _verdict(tmp_path, "unported", unguarded, monkeypatch) == ("none", "moderate")


def test_a_partial_rocm_path_beside_unguarded_blockers_is_not_a_port(tmp_path, monkeypatch) -> None:
    """A component with a few USE_ROCM branches but a blocker outside them (mma.sync PTX that hipcc cannot compile)
    has a stale or unfinished ROCm path: its blocker floors the verdict as in an unported project."""
    guarded = {**EXTENSION, "csrc/norm/norm.cu": GUARDED_WARP_KERNEL + WARP_KERNEL.replace("{n}", "a") + PLAIN_KERNEL,
               "csrc/norm/compat.cuh": "#if defined(USE_ROCM)\n#include <hip/hip_fp16.h>\n#endif\n",
               "csrc/norm/graph.cuh": "#if defined(USE_ROCM)\n#define GRAPH_API hipGraph_t\n#endif\n",
               "rownorm/ext.py": "import torch\nif torch.version.hip:\n    FLAGS = ['-DUSE_ROCM']\n"}
    assert _verdict(tmp_path, "ported", guarded, monkeypatch) == ("partial", "easy")
    stale = {**guarded, "csrc/norm/gemm.cu": PTX_KERNEL}
    assert _verdict(tmp_path, "stale", stale, monkeypatch) == ("partial", "hard")


def test_a_recipe_that_trains_with_a_quantisation_package_replaces_it(tmp_path, monkeypatch) -> None:
    assert _verdict(tmp_path, "recipe", {**TRAINING, "finetune.py": FINETUNE}, monkeypatch) == ("none", "moderate")
    assert _verdict(tmp_path, "inference", {**TRAINING, "generate.py": GENERATE}, monkeypatch) == ("none", "easy")
    example = {**TRAINING, "examples/finetune.py": FINETUNE}
    assert _verdict(tmp_path, "example", example, monkeypatch) == ("none", "easy")


QLORA_TRAIN = """\
import torch
import bitsandbytes as bnb
from transformers import AutoModelForCausalLM, BitsAndBytesConfig


def linear_layers(model):
    return [name for name, module in model.named_modules() if isinstance(module, bnb.nn.Linear4bit)]


def main(bits: int = 4):
    config = BitsAndBytesConfig(load_in_4bit=bits == 4, bnb_4bit_quant_type="nf4")
    return AutoModelForCausalLM.from_pretrained("base", quantization_config=config)
"""
OPTIONAL_BNB_TRAIN = """\
import torch


def optimizer_for(params, eight_bit: bool):
    if eight_bit:
        try:
            import bitsandbytes as bnb
            return bnb.optim.Adam8bit(params)
        except ImportError:
            pass
    return torch.optim.AdamW(params)
"""
PINNED_BNB = {"requirements.txt": "torch\ntransformers\nbitsandbytes==0.39.0\n"}


def test_a_cuda_only_pin_imported_at_module_level_is_moderate(tmp_path, monkeypatch) -> None:
    required = {**PINNED_BNB, "train.py": QLORA_TRAIN}
    assert _verdict(tmp_path, "qlora", required, monkeypatch) == ("none", "moderate")
    summary = _summary(tmp_path / "qlora", monkeypatch)
    assert summary["verdict_basis"] == (
        "a CUDA-only package the main path cannot load without: bitsandbytes-pre-rocm-pin at requirements.txt:3, "
        "imported at module level at train.py:2")


def test_the_same_package_behind_a_switch_or_unpinned_stays_easy(tmp_path, monkeypatch) -> None:
    optional = {**PINNED_BNB, "train.py": OPTIONAL_BNB_TRAIN}
    assert _verdict(tmp_path, "switch", optional, monkeypatch) == ("none", "easy")
    unpinned = {"requirements.txt": "torch\nbitsandbytes>=0.45\n", "train.py": QLORA_TRAIN}
    assert _verdict(tmp_path, "unpinned", unpinned, monkeypatch) == ("none", "trivial")
    in_examples = {**PINNED_BNB, "examples/train.py": QLORA_TRAIN}
    assert _verdict(tmp_path, "example-import", in_examples, monkeypatch) == ("none", "easy")


ATTENTION_REQUIRED = """\
import torch
from flash_attn import flash_attn_func


def attend(q, k, v):
    return flash_attn_func(q, k, v, causal=True)
"""
ATTENTION_FALLBACK = """\
import torch

try:
    from flash_attn import flash_attn_func
except ImportError:
    flash_attn_func = None


def attend(q, k, v):
    if flash_attn_func is None:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    return flash_attn_func(q, k, v, causal=True)
"""


def test_a_cuda_only_kernel_package_the_model_imports_is_moderate_and_a_fallback_is_not(tmp_path, monkeypatch) -> None:
    manifest = {"requirements.txt": "torch\nflash-attn==2.3.0\n"}
    required = {**manifest, "model/attention.py": ATTENTION_REQUIRED}
    assert _verdict(tmp_path, "hard-import", required, monkeypatch) == ("none", "moderate")
    fallback = {**manifest, "model/attention.py": ATTENTION_FALLBACK}
    assert _verdict(tmp_path, "fallback", fallback, monkeypatch) == ("none", "trivial")


FIELD_REQUIRED = """\
import torch
import tinycudann as tcnn


class Field(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.grid = tcnn.Encoding(3, {"otype": "HashGrid", "n_levels": 16})
"""
FIELD_TRIED = """\
import torch

try:
    import tinycudann as tcnn
except ImportError:
    tcnn = None


class Field(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.grid = tcnn.Encoding(3, {"otype": "HashGrid"}) if tcnn else torch.nn.Embedding(2**19, 2)
"""


def test_a_package_with_no_rocm_build_the_core_model_imports_is_hard(tmp_path, monkeypatch) -> None:
    core = {"requirements.txt": "torch\n", "surface/field.py": FIELD_REQUIRED}
    assert _verdict(tmp_path, "core-import", core, monkeypatch) == ("none", "hard")
    assert _summary(tmp_path / "core-import", monkeypatch)["verdict_basis"] == (
        "a package with no ROCm build the main path imports at module level: python-neural-graphics-cuda at "
        "surface/field.py:2")
    # the same package tried with a fallback, or imported by an example only, is one substitution: not hard
    tried = {"requirements.txt": "torch\n", "surface/field.py": FIELD_TRIED}
    assert _verdict(tmp_path, "tried", tried, monkeypatch) == ("none", "trivial")
    example = {"requirements.txt": "torch\n", "examples/field.py": FIELD_REQUIRED}
    assert _verdict(tmp_path, "example", example, monkeypatch) == ("none", "trivial")



VOXEL_BACKBONE = """\
import torch
import spconv.pytorch as sparse


class VoxelBackbone(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = sparse.SubMConv3d(channels, 32, 3, indice_key="sub0")
"""
VOXEL_BACKBONE_TRIED = """\
import torch

try:
    import spconv.pytorch as sparse
except ImportError:
    sparse = None


def backbone(channels):
    if sparse is None:
        return torch.nn.Conv3d(channels, 32, 3, padding=1)
    return sparse.SubMConv3d(channels, 32, 3)
"""
SPARSE_ENCODER = """\
import torch
from MinkowskiEngine import SparseTensor, MinkowskiConvolution


class SparseStem(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = MinkowskiConvolution(3, dim, kernel_size=4, stride=4, dimension=2)
"""


def test_a_model_built_on_a_sparse_convolution_library_is_hard(tmp_path, monkeypatch) -> None:
    lidar = {"requirements.txt": "torch\n", "detector/backbone.py": VOXEL_BACKBONE}
    assert _verdict(tmp_path, "lidar", lidar, monkeypatch) == ("none", "hard")
    assert _summary(tmp_path / "lidar", monkeypatch)["verdict_basis"] == (
        "a package with no ROCm build the main path imports at module level: python-spconv at detector/backbone.py:2")
    encoder = {"requirements.txt": "torch\n", "models/sparse_stem.py": SPARSE_ENCODER}
    assert _verdict(tmp_path, "encoder", encoder, monkeypatch) == ("none", "hard")
    # tried with a dense fallback, or in an example only: one package to replace, not the model's own op
    tried = {"requirements.txt": "torch\n", "detector/backbone.py": VOXEL_BACKBONE_TRIED}
    assert _verdict(tmp_path, "tried", tried, monkeypatch) == ("none", "trivial")
    example = {"requirements.txt": "torch\n", "examples/backbone.py": VOXEL_BACKBONE}
    assert _verdict(tmp_path, "example", example, monkeypatch) == ("none", "trivial")


NUMBA_KERNEL = """\
import numpy as np
from numba import cuda


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1
"""
FLASH_KERNEL = """\
import torch
from flash_attn import flash_attn_func


def attend(q, k, v):
    return flash_attn_func(q, k, v)
"""


def test_numba_cuda_imported_at_module_level_is_a_substitution_not_a_load_failure(tmp_path, monkeypatch) -> None:
    numba = {"requirements.txt": "numba\nnumpy\n", "puzzles/check.py": NUMBA_KERNEL}
    assert _verdict(tmp_path, "numba", numba, monkeypatch) == ("none", "easy")
    # a kernel package whose import loads its CUDA library stays the required floor
    flash = {"requirements.txt": "torch\nflash-attn==2.3.0\n", "puzzles/attend.py": FLASH_KERNEL}
    assert _verdict(tmp_path, "flash", flash, monkeypatch) == ("none", "moderate")


CHOOSE_BACKBONE = """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--backbone", default="grid", choices=["grid", "grid_tcnn"])
opt = parser.parse_args()
if opt.backbone == "grid_tcnn":
    from surface.field_tcnn import Field
else:
    from surface.field import Field
"""


def test_one_backbone_a_setting_chooses_or_a_rasteriser_built_at_first_use_is_not_hard(tmp_path, monkeypatch) -> None:
    chosen = {"requirements.txt": "torch\n", "main.py": CHOOSE_BACKBONE, "surface/__init__.py": "",
              "surface/field.py": "import torch\n", "surface/field_tcnn.py": FIELD_REQUIRED}
    assert _verdict(tmp_path, "chosen", chosen, monkeypatch) == ("none", "moderate")  # the CUDA-only import floor
    # nvdiffrast compiles its plugin at first use: its import alone starts on ROCm
    raster = {"requirements.txt": "torch\n", "surface/render.py": "import torch\nimport nvdiffrast.torch as dr\n"}
    assert _verdict(tmp_path, "raster", raster, monkeypatch) == ("none", "moderate")


SETUP_FUSED = SETUP_EXTENSION.replace('"rownorm"', '"fusedmlp"').replace("rownorm._C", "fusedmlp._C").replace(
    '["csrc/norm/binding.cpp", "csrc/norm/norm.cu"]', '["src/binding.cpp", "src/mlp.cu"]')
RUN_FLAGGED = """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--fused", action="store_true", help="use the fully fused MLP")
opt = parser.parse_args()

if opt.fused:
    from model.net_fused import Net
else:
    from model.net import Net
"""
RUN_BY_VALUE = RUN_FLAGGED.replace('"--fused", action="store_true"', '"--mlp", default="fused"').replace(
    "if opt.fused:", 'if opt.mlp == "fused":')
FUSED_MLP = {
    "fusedmlp/setup.py": SETUP_FUSED, "fusedmlp/__init__.py": "from fusedmlp._C import forward\n",
    "fusedmlp/src/binding.cpp": BINDING, "fusedmlp/src/mlp.cu": PTX_KERNEL + WARP_KERNEL.replace("{n}", "mlp"),
    "model/__init__.py": "", "model/net.py": "import torch\nimport rownorm\n",
    "model/net_fused.py": "import torch\nimport fusedmlp\n",
}


def test_an_extension_chosen_by_a_command_line_flag_is_an_add_on(tmp_path, monkeypatch) -> None:
    flagged = {**EXTENSION, **FUSED_MLP, "run.py": RUN_FLAGGED}
    assert _verdict(tmp_path, "flagged", flagged, monkeypatch) == ("none", "easy")
    by_value = {**EXTENSION, **FUSED_MLP, "run.py": RUN_BY_VALUE}  # the fused MLP is the default: required
    assert _verdict(tmp_path, "by-value", by_value, monkeypatch) == ("none", "hard")


TWIN_CMAKE = """\
cmake_minimum_required(VERSION 3.20)
project(perfsuite LANGUAGES CXX)
if (ENABLE_HIP)
  find_package(hip REQUIRED)
endif()
if (ENABLE_CUDA)
  enable_language(CUDA)
endif()
add_executable(suite src/main.cpp src/algo/SCAN-Cuda.cpp src/algo/SCAN-Hip.cpp)
"""
CUDA_VARIANT = """\
#if defined(SUITE_ENABLE_CUDA)
#include "common/CudaUtils.hpp"
constexpr int warp_size = 32;
__global__ void scan(float* x) {
    float v = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 1, warp_size);
    x[threadIdx.x] = v;
}
#endif
"""
HIP_VARIANT = """\
#if defined(SUITE_ENABLE_HIP)
#include <hip/hip_runtime.h>
#include "common/HipUtils.hpp"
__global__ void scan(float* x) { x[threadIdx.x] += 1.f; }
#endif
"""
CUDA_UTILS = "#pragma once\n#include <cuda_runtime.h>\n__device__ unsigned lanes() { return __ballot_sync(0xffffffffu, 1); }\n"
HIP_UTILS = "#pragma once\n#include <hip/hip_runtime.h>\n#if defined(__HIP_PLATFORM_AMD__)\n#define LANES 64\n#endif\n"
TWINS = {
    "CMakeLists.txt": TWIN_CMAKE, "src/main.cpp": "int main() { return 0; }\n",
    "src/algo/SCAN-Cuda.cpp": CUDA_VARIANT, "src/algo/SCAN-Hip.cpp": HIP_VARIANT,
    "src/common/CudaUtils.hpp": CUDA_UTILS, "src/common/HipUtils.hpp": HIP_UTILS,
    ".github/workflows/amd.yml": "jobs:\n  test:\n    runs-on: [self-hosted, mi300]\n",
}


def test_cuda_sources_with_hip_twins_are_no_work_in_a_project_that_builds_for_rocm(tmp_path, monkeypatch) -> None:
    assert _verdict(tmp_path, "twins", TWINS, monkeypatch) == ("supported", "trivial")
    # the same CUDA sources without their HIP twins: the ROCm build compiles them, they are work
    lone = {p: t for p, t in TWINS.items() if p not in ("src/algo/SCAN-Hip.cpp", "src/common/HipUtils.hpp")}
    lone["src/hip_compat.h"] = HIP_UTILS
    assert _verdict(tmp_path, "lone", lone, monkeypatch)[1] in {"easy", "moderate"}


IMAGE_README = """\
# Tuner

Install PyTorch, then run the recipe:

```bash
pip install torch --index-url https://download.pytorch.org/whl/cu121
docker run --gpus all tuner:latest
```
"""


def test_a_rocm_image_the_repository_ships_answers_the_image_and_the_wheels(tmp_path, monkeypatch) -> None:
    cuda_only = {"README.md": IMAGE_README, "pyproject.toml": "[project]\nname = 'tuner'\ndependencies = ['torch', 'peft', 'bitsandbytes']\n",
                 "tuner/finetune.py": FINETUNE, "docker/docker-cuda/Dockerfile": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"}
    assert _verdict(tmp_path, "cuda-image", cuda_only, monkeypatch) == ("none", "moderate")
    shipped = {**cuda_only, "docker/docker-rocm/Dockerfile": "FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10\n"}
    assert _verdict(tmp_path, "rocm-image", shipped, monkeypatch) == ("partial", "trivial")


def test_requirements_of_an_extra_are_not_the_main_install(tmp_path, monkeypatch) -> None:
    extras = {**TRAINING, "generate.py": GENERATE, "requirements/serving.txt": "sglang[srt]>=0.4.5\n",
              "requirements/fp8.txt": "transformer_engine[pytorch]>=2.0\n"}
    assert _verdict(tmp_path, "extras", extras, monkeypatch) == ("none", "easy")
    main = {**TRAINING, "generate.py": GENERATE,
            "requirements/runtime.txt": "sglang[srt]>=0.4.5\ntransformer_engine[pytorch]>=2.0\n"}
    assert _verdict(tmp_path, "main", main, monkeypatch) == ("none", "moderate")
    # the only install the project declares: requirements/pt2.txt is its main one, whatever its name
    only = {**{p: t for p, t in extras.items() if p != "requirements.txt"}, "requirements/serving.txt": "torch\n",
            "requirements/fp8.txt": "sglang[srt]>=0.4.5\ntransformer_engine[pytorch]>=2.0\n",
            "pyproject.toml": "[project]\nname = 'gen'\n\n[tool.hatch.envs.ci]\ndependencies = ['pytest']\n"}
    assert _verdict(tmp_path, "only", only, monkeypatch) == ("none", "moderate")


DEVICE_SETUP = """\
import os
from setuptools import setup
from cmake_ext import CMakeExtension


def target_device():
    return os.getenv("ENGINE_TARGET_DEVICE", "cuda")


if target_device() == "cuda":
    ext_modules = [CMakeExtension(name="_engine", source_dir=os.path.dirname(__file__))]
else:
    ext_modules = []

setup(name="engine", ext_modules=ext_modules,
      install_requires=open(f"requirements/runtime_{target_device()}.txt").read().split())
"""
ENGINE_CMAKE = "project(Engine LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\nadd_library(engine src/engine/gemm.cu)\n"
PTX_GEMM = """\
#include <cuda_runtime.h>
__global__ void gemm(const float* a, float* c) {
    unsigned r;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(0));
    unsigned mask = __ballot_sync(0xffffffffu, a[threadIdx.x] > 0.f);
    c[threadIdx.x] = __shfl_xor_sync(0xffffffffu, a[threadIdx.x], 16) + mask + r;
}
"""


def test_a_cuda_backend_a_device_switch_builds_is_optional_where_the_switch_has_a_rocm_value(
        tmp_path, monkeypatch) -> None:
    files = {"setup.py": DEVICE_SETUP, "CMakeLists.txt": ENGINE_CMAKE, "requirements/runtime_cuda.txt": "torch\n",
             "engine/__init__.py": "import torch\n", **{f"src/engine/gemm{n}.cu": PTX_GEMM for n in range(6)}}
    assert _verdict(tmp_path, "cuda-only", files, monkeypatch)[1] in {"hard", "very-hard"}
    rocm = {**files, "requirements/runtime_rocm.txt": "torch\n"}  # the switch's other value: a ROCm install
    assert _verdict(tmp_path, "rocm-value", rocm, monkeypatch) == ("partial", "easy")


TRT_PLUGIN = """\
#include <NvInfer.h>
#include <cuda_runtime.h>
using namespace nvinfer1;
class DeformPlugin : public IPluginV2DynamicExt {
 public:
    int enqueue(const PluginTensorDesc* in, const PluginTensorDesc* out, const void* const* inputs,
                void* const* outputs, void* workspace, cudaStream_t stream) noexcept override;
};
REGISTER_TENSORRT_PLUGIN(DeformPluginCreator);
"""
TRT_CMAKE = "project(deform_plugin LANGUAGES CXX CUDA)\nadd_library(deform_plugin SHARED plugin.cpp)\n"


def test_a_tensorrt_plugin_folder_beside_the_project_is_an_add_on_not_its_main_path(tmp_path, monkeypatch) -> None:
    side = {**EXTENSION, "tensorrt/deform/CMakeLists.txt": TRT_CMAKE, "tensorrt/deform/plugin.cpp": TRT_PLUGIN}
    assert _verdict(tmp_path, "side", side, monkeypatch) == ("none", "easy")
    # the same plugin as the project's own package: its inference runs through TensorRT
    own = {**EXTENSION, "trtdeform/CMakeLists.txt": TRT_CMAKE, "trtdeform/plugin.cpp": TRT_PLUGIN}
    assert _verdict(tmp_path, "own", own, monkeypatch)[1] in {"hard", "very-hard"}


# a kernel with a high finding (a 32-bit ballot): the extension is real porting work when the model needs it
BALLOT_KERNEL = """\
#include <cuda_runtime.h>
__global__ void scale(float* x, int n, unsigned* votes) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned b = __ballot_sync(0xffffffff, i < n);
    if (i < n) x[i] *= 0.5f;
    if (threadIdx.x == 0) votes[blockIdx.x] = b;
}
"""
TRIED = """\
try:
    from ext.norm.ops import fast_norm
except ImportError:
    fast_norm = None


def norm(x):
    return fast_norm(x) if fast_norm is not None else x / x.norm()
"""


def test_an_extension_the_model_tries_and_falls_back_from_is_an_add_on(tmp_path, monkeypatch) -> None:
    ext = {"ext/norm/setup.py": SETUP_EXTENSION.replace("csrc/norm/", ""), "ext/norm/binding.cpp": BINDING,
           "ext/norm/norm.cu": BALLOT_KERNEL, "ext/norm/ops.py": "import rownorm_C\nfast_norm = rownorm_C.norm\n",
           "model/__init__.py": "", "train.py": "from model.layer import norm\n"}
    assert _verdict(tmp_path, "tried", {**ext, "model/layer.py": TRIED}, monkeypatch) == ("none", "easy")
    required = TRIED.replace("try:\n    ", "").replace("except ImportError:\n    fast_norm = None\n", "")
    assert _verdict(tmp_path, "required", {**ext, "model/layer.py": required}, monkeypatch) == ("none", "moderate")


OPTIM_FIXED = """\
import bitsandbytes as bnb


def optimizer(params, lr):
    return bnb.optim.PagedAdamW8bit(params, lr=lr)
"""
OPTIM_CHOSEN = """\
import torch


def optimizer(params, args):
    if args.optim == "adamw_torch":
        return torch.optim.AdamW(params, lr=args.lr)
    elif args.optim in ["adamw_bnb_8bit", "paged_adamw_8bit"]:
        from bitsandbytes.optim import AdamW8bit
        return AdamW8bit(params, lr=args.lr)
    raise ValueError(args.optim)
"""


def test_an_eight_bit_optimizer_one_setting_chooses_among_others_is_no_training_method(tmp_path, monkeypatch) -> None:
    assert _verdict(tmp_path, "fixed", {**TRAINING, "optim.py": OPTIM_FIXED}, monkeypatch) == ("none", "moderate")
    assert _verdict(tmp_path, "chosen", {**TRAINING, "optim.py": OPTIM_CHOSEN}, monkeypatch) == ("none", "easy")


SPLAT_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

core = CUDAExtension("fastsplat.csrc", sources=["fastsplat/cuda/binding.cpp", "fastsplat/cuda/raster.cu"])
research = CUDAExtension("fastsplat.research.kernels.csrc", sources=["fastsplat/research/kernels/sort.cu"])
setup(name="fastsplat", ext_modules=[core, research], cmdclass={"build_ext": BuildExtension})
"""
SPLAT = {
    "setup.py": SPLAT_SETUP, "fastsplat/__init__.py": "from .rendering import rasterize\n",
    "fastsplat/rendering.py": "from fastsplat import csrc\n\ndef rasterize(x):\n    return csrc.norm(x)\n",
    "fastsplat/cuda/binding.cpp": BINDING, "fastsplat/cuda/raster.cu": PLAIN_KERNEL,
    "fastsplat/research/__init__.py": "from .kernels import csrc\n", "fastsplat/research/kernels/__init__.py": "",
    **{f"fastsplat/research/kernels/sort{n}.cu": PTX_KERNEL for n in range(4)},
    "examples/sorted_render.py": "from fastsplat.research import csrc\n",
}


def test_a_second_extension_only_examples_import_is_research_code_beside_the_library(tmp_path, monkeypatch) -> None:
    assert _verdict(tmp_path, "research", SPLAT, monkeypatch) == ("none", "easy")
    used = {**SPLAT, "fastsplat/rendering.py": SPLAT["fastsplat/rendering.py"] + "from .research import csrc as fast\n"}
    # used by the library, its four files of nothing but mma.sync and lane-mask PTX are a rewrite (score.rewrite)
    assert _verdict(tmp_path, "used", used, monkeypatch) == ("none", "very-hard")


SUBMODULE_RENDERER = """\
import torch
from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer


def render(camera, points):
    return GaussianRasterizer(GaussianRasterizationSettings(image_height=camera.h, image_width=camera.w))(points)
"""
SUBMODULES = """\
[submodule "submodules/diff-gaussian-rasterization"]
\tpath = submodules/diff-gaussian-rasterization
\turl = https://github.com/example-lab/diff-gaussian-rasterization
"""


def test_a_rasteriser_from_a_submodule_the_renderer_imports_is_moderate(tmp_path, monkeypatch) -> None:
    """The CUDA extension is not in the snapshot, but the main path cannot start until it is built for ROCm: as a
    repository that holds its rasteriser's sources (two small CUDA extensions to build and validate) reads."""
    files = {".gitmodules": SUBMODULES, "renderer.py": SUBMODULE_RENDERER}
    assert _verdict(tmp_path, "splat", files, monkeypatch) == ("none", "moderate")
    lazy = SUBMODULE_RENDERER.replace(
        "from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer\n",
        "try:\n    from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer\n"
        "except ImportError:  # the software rasteriser below\n    GaussianRasterizer = None\n")
    assert _verdict(tmp_path, "optional", {**files, "renderer.py": lazy}, monkeypatch) == ("none", "easy")
