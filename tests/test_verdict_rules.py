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
