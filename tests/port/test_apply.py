"""`migrate apply`: the dry-run diff, safe writes on a branch or into a copy, and failure half-way."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.port import apply as apply_module
from migrate import writer
from migrate.port.apply import ApplyError, FileChange, plan_port, render_diff, write_changes
from migrate.cli import cli
from migrate.config import Settings
from migrate.port.plan import PortOptions
from migrate.port.translate import Engine

from conftest import FIXTURES, GIT_ENV, git, init_repo, require_tool

INPUTS = FIXTURES / "translate" / "input"
GOLDEN = FIXTURES / "translate" / "expected"
CRLF = b"#include <cuda_runtime.h>\r\nvoid f(float **p) {\r\n  cudaMalloc(p, 4);\r\n}\r\n"
LATIN1 = "// Größe\nvoid g() { cudaDeviceSynchronize(); }".encode("latin-1")  # and no final newline
# A .cu file gets the HIP runtime header nvcc includes implicitly, on a line of its own.
LATIN1_PORTED = "// Größe\n#include <hip/hip_runtime.h>\nvoid g() { hipDeviceSynchronize(); }".encode("latin-1")


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small CUDA project in a committed git repo: fixture sources, CRLF, latin-1, a script, a binary."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    for name in ("kernels.cu", "runtime_api.cu", "hip_ported.cpp"):
        shutil.copy(INPUTS / name, root / "src" / name)
    (root / "src" / "crlf.cu").write_bytes(CRLF)
    (root / "src" / "latin1.cu").write_bytes(LATIN1)
    (root / "src" / "tool.cpp").write_text("int main() { return cudaDeviceReset(); }\n")
    (root / "src" / "tool.cpp").chmod(0o755)
    (root / "src" / "blob.cu").write_bytes(b"\x00\x01\x02cudaMalloc")
    (root / "README.md").write_text("Call cudaMalloc first.\n")
    return init_repo(root)


def _plan(root: Path) -> apply_module.Plan:
    return plan_port(root, Settings(max_file_size=1 << 20),
                     PortOptions(Engine("builtin"), side_files=False, strategy="fork"))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


EXPECTED_CHANGED = ["src/crlf.cu", "src/kernels.cu", "src/latin1.cu", "src/runtime_api.cu", "src/tool.cpp"]


def test_plan_changes_sources_only_and_skips_binary(repo: Path) -> None:
    plan = _plan(repo)
    assert [c.relpath for c in plan.changes] == EXPECTED_CHANGED
    assert [(s.path, s.reason) for s in plan.skipped] == [("src/blob.cu", "binary file")]


def test_dry_run_diff_applies_with_git_and_changes_nothing(repo: Path, tmp_path: Path) -> None:
    before = _snapshot(repo)
    result = CliRunner().invoke(cli, ["apply", str(repo), "--dry-run", "--sources-only", "--engine", "builtin", "--strategy", "fork"])
    assert result.exit_code == 0, result.output
    assert _snapshot(repo) == before and git(repo, "status", "--porcelain") == ""
    assert "\x1b[" not in result.stdout
    fresh = tmp_path / "fresh"
    shutil.copytree(repo, fresh)
    patch = tmp_path / "port.diff"
    patch.write_bytes(result.stdout_bytes)
    git(fresh, "apply", "--check", str(patch))
    git(fresh, "apply", str(patch))
    assert (fresh / "src" / "kernels.cu").read_bytes() == (GOLDEN / "kernels.cu").read_bytes()
    assert (fresh / "src" / "crlf.cu").read_bytes() == CRLF.replace(b"cuda_runtime.h", b"hip/hip_runtime.h").replace(
        b"cudaMalloc", b"hipMalloc")
    assert (fresh / "src" / "latin1.cu").read_bytes() == LATIN1_PORTED


def test_diff_is_colored_only_when_asked(repo: Path) -> None:
    plan = _plan(repo)
    assert b"\x1b[32m+" in render_diff(plan, color=True)
    assert b"\x1b[" not in render_diff(plan)


def test_apply_commits_on_a_new_branch(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork"])
    assert result.exit_code == 0, result.output
    assert "wrote 5 file(s) on branch rocm-port" in result.stdout
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "rocm-port"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-list", "--count", "main..rocm-port").strip() == "1"
    assert git(repo, "diff", "--name-only", "main", "rocm-port").split() == EXPECTED_CHANGED
    assert (repo / "src" / "tool.cpp").stat().st_mode & 0o777 == 0o755
    assert (repo / "src" / "latin1.cu").read_bytes() == LATIN1_PORTED
    assert not list(repo.rglob("*.migrate-tmp"))


def test_branch_name_and_existing_branch(repo: Path) -> None:
    git(repo, "branch", "rocm-port")
    result = CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork"])
    assert result.exit_code == 2
    assert "git could not create branch rocm-port" in result.stderr
    result = CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork", "--branch", "hip"])
    assert result.exit_code == 0, result.output
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "hip"


def test_dirty_tree_is_refused(repo: Path) -> None:
    (repo / "src" / "kernels.cu").write_text("// local edit\n")
    before = _snapshot(repo)
    result = CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "migrate: error: the work tree has 1 uncommitted change(s); commit or stash them, or pass --allow-dirty"
    )
    assert _snapshot(repo) == before
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    allowed = CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork", "--allow-dirty"])
    assert allowed.exit_code == 0, allowed.output


def test_out_dir_leaves_the_repo_untouched(repo: Path, tmp_path: Path) -> None:
    before = _snapshot(repo)
    out = tmp_path / "ported"
    result = CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork", "--out-dir", str(out)])
    assert result.exit_code == 0, result.output
    assert _snapshot(repo) == before and git(repo, "branch", "--list").split() == ["*", "main"]
    assert (out / "src" / "kernels.cu").read_bytes() == (GOLDEN / "kernels.cu").read_bytes()
    assert (out / "README.md").read_text() == "Call cudaMalloc first.\n"
    assert (out / "src" / "blob.cu").read_bytes() == (repo / "src" / "blob.cu").read_bytes()
    assert not (out / ".git").exists()


def test_out_dir_inside_repo_is_refused(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork", "--out-dir",
                                      str(repo / "ported")])
    assert result.exit_code == 2 and "is inside the repository" in result.stderr


def test_failure_half_way_leaves_each_file_old_or_new(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _plan(repo)
    before = _snapshot(repo)
    calls = []

    def flaky(tmp: Path, target: Path) -> None:
        calls.append(target)
        if len(calls) == 3:
            raise OSError(28, "No space left on device", str(target))
        os.replace(tmp, target)

    monkeypatch.setattr(writer, "replace", flaky)
    with pytest.raises(ApplyError) as caught:
        write_changes(repo, plan.changes)
    message = str(caught.value)
    assert message.startswith("writing src/latin1.cu failed (")
    assert "written: src/crlf.cu, src/kernels.cu; left unchanged: src/latin1.cu, src/runtime_api.cu, src/tool.cpp" in message
    new = {c.relpath: c.new for c in plan.changes}
    after = _snapshot(repo)
    assert [rel for rel in new if after[rel] == new[rel]] == ["src/crlf.cu", "src/kernels.cu"]
    assert all(after[rel] == before[rel] for rel in ("src/latin1.cu", "src/runtime_api.cu", "src/tool.cpp"))
    assert not list(repo.rglob("*.migrate-tmp"))


def test_failure_while_staging_writes_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _plan(repo)
    before = _snapshot(repo)
    real_stage = writer.stage

    def failing_stage(target: Path, data: bytes, mode: int | None = None, **kwargs: bool) -> Path:
        if target.name == "runtime_api.cu":
            raise OSError(13, "Permission denied", str(target))
        return real_stage(target, data, mode, **kwargs)

    monkeypatch.setattr(writer, "stage", failing_stage)
    with pytest.raises(ApplyError, match="^nothing was written: .*runtime_api.cu: Permission denied"):
        write_changes(repo, plan.changes)
    assert _snapshot(repo) == before
    assert not list(repo.rglob("*.migrate-tmp"))


def test_symlink_out_of_the_repo_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.cu"
    outside.write_text("void f() { cudaDeviceSynchronize(); }\n")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "link.cu").symlink_to(outside)
    with pytest.raises(ApplyError, match="link.cu is a symlink; not followed"):
        write_changes(root, [FileChange("link.cu", b"", b"x")])
    (root / "sub").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ApplyError, match="resolves outside"):
        write_changes(root, [FileChange("sub/new.cu", None, b"x")])
    assert outside.read_text() == "void f() { cudaDeviceSynchronize(); }\n"
    init_repo(root)
    plan = _plan(root)
    assert plan.changes == () and ("link.cu", "symlink points outside the repository") in [
        (s.path, s.reason) for s in plan.skipped]


def test_outside_git_writes_in_place(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("void f() { cudaDeviceSynchronize(); }\n")
    result = CliRunner().invoke(cli, ["apply", str(tmp_path), "--sources-only", "--engine", "builtin", "--strategy", "fork"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "k.cu").read_text() == "#include <hip/hip_runtime.h>\nvoid f() { hipDeviceSynchronize(); }\n"


def test_second_apply_changes_nothing(repo: Path) -> None:
    assert CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork"]).exit_code == 0
    result = CliRunner().invoke(cli, ["apply", str(repo), "--sources-only", "--engine", "builtin", "--strategy", "fork", "--dry-run"])
    assert result.exit_code == 0 and result.stdout == ""
    assert "0 file(s) would change" in result.stderr


def test_git_apply_check_on_real_fixture_repo(make_repo, tmp_path: Path) -> None:
    repo = make_repo("cmake-hpc")
    result = CliRunner().invoke(cli, ["apply", str(repo), "--dry-run", "--sources-only", "--engine", "builtin", "--strategy", "fork"])
    assert result.exit_code == 0, result.output
    patch = tmp_path / "p.diff"
    patch.write_bytes(result.stdout_bytes)
    subprocess.run(["git", "apply", "--check", str(patch)], cwd=repo, check=True)
    assert b"+#include <hip/hip_runtime.h>" in result.stdout_bytes


# -- beyond sources ------------------------------------------------------------------------------------------------

from migrate.model import Finding, Severity  # noqa: E402
from migrate.port.sidefiles import compose_override, python_fixes, rocm_dockerfile, rocm_requirements, side_changes  # noqa: E402

PY = '''import subprocess
import torch

def backend():
    if torch.version.cuda and torch.cuda.is_available():
        return "gpu"
    assert torch.version.cuda is not None, "needs a GPU build"
    label = "cuda" if not torch.version.cuda else "gpu"
    text = "torch.version.cuda"
    print(f"built with {torch.version.cuda}")  # only shown: the checks above still accept HIP
    return subprocess.check_output(["nvidia-smi", "-L"]), label, text


def cuda_major():
    return int(torch.version.cuda.split(".")[0])  # a version, not a condition: left alone
'''


def test_python_safe_fixes_accept_hip_and_unsafe_wait_for_the_flag() -> None:
    fixes = python_fixes(PY)
    assert [(f.line, f.safe) for f in fixes] == [(5, True), (7, True), (8, True), (11, False)]
    from migrate.port.sidefiles import _apply_fixes

    safe = _apply_fixes(PY, [f for f in fixes if f.safe])
    assert "    if (torch.version.cuda or torch.version.hip) and torch.cuda.is_available():" in safe
    assert "    assert (torch.version.cuda or torch.version.hip) is not None," in safe
    assert 'label = "cuda" if not (torch.version.cuda or torch.version.hip) else "gpu"' in safe
    assert 'int(torch.version.cuda.split(".")[0])' in safe and '"nvidia-smi"' in safe
    assert python_fixes(safe) == [f for f in fixes if not f.safe]  # idempotent: only the unsafe one is left
    assert '["amd-smi", "-L"]' in _apply_fixes(PY, fixes)


VERSION_READS = '''import torch
from packaging.version import Version


def toolkit_version(nvcc_version):
    if nvcc_version is not None:
        return Version(nvcc_version)
    if torch.version.cuda is None:
        raise RuntimeError("no nvcc and a torch without CUDA")
    return Version(torch.version.cuda)


class SparseOp:
    def is_compatible(self):
        if torch.version.cuda is None:
            return False
        major, minor = torch.version.cuda.split(".")[:2]
        return int(major) >= 11


def has_gpu_build():
    return torch.cuda.is_available() if torch.version.cuda is not None else False
'''


def test_a_check_guarding_a_version_read_is_left_alone() -> None:
    """A scope that reads torch.version.cuda as a version keeps its None test (flashinfer's get_cuda_version,
    DeepSpeed's sparse-attention is_compatible): on ROCm it would only move the error to None.split."""
    from migrate.port.sidefiles import _apply_fixes

    fixes = python_fixes(VERSION_READS)
    assert [(f.line, f.safe) for f in fixes] == [(22, True)]
    assert _apply_fixes(VERSION_READS, fixes) == VERSION_READS.replace(
        "if torch.version.cuda is not None else", "if (torch.version.cuda or torch.version.hip) is not None else")


def test_dual_path_python_is_left_alone() -> None:
    text = "import torch\nif torch.version.hip:\n    x = 1\nelif torch.version.cuda:\n    x = 2\n"
    assert python_fixes(text) == []


def test_apply_python_fixes_safe_by_default(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(PY)
    init_repo(tmp_path)
    plan = plan_port(tmp_path, Settings(max_file_size=1 << 20), PortOptions(Engine("builtin")))
    [change] = plan.changes
    assert b"(torch.version.cuda or torch.version.hip) and" in change.new and b'"nvidia-smi"' in change.new
    assert [(f.rule, f.line) for f in plan.findings if f.path == "app.py" and f.rule.startswith("fix-")] == [
        ("fix-nvidia-smi", 11)]
    unsafe = plan_port(tmp_path, Settings(max_file_size=1 << 20), PortOptions(Engine("builtin"), unsafe_fixes=True))
    assert b'["amd-smi", "-L"]' in unsafe.changes[0].new


def test_requirements_get_the_rocm_index_that_serves_the_pinned_torch() -> None:
    text = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\nnumpy\n"
    assert rocm_requirements(text) == (
        "--index-url https://download.pytorch.org/whl/rocm6.0\ntorch==2.3.1\nnumpy\n")
    newer = "--index-url https://download.pytorch.org/whl/cu128\ntorch==2.8.0+cu128\n"
    assert rocm_requirements(newer) == "--index-url https://download.pytorch.org/whl/rocm6.4\ntorch==2.8.0\n"
    unknown = rocm_requirements("--index-url https://download.pytorch.org/whl/cu124\ntorch==2.4.1+cu124\n")
    assert unknown is not None and unknown.startswith("# torch 2.4: no ROCm wheel index known")
    assert rocm_requirements("numpy\ntorch>=2.3\n") is None


def test_cuda_only_requirement_is_commented_with_its_substitute(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy\npynvml>=11.5\n")
    finding = Finding("requirements.txt", 2, 1, "dep", "cuda-only-dependency", Severity.HIGH, 2, "m", "pynvml>=11.5",
                      substitutions=("pynvml",))
    from migrate.discover import discover

    sources = [s for s in discover(tmp_path, max_file_size=1 << 20) if not isinstance(s, apply_module.Skipped)]
    changes, _ = side_changes(tmp_path, sources, Settings(), PortOptions(Engine("builtin")), scan_findings=[finding])
    [change] = changes
    assert change.relpath == "requirements-rocm.txt" and change.old is None
    text = change.new.decode()
    assert "numpy\n# CUDA-only; on ROCm use: " in text and text.endswith("\n# pynvml>=11.5\n")


def test_dockerfile_moves_to_a_rocm_base_image() -> None:
    out = rocm_dockerfile("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build\nRUN make\n")
    assert out == "FROM rocm/dev-ubuntu-24.04:7.2.4-complete AS build\nRUN make\n"
    torch_image = rocm_dockerfile("FROM pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime\n")
    assert torch_image is not None and torch_image.startswith("FROM rocm/pytorch:")
    assert rocm_dockerfile("FROM python:3.12-slim\n") is None


def test_compose_override_adds_amd_devices() -> None:
    compose = (
        "services:\n  train:\n    image: t\n    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n  db:\n    image: pg\n"
    )
    out = compose_override(compose)
    assert out is not None
    import yaml

    assert yaml.safe_load(out) == {"services": {"train": {
        "devices": ["/dev/kfd", "/dev/dri"], "group_add": ["video", "render"], "security_opt": ["seccomp=unconfined"]}}}
    assert compose_override("services:\n  db:\n    image: pg\n") is None


def test_apply_writes_side_files_and_keeps_the_nvidia_path(tmp_path: Path) -> None:
    root = tmp_path / "svc"
    root.mkdir()
    (root / "requirements.txt").write_text("--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\n")
    (root / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nCMD [\"python\"]\n")
    (root / "docker-compose.yml").write_text("services:\n  app:\n    build: .\n    runtime: nvidia\n")
    init_repo(root)
    result = CliRunner().invoke(cli, ["apply", str(root), "--dry-run", "--engine", "builtin"])
    assert result.exit_code == 0, result.output
    patch = tmp_path / "p.diff"
    patch.write_bytes(result.stdout_bytes)
    git(root, "apply", "--check", str(patch))
    assert CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin"]).exit_code == 0
    assert git(root, "diff", "--name-only", "main", "rocm-port").split() == [
        "Dockerfile.rocm", "docker-compose.rocm.yml", "requirements-rocm.txt"]
    assert (root / "requirements.txt").read_text().startswith("--extra-index-url https://download.pytorch.org/whl/cu121")
    again = CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin", "--dry-run"])
    assert again.stdout == ""


def test_in_place_edits_the_originals(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.3.1+cu121\n")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    plan = plan_port(tmp_path, Settings(max_file_size=1 << 20), PortOptions(Engine("builtin"), in_place=True))
    assert [(c.relpath, c.new) for c in plan.changes] == [
        ("Dockerfile", b"FROM rocm/dev-ubuntu-24.04:7.2.4-complete\n"), ("requirements.txt", b"--index-url https://download.pytorch.org/whl/rocm6.0\ntorch==2.3.1\n")]


CMAKE = """cmake_minimum_required(VERSION 3.24)
project(heat LANGUAGES CXX CUDA)

set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_ARCHITECTURES 80 90)
find_package(CUDAToolkit REQUIRED)

add_executable(heat src/main.cpp src/stencil.cu)
target_link_libraries(heat PRIVATE CUDA::cudart CUDA::cublas CUDA::nvToolsExt)
"""


def test_cmake_gets_hip_behind_a_guard_and_keeps_cuda() -> None:
    from migrate.port.sidefiles import rocm_cmake

    out = rocm_cmake(CMAKE, ["gfx90a", "gfx942"])
    assert out is not None
    assert out.startswith("cmake_minimum_required(VERSION 3.24)\nproject(heat LANGUAGES CXX)\n# ROCm/HIP port")
    assert '    set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")\n' in out and "  set(CMAKE_HIP_STANDARD 17)\n" in out
    assert "else()\n  enable_language(CUDA)\nendif()\n\nset(CMAKE_CUDA_STANDARD 17)" in out
    assert ("if(USE_HIP)\n  find_package(hip REQUIRED)\n  find_package(hipblas REQUIRED)\nelse()\n"
            "  find_package(CUDAToolkit REQUIRED)\nendif()\n") in out
    assert ("$<IF:$<BOOL:${USE_HIP}>,hip::host,CUDA::cudart> $<IF:$<BOOL:${USE_HIP}>,roc::hipblas,CUDA::cublas> "
            "CUDA::nvToolsExt)") in out
    assert out.endswith("\nif(USE_HIP)\n  set_source_files_properties(src/stencil.cu PROPERTIES LANGUAGE HIP)\nendif()\n")
    assert rocm_cmake(out, ["gfx90a"]) is None
    assert rocm_cmake("project(x LANGUAGES CXX)\n", ["gfx90a"]) is None


MAKEFILE = """CUDA_HOME ?= /usr/local/cuda
NVCC := $(CUDA_HOME)/bin/nvcc
NVCCFLAGS := -O3 --use_fast_math -gencode arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC
LDFLAGS := -L$(CUDA_HOME)/lib64 -lcudart -lcublas
# nvcc -arch=sm_80 in a comment stays
%.o: %.cu
\tnvcc $(NVCCFLAGS) -arch sm_80 -c $< -o $@
"""


def test_makefile_gets_a_hipcc_variant() -> None:
    from migrate.port.sidefiles import rocm_makefile

    out = rocm_makefile(MAKEFILE, ["gfx90a", "gfx942"])
    assert out == """CUDA_HOME ?= /opt/rocm
NVCC := hipcc
NVCCFLAGS := -O3 -ffast-math --offload-arch=gfx90a --offload-arch=gfx942 -fPIC
LDFLAGS := -L$(CUDA_HOME)/lib -lamdhip64 -lhipblas
# nvcc -arch=sm_80 in a comment stays
%.o: %.cu
\thipcc $(NVCCFLAGS) --offload-arch=gfx90a --offload-arch=gfx942 -c $< -o $@
"""
    assert rocm_makefile(out, ["gfx90a", "gfx942"]) == out
    assert rocm_makefile("all:\n\tg++ -O2 main.cpp\n", ["gfx90a"]) is None


# Options nvcc takes and hipcc stops on, or accepts and ignores (rules/data/hipcc_flags.yaml says which).
NVCC_ONLY = ("-O2 -deviceemu -Xptxas -v --ptxas-options=-v -maxrregcount=32 --maxrregcount 32 -Xfatbin -compress-all "
             "-Xcudafe --diag_suppress=177 -ccbin g++ --default-stream per-thread -res-usage --expt-extended-lambda")


@pytest.mark.slow
def test_makefile_variant_drops_options_hipcc_rejects_and_hipcc_compiles(tmp_path: Path) -> None:
    from migrate.port.sidefiles import rocm_makefile

    out = rocm_makefile(f"NVCC := nvcc\nNVCCFLAGS := {NVCC_ONLY}\n", ["gfx90a"])
    # dropped, or mapped to clang's option of the same effect (-res-usage: the kernel resource remarks)
    assert out == "NVCC := hipcc\nNVCCFLAGS := -O2 -Rpass-analysis=kernel-resource-usage\n"
    hipcc = require_tool("hipcc")
    source = tmp_path / "k.hip"
    source.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n")
    compile_with = [hipcc, "--offload-arch=gfx90a", "-fsyntax-only", str(source)]
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    ported = out.splitlines()[1].partition(":=")[2].split()
    assert subprocess.run([*compile_with, *ported], env=env, capture_output=True).returncode == 0
    assert subprocess.run([*compile_with, *NVCC_ONLY.split()], env=env, capture_output=True).returncode != 0


def test_apply_writes_makefile_rocm_beside_the_original(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(MAKEFILE)
    plan = plan_port(tmp_path, Settings(max_file_size=1 << 20, targets=("gfx90a",)), PortOptions(Engine("builtin")))
    [change] = plan.changes
    assert change.relpath == "Makefile.rocm" and change.old is None
    assert change.new.startswith(b"# hipcc variant of Makefile, written by `migrate apply`: make -f Makefile.rocm\n")
    assert b"--offload-arch=gfx90a -fPIC" in change.new
