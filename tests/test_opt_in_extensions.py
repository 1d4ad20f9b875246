"""Extensions setup.py builds only when the user asks, which the project's Python runs without."""

from __future__ import annotations

from pathlib import Path

from migrate.opt_in_extensions import opt_in_built
from migrate.weights import load_weights, on_main_path

W = load_weights()

# a flag of the project's own, read out of sys.argv in a loop: the extensions build only when it is passed
FLAG_SETUP = """\
import sys
from setuptools import setup

WANT_KERNELS = False
kept = []
for word in sys.argv:
    if word == "--with-fused-kernels":
        WANT_KERNELS = True
        continue
    kept.append(word)
sys.argv = kept

modules = []
if WANT_KERNELS:
    from torch.utils.cpp_extension import CUDAExtension
    modules.append(CUDAExtension(name="fastnorm_cuda", sources=["kernels/norm/api.cpp", "kernels/norm/norm.cu"]))
setup(name="pkg", ext_modules=modules)
"""
# the Python tries the module and takes its own path when it is missing
FALLBACK = """\
import torch

try:
    import fastnorm_cuda
    FUSED = True
except ImportError:
    FUSED = False


def norm(x):
    return fastnorm_cuda.forward(x) if FUSED else torch.nn.functional.layer_norm(x, x.shape[-1:])
"""
# a custom-op library loaded by its file name, the arguments of the extension kept in a dict
KWARGS_SETUP = """\
import sys
from setuptools import setup


def op_kwargs():
    return dict(name="pkg.pairop", sources=["pkg/csrc/pair.cpp", "pkg/csrc/pair.cu"])


ext_modules = []
if "ext" in sys.argv:
    sys.argv.remove("ext")
    from torch.utils.cpp_extension import CUDAExtension
    ext_modules = [CUDAExtension(**op_kwargs())]
setup(name="pkg", ext_modules=ext_modules)
"""
LOADER = """\
from pathlib import Path
import torch

_PAIR = str(Path(__file__).parent / "pairop.so")
try:
    torch.ops.load_library(_PAIR)
    HAVE_PAIR = True
except Exception:
    HAVE_PAIR = False
"""


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def _built(root: Path) -> frozenset[str]:
    return opt_in_built(root, (), lambda path: on_main_path(path, W))


def test_an_extension_built_on_request_and_tried_by_the_python_is_an_add_on(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"setup.py": FLAG_SETUP, "pkg/norm.py": FALLBACK})
    assert _built(root) == {"kernels/norm"}


def test_a_custom_op_library_loaded_by_file_name_in_a_try_is_an_add_on(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"setup.py": KWARGS_SETUP, "pkg/ops.py": LOADER})
    assert _built(root) == {"pkg/csrc"}


def test_an_extension_the_default_build_compiles_stays_required_whatever_the_python_tries(tmp_path: Path) -> None:
    # no flag: `pip install .` builds it, and the expert ports it (a detector's one op with a CPU fallback)
    unasked = FLAG_SETUP.replace("WANT_KERNELS = False", "WANT_KERNELS = True")
    unasked = unasked.replace('if word == "--with-fused-kernels":', 'if word == "develop":')
    root = _tree(tmp_path, {"setup.py": unasked, "pkg/norm.py": FALLBACK})
    assert _built(root) == frozenset()


def test_a_flag_that_turns_the_build_off_is_no_request(tmp_path: Path) -> None:
    skip = FLAG_SETUP.replace("--with-fused-kernels", "--no-cuda-ext")
    assert _built(_tree(tmp_path, {"setup.py": skip, "pkg/norm.py": FALLBACK})) == frozenset()


def test_one_load_outside_a_try_keeps_the_extension_required(tmp_path: Path) -> None:
    plain = "import fastnorm_cuda\n\n\ndef norm(x):\n    return fastnorm_cuda.forward(x)\n"
    root = _tree(tmp_path, {"setup.py": FLAG_SETUP, "pkg/norm.py": FALLBACK, "pkg/train.py": plain})
    assert _built(root) == frozenset()
    # ... and a handler that only raises again is no fallback
    reraise = FALLBACK.replace("    FUSED = False", "    raise")
    assert _built(_tree(tmp_path, {"pkg/train.py": "", "pkg/norm.py": reraise})) == frozenset()


def test_nothing_loads_it_and_nothing_is_decided(tmp_path: Path) -> None:
    # a module nobody imports by name (loaded some other way) is not known to be optional
    root = _tree(tmp_path, {"setup.py": FLAG_SETUP, "pkg/norm.py": "import torch\n"})
    assert _built(root) == frozenset()


def test_tests_that_import_it_plainly_do_not_make_it_required(tmp_path: Path) -> None:
    test = "import fastnorm_cuda\n\n\ndef test_norm():\n    assert fastnorm_cuda\n"
    root = _tree(tmp_path, {"setup.py": FLAG_SETUP, "pkg/norm.py": FALLBACK, "tests/test_norm.py": test})
    assert _built(root) == {"kernels/norm"}


# the file tries the module once and hands out a class that loads it again in its constructor
DECIDED_ONCE = """\
import importlib


def fused_class():
    try:
        importlib.import_module("fastnorm_cuda")
        return FusedNorm
    except ImportError:
        return None


class FusedNorm:
    def __init__(self):
        self.ops = importlib.import_module("fastnorm_cuda")
"""


def test_a_file_that_tries_the_module_once_decides_for_its_functions_loads(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"setup.py": FLAG_SETUP, "pkg/fused.py": DECIDED_ONCE})
    assert _built(root) == {"kernels/norm"}
    # a constructor's load in a file that never tries it is a load the project needs
    untried = DECIDED_ONCE.replace("    try:\n        importlib", "    if True:\n        importlib")
    untried = untried.replace("    except ImportError:\n        return None\n", "")
    assert _built(_tree(tmp_path, {"pkg/fused.py": untried})) == frozenset()


def test_a_loader_that_hands_back_a_stand_in_is_a_fallback(tmp_path: Path) -> None:
    setup = FLAG_SETUP.replace('name="fastnorm_cuda"', 'name="pkg._C"')
    loader = 'from pkg.utils import optional_import\n\n_C, HAS_C = optional_import("pkg._C")\n'
    assert _built(_tree(tmp_path, {"setup.py": setup, "pkg/filter.py": loader})) == {"kernels/norm"}


def test_the_folder_above_them_is_an_add_on_where_every_subfolder_is_one(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"setup.py": FLAG_SETUP, "pkg/norm.py": FALLBACK, "kernels/shared.h": "#pragma once\n",
                            "kernels/norm/norm.cu": "", "pkg/__init__.py": ""})
    assert _built(root) == {"kernels", "kernels/norm"}
    # a sibling folder some other build compiles keeps the shared headers required
    (tmp_path / "kernels/attn").mkdir()
    assert _built(root) == {"kernels/norm"}
