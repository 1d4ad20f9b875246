"""`migrate verify`: translated units compile with the real hipcc; errors map back to the original lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings
from migrate.port.plan import PortOptions
from migrate.errors import InputError
from migrate.port.translate import Engine
from migrate.port.verify import _flags_from_compile_db, verify

from conftest import FIXTURES, require_tool

INPUTS = FIXTURES / "translate" / "input"
RUNTIME_ONLY = ("common.cuh", "kernels.cu", "runtime_api.cu", "lookalikes.cuh", "hip_ported.cpp")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The runtime-only translation fixtures as a small CUDA project (src/ and include/)."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "include").mkdir()
    for name in RUNTIME_ONLY:
        shutil.copy(INPUTS / name, root / ("include" if name.endswith(".cuh") else "src") / name)
    (root / "src" / "use_lookalikes.cu").write_text('#include <cuda_runtime.h>\n#include "lookalikes.cuh"\nint main() { return mylib::count(); }\n')
    return root


@pytest.mark.slow
def test_translated_fixtures_compile_for_gfx90a(project: Path) -> None:
    require_tool("hipcc")
    result = verify(project, "gfx90a", Settings(max_file_size=1 << 20), PortOptions(Engine("builtin")))
    assert [u.relpath for u in result.units] == [
        "src/hip_ported.cpp", "src/kernels.cu", "src/runtime_api.cu", "src/use_lookalikes.cu"]
    assert result.findings == () and result.failed == ()
    assert result.compiler.startswith("HIP ") and "clang " in result.compiler


@pytest.mark.slow
def test_compile_error_maps_to_the_original_line(project: Path) -> None:
    require_tool("hipcc")
    (project / "src" / "broken.cu").write_text(
        "#include <cuda.h>\n#include <cuda_runtime.h>\n\nvoid f(float *p) {\n  cudaMemset(p, 0, missing_size);\n}\n"
    )
    result = CliRunner().invoke(cli, ["verify", str(project), "--target", "gfx90a", "--engine", "builtin", "--strategy", "fork"])
    assert result.exit_code == 1, result.output
    assert "src/broken.cu:5:19: high: hipcc: use of undeclared identifier 'missing_size' [hipcc-error]" in result.stderr
    assert "gfx90a: 4/5 unit(s) compile with hipcc" in result.stdout
    options = PortOptions(Engine("builtin"), strategy="fork")
    found = verify(project, "gfx90a", Settings(max_file_size=1 << 20), options).findings
    assert [(f.path, f.line, f.evidence) for f in found] == [("src/broken.cu", 5, "cudaMemset(p, 0, missing_size);")]


@pytest.mark.slow
def test_error_after_the_inserted_runtime_include_maps_back(project: Path) -> None:
    """A .cu file without a CUDA include gets one more line (hip_runtime.h); errors still land on the original line."""
    require_tool("hipcc")
    (project / "src" / "bare.cu").write_text("// no include: nvcc adds the runtime\nvoid f(float *p) {\n  cudaMemset(p, 0, size);\n}\n")
    found = verify(project, "gfx90a", Settings(max_file_size=1 << 20), PortOptions(Engine("builtin"))).findings
    assert [(f.path, f.line, f.evidence) for f in found] == [("src/bare.cu", 3, "cudaMemset(p, 0, size);")]


@pytest.mark.slow
def test_warp_code_is_translated_for_the_compiler_rocm(project: Path) -> None:
    require_tool("hipcc")
    shutil.copy(INPUTS / "warp.cu", project / "src" / "warp.cu")
    result = verify(project, "gfx90a", Settings(max_file_size=1 << 20), PortOptions(Engine("builtin"), strategy="fork"))
    assert result.failed == ()


@pytest.mark.slow
def test_target_too_new_for_the_compiler(project: Path) -> None:
    require_tool("hipcc")
    with pytest.raises(InputError, match="target gfx942 is too new for the installed compiler"):
        verify(project, "gfx942", Settings(max_file_size=1 << 20), PortOptions(Engine("builtin")))


def test_without_hipcc_exit_2(project: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["verify", str(project), "--target", "gfx90a", "--hipcc", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"migrate: error: hipcc not found at {tmp_path / 'none'}; install ROCm (or Debian's hipcc package) to compile-check"
    )


def test_include_flags_come_from_compile_commands(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "build").mkdir(parents=True)
    entries = [{"directory": str(root / "build"), "file": "../src/a.cu",
                "command": "nvcc -I../include -isystem /usr/local/cuda/include -DUSE_FAST=1 -O3 -c ../src/a.cu"},
               {"directory": str(root), "file": "src/b.cpp", "arguments": ["g++", "-I", "third_party", "-std=c++17"]}]
    (root / "build" / "compile_commands.json").write_text(json.dumps(entries))
    tree = tmp_path / "copy"
    rocm = tmp_path.resolve() / "rocm" / "include"  # the toolchain's own, as toolchain_dirs finds it
    entries[0]["command"] = str(entries[0]["command"]).replace("/usr/local/cuda/include", str(rocm))
    (root / "build" / "compile_commands.json").write_text(json.dumps(entries))
    flags = _flags_from_compile_db(root, tree, (rocm,))
    assert flags == {
        "src/a.cu": [f"-I{tree / 'include'}", f"-isystem{rocm}", "-DUSE_FAST=1"],
        "src/b.cpp": [f"-I{tree / 'third_party'}", "-std=c++17"],
    }
    assert _flags_from_compile_db(root, tree)["src/a.cu"] == [f"-I{tree / 'include'}", "-DUSE_FAST=1"]


@pytest.mark.slow
def test_ported_makefile_project_builds_with_hipcc(tmp_path: Path) -> None:
    """The whole port end to end: sources translated and Makefile.rocm written, then built by make + hipcc."""
    import os
    import subprocess

    require_tool("hipcc")
    require_tool("make")
    from migrate.port.apply import plan_port, write_port

    (tmp_path / "kern.cu").write_text(
        "#include <cuda_runtime.h>\n__global__ void k(float *x) { x[threadIdx.x] = 1; }\n"
        "int main() { float *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaDeviceSynchronize(); cudaFree(d); return 0; }\n"
    )
    (tmp_path / "Makefile").write_text(
        "NVCC ?= nvcc\nNVCCFLAGS := -O2 --use_fast_math -gencode arch=compute_80,code=sm_80\n"
        "app: kern.cu\n\t$(NVCC) $(NVCCFLAGS) -o $@ $< -lcudart\n"
    )
    settings = Settings(max_file_size=1 << 20, targets=("gfx90a",))
    plan = plan_port(tmp_path, settings, PortOptions(Engine("builtin"), strategy="fork"))
    assert write_port(plan).written == ("Makefile.rocm", "kern.cu")
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    done = subprocess.run(["make", "-f", "Makefile.rocm"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "--offload-arch=gfx90a" in done.stdout and (tmp_path / "app").is_file()
