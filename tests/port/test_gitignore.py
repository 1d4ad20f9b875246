"""A PyTorch-extension port ignores what a ROCm torch's hipify writes beside the CUDA sources (k.cu -> k.hip,
k.cuh -> k_hip.cuh, cuda/ -> hip/), as the ROCm forks of apex, xformers and mamba do, and never hides a file the
repository has."""

from __future__ import annotations

from pathlib import Path

from migrate.config import Settings
from migrate.port.apply import plan_port
from migrate.port.gitignore import HEADING
from migrate.port.plan import PortOptions
from migrate.port.translate import Engine

BUILTIN = Engine("builtin")
SETUP = 'from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension("m", ["csrc/k.cu"])\n'
KERNEL = "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n"


def _project(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in {"setup.py": SETUP, "csrc/k.cu": KERNEL, **files}.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text)
    return root


def _gitignore(root: Path) -> tuple[bytes | None, str] | None:
    plan = plan_port(root, Settings(max_file_size=1 << 20), PortOptions(BUILTIN))
    change = next((c for c in plan.changes if c.relpath == ".gitignore"), None)
    return None if change is None else (change.old, change.new.decode())


def test_a_new_gitignore_names_the_outputs_and_the_renamed_directories(tmp_path: Path) -> None:
    root = _project(tmp_path, {"csrc/cuda/ops.cpp": "#include <cuda_runtime.h>\n", "csrc/cuda_utils.h": "#pragma once\n",
                               "csrc/norm_cuda.cuh": "#pragma once\n"})
    assert _gitignore(root) == (None, f"{HEADING}\n*.hip\n*_hip.*\n/csrc/hip/\n/csrc/hip_utils.h\n")


def test_an_existing_gitignore_keeps_its_lines_and_gets_only_what_it_lacks(tmp_path: Path) -> None:
    root = _project(tmp_path, {".gitignore": "build/\n*.hip"})
    assert _gitignore(root) == (b"build/\n*.hip", f"build/\n*.hip\n\n{HEADING}\n*_hip.*\n")
    (root / ".gitignore").write_text("build/\n*.hip\n*_hip.*\n")
    assert _gitignore(root) is None


def test_a_pattern_that_would_hide_the_repositorys_own_hip_sources_is_left_out(tmp_path: Path) -> None:
    root = _project(tmp_path, {"rocm/k.hip": KERNEL, "csrc/reduce_hip.h": "#pragma once\n"})
    assert _gitignore(root) is None
    root = _project(tmp_path / "two", {"rocm/k.hip": KERNEL})
    assert _gitignore(root) == (None, f"{HEADING}\n*_hip.*\n")


def test_a_gitignore_that_is_not_a_regular_file_is_left_alone(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("x\n")
    root = _project(tmp_path / "repo", {})
    (root / ".gitignore").symlink_to(outside)
    assert _gitignore(root) is None
    assert outside.read_text() == "x\n"


def test_builds_other_than_a_torch_extension_get_no_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "make"
    root.mkdir()
    (root / "Makefile").write_text("k: k.cu\n\tnvcc -o k k.cu\n")
    (root / "k.cu").write_text(KERNEL)
    assert _gitignore(root) is None
