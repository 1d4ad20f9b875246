"""benchmarks/run_translated.py: programs found in a tree, translations kept, the build-only run without a GPU."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require_tool

sys.path.insert(0, str(ROOT / "benchmarks"))
import run_translated  # noqa: E402

PROGRAM = """#include <cstdio>
__global__ void twice(int *x) { x[threadIdx.x] *= 2; }
int main() {
  int h[32], *d;
  for (int i = 0; i < 32; ++i) h[i] = i;
  cudaMalloc(&d, sizeof(h));
  cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
  twice<<<1, 32>>>(d);
  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  printf("%s twice digest=%d\\n", h[31] == 62 ? "PASS" : "FAIL", h[31]);
  return h[31] == 62 ? 0 : 1;
}
"""


def _tree(root: Path) -> Path:
    (root / "Common").mkdir(parents=True)
    (root / "Common" / "helper.h").write_text("#pragma once\n#include <cuda_runtime.h>\n")
    (root / "samples" / "twice").mkdir(parents=True)
    (root / "samples" / "twice" / "twice.cu").write_text(PROGRAM)
    (root / "samples" / "lib").mkdir()
    (root / "samples" / "lib" / "kernels.cu").write_text("__global__ void k() {}\n")  # no main: not a program
    return root


def test_programs_of_a_tree(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "cuda-samples")
    found = run_translated._tree_programs(tree)
    assert [(p.name, p.sources, p.includes) for p in found] == [
        ("cuda-samples/samples__twice", ("twice.cu",), (tree / "Common",))]


def test_hip_release_from_the_version_file(tmp_path: Path) -> None:
    (tmp_path / "VERSION").write_text("#HIP_VERSION_MAJOR\n6\n#HIP_VERSION_MINOR\n0\n#HIP_VERSION_PATCH\n2\n")
    assert run_translated._release(tmp_path / "VERSION") == "6.0"


def test_agreement_prefers_the_self_check_line() -> None:
    ran = run_translated.Outcome(built=True, ran=True, exit_code=0, verdict="PASS x digest=1", stdout="t=1.2\n")
    same = run_translated.Outcome(built=True, ran=True, exit_code=0, verdict="PASS x digest=1", stdout="t=3.4\n")
    other = run_translated.Outcome(built=True, ran=True, exit_code=0, verdict="PASS x digest=2")
    unchecked = run_translated.Outcome(built=True, ran=True, exit_code=0, stdout="42\n")
    row = run_translated.Row("p", ran, {"a": same, "b": other, "c": run_translated.Outcome(built=True)})
    assert [row.agrees(e) for e in "abc"] == [True, False, None]
    assert run_translated.Row("q", unchecked, {"a": unchecked}).agrees("a") is True


@pytest.mark.slow
@pytest.mark.needs_tool("nvcc")
def test_builds_without_a_gpu_and_says_so(tmp_path: Path) -> None:
    """nvcc builds the original; HIP headers that do not build are one cause, said once; nothing runs."""
    require_tool("nvcc")
    if shutil.which("nvidia-smi"):
        pytest.skip("a GPU machine runs the programs: this test is about the build-only path")
    tree = _tree(tmp_path / "cuda-samples")
    (tmp_path / "hip" / "include" / "hip").mkdir(parents=True)  # a HIP checkout without its headers
    work, report = tmp_path / "work", tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_translated.py"), "--no-programs", "--tree", str(tree),
         "--hip-include", str(tmp_path / "hip"), "--work", str(work), "--json", str(report), "--jobs", "1",
         "--hipify-perl", str(tmp_path / "none")],
        capture_output=True, text=True, env={"PATH": str(Path(require_tool("nvcc")).parent) + ":/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "GPU: none (nvidia-smi lists none): built only, nothing run"
    assert lines[1].startswith("HIP headers: release 6.0; do NOT build with this nvcc: ") and "error" in lines[1]
    assert lines[3] == ("cuda-samples/samples__twice | built | "
                        "build failed (not built: the HIP headers do not build with this nvcc)")
    assert lines[4:] == ["original: built 1/1", "builtin: built 0/1"]
    translated = (work / "translated" / "builtin" / "cuda-samples__samples__twice" / "twice.cu").read_text()
    assert "hipMalloc(&d, sizeof(h));" in translated and translated.startswith("#include <hip/hip_runtime.h>\n")
    helper = work / "translated-include" / "builtin" / "cuda-samples__Common" / "helper.h"
    assert helper.read_text() == "#pragma once\n#include <hip/hip_runtime.h>\n"
    result = json.loads(report.read_text())
    assert (result["gpu"], result["engines"], result["programs"][0]["original"]["built"]) == ([], ["builtin"], True)
