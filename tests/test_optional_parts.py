"""Which modules and build units the main path reaches only behind an off-by-default command-line flag."""

from __future__ import annotations

from pathlib import Path

from migrate.optional_parts import device_built, flag_gated, in_branches, requirement_extras, unimported_extensions
from migrate.weights import load_weights, on_main_path

W = load_weights()

TRAIN = """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--fused", action="store_true", help="fully fused MLP")
parser.add_argument("--tiny-nn", action="store_true")
parser.add_argument("--encoding", default="hash", choices=["hash", "freq"])
opt = parser.parse_args()

if opt.fused:
    from model.net_fused import Net
elif opt.tiny_nn:
    from model.net_tiny import Net
else:
    from model.net import Net
"""
NET_FUSED = "import torch\nfrom fusedmlp import FusedMLP\n\nclass Net(torch.nn.Module):\n    pass\n"
NET_TINY = "import torch\nimport tinynn\n\nclass Net(torch.nn.Module):\n    pass\n"
NET = """\
import torch
from .encoders import encoder_for

class Net(torch.nn.Module):
    pass
"""
ENCODERS = """\
def encoder_for(name):
    if name == "hash":
        from hashgrid import HashGrid
        return HashGrid()
    from freqenc import FreqEncoder
    return FreqEncoder()
"""


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _gated(root: Path, build_dirs: tuple[str, ...]) -> list[str]:
    return sorted(flag_gated(root, build_dirs, lambda path: on_main_path(path, W)))


BASE = {
    "train.py": TRAIN, "model/__init__.py": "", "model/net_fused.py": NET_FUSED, "model/net_tiny.py": NET_TINY,
    "model/net.py": NET, "model/encoders.py": ENCODERS,
    "fusedmlp/__init__.py": "from .mlp import FusedMLP\n", "fusedmlp/mlp.py": "class FusedMLP:\n    pass\n",
    "fusedmlp/setup.py": "from setuptools import setup\nsetup(name='fusedmlp')\n",
    "hashgrid/__init__.py": "class HashGrid:\n    pass\n", "hashgrid/setup.py": "from setuptools import setup\n",
    "freqenc/__init__.py": "class FreqEncoder:\n    pass\n",
}


def test_an_extension_chosen_by_a_store_true_flag_is_optional_with_the_module_that_imports_it(tmp_path) -> None:
    root = _tree(tmp_path / "repo", BASE)
    assert _gated(root, ("fusedmlp", "hashgrid")) == [
        "fusedmlp/", "fusedmlp/__init__.py", "fusedmlp/mlp.py", "model/net_fused.py", "model/net_tiny.py"]


def test_the_default_branch_a_value_choice_and_a_second_plain_import_stay_required(tmp_path) -> None:
    plain_user = {**BASE, "serve.py": "from model.net_fused import Net\n"}  # a second, unconditional way in
    assert _gated(_tree(tmp_path / "plain", plain_user), ("fusedmlp", "hashgrid")) == ["model/net_tiny.py"]
    by_value = {**BASE, "train.py": TRAIN.replace("if opt.fused:", 'if opt.encoding == "fused":')}
    assert _gated(_tree(tmp_path / "value", by_value), ("fusedmlp", "hashgrid")) == ["model/net_tiny.py"]
    no_flags = {**BASE, "train.py": "from model.net_fused import Net\n"}
    assert _gated(_tree(tmp_path / "none", no_flags), ("fusedmlp", "hashgrid")) == []


def test_a_flagged_import_in_a_test_folder_does_not_count(tmp_path) -> None:
    only_tests = {**BASE, "train.py": "from model.net import Net\n",
                  "tests/test_fused.py": TRAIN.replace("from model.net import Net", "pass")}
    assert _gated(_tree(tmp_path / "tests-only", only_tests), ("fusedmlp",)) == []


def test_a_file_python_cannot_parse_or_a_symlink_out_of_the_tree_is_left_alone(tmp_path) -> None:
    outside = _tree(tmp_path / "outside", {"elsewhere.py": "from model.net_fused import Net\n"})  # read: required
    broken = {**BASE, "model/broken.py": "if opt.fused:\n    import (\n", "deep.py": "x = " + "(" * 5000 + ")" * 5000}
    root = _tree(tmp_path / "repo", broken)
    (root / "linked.py").symlink_to(outside / "elsewhere.py")
    assert _gated(root, ("fusedmlp",)) == [
        "fusedmlp/", "fusedmlp/__init__.py", "fusedmlp/mlp.py", "model/net_fused.py", "model/net_tiny.py"]


SWITCHED_SETUP = """\
import os
from setuptools import setup
from cmake_build_extension import CMakeExtension
from torch.utils.cpp_extension import CUDAExtension

DEVICE = os.getenv("TARGET_DEVICE", "cuda")


def _is_cuda():
    return DEVICE == "cuda"


def _is_hip():
    return DEVICE == "rocm"


ext_modules = [CUDAExtension("pkg._C", ["csrc/common/ops.cu"])]
if _is_cuda():
    ext_modules.append(CUDAExtension("pkg._fa", ["csrc/flash/fwd.cu", "csrc/flash/bwd.cu"]))
    ext_modules.append(CMakeExtension(name="pkg._moe", source_dir="csrc/moe"))
setup(name="pkg", ext_modules=ext_modules)
"""


def test_extensions_a_device_switch_builds_for_cuda_alone_are_optional(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(SWITCHED_SETUP)
    assert device_built(tmp_path, ()) == {"csrc/flash", "csrc/moe"}
    # the switch never takes a ROCm value: the CUDA extensions are the product on every device
    (tmp_path / "setup.py").write_text(SWITCHED_SETUP.replace('DEVICE == "rocm"', 'DEVICE == "cpu"'))
    assert device_built(tmp_path, ()) == frozenset()


def test_a_cuda_branch_that_builds_what_every_device_builds_is_not_optional(tmp_path: Path) -> None:
    text = SWITCHED_SETUP.replace('["csrc/common/ops.cu"]', '["csrc/flash/common.cu"]')
    (tmp_path / "setup.py").write_text(text)
    assert device_built(tmp_path, ()) == {"csrc/moe"}


TORCH_BUILD_SETUP = """\
import os
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

CUDA_VERSION = os.getenv("CUDA_VERSION") or torch.version.cuda
ROCM_VERSION = os.getenv("ROCM_VERSION") or torch.version.hip

ext_modules = []
if CUDA_VERSION:
    ext_modules.append(CUDAExtension("pkg.gemm", ["kernels/fast/gemm/mm.cu", "kernels/fast/gemv/mv.cu"]))
ext_modules.append(CUDAExtension("pkg.common", ["kernels/common/ops.cu"]))
setup(name="pkg", ext_modules=ext_modules, cmdclass={"build_ext": BuildExtension})
"""


def _folders(root: Path, *names: str) -> None:
    for name in names:
        (root / name).mkdir(parents=True)


def test_extensions_built_only_on_a_cuda_build_of_torch_are_optional_with_their_shared_folder(tmp_path: Path) -> None:
    _folders(tmp_path, "kernels/fast/gemm", "kernels/fast/gemv", "kernels/common")
    (tmp_path / "setup.py").write_text(TORCH_BUILD_SETUP)
    # kernels/fast holds the two switched folders' shared headers; kernels/ also holds what every build compiles
    assert device_built(tmp_path, ()) == {"kernels/fast", "kernels/fast/gemm", "kernels/fast/gemv"}
    (tmp_path / "kernels/fast/tests").mkdir()  # a subfolder no switched extension builds: its parent stays required
    assert device_built(tmp_path, ()) == {"kernels/fast/gemm", "kernels/fast/gemv"}


def test_a_negated_rocm_switch_is_a_cuda_branch_and_a_setup_without_a_rocm_side_has_none(tmp_path: Path) -> None:
    _folders(tmp_path, "kernels/fast/gemm", "kernels/fast/gemv", "kernels/common")
    (tmp_path / "setup.py").write_text(TORCH_BUILD_SETUP.replace("if CUDA_VERSION:", "if not ROCM_VERSION:"))
    assert device_built(tmp_path, ()) == {"kernels/fast", "kernels/fast/gemm", "kernels/fast/gemv"}
    # no ROCm value anywhere: the CUDA build is the only build, and its extensions are the product
    cuda_only = TORCH_BUILD_SETUP.replace('ROCM_VERSION = os.getenv("ROCM_VERSION") or torch.version.hip\n', "")
    (tmp_path / "setup.py").write_text(cuda_only)
    assert device_built(tmp_path, ()) == frozenset()


KERNEL_USER = """\
import logging

try:
    from ext.fastconv.conv import conv_fast
    HAS_FAST = True
except ImportError:
    logging.warning("fast conv extension not built: falling back to torch")
    HAS_FAST = False
"""
FALLBACK = {
    "model/__init__.py": "", "model/layer.py": KERNEL_USER, "train.py": "from model.layer import HAS_FAST\n",
    "ext/fastconv/setup.py": "from setuptools import setup\nsetup(name='fastconv')\n",
    "ext/fastconv/conv.py": "import fastconv_cuda\n\ndef conv_fast(x):\n    return fastconv_cuda.conv(x)\n",
}


def test_a_built_extension_imported_only_in_a_try_with_a_fallback_is_optional(tmp_path) -> None:
    assert _gated(_tree(tmp_path / "fallback", FALLBACK), ("ext/fastconv",)) == ["ext/fastconv/", "ext/fastconv/conv.py"]
    bare = {**FALLBACK, "model/layer.py": KERNEL_USER.replace("except ImportError:", "except:")}
    assert _gated(_tree(tmp_path / "bare", bare), ("ext/fastconv",)) == ["ext/fastconv/", "ext/fastconv/conv.py"]


def test_a_required_or_plain_import_of_a_built_extension_stays_on_the_main_path(tmp_path) -> None:
    raising = {**FALLBACK, "model/layer.py": "try:\n    from ext.fastconv.conv import conv_fast\n"
                                              "except ImportError:\n    raise RuntimeError('build ext/fastconv first')\n"}
    assert _gated(_tree(tmp_path / "raising", raising), ("ext/fastconv",)) == []
    plain = {**FALLBACK, "serve.py": "from ext.fastconv.conv import conv_fast\n"}  # a second, unconditional way in
    assert _gated(_tree(tmp_path / "plain", plain), ("ext/fastconv",)) == []
    # a first-party module that is no build unit's, tried for some other reason, stays required
    own = {**FALLBACK, "model/layer.py": KERNEL_USER.replace("ext.fastconv.conv", "model.helpers"),
           "model/helpers.py": "def conv_fast(x):\n    return x\n"}
    assert _gated(_tree(tmp_path / "own", own), ("ext/fastconv",)) == []


ASSERTING_USER = """\
def _extension():
    try:
        import ext.fastconv.conv as _K
    except ImportError:
        _K = None
    return _K
"""
RENDERER = """\
from model.layer import _extension

_K = _extension()


def render(x):
    assert (
        _K is not None and x.is_cuda
    ), "the fastconv extension is required for rendering"
    return _K.conv_fast(x)
"""


def test_an_extension_the_code_asserts_present_is_no_fallback(tmp_path) -> None:
    asserting = {**FALLBACK, "model/layer.py": ASSERTING_USER, "model/render.py": RENDERER,
                 "train.py": "from model.render import render\n"}
    assert _gated(_tree(tmp_path / "asserting", asserting), ("ext/fastconv",)) == []
    # the same fallback with only a test of another name (or a check that is no assert) stays optional
    other = {**asserting, "model/render.py": RENDERER.replace("_K is not None and", "x is not None and")}
    assert _gated(_tree(tmp_path / "other", other), ("ext/fastconv",)) == ["ext/fastconv/", "ext/fastconv/conv.py"]
    checked = {**asserting, "model/render.py": RENDERER.replace("assert (", "use_kernel = (").replace(
        '), "the fastconv extension is required for rendering"', ")")}
    assert _gated(_tree(tmp_path / "checked", checked), ("ext/fastconv",)) == ["ext/fastconv/", "ext/fastconv/conv.py"]


def test_requirements_of_an_extra_beside_a_declared_install(tmp_path) -> None:
    files = {"pyproject.toml": "[project]\nname = 'tune'\ndependencies = ['torch', 'transformers']\n",
             "requirements/bitsandbytes.txt": "bitsandbytes\n", "requirements/optional.txt": "deepspeed\n",
             "requirements/runtime.txt": "torch\n", "requirements/cuda.txt": "cupy-cuda12x\n",
             "ext/requirements/extra.txt": "apex\n"}
    assert requirement_extras(_tree(tmp_path / "declared", files), ("ext",)) == {
        "requirements/bitsandbytes.txt", "requirements/optional.txt"}
    setup_py = {**{p: t for p, t in files.items() if p != "pyproject.toml"},
                "setup.py": "from setuptools import setup\nsetup(install_requires=['torch'])\n"}
    assert requirement_extras(_tree(tmp_path / "setup", setup_py), ()) == {
        "requirements/bitsandbytes.txt", "requirements/optional.txt"}


def test_requirements_files_that_are_the_only_install_are_main(tmp_path) -> None:
    hatch_env = {"pyproject.toml": "[project]\nname = 'gen'\n\n[tool.hatch.envs.ci]\ndependencies = ['pytest']\n",
                 "requirements/pt2.txt": "torch\nxformers\n"}
    assert requirement_extras(_tree(tmp_path / "only", hatch_env), ()) == frozenset()
    broken = {**hatch_env, "pyproject.toml": "[project\ndependencies = ['torch']\n"}
    assert requirement_extras(_tree(tmp_path / "broken", broken), ()) == frozenset()


SPLAT_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

core = CUDAExtension("fastsplat.csrc", sources=["fastsplat/cuda/raster.cu"])
research = CUDAExtension("fastsplat.research.kernels.csrc", sources=["fastsplat/research/kernels/sort.cu"])
setup(name="fastsplat", ext_modules=[core, research], cmdclass={"build_ext": BuildExtension})
"""
SPLAT = {
    "setup.py": SPLAT_SETUP, "fastsplat/__init__.py": "from .rendering import rasterize\n",
    "fastsplat/rendering.py": "from fastsplat import csrc\n\ndef rasterize(x):\n    return csrc.raster(x)\n",
    "fastsplat/research/__init__.py": "from .kernels import csrc\n", "fastsplat/research/kernels/__init__.py": "",
    "examples/sorted_render.py": "from fastsplat.research import csrc\n",
    "tests/test_sort.py": "import fastsplat.research.kernels\n",
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_second_extension_only_examples_and_tests_import_is_research_code(tmp_path: Path) -> None:
    root = _write(tmp_path / "only-examples", SPLAT)
    assert unimported_extensions(root, (), lambda p: on_main_path(p, W)) == {"fastsplat/research"}


def test_a_second_extension_the_library_imports_is_its_main_path(tmp_path: Path) -> None:
    used = {**SPLAT, "fastsplat/rendering.py": SPLAT["fastsplat/rendering.py"] + "from .research import csrc as fast\n"}
    assert unimported_extensions(_write(tmp_path / "used", used), (), lambda p: on_main_path(p, W)) == frozenset()
    absolute = {**SPLAT, "fastsplat/rendering.py": "import fastsplat.research.kernels\n"}
    assert unimported_extensions(_write(tmp_path / "abs", absolute), (), lambda p: on_main_path(p, W)) == frozenset()
    # one extension alone is the library itself, whoever imports it
    alone = {**SPLAT, "setup.py": SPLAT_SETUP.replace("[core, research]", "[research]").replace(
        'core = CUDAExtension("fastsplat.csrc", sources=["fastsplat/cuda/raster.cu"])\n', "")}
    assert unimported_extensions(_write(tmp_path / "alone", alone), (), lambda p: on_main_path(p, W)) == frozenset()


TRAINER = '''\
from peft import get_peft_model, prepare_model_for_kbit_training


def build(model, opts):
    if opts.quantized_lora:
        model = prepare_model_for_kbit_training(model)
    elif opts.optimizer.endswith("8bit"):
        import bitsandbytes as bnb
        opt_class = bnb.optim.AdamW8bit
    return get_peft_model(model, opts.lora)


def build_always(model):
    model = prepare_model_for_kbit_training(model)
    return model
'''


def test_places_in_an_if_branch_are_switched_and_unconditional_ones_are_not(tmp_path) -> None:
    (tmp_path / "train.py").write_text(TRAINER)
    places = {("train.py", 6), ("train.py", 8), ("train.py", 9), ("train.py", 14), ("train.py", 5)}
    # lines 6, 8 and 9 sit in the branches; 14 runs on every call; 5 is the `if` test itself
    assert in_branches(tmp_path, places) == {("train.py", 6), ("train.py", 8), ("train.py", 9)}
    assert in_branches(tmp_path, {("gone.py", 3)}) == frozenset()


SESSION = '''\
def load_session(path, cuda=False):
    import onnxruntime as ort

    providers = [
        "CPUExecutionProvider"
        if cuda is False
        else "CUDAExecutionProvider"
    ]
    fixed = ["CUDAExecutionProvider"]
    return ort.InferenceSession(path, providers=providers), fixed
'''


def test_a_value_of_a_conditional_expression_is_switched_and_a_plain_list_is_not(tmp_path) -> None:
    (tmp_path / "infer.py").write_text(SESSION)
    assert in_branches(tmp_path, {("infer.py", 7), ("infer.py", 9)}) == {("infer.py", 7)}


CONFIGURED = '''\
import torch


@register(
    "fused" if torch.cuda.is_available() else "plain"
)
class Runner:
    def step(self, use_amp):
        scale = 1.0
        if use_amp:
            with torch.autocast("cuda"):
                loss = self.forward()
        return scale


def unrelated(flag):
    if flag:
        return torch.cuda.device_count()
    return 0
'''


def test_branches_are_found_inside_nested_statements_and_decorators_and_none_elsewhere(tmp_path) -> None:
    # only the statements that hold an asked line are read (a decorator's lines belong to its class): a branch
    # nested in a method still counts, and one in another function never reaches a line outside it
    (tmp_path / "run.py").write_text(CONFIGURED)
    places = {("run.py", 5), ("run.py", 12), ("run.py", 10), ("run.py", 13), ("run.py", 1)}
    assert in_branches(tmp_path, places) == {("run.py", 5), ("run.py", 12)}
    assert in_branches(tmp_path, {("run.py", 5)}) == {("run.py", 5)}  # the class's own lines asked for none
    assert in_branches(tmp_path, {("run.py", 18), ("run.py", 19)}) == {("run.py", 18)}


def test_switched_places_are_read_up_to_a_bound_of_files(tmp_path, monkeypatch) -> None:
    from migrate import finding_status

    (tmp_path / "train.py").write_text("import torch\nif args.q_lora:\n    model = prepare_model_for_kbit_training(model)\n")
    places = {("train.py", 3), ("train.py", 1)}
    assert finding_status._switched(str(tmp_path), places) == {("train.py", 3)}
    monkeypatch.setattr(finding_status, "_MAX_SWITCHED_FILES", 0)  # more files than the bound: every place counts
    assert finding_status._switched(str(tmp_path), places) == frozenset()
