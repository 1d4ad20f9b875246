"""Which modules and build units the main path reaches only behind an off-by-default command-line flag."""

from __future__ import annotations

from pathlib import Path

from migrate.optional_parts import flag_gated
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
