"""The fixture extensions build as torch builds them, against the real PyTorch headers (scripts/real_headers.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.port.apply import plan_port, write_port
from migrate.port.plan import PortOptions
from migrate.port.translate import Engine

from conftest import REPOS, require_tool, torch_extension_flags


def _ported(name: str, tmp_path: Path) -> Path:
    """fixtures/repos/NAME after `apply` (default strategy), written into a copy."""
    root = tmp_path / name
    shutil.copytree(REPOS / name, root)
    out = tmp_path / "ported"
    write_port(plan_port(root, Settings(max_file_size=1 << 20, targets=("gfx90a",)), PortOptions(Engine("builtin"))),
               out_dir=out)
    return out


@pytest.mark.slow
@pytest.mark.needs_tool("nvcc")
def test_extension_port_builds_with_nvcc_against_the_real_pytorch_headers(tmp_path: Path) -> None:
    """The port keeps the CUDA build: each unit, ROCm branches included, compiles as torch's BuildExtension compiles
    it, against the real PyTorch headers (a stand-in header once hid a missing <ATen/cuda/CUDAContext.h>). The
    sources before the port are these less the USE_ROCM branches. About 200 s of CPU: torch/extension.h is large."""
    nvcc = require_tool("nvcc")
    flags = torch_extension_flags("fastnorm_C")
    out = _ported("cuda-extension", tmp_path)
    units = ("csrc/rmsnorm.cu", "csrc/softmax.cu", "csrc/binding.cpp")

    def build(unit: str) -> tuple[str, int, list[str]]:
        done = subprocess.run([nvcc, *flags, "-arch=sm_80", "-c", unit, "-o", os.devnull], cwd=out,
                              capture_output=True, text=True)
        return unit, done.returncode, [line for line in done.stderr.splitlines() if "error" in line][:3]

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(build, units)) == [(unit, 0, []) for unit in units]
