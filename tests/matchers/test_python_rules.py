"""The Python rules on tiny inline modules: what fires, at which severity, and what must stay quiet."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from migrate import matchers
from migrate.config import Settings
from migrate.errors import RuleFileError
from migrate.model import FileKind, Severity, Skipped, SourceFile
from migrate.parse import parse
from migrate.ruleset import load, load_builtin
from migrate.scan import scan

from conftest import FIXTURES


# The ROCm switches these tests write are the project's own ROCm detection (python-rocm-detection, info): that rule has
# its fixtures in fixtures/rules/python; here it would only stand beside the rules under test.
OTHER_RULES = Settings(jobs=1, disabled_rules=frozenset({"python-rocm-detection"}))


def findings(tmp_path: Path, source: str, name: str = "mod.py") -> list[tuple[str, int, str]]:
    """(rule, line, severity) of every finding in one Python module."""
    (tmp_path / name).write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, OTHER_RULES)
    assert not result.skipped
    return [(f.rule, f.line, f.severity.label) for f in result.findings]


FIRES = [
    ("import torch as th\nth.cuda.synchronize()\n", "python-torch-cuda", 2, "info"),
    ("from torch import cuda\ncuda.empty_cache()\n", "python-torch-cuda", 2, "info"),
    ("import torch\nx = torch.ones(2).cuda(non_blocking=True)\n", "python-cuda-device", 2, "info"),
    ("import torch\nx = torch.ones(2).to(device='cuda:1')\n", "python-cuda-device", 2, "info"),
    ("import torch\nd = torch.device(f'cuda:{rank}')\n", "python-cuda-device", 2, "info"),
    ("import torch.distributed as dist\ndist.init_process_group('nccl')\n", "python-nccl-backend", 2, "info"),
    ("import os\nv = os.getenv('CUDA_VISIBLE_DEVICES')\n", "python-cuda-visible-devices", 2, "info"),
    ("import torch\nif torch.version.cuda:\n    pass\n", "python-torch-version-cuda", 2, "medium"),
    ("import torch\nok = float(torch.version.cuda) > 11.7\n", "python-torch-version-cuda", 2, "medium"),
    ("import torch\nok = torch.version.cuda.startswith('12')\n", "python-torch-version-cuda", 2, "medium"),
    ("import torch\nprint(f'cuda {torch.version.cuda}')\n", "python-torch-version-cuda", 2, "info"),
    ("import torch\nbuild = torch.version.cuda\n", "python-torch-version-cuda", 2, "low"),
    ("import torch\nif torch.cuda.get_device_capability() < (7, 0):\n    pass\n", "python-compute-capability", 2, "medium"),
    ("import torch\np = torch.cuda.get_device_properties(0)\nsm = p.major * 10\n", "python-compute-capability", 3, "medium"),
    ("ARCH = 'sm_90a'\n", "python-cuda-arch-string", 1, "medium"),
    ("import pynvml as nv\n", "python-nvml", 1, "medium"),
    ("import os\nos.popen('nvidia-smi -q').read()\n", "python-nvidia-smi", 2, "medium"),
    ("import cupyx.scipy.sparse\n", "python-cupy", 1, "medium"),
    ("import numba\n@numba.cuda.jit\ndef k(a):\n    pass\n", "python-numba-cuda", 2, "high"),
    ("import tensorrt_llm\n", "python-tensorrt", 1, "blocker"),
    ("import flash_attn\n", "python-flash-attn", 1, "high"),
    ("try:\n    import flash_attn\nexcept ModuleNotFoundError:\n    flash_attn = None\n", "python-flash-attn", 2, "low"),
    ("from apex import amp\n", "python-apex", 1, "medium"),
    ("import amp_C\n", "python-apex-extension", 1, "medium"),
    ("from megablocks.layers.dmoe import dMoE\n", "python-megablocks", 1, "medium"),
    ("try:\n    from megablocks import ops\nexcept ModuleNotFoundError:\n    ops = None\n", "python-megablocks", 2, "low"),
    ("import os\nos.environ['NCCL_ALGO'] = 'Ring'\n", "python-nccl-env", 2, "info"),
    ("import os\nos.environ['CUDA_DEVICE_MAX_CONNECTIONS'] = '1'\n", "python-cuda-device-max-connections", 2, "low"),
    ("def f(args):\n    return getattr(args, 'use_flash_attn', True)\n", "python-attention-switch", 2, "low"),
    ("try:\n    from amp_C import multi_tensor_l2norm\nexcept ImportError:\n    pass\n", "python-apex-extension", 2, "low"),
    ("import bitsandbytes\n", "python-bitsandbytes", 1, "low"),
    ("import torch.utils.cpp_extension as ce\next = ce.CUDAExtension('x', ['x.cu'])\n", "python-cpp-extension", 2, "medium"),
    ("import triton\n@triton.jit\ndef k(x):\n    pass\n", "python-triton-kernel", 2, "low"),
    ("import triton.language as tl\ny = tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [x], tl.int32, True, 1)\n",
     "python-triton-inline-asm", 2, "high"),
    ("import triton.language as tl\ny = tl.inline_asm_elementwise('mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
     "{$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};', '=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f', [a], tl.float32, "
     "True, 1)\n", "python-triton-inline-asm-warp", 2, "blocker"),
    ("import triton.language as tl\na = tl._experimental_descriptor_load(d, [0, 0], [64, 64], tl.float16)\n",
     "python-triton-tma-descriptor", 2, "high"),
    ("import triton\ntriton.runtime.driver.active.utils.fill_2d_tma_descriptor(p, 8, 8, 8, 8, 2, d)\n",
     "python-triton-tma-descriptor", 2, "high"),
    ("import triton.language as tl\ny = tl.extra.cuda.libdevice.rsqrt(x)\n", "python-triton-libdevice", 2, "medium"),
    ("import triton.language as tl\nacc = tl.dot_scaled(a, sa, 'e2m1', b, sb, 'e2m1', acc)\n",
     "python-triton-dot-scaled", 2, "low"),
    ("SUPPORTED_ARCHS = {'8.0', '8.6', '9.0'}\n", "python-cuda-arch-list", 1, "medium"),
    ("compute_capabilities: list = ['7.5', '8.9+PTX']\n", "python-cuda-arch-list", 1, "medium"),
    ("from triton.backends.compiler import GPUTarget\nt = GPUTarget('cuda', 90, 32)\n", "python-triton-aot-cuda-target", 2,
     "high"),
    ("import triton.backends.compiler as tbc\nt = tbc.GPUTarget(backend='cuda', arch=80, warp_size=32)\n",
     "python-triton-aot-cuda-target", 2, "high"),
    ("import subprocess\nsubprocess.check_call(['nvcc', '-V'])\n", "python-nvcc-call", 2, "medium"),
    ("import subprocess\ndef archs(tool):\n    return subprocess.check_output([tool, '--list-gpu-arch'], text=True)\n",
     "python-nvcc-call", 3, "medium"),
    ("import os\nhome = os.environ['CUDA_HOME']\n", "python-cuda-home", 2, "medium"),
    ("import pytest\ntorch = pytest.importorskip('torch')\ntorch.cuda.synchronize()\n", "python-torch-cuda", 3, "info"),
    ("import tensorrt as trt\nb = trt.Builder(trt.Logger())\n", "python-tensorrt", 2, "blocker"),
    ("def f(builder):\n    return builder.create_network(0)\n", "python-tensorrt", 2, "blocker"),
    ("from torch2trt import torch2trt\nm = torch2trt(model, [x])\n", "python-tensorrt", 2, "blocker"),
    ("try:\n    import tensorrt as trt\nexcept ImportError:\n    trt = None\ndef f():\n    return trt.Runtime(None)\n",
     "python-tensorrt", 6, "medium"),
    ("m = AutoModel.from_pretrained('x', load_in_4bit=True)\n", "python-hf-bitsandbytes", 1, "low"),
    ("from peft import prepare_model_for_int8_training as prep\nm = prep(m)\n", "python-hf-bitsandbytes", 2, "low"),
    ("cfg = dict(attn_implementation='flash_attention_2')\n", "python-hf-flash-attention", 1, "medium"),
    ("import bitsandbytes.functional as F\ndef q(x):\n    return F.quantize_4bit(x)\n", "python-bitsandbytes", 1, "low"),
    ("from .cextension import lib\ndef d(a):\n    lib.cdequantize_blockwise_fp16(a)\n", "python-bitsandbytes", 3, "low"),
    ("import xformers.ops\n", "python-xformers", 1, "medium"),
    ("from cutlass import cute\n", "python-cutlass-dsl", 1, "high"),
    ("import warp as wp\nwp.init()\n", "python-nvidia-warp", 2, "high"),
    ("import warp as wp\ndef f(fn):\n    return wp.Kernel(fn, key='k')\n", "python-nvidia-warp", 3, "high"),
    ("import torch\nimport warp as wp\ns = wp.stream_from_torch(torch.cuda.current_stream())\n", "python-nvidia-warp", 3, "high"),
    ("from cuda import cuda, nvrtc\n", "python-cuda-bindings", 1, "medium"),
    ("import os\ncmd = \"\"\"\nset -e\nwget -q https://github.com/NVIDIA/cub/archive/main.zip\n\"\"\"\nos.system(cmd)\n",
     "python-fetch-cuda-dependency", 4, "low"),
    ("import cuequivariance_torch as cuet\n", "python-cuequivariance", 1, "medium"),
    ("try:\n    import cuequivariance_torch as cuet\nexcept ImportError:\n    cuet = None\n", "python-cuequivariance", 2, "low"),
    ("CFG = {\n    'depth': 4,\n    'triangle_attention': 'cuequivariance',\n}\n", "python-cuequivariance-switch", 3, "medium"),
    ("def trunk(n, trimul_kernel='cueq'):\n    return n\n", "python-cuequivariance-switch", 1, "medium"),
    ("SHOULD_USE_CUEQUIVARIANCE = True\n", "python-cuequivariance-switch", 1, "medium"),
    ("kwargs = {'attn_implementation': 'flash_attention_2'}\n", "python-hf-flash-attention", 1, "medium"),
    ("from deepspeed.ops.deepspeed4science import DS4Sci_EvoformerAttention\n", "python-ds4sci-evoformer", 1, "high"),
    ("import deepspeed.ops.deepspeed4science as ds4s\ny = ds4s.DS4Sci_EvoformerAttention(q, k, v, [])\n",
     "python-ds4sci-evoformer", 1, "high"),
    ("import os\nngc = os.environ.get('NVIDIA_PYTORCH_VERSION')\n", "python-nvidia-container-env", 2, "low"),
    ("BASE = 'nvcr.io/nvidia/tritonserver:24.05-py3'\n", "python-ngc-image", 1, "medium"),
    ("def symbolic(g, b, s):\n    return g.op('TRT::EfficientNMS_TRT', b, s, plugin_version_s='1')\n",
     "python-onnx-tensorrt-plugin-op", 2, "medium"),
    ("import torch\nfrom tutel import moe as tutel_moe\n", "python-tutel", 2, "low"),
    ("import tinycudann as tcnn\n\n\n\nmlp = tcnn.Network(32, 3, {'otype': 'FullyFusedMLP'})\n",
     "python-neural-graphics-cuda", 5, "high"),
    ("import torch\nw = torch._convert_weight_to_int4pack(w, 8)\n", "python-torch-int4pack", 2, "medium"),
    ("import torch\ny = torch._scaled_grouped_mm(a, b, sa, sb, offs=o)\n", "python-torch-fp8", 2, "medium"),
    ("from torch.nn.attention import sdpa_kernel, SDPBackend\nwith sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    pass\n",
     "python-sdpa-backend-choice", 2, "low"),
    ("import torch\nf = torch.compile(m, mode='max-autotune')\n", "python-torch-compile-cudagraphs", 2, "low"),
    ("PEAK = {'A100': 312e12, 'H100': 989.4e12}\n", "python-nvidia-peak-flops", 1, "low"),
    ("from distutils import spawn\nsmi = spawn.find_executable('nvidia-smi')\n", "python-nvidia-smi", 2, "medium"),
    ("nvidia_smi = 'nvidia-smi'\n", "python-nvidia-smi", 1, "medium"),
    ("kwargs = {'load_in_4bit': True}\n", "python-hf-bitsandbytes", 1, "low"),
    ("m = AutoModel.from_pretrained(\n    'x',\n    load_in_8bit=True,\n)\n", "python-hf-bitsandbytes", 3, "low"),
    ("kwargs = {}\nkwargs['attn_implementation'] = 'flash_attention_2'\n", "python-hf-flash-attention", 2, "medium"),
    ("import os\nos.environ.setdefault('TORCH_CUDA_ARCH_LIST', '9.0')\n", "python-torch-cuda-arch-list", 2, "low"),
    ("import flash_attn_interface as fa3\n", "python-flash-attn-3", 1, "high"),
    ("from sageattention import sageattn\n", "python-sageattention", 1, "medium"),
    ("import flash_attn_cuda\n", "python-flash-attn-fork", 1, "high"),
    ("try:\n    from flash_attn_lade import flash_attn_func\nexcept ImportError:\n    flash_attn_func = None\n",
     "python-flash-attn-fork", 2, "low"),
    ("from vllm_flash_attn import flash_attn_with_kvcache\n", "python-flash-attn-fork", 1, "high"),
    ("M = {'big': ('org/model', 'kernels-community/vllm-flash-attn3')}\n", "python-flash-attn-3", 1, "high"),
    ("m = load('x', attn_implementation='kernels-community/flash-attn3')\n", "python-flash-attn-3", 1, "high"),
    ("import triton_pre_mlir as triton\n", "python-triton-pre-mlir", 1, "high"),
    ("try:\n    import triton_pre_mlir\nexcept ImportError:\n    triton_pre_mlir = None\n", "python-triton-pre-mlir", 2,
     "low"),
    ("from vllm import LLM, SamplingParams\n", "python-vllm", 1, "low"),
    ("try:\n    from vllm import SamplingParams\nexcept ImportError:\n    SamplingParams = None\n", "python-vllm", 2,
     "info"),
    ("import vllm\n\nengine = vllm.LLM(model='m')\n", "python-vllm", 3, "low"),
    ("from llama_cpp import Llama\nm = Llama(model_path='m.gguf',\n          n_gpu_layers=-1)\n",
     "python-llama-cpp-gpu-offload", 3, "medium"),
    ("llm = LlamaCpp(model_path=p, n_gpu_layers=cfg.layers)\n", "python-llama-cpp-gpu-offload", 1, "medium"),
    ("llm = Llama(model_path=p, n_gpu_layers=-1 if gpu else 0)\n", "python-llama-cpp-gpu-offload", 1, "medium"),
    ("opts = {'model_path': p, 'n_gpu_layers': 40}\n", "python-llama-cpp-gpu-offload", 1, "medium"),
    ("import grouped_gemm\nout = grouped_gemm.ops.gmm(x, w, sizes)\n", "python-cutlass-extension-package", 1, "high"),
    ("from torch_int.nn.linear import W8A8B8O8Linear\n", "python-cutlass-extension-package", 1, "high"),
    ("from q8_kernels.integration.diffusers import processor_factory\n", "python-q8-kernels", 1, "high"),
    ("from q8_kernels_cuda.gemm._C import q8_mm\n", "python-q8-kernels", 1, "high"),
    # the FP8 path behind a try/except ImportError that raises a clearer error: an opt-in path, low like other extras
    ("def load(p):\n    try:\n        from q8_kernels.integration import patch\n    except ImportError:\n"
     "        raise ValueError('install Q8 kernels for fp8')\n", "python-q8-kernels", 3, "low"),
    ("from torch_sparse import SparseTensor\n", "python-pyg-extension", 1, "low"),
    ("import transformer_engine.pytorch as te\nlayer = te.Linear(8, 8)\n", "python-transformer-engine", 1, "medium"),
    ("import tilelang\nfrom tilelang import language as T\n", "python-tilelang", 1, "low"),
    ("try:\n    import tilelang\nexcept ImportError:\n    tilelang = None\n", "python-tilelang", 2, "low"),
    ("try:\n    import transformer_engine.pytorch as te\n    HAVE_TE = True\nexcept ImportError:\n    HAVE_TE = False\n",
     "python-transformer-engine", 2, "low"),
    # the availability flag asserted on the default path: the try/except is no fallback (Wan-style attention helpers)
    ("try:\n    import flash_attn\n    FA2 = True\nexcept ImportError:\n    FA2 = False\n"
     "def f(q):\n    assert FA2\n    return flash_attn.flash_attn_func(q, q, q)\n", "python-flash-attn", 2, "high"),
    # ... but asserted only under a mode the caller names, it stays one
    ("try:\n    import flash_attn\n    FA2 = True\nexcept ImportError:\n    FA2 = False\n"
     "def f(q, mode):\n    if mode == 'flash':\n        assert FA2\n", "python-flash-attn", 2, "low"),
    ("import onnxruntime as ort\ns = ort.InferenceSession(p, providers=['CUDAExecutionProvider'])\n",
     "python-ort-cuda-provider", 2, "medium"),
    ("import os\nos.system('pip install flash_attn==2.6.3')\n", "python-pip-install-cuda-package", 2, "medium"),
    ("from polygraphy import cuda\n", "python-tensorrt", 1, "blocker"),
    ("import spconv.pytorch as spconv\n", "python-spconv", 1, "high"),
    ("import MinkowskiEngine as ME\n", "python-sparse-conv-extension", 1, "medium"),
    ("try:\n    import torchsparse\nexcept ImportError:\n    torchsparse = None\n", "python-sparse-conv-extension", 2, "low"),
    ("try:\n    import cumm.tensorview as tv\nexcept ImportError:\n    tv = None\n", "python-spconv", 2, "low"),
    # a handler that imports the same package under its older name is no fallback
    ("try:\n    import spconv.pytorch as sp\nexcept ImportError:\n    import spconv as sp\n", "python-spconv", 2, "high"),
    ("try:\n    from flash_attn import flash_attn_varlen_func as f\nexcept ImportError:\n"
     "    from flash_attn.flash_attn_interface import flash_attn_unpadded_func as f\n", "python-flash-attn", 2, "high"),
    # an optional extra's friendlier error is still a fallback: the path that needs the package is the user's choice
    ("try:\n    import flash_attn\nexcept ImportError:\n    raise ImportError('pip install flash-attn')\n",
     "python-flash-attn", 2, "low"),
    ("try:\n    from flash_attn import flash_attn_func\nexcept ImportError:\n    from .attention import sdpa_func\n",
     "python-flash-attn", 2, "low"),
    ("import os\nos.system(f'trtexec --onnx={src} --saveEngine={dst}')\n", "python-tensorrt-cli", 2, "blocker"),
    ("import subprocess\nsubprocess.check_call(['trtexec', '--onnx=m.onnx'])\n", "python-tensorrt-cli", 2, "blocker"),
    ("cmd = f'polygraphy convert {m} --convert-to trt -o {e}'\n", "python-tensorrt-cli", 1, "blocker"),
    ("if args.runtime == 'tensorrt':\n    pass\n", "python-tensorrt-backend-switch", 1, "low"),
    ("use = mode in ['trt', 'onnx']\n", "python-tensorrt-backend-switch", 1, "low"),
]


@pytest.mark.parametrize(("source", "rule", "line", "severity"), FIRES, ids=[f[1] for f in FIRES])
def test_rule_fires(tmp_path: Path, source: str, rule: str, line: int, severity: str) -> None:
    assert (rule, line, severity) in findings(tmp_path, source)


QUIET = [
    "research_versions = ['1.0', '2.0']\nARCHS = {'gfx90a', 'gfx942'}\nTARGET_ARCH = '8.0'\n",
    "from triton.backends.compiler import GPUTarget\nt = GPUTarget('hip', 'gfx942', 64)\n",
    "note = 'GPUTarget(\"cuda\", 90, 32) is the NVIDIA build'\n",
    "import subprocess\nsubprocess.run(['polygraphy', 'convert', '--fp-to-fp16', '-o', 'h.onnx', 'm.onnx'])\n",
    "print('build it with trtexec --onnx=model.onnx')\nname = 'trtexec_log.txt'\n",
    "paths = {'tensorrt': 'e.plan'}\nrun('trt')\nok = mode == 'onnx'\n",
    '"""Call torch.cuda.synchronize() and .cuda(); import pycuda; nvidia-smi; sm_80."""\n',
    "# import tensorrt\n# torch.cuda.synchronize()\nx = 1\n",
    "msg = 'import flash_attn and torch.cuda are optional'\n",
    "def my_cuda_helper(args):\n    return args.cuda\n",
    "tensorrt = None\nengine = tensorrt\n",
    "import torch\nx = torch.ones(2).to(device)\ny = x.to('cpu')\n",
    "import logging\nlogging.warning('requires sm_80')\nraise RuntimeError('nvidia-smi failed')\n",
    "import sys\nif sys.version_info.major >= 3:\n    pass\n",
    "from numba import njit\n@njit\ndef f(x):\n    return x\n",
    "import json\nwith open('f') as h:\n    json.load(h)\n",
    "import subprocess\nsubprocess.run(['amd-smi', 'list'])\n",
    "import torch\nprint('torch.version.cuda is', 'unknown')\n",
    "x = 1\n'Notes: needs sm_80, CUDA_VISIBLE_DEVICES and nvidia-smi.'\n",
    '"""Quantize: import bitsandbytes; load_in_8bit=True; attn_implementation="flash_attention_2"."""\n',
    "m = AutoModel.from_pretrained('x', load_in_8bit=False, load_in_4bit=None, use_flash_attention_2=False)\n",
    "import torch\nd = torch.float8_e4m3fnuz\nattn = 'sdpa'\nif w.dtype == torch.float8_e4m3fn:\n    pass\n",
    "import warp\nimage = warp(frame, flow)\n",
    "from utils import warp\nout = warp.apply(x)\n",
    "tensorrt = None\nconfig.set_flag(3)\nruntime.run()\n",
    "BATCH = 312 * 1024\nLR = 3.12e-4\nHUGE = 1e300 ** 30 * 10 ** 400  # e12\n",
    "log('pull nvcr.io/nvidia/pytorch:24.01-py3 first')\n",
    "import os\nkey = os.environ['NVIDIA_API_KEY']\n",
    "from torch.nn.attention import sdpa_kernel, SDPBackend\nwith sdpa_kernel([SDPBackend.MATH]):\n    pass\n",
    "kwargs = {'load_in_4bit': False}\nkwargs['load_in_8bit'] = None\nkwargs['attn_implementation'] = 'eager'\n",
    "from polygraphy.backend.onnx import fold_constants\nm = fold_constants(model)\n",
    "def train(mod, args):\n    return mod.create_network(1.0, args.dim, args.alpha, None)\n",
    "import onnxruntime as ort\nP = ['MIGraphXExecutionProvider', 'CUDAExecutionProvider']\n",
    "import subprocess\nsubprocess.run('pip install ninja apex-docs', shell=True)\n",
    "from .spconv_utils import spconv\nx = spconv.SparseConvTensor(f, i, s, b)\n",
    "def step(self, reset_turing_machine_every=0):\n    return self.turing_machine_step(reset_turing_machine_every)\n",
    "def symbolic(g, b, s):\n    log('TRT::EfficientNMS_TRT is TensorRT only')\n    return g.op('NonMaxSuppression', b, s)\n",
    "from tutelage import moe\nimport mytutel\n",
    "URL = 'https://github.com/NVIDIA/cub'\nprint('see https://github.com/NVIDIA/cutlass')\n",
    "import cuequivariance as cue\nirreps = cue.Irreps('O3', '8x0e')\nname = 'cuequivariance_torch'\n",
    "def DS4Sci_EvoformerAttention(q, k, v, b):\n    return q\ny = DS4Sci_EvoformerAttention(1, 2, 3, [])\n",
    "NAMES = {'cueq': 'cuEquivariance'}\nCFG = {'triangle_attention': 'torch', 'plot': 'cuequivariance'}\n",
    "use_cuequivariance = False\nprint('backend: cuequivariance')\n",
    "HELP = 'run nvcc --list-gpu-arch to see them'\nprint('--list-gpu-arch')\n",
    "from llama_cpp import Llama\nm = Llama(model_path='m.gguf', n_gpu_layers=0)\nopts = {'n_gpu_layers': 0}\n",
    "def load(path, n_gpu_layers=None):\n    return path\nHELP = 'n_gpu_layers=-1 offloads every layer'\n",
    "m = load('x', attn_implementation='kernels-community/flash-attn2')\nH = 'try kernels-community/vllm-flash-attn3'\n",
    "from myproj.vllm_client import complete\nBACKENDS = ['hf', 'vllm']\n",
    "from vllm.platforms import current_platform\nok = current_platform.is_rocm()\n",
    "IMPLS = ('torch', 'triton')\nERR = 'install triton_pre_mlir for the old kernels'\n",
    "def dot_scaled(a, b, s):\n    return a @ b * s\ny = dot_scaled(x, w, 2.0)\n",
]


@pytest.mark.parametrize("source", QUIET)
def test_look_alikes_stay_quiet(tmp_path: Path, source: str) -> None:
    assert findings(tmp_path, source) == []


def test_cuda_is_available_and_device_choice_are_info_at_most(tmp_path: Path) -> None:
    found = findings(tmp_path, "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert found == [("python-torch-cuda", 2, "info")]


def test_same_expression_hip_check_is_info(tmp_path: Path) -> None:
    found = findings(tmp_path, "import torch\nbuild = torch.version.cuda or torch.version.hip\n")
    assert found == [("python-torch-version-cuda", 2, "info")]


def test_the_projects_own_nvidia_predicate_is_info_and_other_uses_in_it_are_not(tmp_path: Path) -> None:
    source = """
        import torch
        def is_nvidia():
            if gpu_mode():
                if torch.version.cuda:
                    return True
            return False
        def use_nvidia_kernels():
            return torch.version.cuda is not None and not slow()
        def is_nvidia_12():
            return torch.version.cuda.startswith("12")
        def is_cuda_build():
            return bool(torch.version.cuda)
    """
    assert findings(tmp_path, source) == [
        ("python-torch-version-cuda", 4, "info"),
        ("python-torch-version-cuda", 8, "info"),
        # a parse of it in the predicate still raises on ROCm; a function not named for NVIDIA keeps its rating
        ("python-torch-version-cuda", 10, "medium"),
        ("python-torch-version-cuda", 12, "low"),
    ]


def test_preceding_hip_guard_in_the_function_lowers_to_low(tmp_path: Path) -> None:
    source = """
        import torch
        def toolkit():
            if torch.version.hip:
                log("rocm")
            return int(torch.version.cuda.split(".")[0])
        def other():
            return int(torch.version.cuda.split(".")[0])
    """
    assert findings(tmp_path, source) == [
        ("python-torch-version-cuda", 5, "low"),
        ("python-torch-version-cuda", 7, "medium"),
    ]


def test_code_after_a_hip_branch_that_returns_is_guarded(tmp_path: Path) -> None:
    source = """
        import torch
        def toolkit():
            if torch.version.hip:
                return "rocm"
            return int(torch.version.cuda.split(".")[0])
        def other():
            return int(torch.version.cuda.split(".")[0])
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"))
    result = scan(tmp_path, OTHER_RULES)
    assert [(f.rule, f.line, f.severity.label) for f in result.findings] == [("python-torch-version-cuda", 7, "medium")]
    assert [(f.rule, f.line, f.status) for f in result.guarded_findings] == [("python-torch-version-cuda", 5, "guarded")]


def test_hip_branch_chain_is_not_work(tmp_path: Path) -> None:
    source = """
        import torch
        IS_ROCM = torch.version.hip is not None
        def cap():
            if IS_ROCM:
                return torch.cuda.get_device_properties(0).gcnArchName
            else:
                return torch.cuda.get_device_capability()
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"))
    result = scan(tmp_path, OTHER_RULES)
    assert [(f.rule, f.line) for f in result.findings] == []
    assert result.guarded == 2


def test_triton_is_hip_helper_guards_inline_asm(tmp_path: Path) -> None:
    source = """
        import triton
        import triton.language as tl
        def is_hip():
            return triton.runtime.driver.active.get_current_target().backend == "hip"
        @triton.jit
        def k(x):
            if is_hip():
                return x
            return tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [x], tl.float32, True, 1)
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"))
    result = scan(tmp_path, OTHER_RULES)
    assert [(f.rule, f.line) for f in result.findings] == [("python-triton-kernel", 5)]
    assert [(f.rule, f.line) for f in result.guarded_findings] == [("python-triton-inline-asm", 9)]


def test_availability_flag_lowers_an_import(tmp_path: Path) -> None:
    source = "from .utils import is_flash_attn_available\nif is_flash_attn_available():\n    from flash_attn import flash_attn_func\n"
    assert findings(tmp_path, source) == [("python-attention-switch", 2, "low"), ("python-flash-attn", 3, "low")]


def test_a_cuda_extension_built_in_the_repository_is_first_party_wherever_it_is_imported(tmp_path: Path) -> None:
    """A Gaussian rasteriser from a submodule the snapshot lacks is a dependency to build; one a nested project of the
    repository builds (mip-splatting's submodules/simple-knn) has its kernels reported at their source."""
    source = "from simple_knn._C import distCUDA2\nfrom diff_gaussian_rasterization import GaussianRasterizer\n"
    assert findings(tmp_path, source) == [("python-cuda-extension-import", 1, "high"),
                                          ("python-cuda-extension-import", 2, "high")]
    nested = tmp_path / "submodules" / "simple-knn"
    nested.mkdir(parents=True)
    (nested / "setup.py").write_text("from setuptools import setup\nsetup(name='simple_knn')\n", encoding="utf-8")
    assert findings(tmp_path, source) == [("python-cuda-extension-import", 2, "high")]


def test_tensorrt_in_a_branch_the_user_opts_into_is_the_fallback_severity(tmp_path: Path) -> None:
    """A TensorRT module loaded only when the user passes one (`if trt_file is not None:`) is an option beside the
    PyTorch path; the same import on the path every run takes, or under an unrelated test, is not."""
    source = """\
        def load(model, trt_file=None, fast=False):
            if trt_file is not None:
                from torch2trt import TRTModule
                model = TRTModule()
            if fast:
                import tensorrt
            return model
        """
    assert findings(tmp_path, source) == [("python-tensorrt", 3, "medium"), ("python-tensorrt", 4, "medium"),
                                          ("python-tensorrt", 6, "blocker")]


def test_a_package_loaded_by_an_optional_import_helper_is_an_import_with_a_fallback(tmp_path: Path) -> None:
    """`x, ok = optional_import("pkg")` (a helper that returns a stand-in when the package is missing) imports pkg:
    the call and the uses of what it binds are findings, at the fallback severity; so is a flag named `*_imported`."""
    source = """\
        from .module import optional_import
        engine_lib, engine_imported = optional_import("tensorrt")
        arrays, _ = optional_import("cupy")
        if engine_imported:
            from polygraphy.backend.trt import Profile

        def build(onnx_path):
            runtime = engine_lib.Runtime(engine_lib.Logger())
            return arrays.asarray([1]), runtime
        """
    assert findings(tmp_path, source) == [("python-tensorrt", 2, "medium"), ("python-cupy", 3, "low"),
                                          ("python-tensorrt", 5, "medium"), ("python-tensorrt", 8, "medium")]


def test_an_optional_import_helper_naming_no_cuda_package_stays_quiet(tmp_path: Path) -> None:
    source = """\
        from .module import optional_import
        nib, has_nib = optional_import("nibabel")
        label, _ = optional_import("scipy.ndimage", name="label")
        note = "optional_import('tensorrt') is how the exporter loads it"
        """
    assert findings(tmp_path, source) == []


def test_symbol_groups_repeated_uses(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import torch\ntorch.cuda.synchronize()\ntorch.cuda.synchronize()\nx.cuda()\n")
    symbols = [f.symbol for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert symbols == ["torch.cuda.synchronize", "torch.cuda.synchronize", ".cuda()"]


def test_nvidia_smi_command_is_one_finding_at_the_argument(tmp_path: Path) -> None:
    source = "import subprocess\nsubprocess.run(\n    ['nvidia-smi', '-L'],\n    check=True,\n)\n"
    assert findings(tmp_path, source) == [("python-nvidia-smi", 3, "medium")]


def test_suppression_comment(tmp_path: Path) -> None:
    source = "import pycuda  # migrate: ignore[python-pycuda]\n# migrate: ignore\nimport cupy\nimport pycuda.driver\n"
    assert findings(tmp_path, source) == [("python-pycuda", 4, "high")]


def test_severity_override_from_settings(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import cupy\n")
    settings = Settings(jobs=1, severity_overrides=(("python-cupy", Severity.HIGH),))
    assert [f.severity for f in scan(tmp_path, settings).findings] == [Severity.HIGH]


@pytest.mark.parametrize(
    ("match", "error"),
    [
        ("{matcher: python}", "needs at least one of"),
        ("{matcher: python, imports: [x], bogus: 1}", "unknown key"),
        ("{matcher: python, strings: [{regex: 'x'}]}", "needs 'needles'"),
        ("{matcher: python, needles: [x], strings: [{regex: '('}]}", "missing \\)"),
        ("{matcher: python, calls: [{name: f, arg: 0}]}", "needs a 'regex'"),
        ("{matcher: python, imports: [x], fallback_severity: huge}", "unknown severity"),
        ("{matcher: torch-version-use}", "needs 'names'"),
        ("{matcher: compute-capability, capability: [a], properties: [b]}", "needs 'attributes'"),
        ("{matcher: compute-capability, capability: [a], properties: [b], attributes: [c], helpers: x}",
         "needs 'helper_words'"),
        ("{matcher: compute-capability, compared_only: true}", "needs 'capability' .* or 'helpers'"),
        ("{matcher: compute-capability, capability: [a], named: 'cap'}", "needs 'named_words'"),
        ("{matcher: python, imports: [x], if_file: '('}", "missing \\)"),
        ("{matcher: device-name-gate, models: x}", "needs 'sources'"),
        ("{matcher: device-name-gate, sources: [a.b]}", "missing 'models'"),
        ("{matcher: python-test, paths: x, parametrize: {names: x, at_most: 64}}", "needs 'needles'"),
        ("{matcher: python-test, needles: [x], parametrize: {names: x, at_most: 64}}", "paths"),
        ("{matcher: python-test, needles: [x], paths: x}", "exactly one of"),
        ("{matcher: python-test, needles: [x], paths: x, parametrize: {names: x}}", "needs 'at_most'"),
        ("{matcher: python-test, needles: [x], paths: x, tolerances: {dtypes: '('}}", "missing \\)"),
        ("{matcher: python-test, needles: [x], paths: x, calls: f, tolerances: {dtypes: x, names: y}}", "exactly one"),
        ("{matcher: python-test, needles: [x], paths: x, parametrize: {names: '(?i)x', at_most: 1}}", "scoped"),
        ("{matcher: python-test, needles: [x], paths: x, test_calls: {args: x}}", "missing 'calls'"),
        ("{matcher: python-test, needles: [x], paths: x, test_calls: {calls: x, args: '('}}", "missing \\)"),
        ("{matcher: python-test, needles: [x], paths: x, test_calls: {calls: x, names: y}}", "names"),
        ("{matcher: python-test, needles: [x], paths: x, calls: f, test_calls: {calls: x}}", "exactly one"),
        ("{matcher: python, needles: [x], identifiers: [{regex: x, imported: 1}]}", "'imported' is true or false"),
        ("{matcher: warp-count, sizes: x, at_least: 8, at_most: 16}", "needs 'names'"),
        ("{matcher: warp-count, names: [num_warps], sizes: '(', at_least: 8, at_most: 16}", "missing \\)"),
        ("{matcher: warp-count, names: [num_warps], sizes: x, at_least: 8}", "'at_least' and 'at_most'"),
        ("{matcher: block-size-choice, needles: [blocksize], names: x, if_file: x}", "'at_least' and 'at_most'"),
        ("{matcher: block-size-choice, needles: [blocksize], names: x, at_least: 1, at_most: 2}", "'if_file'"),
        ("{matcher: block-size-choice, needles: [a.b], names: x, if_file: x, at_least: 1, at_most: 2}", "'needles'"),
        ("{matcher: cuda-versioned-name, literal: x, version: y}", "needs 'needles'"),
        ("{matcher: cuda-versioned-name, needles: [cuda], literal: '(', version: y}", "missing \\)"),
        ("{matcher: cuda-versioned-name, needles: [cuda], literal: x}", "missing 'version'"),
        ("{matcher: dtype-chain, accepted: [a.b], missing: [c.d], accepted_strings: [1]}", "type strings"),
        ("{matcher: python, imports: [x], unless_function: '('}", "missing \\)"),
        ("{matcher: manifest-package, names: [x], in_rocm_environment: none}", "unknown severity"),
    ],
)
def test_bad_rule_parameters_are_load_errors(tmp_path: Path, match: str, error: str) -> None:
    (tmp_path / "r.yaml").write_text(
        "rules:\n  - id: my-rule\n    title: t\n    category: other\n    languages: [python]\n"
        f"    severity: low\n    message: m\n    match: {match}\n"
    )
    with pytest.raises(RuleFileError, match=f"r\\.yaml: rule my-rule: .*{error}"):
        load([tmp_path])


def test_files_without_needles_are_not_parsed(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("def f(:\n    return 1\n")  # a syntax error nobody needs to see
    result = scan(tmp_path, OTHER_RULES)
    assert result.skipped == () and result.findings == ()


def test_type_annotations_are_not_uses(tmp_path: Path) -> None:
    source = """
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        def make(stream: torch.cuda.Stream) -> CUDAExtension:
            return CUDAExtension("x", ["x.cu"])
    """
    assert findings(tmp_path, source) == [("python-cpp-extension", 4, "medium")]


def test_one_version_finding_a_line_keeps_the_worst_use(tmp_path: Path) -> None:
    source = "import torch\nv = f'{torch.version.cuda}' if float(torch.version.cuda) > 11 else ''\n"
    assert findings(tmp_path, source) == [("python-torch-version-cuda", 2, "medium")]


@pytest.mark.parametrize(
    "check",
    ["'+rocm' in torch.__version__", "IS_HIP_EXTENSION", "rocm_version_tuple() >= (6, 0)", "backend == 'hip'",
     "getattr(torch.version, 'hip', None)", "hasattr(props, 'gcnArchName')"],
)
def test_ways_of_checking_for_rocm_guard_the_branch(tmp_path: Path, check: str) -> None:
    source = f"import torch\nif {check}:\n    import cupy\nelse:\n    import pycuda\n"
    (tmp_path / "mod.py").write_text(source)
    result = scan(tmp_path, OTHER_RULES)
    assert (result.findings, result.guarded) == ((), 2)


def test_generated_code_with_deep_expressions_is_bounded(tmp_path: Path) -> None:
    chain = " + ".join(["'x'"] * 400)
    arms = " if c else ".join(["'a'"] * 60) + " if c else 'nvidia-smi'"
    source = f"import subprocess\nsubprocess.run({chain})\nsubprocess.run({arms})\n"
    assert findings(tmp_path, source) == []


_ALSO = re.compile(r"#\s*also:\s*([a-z0-9-]+)")


def _also_annotations(path: Path) -> list[tuple[int, str]]:
    """(line, rule) for each `# also: rule` comment: the next code line is a later use of a per-file rule."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for number, text in enumerate(lines, start=1):
        match = _ALSO.search(text)
        if match:
            target = next(i for i in range(number, len(lines)) if not lines[i].strip().startswith("#")) + 1
            found.append((target, match.group(1)))
    return found


@pytest.mark.parametrize("name", ["deps.py", "gpu_features.py", "gpu_utils.py", "attention_patches.py", "hopper/setup.py",
                                  "arch_named.py", "op_builder_fused_norm.py", "cuda_runtime_binding.py"])
def test_per_file_rules_still_match_every_later_use(name: str) -> None:
    """A per-file rule reports its first use; the matcher must still see every later one (its occurrences)."""
    path = FIXTURES / "rules" / "python" / name
    source = SourceFile(path=path, relpath=name, kind=FileKind.PYTHON, size=path.stat().st_size)
    doc = parse(source)
    assert not isinstance(doc, Skipped)
    rules = {rule.id: rule for rule in load_builtin().rules}
    expected = _also_annotations(path)
    assert expected
    for line, rule_id in expected:
        rule = rules[rule_id]
        assert rule.per_file
        hits = {hit.line for hit in matchers.get("python").function(doc, rule.match)}  # type: ignore[union-attr]
        assert line in hits, f"{name}:{line}: {rule_id} does not match this use"


def test_peak_table_that_lists_amd_gpus_is_not_work(tmp_path: Path) -> None:
    source = "PEAK = {'A100': 312e12, 'MI300X': 1300e12}\n"
    assert findings(tmp_path, source) == []


def test_checking_that_an_optional_module_loaded_is_no_use(tmp_path: Path) -> None:
    source = """
        pynvml = None
        def init():
            global pynvml
            try:
                import pynvml
            except ImportError:
                return
            if pynvml is None or not pynvml:
                return
            pynvml.nvmlInit()
    """
    assert findings(tmp_path, source) == [("python-nvml", 5, "low")]


def test_a_once_per_file_rule_folds_its_guarded_sites_too(tmp_path: Path) -> None:
    source = """
        import torch
        if torch.version.hip is None:
            import bitsandbytes as bnb
            opt = bnb.optim.Adam8bit(params)
            lin = bnb.nn.Linear8bitLt(4, 4)
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"))
    result = scan(tmp_path, OTHER_RULES)
    assert result.findings == ()
    [held] = result.guarded_findings
    assert (held.rule, held.line, held.status, [o.line for o in held.occurrences]) == (
        "python-bitsandbytes", 3, "guarded", [3, 4, 5])
    assert result.guarded == 3


def test_attention_switch_counts_every_default_that_turns_it_on(tmp_path: Path) -> None:
    source = """
        from flash_attn import flash_attn_func
        def build(width, use_flash_attn: bool = True):
            return Block(width, use_flash_attn=True)
        USE_XFORMERS = True
        use_flash_attn = False
        Block(width, use_flash_attn=False)
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, OTHER_RULES)
    [switch] = [f for f in result.findings if f.rule == "python-attention-switch"]
    assert (switch.line, [o.line for o in switch.occurrences]) == (2, [2, 3, 4])


def test_cudnn_frontend_is_high_and_low_behind_an_import_guard(tmp_path: Path) -> None:
    assert findings(tmp_path, "import cudnn\ng = cudnn.pygraph()\n") == [("python-cudnn-frontend", 1, "high")]
    guarded = "try:\n    import cudnn\nexcept ImportError:\n    cudnn = None\n"
    assert findings(tmp_path, guarded) == [("python-cudnn-frontend", 2, "low")]


def test_cuda_only_lowbit_gemm_packages_are_medium_once_a_file_and_low_behind_an_import_guard(tmp_path: Path) -> None:
    uses = "import bitblas\nfrom EETQ import w8_a16_gemm\nimport fp6_llm\n"
    assert findings(tmp_path, uses) == [("python-cuda-lowbit-gemm", 1, "medium")]
    guarded = "try:\n    from eetq import EetqLinear\nexcept ImportError:\n    EetqLinear = None\n"
    assert findings(tmp_path, guarded) == [("python-cuda-lowbit-gemm", 2, "low")]
    # a wrapper of another library that only shares the name, and the words in a string, are no use of the packages
    quiet = "from torchao.prototype.quant_llm import fp6_llm_weight_only\nnote = 'bitblas or eetq'\n"
    assert findings(tmp_path, quiet) == []


@pytest.mark.parametrize(("name", "expected"), [
    ("tests/test_quant.py", [("python-test-dtype-tolerance", 4, "low")]),
    ("pkg/quant_test.py", [("python-test-dtype-tolerance", 4, "low")]),
    ("pkg/quant.py", []),  # the same table in library code is no test to loosen
])
def test_test_rules_fire_in_test_files_only(tmp_path: Path, name: str, expected: list[tuple[str, int, str]]) -> None:
    source = "import torch\n\ndef tols(dtype):\n    if dtype == torch.bfloat16:\n        return dict(atol=1e-2)\n"
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    found = [(f.rule, f.line, f.severity.name.lower()) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == expected


_GRAPHED_TEST = """
    import torch

    def _capture(step):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        return g

    def _run(step):
        return _capture(step)

    @pytest.mark.parametrize("n", [1, 2])
    def test_graphed(n):
        _run(lambda: n)

    def test_eager():
        assert _helper_without_graphs()
"""


@pytest.mark.parametrize(("name", "expected"), [
    ("tests/test_graphs.py", [("python-test-cuda-graph-capture", 13, "low")]),  # the def line, two helpers down
    ("pkg/graphs.py", []),  # library code: no test to gate
])
def test_cuda_graph_test_is_found_through_helpers(tmp_path: Path, name: str, expected: list[tuple[str, int, str]]) -> None:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(_GRAPHED_TEST).lstrip("\n"))
    found = [(f.rule, f.line, f.severity.label) for f in scan(tmp_path, Settings(jobs=1)).findings
             if f.rule.startswith("python-test-")]
    assert found == expected


def test_precision_chain_spans_down_to_its_raise(tmp_path: Path) -> None:
    """The finding covers the chain from the fp16 test to the raise whose message lists the dtypes it takes."""
    (tmp_path / "opt.py").write_text(textwrap.dedent("""
        import torch

        def buckets(params):
            for p in params:
                if p.dtype == torch.float16:
                    yield 0, p
                elif p.dtype == torch.float32:
                    yield 1, p
                else:
                    raise RuntimeError(
                        "only fp16 and fp32"
                    )
        """).lstrip("\n"), encoding="utf-8")
    chains = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-fp16-only-dtype-dispatch"]
    assert [(f.line, f.end_line) for f in chains] == [(5, 12)]


def test_type_string_chain_is_reported_at_its_raise(tmp_path: Path) -> None:
    """A chain on legacy type strings: the test is python-fp16-type-string's, the raise that rejects bf16 this one."""
    (tmp_path / "opt.py").write_text(textwrap.dedent("""
        def stash(params):
            for p in params:
                if p.type() == 'torch.cuda.HalfTensor':
                    yield 0, p
                elif p.type() == 'torch.cuda.FloatTensor':
                    yield 1, p
                else:
                    raise TypeError("expected torch.cuda.FloatTensor or torch.cuda.HalfTensor, "
                                    "got {}".format(p.type()))
        """).lstrip("\n"), encoding="utf-8")
    found = [(f.rule, f.line, f.end_line, f.severity.label) for f in scan(tmp_path, OTHER_RULES).findings]
    assert found == [("python-fp16-type-string", 3, 3, "low"), ("python-fp16-only-dtype-dispatch", 8, 9, "low")]


_HALF_TEST = """
    import torch
    def test_gelu():
        x = torch.randn(8, device="cuda").{cast}()
        assert torch.allclose(gelu(x), ref(x), atol=1e-3)
        torch.testing.assert_close(gelu(x), ref(x))
"""


def test_reduced_precision_compare_is_one_finding_with_each_comparison(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_gelu.py").write_text(textwrap.dedent(_HALF_TEST.format(cast="half")).lstrip("\n"))
    [compare] = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-test-reduced-precision-compare"]
    # the test that compares (where a port puts its skip) and each comparison
    assert (compare.line, compare.severity.label, [o.line for o in compare.occurrences]) == (2, "low", [2, 4, 5])


@pytest.mark.parametrize(("name", "cast"), [
    ("tests/test_gelu.py", "float"),  # fp32 on the GPU: no reduced-precision tolerance to settle
    ("pkg/gelu.py", "half"),  # library code: no test to loosen
])
def test_reduced_precision_compare_needs_a_test_in_reduced_precision(tmp_path: Path, name: str, cast: str) -> None:
    path = tmp_path / name
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(_HALF_TEST.format(cast=cast)).lstrip("\n"))
    assert [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule.startswith("python-test-")] == []


def test_warp_count_from_a_block_size_is_low_and_guarded_beside_a_rocm_check(tmp_path: Path) -> None:
    source = """
        import torch
        import triton
        def settings(BLOCK_SIZE):
            num_warps = 8 if BLOCK_SIZE >= 2048 else 4
            other = 8 if torch.version.hip else (16 if BLOCK_SIZE >= 4096 else 4)
            return num_warps, other
    """
    rule = "python-triton-warp-count-heuristic"
    assert [f for f in findings(tmp_path, source) if f[0] == rule] == [(rule, 4, "low")]
    (tmp_path / "mod.py").write_text(textwrap.dedent(source.replace("other =", "num_warps =")).lstrip("\n"))
    result = scan(tmp_path, OTHER_RULES)
    assert [(f.line, f.severity.label) for f in result.findings if f.rule == rule] == [(4, "low")]
    assert [(f.line, f.status) for f in result.guarded_findings if f.rule == rule] == [(5, "guarded")]


def test_quantisation_block_sizes_of_a_warp_are_one_finding_with_each_place(tmp_path: Path) -> None:
    source = """
        import torch
        def quantize_nf4(A, absmax=None, blocksize=64, chunk=32, scale_block_size=16):
            assert blocksize in [4096, 2048, 1024, 512, 256, 128, 64]
            assert blocksize not in (4096, 2048)
            return A.cuda()
        def dequantize(A, state, *, block_size: int = 128):
            torch._check(state.block_size in {256, 128, 64})
        def to_mxfp4(x, block_size=32):
            return x
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    found = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-quant-block-size-warp"]
    assert [(f.line, f.severity.label, [o.line for o in f.occurrences]) for f in found] == [(2, "low", [2, 3, 7])]
    # a default spans down to the body's first read of it, where a port resolves it per platform; a list is its line
    assert [(o.line, o.end_line) for o in found[0].occurrences] == [(2, 3), (3, 3), (7, 7)]
    ported = source.replace("import torch", "import torch\n        HIP = torch.version.hip is not None")
    assert [f for f in findings(tmp_path, ported) if f[0] == "python-quant-block-size-warp"] == []
    no_quantisation = source.replace("nf4", "rows").replace("absmax", "bias")
    assert [f for f in findings(tmp_path, no_quantisation) if f[0] == "python-quant-block-size-warp"] == []
    off_the_gpu = source.replace("A.cuda()", "A.cpu()")
    assert [f for f in findings(tmp_path, off_the_gpu) if f[0] == "python-quant-block-size-warp"] == []


def test_capability_literal_given_by_keyword_is_low_and_a_compared_one_stays_medium(tmp_path: Path) -> None:
    source = """
        import torch
        specs = DeviceSpecs(highest_compute_capability=(8, 6), device="cuda")
        if specs.compute_capability >= (8, 0):
            pass
    """
    assert [f for f in findings(tmp_path, source) if f[0] == "python-compute-capability"] == [
        ("python-compute-capability", 2, "low"), ("python-compute-capability", 3, "medium")]


def test_a_cudnn_aten_operator_is_high_and_guarded_on_a_hip_branch(tmp_path: Path) -> None:
    source = """
        import torch
        import torch.nn.functional as F
        def conv(x, w):
            if torch.version.hip:
                return F.conv2d(x, w)
            return torch.cudnn_convolution(x, w, (0, 0), (1, 1), (1, 1), 1, False, False, True)
        def grad_op(transposed):
            op_name = "aten::cudnn_convolution_transpose_backward_weight" if transposed else "aten::mm"
            return torch._C._jit_get_operation(op_name)
        PROFILED = ["aten::cudnn_convolution"]
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"))
    result = scan(tmp_path, OTHER_RULES)
    assert [(f.rule, f.line, f.severity.label) for f in result.findings] == [("python-cudnn-aten-op", 8, "high")]
    assert [(f.rule, f.line, f.status) for f in result.guarded_findings] == [("python-cudnn-aten-op", 6, "guarded")]


def test_capability_gates_behind_an_nvidia_test_are_info(tmp_path: Path) -> None:
    """A gate that only runs where the code's own NVIDIA test holds is skipped on ROCm; one beside a flag that ROCm's
    torch also answers True (tensor.is_cuda, torch.cuda.is_available()) still counts."""
    source = """
        import torch
        device_platform = "cuda" if torch.version.cuda else "hip"
        is_nvidia = device_platform == "cuda"
        is_tf32_supported = is_nvidia and torch.cuda.get_device_capability(0)[0] >= 8
        hopper = is_nvidia and ("H100" in torch.cuda.get_device_name(0) or torch.cuda.get_device_capability()[0] >= 9)
        tma = torch.version.cuda is not None and torch.cuda.get_device_capability()[0] >= 9
        def pick(x):
            return 64 if x.is_cuda and torch.cuda.get_device_capability()[0] >= 9 else 32
        ampere = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
    """
    got = [(rule, line, severity) for rule, line, severity in findings(tmp_path, source)
           if rule == "python-compute-capability"]
    assert got == [
        ("python-compute-capability", 4, "info"),
        ("python-compute-capability", 5, "info"),
        ("python-compute-capability", 6, "info"),
        ("python-compute-capability", 8, "medium"),
        ("python-compute-capability", 9, "medium"),
    ]


def test_a_capability_only_shown_in_a_message_is_info(tmp_path: Path) -> None:
    source = """
        import logging
        import torch
        logger = logging.getLogger(__name__)
        logger.info(f"GPU {torch.cuda.get_device_name()} sm={torch.cuda.get_device_capability()}")
        major, _ = torch.cuda.get_device_capability()
        assert major >= 8, f"needs Ampere, got {torch.cuda.get_device_capability()}"
        use_bf16 = torch.cuda.get_device_capability() >= (8, 0)
    """
    got = [(line, severity) for rule, line, severity in findings(tmp_path, source)
           if rule == "python-compute-capability"]
    assert got == [(4, "info"), (5, "medium"), (6, "medium"), (7, "medium")]


def test_import_inside_the_backends_own_function_is_opt_in(tmp_path: Path) -> None:
    source = """
    def forward_xformers(q, k, v):
        import xformers.ops
        return xformers.ops.memory_efficient_attention(q, k, v)
    """
    assert findings(tmp_path, source, "a.py") == [("python-xformers", 2, "low")]


def test_a_runtime_chosen_among_many_backends_or_as_an_export_format_is_opt_in(tmp_path: Path) -> None:
    """TensorRT imported in one branch of a model runner's if/elif chain over formats, or in an exporter's
    export_engine, is a backend the user picks; a TensorRT import in a two-way choice or in any other function is not."""
    source = """
    def load(w, pt, onnx, xml, engine):
        if pt:
            model = w
        elif onnx:
            import onnxruntime
        elif xml:
            import openvino
        elif engine:
            import tensorrt as trt
        return model

    def export_engine(model, f):
        import tensorrt as trt

    def build(path, fast):
        if fast:
            import tensorrt as trt
        else:
            import onnxruntime
    """
    assert [f for f in findings(tmp_path, source, "a.py") if f[0] == "python-tensorrt"] == [
        ("python-tensorrt", 9, "medium"), ("python-tensorrt", 13, "medium"), ("python-tensorrt", 17, "blocker")]


def test_import_elsewhere_keeps_its_severity(tmp_path: Path) -> None:
    assert findings(tmp_path, "def attend(q):\n    import xformers.ops\n    return q\n") == [
        ("python-xformers", 2, "medium")]


def test_triton_inline_asm_in_helpers_that_exist_or_are_chosen_only_on_nvidia_is_info(tmp_path: Path) -> None:
    """A jitted helper defined under an NVIDIA generation flag, or picked only in the NVIDIA branch of a module-level
    choice, never compiles on ROCm; the same helper picked unconditionally (or in both branches) still counts."""
    source = """
        import triton
        import triton.language as tl
        from pkg.utils import IS_NVIDIA, IS_NVIDIA_HOPPER
        if IS_NVIDIA_HOPPER:
            @triton.jit
            def fenced(x):
                return tl.inline_asm_elementwise(asm="mov.f32 $0, $1;", constraints="=r,r", args=[x],
                                                 dtype=tl.float32, is_pure=True, pack=1)
        @triton.jit
        def fast_exp(x):
            return tl.inline_asm_elementwise(asm="ex2.approx.f32 $0, $1;", constraints="=r,r", args=[x],
                                             dtype=tl.float32, is_pure=True, pack=1)
        @triton.jit
        def plain_exp(x):
            return tl.exp(x)
        if IS_NVIDIA:
            exp = fast_exp
        else:
            exp = plain_exp
        @triton.jit
        def always(x):
            return tl.inline_asm_elementwise(asm="rcp.approx.f32 $0, $1;", constraints="=r,r", args=[x],
                                             dtype=tl.float32, is_pure=True, pack=1)
        recip = always
    """
    got = [(line, severity) for rule, line, severity in findings(tmp_path, source)
           if rule == "python-triton-inline-asm"]
    assert got == [(7, "info"), (11, "info"), (22, "high")]


_FP8_GATES = """
    import pytest
    from mylib.fp8 import StateManager

    available, why = StateManager.is_fp8_available()
    other = len(why)


    @pytest.mark.skipif(not available, reason=why)
    def test_gemm():
        assert other >= 0


    def test_norm(fp8):
        if fp8 and not available:
            pytest.skip(why)
        if other:
            pass
"""


def test_fp8_support_gate_is_one_finding_with_each_gate_that_reads_the_check(tmp_path: Path) -> None:
    """The check and the `skipif` / `if` that read its result (where ports add their ROCm condition); not `other`."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_fp8.py").write_text(textwrap.dedent(_FP8_GATES).lstrip("\n"))
    [gate] = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-test-fp8-support-gate"]
    assert (gate.line, gate.severity.label, [o.line for o in gate.occurrences]) == (4, "low", [4, 8, 14])


def test_fp8_gate_uses_need_the_calls_mode() -> None:
    matcher = matchers.get("python-test")
    assert matcher is not None and matcher.validate is not None
    with pytest.raises(ValueError, match="'uses'"):
        matcher.validate({"matcher": "python-test", "needles": ["fp8_"], "paths": "tests/",
                          "parametrize": {"names": "block", "at_most": 64}, "uses": True})


@pytest.mark.parametrize(("target", "severity"), [("gfx942", Severity.MEDIUM), ("gfx1100", Severity.INFO)])
def test_layout_warp_size_32_follows_the_wavefront_of_the_target(tmp_path: Path, target: str,
                                                                  severity: Severity) -> None:
    """32 threads per warp is wrong on wave64 CDNA and right on wave32 RDNA; the literal's place is reported."""
    (tmp_path / "lower.py").write_text("def lower(pm, warps, ctas, cap):\n"
                                       "    pm.add_convert_triton_to_tritongpu_pass(warps, 32, ctas, cap)\n")
    found = [(f.line, f.column, f.severity) for f in scan(tmp_path, Settings(jobs=1, targets=(target,))).findings
             if f.rule == "python-triton-layout-warp-size-32"]
    assert found == [(2, 52, severity)]


def test_reduced_precision_compare_places_each_comparing_test_at_its_first_decorator(tmp_path: Path) -> None:
    """A parametrised test is placed at its first decorator, where a port inserts `@pytest.mark.skipif(...)`; a test
    that compares nothing is no place."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_norm.py").write_text(textwrap.dedent("""
        import pytest
        import torch

        def test_shapes():
            assert norm(torch.ones(2, device="cuda").half()).shape == (2,)

        @pytest.mark.parametrize("n", [8, 16])
        @pytest.mark.parametrize("dtype", [torch.float16])
        def test_norm(n, dtype):
            x = torch.randn(n, device="cuda", dtype=dtype)
            torch.testing.assert_close(norm(x), ref(x))
    """).lstrip("\n"))
    [compare] = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-test-reduced-precision-compare"]
    # the test's header spans its decorators down to its `def`
    assert [(o.line, o.end_line) for o in compare.occurrences] == [(7, 9), (11, 11)]


def test_reduced_precision_compare_follows_a_test_through_its_comparing_helper(tmp_path: Path) -> None:
    """A test that compares through a helper of its module (`check_equal(...)`) is a place too; a helper is not."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_layer.py").write_text(textwrap.dedent("""
        import numpy as np
        import torch

        def check_equal(a, b):
            np.testing.assert_allclose(a.float().cpu().numpy(), b.float().cpu().numpy(), atol=1e-2)

        def run(layer, x):
            return layer(x.half().cuda())

        def test_layer_forward():
            check_equal(run(layer_a, x), run(layer_b, x))
    """).lstrip("\n"))
    [compare] = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-test-reduced-precision-compare"]
    assert [o.line for o in compare.occurrences] == [5, 10]


def test_reduced_precision_compare_places_a_test_class_at_its_header(tmp_path: Path) -> None:
    """A unittest class whose tests compare is a place too (ports skip such a class whole); a helper class is not."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_rms.py").write_text(textwrap.dedent("""
        import unittest
        import torch

        class TestRMSNormHalf(unittest.TestCase):
            tols = dict(rtol=1e-2, atol=1e-3)

            def test_forward(self):
                x = torch.randn(4, device="cuda").half()
                torch.testing.assert_close(rms(x), ref(x), **self.tols)

        class Helpers:
            def compare(self, a, b):
                return torch.allclose(a, b)
    """).lstrip("\n"))
    [compare] = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-test-reduced-precision-compare"]
    assert [o.line for o in compare.occurrences] == [4, 7, 9, 13]


def test_jax_capability_helper_with_a_version_string_is_a_capability_gate(tmp_path: Path) -> None:
    """JAX's test utility takes "9.0" and answers False off CUDA: each literal gate is one finding; a variable
    argument, a device-kind check and another helper given a version string stay quiet."""
    source = """
        from jax._src import test_util as jtu

        if not jtu.is_cuda_compute_capability_at_least("9.0"):
            raise SystemExit("needs sm90")
        HAS_BF16 = jtu.is_cuda_compute_capability_at_least('8.0')
        ok = jtu.is_cuda_compute_capability_at_least(minimum)
        gpu = jtu.test_device_matches(["gpu"])
        newer = library_version_at_least("9.0")
        """
    assert findings(tmp_path, source) == [("python-compute-capability", 3, "medium"),
                                          ("python-compute-capability", 5, "medium")]


def test_capability_parsed_as_major_dot_minor_float_is_a_gate(tmp_path: Path) -> None:
    """A capability parsed to a float ("8.0" from a JAX device, f"{major}.{minor}") and compared with 6.0 or 7.5 is a
    gate; a score compared with 0.75 and a two-decimal threshold are no capability numbers and stay quiet."""
    source = """
        import jax

        cc = jax.devices("gpu")[0]
        compute_capability = float(cc.compute_capability)
        if compute_capability < 6.0:
            raise ValueError("CUDA capability too old")
        bf16 = compute_capability >= 7.5
        capability = 0.5
        good = capability > 0.75 or compute_capability > 8.25
        """
    assert findings(tmp_path, source) == [("python-compute-capability", 5, "medium"),
                                          ("python-compute-capability", 7, "medium")]


def test_cupy_module_loaded_from_a_file_is_a_prebuilt_binary_not_source(tmp_path: Path) -> None:
    """RawModule(path=...) loads nvcc's cubin/fatbin/PTX (high, once per file); RawModule(code=...) in another file
    is source for NVRTC/hipRTC and stays the runtime-kernel rule's (medium), never both on one call."""
    (tmp_path / "compiled.py").write_text(textwrap.dedent("""
        from .compat import cupy as cp

        def load(name):
            mod = cp.RawModule(path=name + ".fatbin")
            return mod, cp.RawModule(path="other.cubin")
        """).lstrip("\n"), encoding="utf-8")
    (tmp_path / "source.py").write_text(textwrap.dedent("""
        from .compat import cupy as cp

        MOD = cp.RawModule(code=SOURCE, options=("-std=c++14",))
        """).lstrip("\n"), encoding="utf-8")
    found = [(f.path, f.rule, f.line, f.severity.label, [o.line for o in f.occurrences])
             for f in scan(tmp_path, OTHER_RULES).findings if f.rule.startswith("python-cupy")]
    assert found == [("compiled.py", "python-cupy-prebuilt-module", 4, "high", [4, 5]),
                     ("source.py", "python-cupy-raw-kernel", 3, "medium", [])]


def test_nvidia_media_pipeline_is_one_finding_per_module_with_each_string(tmp_path: Path) -> None:
    """NVENC, CUDA filters, -hwaccel cuda and NVIDIA GStreamer elements in code strings: one finding, each an
    occurrence; the docstring, the comment and names that only contain an encoder's name stay quiet."""
    source = (FIXTURES / "rules" / "python" / "media_pipeline.py").read_text(encoding="utf-8")
    (tmp_path / "media_pipeline.py").write_text(source, encoding="utf-8")
    found = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-nvidia-media-pipeline"]
    assert [(f.line, f.severity.label, [o.line for o in f.occurrences]) for f in found] == [
        (7, "medium", [7, 10, 13, 18])]


def test_kernels_in_module_strings_are_one_jit_source_finding(tmp_path: Path) -> None:
    """__global__ kernels kept in module strings: one python-cuda-source-string finding, each kernel an occurrence;
    a __device__ helper, a message naming the qualifier and the docstring stay quiet."""
    source = (FIXTURES / "rules" / "python" / "jit_source" / "kernel_strings.py").read_text(encoding="utf-8")
    (tmp_path / "kernel_strings.py").write_text(source, encoding="utf-8")
    found = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-cuda-source-string"]
    assert [(f.line, f.severity.label, [o.line for o in f.occurrences]) for f in found] == [(6, "low", [6, 13])]


def test_nvidia_media_libraries_and_opencv_cuda(tmp_path: Path) -> None:
    """PyNvVideoCodec and DALI imports (DALI behind an ImportError fallback is low); cv2.cuda uses are one finding
    per module with each use an occurrence; cv2.resize and a string naming the module stay quiet."""
    source = (FIXTURES / "rules" / "python" / "media_libraries.py").read_text(encoding="utf-8")
    (tmp_path / "media_libraries.py").write_text(source, encoding="utf-8")
    found = [f for f in scan(tmp_path, OTHER_RULES).findings if f.rule.startswith(("python-nvidia-media", "python-opencv"))]
    assert [(f.rule, f.line, f.severity.label, [o.line for o in f.occurrences]) for f in found] == [
        ("python-nvidia-media-library", 4, "high", []), ("python-nvidia-media-library", 8, "low", []),
        ("python-opencv-cuda", 15, "high", [15, 17])]


def test_nvidia_vision_libraries_and_pycuda_kernel_modules(tmp_path: Path) -> None:
    """VPI and CV-CUDA imports are high; PyCUDA's SourceModule is reported where a kernel module is made, a project's
    own compiler shim and helper module named after VPI stay quiet."""
    source = (FIXTURES / "rules" / "python" / "vision_libraries.py").read_text(encoding="utf-8")
    (tmp_path / "vision_libraries.py").write_text(source, encoding="utf-8")
    found = [f for f in scan(tmp_path, OTHER_RULES).findings
             if f.rule in ("python-nvidia-vision-library", "python-pycuda")]
    assert [(f.rule, f.line, f.severity.label) for f in found] == [
        ("python-nvidia-vision-library", 5, "high"), ("python-nvidia-vision-library", 7, "high"),
        ("python-pycuda", 9, "high"), ("python-pycuda", 24, "high")]


def test_a_cuda_extension_flag_is_one_finding_where_it_is_read_or_tested(tmp_path: Path) -> None:
    """The package's own extension flag, tested or imported, once per file; a device flag or a string is quiet."""
    source = """
        from .bridge import HAS_CUDA_EXT, has_cuda_support
        HAS_CUDA = gpu_present()
        def check():
            if HAS_CUDA:
                return
            if not HAS_CUDA_EXT:
                raise RuntimeError("rebuild with HAS_CUDA_EXT")
            return has_cuda_support()
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, OTHER_RULES)
    [flag] = [f for f in result.findings if f.rule == "python-cuda-extension-flag"]
    assert (flag.line, flag.severity.label, [o.line for o in flag.occurrences]) == (1, "low", [1, 6, 8])


def test_a_cuda_kernel_option_is_a_switch_by_name_or_by_config_key(tmp_path: Path) -> None:
    """use_cuda_kernel tested as a name, an attribute, or a key a test reads (get, getattr, subscript); the same key
    stored, or in a message, is no test."""
    source = """
        def pick(h, args, use_cuda_kernel=False):
            h["use_cuda_kernel"] = use_cuda_kernel
            print("set use_cuda_kernel to build the kernel")
            if h.get("use_cuda_kernel", False):
                return 1
            if getattr(args, "USE_CUDA_KERNEL", False) or args.use_cuda_kernels:
                return 2
            return 3 if h["use_cuda_kernel"] else 4
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, OTHER_RULES)
    [flag] = [f for f in result.findings if f.rule == "python-cuda-extension-flag"]
    assert (flag.line, flag.severity.label, [o.line for o in flag.occurrences]) == (2, "low", [2, 4, 6, 8])


def test_fast_hadamard_transform_is_medium_once_a_file_and_low_behind_an_import_guard(tmp_path: Path) -> None:
    uses = "import torch\nfrom fast_hadamard_transform import hadamard_transform\nimport fast_hadamard_transform\n"
    assert findings(tmp_path, uses) == [("python-fast-hadamard-transform", 2, "medium")]
    guarded = "try:\n    import fast_hadamard_transform\nexcept ImportError:\n    fast_hadamard_transform = None\n"
    assert findings(tmp_path, guarded) == [("python-fast-hadamard-transform", 2, "low")]
    # the project's own torch rotation that shares the name, and the name in a string, are no use of the extension
    quiet = "from rotation.utils import fast_hadamard_transform_torch\nnote = 'fast_hadamard_transform'\n"
    assert findings(tmp_path, quiet) == []


def test_semi_structured_sparsity_forced_onto_cutlass_is_medium_once_a_file(tmp_path: Path) -> None:
    forced = (
        "import torch\nfrom torch.sparse import SparseSemiStructuredTensor\n"
        "SparseSemiStructuredTensor._FORCE_CUTLASS = True\ny = torch._sparse_semi_structured_mm(a, m, b)\n"
    )
    assert findings(tmp_path, forced) == [("python-semi-structured-cutlass", 3, "medium")]
    # the default backend (cuSPARSELt, hipSPARSELt on ROCm) and a project's own flag of the same name are quiet
    default = (
        "import torch\nfrom torch.sparse import SparseSemiStructuredTensorCUSPARSELT\n"
        "ok = torch.backends.cusparselt.is_available()\nw = torch.sparse.to_sparse_semi_structured(w)\n"
        "class S:\n    _FORCE_CUTLASS = True\n"
    )
    assert findings(tmp_path, default) == []


def test_config_choice_in_a_dict_is_one_finding_with_each_choice(tmp_path: Path) -> None:
    """Every kernel key of one config module is an occurrence of one finding: one decision per module."""
    source = "CFG = {\n    'trimul_kernel': 'cuequivariance',\n    'triatt_kernel': 'cueq',\n    'dtype': 'bf16',\n}\n"
    (tmp_path / "cfg.py").write_text(source, encoding="utf-8")
    [finding] = scan(tmp_path, OTHER_RULES).findings
    assert (finding.rule, finding.line) == ("python-cuequivariance-switch", 2)
    assert [o.line for o in finding.occurrences] == [2, 3]


def test_faiss_gpu_classes_are_one_medium_finding_per_file_and_cpu_faiss_stays_quiet(tmp_path: Path) -> None:
    """faiss's GPU resources, cloners and GpuIndex* classes need a GPU build of faiss (a CUDA wheel, or a ROCm source
    build): one medium finding per file at the first use; CPU indexes, faiss.get_num_gpus(), a project's own class
    of the same name, strings and comments stay quiet."""
    for name in ("faiss_gpu.py", "faiss_gpu_fallback.py", "faiss_gpu_quiet.py"):
        source = (FIXTURES / "rules" / "python" / name).read_text(encoding="utf-8")
        (tmp_path / name).write_text(source, encoding="utf-8")
    found = sorted((f.path, f.line, f.severity.label, [o.line for o in f.occurrences])
                   for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-faiss-gpu")
    assert found == [("faiss_gpu.py", 10, "medium", [10, 11]), ("faiss_gpu_fallback.py", 9, "medium", [9, 10])]


def test_faiss_gpu_classes_in_faiss_own_package_and_gpu_tests_are_not_reported(tmp_path: Path) -> None:
    """faiss's own GPU tests and Python package use its GPU classes (their port is faiss's ROCm build); a project
    script beside them is still reported."""
    source = "import faiss\nres = faiss.StandardGpuResources()\n"
    for name in ("faiss/gpu/test/test_gpu_basics.py", "faiss/contrib/clustering.py", "scripts/build_index.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source, encoding="utf-8")
    found = [(f.path, f.line) for f in scan(tmp_path, OTHER_RULES).findings if f.rule == "python-faiss-gpu"]
    assert found == [("scripts/build_index.py", 2)]


def test_flashinfer_calls_are_occurrences_of_the_one_finding(tmp_path: Path) -> None:
    """flashinfer's import is the file's finding; each call into it (a wrapper class, a kernel) is one of its places,
    and a name that only contains the word is none."""
    (tmp_path / "attn.py").write_text(textwrap.dedent("""
        import flashinfer
        import torch

        use_flashinfer_decode = True


        def sparse(q, k, v, workspace):
            wrapper = flashinfer.BlockSparseAttentionWrapper(workspace)
            out, lse = flashinfer.single_prefill_with_kv_cache(q, k, v, return_lse=True)
            return wrapper, out, lse
        """).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, OTHER_RULES)
    found = [(f.line, [o.line for o in f.occurrences]) for f in result.findings if f.rule == "python-flashinfer"]
    assert found == [(1, [1, 8, 9])]


def test_flash_attn_private_calls_fold_into_one_finding(tmp_path: Path) -> None:
    """The first call of flash-attn's private kernels is the file's finding, medium, the later calls its places; the
    import is python-flash-attn's, and an attribute call through the module counts too."""
    (tmp_path / "ring.py").write_text(textwrap.dedent("""
        import flash_attn.flash_attn_interface as fai
        from flash_attn.flash_attn_interface import _flash_attn_forward


        def fwd(q, k, v):
            out, lse, _, _ = _flash_attn_forward(q, k, v, 0.0, 1.0, causal=True)
            return out, lse


        def bwd(*args):
            return fai._flash_attn_backward(*args)
        """).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, OTHER_RULES)
    found = [(f.line, f.severity.label, [o.line for o in f.occurrences])
             for f in result.findings if f.rule == "python-flash-attn-private-api"]
    assert found == [(6, "medium", [6, 11])]


def test_import_under_a_probe_kept_in_a_dict_is_optional(tmp_path: Path) -> None:
    """A package probe kept in a dict (`env_info["has_flash_attn"]`, `cfg.get("use_flash_attn")`) guards its import
    as a flag does: low; a dict key that is no availability flag guards nothing."""
    found = findings(tmp_path, """
        env_info = probe_packages()
        cfg = load_config()
        if env_info["has_flash_attn"]:
            from flash_attn import flash_attn_func
        if cfg.get("use_flash_attn", False):
            from flash_attn import flash_attn_varlen_func
        if cfg["model_name"]:
            from flash_attn import flash_attn_qkvpacked_func
        """)
    assert [(rule, line, severity) for rule, line, severity in found if rule == "python-flash-attn"] == [
        ("python-flash-attn", 4, "low"), ("python-flash-attn", 6, "low"), ("python-flash-attn", 8, "high")]


def test_is_cuda_beside_is_hip_is_an_nvidia_test(tmp_path: Path) -> None:
    """`is_cuda()` in a file that also has the project's `is_hip()` is the NVIDIA half of a platform pair: a
    capability gate behind it is info; without the pair (is_cuda() as torch.cuda.is_available()) it stays medium."""
    pair = tmp_path / "pair"
    pair.mkdir()
    found = findings(pair, """
        import torch
        from mypkg.platforms import is_cuda, is_hip


        def use_fp4() -> bool:
            return is_cuda() and torch.cuda.get_device_capability()[0] >= 10
        """)
    alone = tmp_path / "alone"
    alone.mkdir()
    found_alone = findings(alone, """
        import torch
        from mypkg.platforms import is_cuda


        def use_fp4() -> bool:
            return is_cuda() and torch.cuda.get_device_capability()[0] >= 10
        """)
    assert [f for f in found if f[0] == "python-compute-capability"] == [("python-compute-capability", 6, "info")]
    assert [f for f in found_alone if f[0] == "python-compute-capability"] == [("python-compute-capability", 6, "medium")]


def test_own_is_cuda_reading_the_triton_backend_is_an_nvidia_test(tmp_path: Path) -> None:
    """A module's own `is_cuda()` that compares Triton's target backend with "cuda" holds only on NVIDIA (Triton's AMD
    backend is "hip"): the Hopper gate behind it is info. One that asks torch.cuda.is_available() holds on ROCm too."""
    nvidia = tmp_path / "nvidia"
    nvidia.mkdir()
    found = findings(nvidia, """
        import torch
        import triton


        def is_cuda():
            return triton.runtime.driver.active.get_current_target().backend == "cuda"


        def supports_tma():
            return is_cuda() and torch.cuda.get_device_capability()[0] >= 9
        """)
    anygpu = tmp_path / "anygpu"
    anygpu.mkdir()
    found_any = findings(anygpu, """
        import torch


        def is_cuda():
            return torch.cuda.is_available()


        def supports_tma():
            return is_cuda() and torch.cuda.get_device_capability()[0] >= 9
        """)
    assert [f for f in found if f[0] == "python-compute-capability"] == [("python-compute-capability", 10, "info")]
    assert [f for f in found_any if f[0] == "python-compute-capability"] == [("python-compute-capability", 9, "medium")]


def test_triton_pipeline_depth_tuned_for_nvidia_shared_memory(tmp_path: Path) -> None:
    # num_stages of 3 and more, given as a keyword, a config dict entry or a launch keyword, is one finding per file;
    # 2 and 1 are what AMD's backend takes, and a depth chosen per platform in one expression is guarded (info)
    source = """
        import torch
        import triton
        _is_hip = torch.version.hip is not None
        CONFIGS = [triton.Config({"BM": 128}, num_warps=8, num_stages=4), triton.Config({"BM": 64}, num_stages=2)]
        DEFAULTS = {"BLOCK_M": 64, "num_stages": 5}
        PER_PLATFORM = {"num_stages": 2 if _is_hip else 4}
        def launch(kernel, x):
            kernel[(1,)](x, num_stages=1)
            kernel[(1,)](x, num_stages=3)
    """
    (tmp_path / "mod.py").write_text(textwrap.dedent(source).lstrip("\n"))
    result = scan(tmp_path, OTHER_RULES)
    found = [(f.line, f.severity.label, [o.line for o in f.occurrences])
             for f in result.findings if f.rule == "python-triton-deep-pipeline"]
    assert found == [(4, "low", [4, 5, 9])]
    assert [(f.line, f.severity.label) for f in result.guarded_findings
            if f.rule == "python-triton-deep-pipeline"] == [(6, "info")]


def test_a_deep_pipeline_setting_outside_triton_is_not_a_triton_config(tmp_path: Path) -> None:
    # pipeline-parallel training names its stages num_stages too: only a module that imports Triton is read
    source = """
        import torch
        SCHEDULE = {"num_stages": 4, "micro_batches": 8}
        def split(model, num_stages=8):
            return [model] * num_stages
    """
    assert [f for f in findings(tmp_path, source) if f[0] == "python-triton-deep-pipeline"] == []


def test_a_gpu_name_tested_against_each_model_of_a_list(tmp_path: Path) -> None:
    # the loop variable walks a literal list (inline, assigned, or a parameter's default); the nearest loop that binds
    # it decides, so a later loop over AMD names with the same variable stays quiet; GeForce numbers are models too
    source = """
        import torch
        def more_shared_memory(ref=["a100", "h100"]):
            gpu = torch.cuda.get_device_properties(0).name.lower()
            return True in [g in gpu for g in ref]
        def fp16_acc():
            return any(x in torch.cuda.get_device_name() for x in ("4090", "3090"))
        def amd():
            return any(x in torch.cuda.get_device_name() for x in ("MI300X", "MI250"))
        def other(path):
            return any(x in path for x in ("a100", "h100"))
    """
    assert [f for f in findings(tmp_path, source) if f[0] == "python-nvidia-gpu-name-gate"] == [
        ("python-nvidia-gpu-name-gate", 4, "low"), ("python-nvidia-gpu-name-gate", 6, "low")]
