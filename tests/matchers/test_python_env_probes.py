"""python-torch-collect-env-nvidia-probe: PyTorch's NVIDIA environment probes read as facts, and their look-alikes."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.scan import scan
from test_python_rules import OTHER_RULES, findings

RULE = "python-torch-collect-env-nvidia-probe"


def _ours(tmp_path: Path, source: str) -> list[tuple[str, int, str]]:
    return [f for f in findings(tmp_path, source) if f[0] == RULE]


def test_driver_version_parsed_at_import_time(tmp_path: Path) -> None:
    source = """
        from packaging.version import parse
        from torch.utils import collect_env
        DRIVER = parse(collect_env.get_nvidia_driver_version(collect_env.run))
    """
    assert _ours(tmp_path, source) == [(RULE, 3, "low")]


def test_each_probe_by_full_name_and_by_imported_name(tmp_path: Path) -> None:
    source = """
        import torch
        from torch.utils.collect_env import get_cudnn_version as cudnn, run
        def gate():
            a = torch.utils.collect_env.get_running_cuda_version(run)
            b = cudnn(run)
            return a, b
    """
    assert _ours(tmp_path, source) == [(RULE, 4, "low"), (RULE, 5, "low")]


def test_after_a_rocm_return_it_is_guarded(tmp_path: Path) -> None:
    source = """
        import torch
        from torch.utils.collect_env import get_nvidia_driver_version, run
        def driver_major():
            if torch.version.hip:
                return None
            return int(get_nvidia_driver_version(run).split(".")[0])
    """
    assert _ours(tmp_path, source) == []
    result = scan(tmp_path, OTHER_RULES)
    assert [(f.rule, f.line, f.status) for f in result.guarded_findings] == [(RULE, 6, "guarded")]


@pytest.mark.parametrize("source", [
    # an environment report only prints the answer
    "from torch.utils.collect_env import get_nvidia_driver_version, run\n"
    "def collect_env_info():\n    return [('driver', get_nvidia_driver_version(run))]\n",
    # the project's own probe of the same name is python-nvidia-smi's, not PyTorch's
    "def get_nvidia_driver_version():\n    return None\nv = get_nvidia_driver_version()\n",
    # a method of the same name on another object
    "class M:\n    def get_cudnn_version(self):\n        return 9\nv = M().get_cudnn_version()\n",
    # the words in a string and a comment
    "# torch.utils.collect_env.get_nvidia_driver_version(run)\nNOTE = 'get_running_cuda_version(run)'\n",
])
def test_quiet(tmp_path: Path, source: str) -> None:
    assert _ours(tmp_path, source) == []
