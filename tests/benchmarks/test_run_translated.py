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
    (root / "samples" / "split").mkdir()  # cuda-samples often keep main() in a .cpp beside the kernels
    (root / "samples" / "split" / "kernels.cu").write_text("__global__ void k() {}\nvoid launch() { k<<<1, 1>>>(); }\n")
    (root / "samples" / "split" / "main.cpp").write_text("void launch();\nint main() { launch(); return 0; }\n")
    (root / "samples" / "host").mkdir()  # no .cu: not a program
    (root / "samples" / "host" / "main.cpp").write_text("int main() { return 0; }\n")
    return root


def test_programs_of_a_tree(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "cuda-samples")
    found = run_translated._tree_programs(tree)
    assert [(p.name, p.sources, p.includes) for p in found] == [
        ("cuda-samples/samples__split", ("kernels.cu", "main.cpp"), (tree / "Common",)),
        ("cuda-samples/samples__twice", ("twice.cu",), (tree / "Common",))]


def test_hip_release_from_the_version_file(tmp_path: Path) -> None:
    (tmp_path / "VERSION").write_text("#HIP_VERSION_MAJOR\n6\n#HIP_VERSION_MINOR\n0\n#HIP_VERSION_PATCH\n2\n")
    assert run_translated._release(tmp_path / "VERSION") == "6.0"


def test_hip_release_of_an_installed_tree(tmp_path: Path) -> None:
    """An include directory with its own hip/hip_version.h: its release, and nothing written to shadow it."""
    (tmp_path / "rocm" / "include" / "hip").mkdir(parents=True)
    (tmp_path / "rocm" / "include" / "hip" / "hip_version.h").write_text(
        "#pragma once\n#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 3\n#define HIP_VERSION_PATCH 0\n")
    hip = run_translated._hip_includes([tmp_path / "rocm"], tmp_path / "work")
    assert hip == run_translated.HipHeaders(("-D__HIP_PLATFORM_NVIDIA__", "-include", "hip/driver_types.h",
                                             f"-I{(tmp_path / 'rocm' / 'include').resolve()}"), "6.3")
    assert not (tmp_path / "work").exists()


def test_hip_release_of_checkouts_is_written(tmp_path: Path) -> None:
    (tmp_path / "HIP" / "include" / "hip").mkdir(parents=True)
    (tmp_path / "HIP" / "VERSION").write_text("#HIP_VERSION_MAJOR\n6\n#HIP_VERSION_MINOR\n3\n#HIP_VERSION_PATCH\n0\n")
    hip = run_translated._hip_includes([tmp_path / "HIP"], tmp_path / "work")
    generated = (tmp_path / "work" / "hip-version").resolve()
    assert hip.flags[3] == f"-I{generated}" and hip.release == "6.3"
    assert "#define HIP_VERSION_MINOR 3\n" in (generated / "hip" / "hip_version.h").read_text()


def test_self_check_lines_of_both_styles() -> None:
    """This project's `PASS name digest=` line, cuda-samples' `Result = PASS` and `Test passed`; FAIL wins."""
    sample = "GPU Device 0\nTime= 0.031 msec\nResult = PASS\n\nNOTE: results not meaningful\n"
    assert run_translated._verdict(sample) == "Result = PASS"
    assert run_translated._verdict("PASS warp digest=17\n") == "PASS warp digest=17"
    assert run_translated._verdict("SinglePass reduction\n1.5 GB/s\n") == ""
    both = run_translated._verdict("basic PASSED\nTest failed!\n")
    assert (both, run_translated._check(both)) == ("basic PASSED\nTest failed!", "FAIL")
    assert [run_translated._check(v) for v in ("Test passed", "")] == ["PASS", ""]


def test_agreement_prefers_the_self_check_line() -> None:
    ran = run_translated.Outcome(built=True, ran=True, exit_code=0, verdict="PASS x digest=1", stdout="t=1.2\n")
    same = run_translated.Outcome(built=True, ran=True, exit_code=0, verdict="PASS x digest=1", stdout="t=3.4\n")
    other = run_translated.Outcome(built=True, ran=True, exit_code=0, verdict="PASS x digest=2")
    unchecked = run_translated.Outcome(built=True, ran=True, exit_code=0, stdout="42\n")
    row = run_translated.Row("p", ran, {"a": same, "b": other, "c": run_translated.Outcome(built=True)})
    assert [row.agrees(e) for e in "abc"] == [True, False, None]
    assert run_translated.Row("q", unchecked, {"a": unchecked}).agrees("a") is True


def test_runs_one_after_the_other_in_the_program_directory(tmp_path: Path) -> None:
    """Each build that exists runs to its end before the next starts; a translation that did not build is not run."""
    log, bin_dir, cwd = tmp_path / "log", tmp_path / "bin", tmp_path / "program"
    bin_dir.mkdir()
    cwd.mkdir()
    for name in ("original", "builtin"):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\necho start {name} >> {log}\nsleep 0.2\necho end {name} >> {log}\n'
                          f'echo "$(basename "$PWD") Test passed"\n')
        script.chmod(0o755)
    row = run_translated.Row("p", run_translated.Outcome(built=True), {
        "builtin": run_translated.Outcome(built=True), "hipify-perl": run_translated.Outcome(build_error="x")})
    run_translated._run_row(row, bin_dir, cwd, timeout=10)
    assert log.read_text().split("\n") == ["start original", "end original", "start builtin", "end builtin", ""]
    assert [(o.ran, o.exit_code, o.verdict) for o in (row.original, *row.translations.values())] == [
        (True, 0, "program Test passed"), (True, 0, "program Test passed"), (None, None, "")]
    assert row.agrees("builtin") is True and row.agrees("hipify-perl") is None


def test_a_program_printing_its_own_path_agrees(tmp_path: Path) -> None:
    """Each build lives in its own directory: argv[0] in the output is not a difference (cuda-samples print it)."""
    for name in ("original", "kept"):
        script = tmp_path / name
        script.write_text('#!/bin/sh\necho "$0 Starting..."\necho "two GPUs are required: waiving"\nexit 2\n')
        script.chmod(0o755)
    row = run_translated.Row("p", run_translated.Outcome(built=True), {"kept": run_translated.Outcome(built=True)})
    run_translated._run_row(row, tmp_path, tmp_path, timeout=10)
    assert row.original.stdout == "PROGRAM Starting...\ntwo GPUs are required: waiving\n"
    assert row.agrees("kept") is True


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
    assert lines[3:5] == [f"cuda-samples/samples__{name} | built | "
                          "build failed (not built: the HIP headers do not build with this nvcc) | built"
                          for name in ("split", "twice")]
    assert lines[5:] == ["original: built 2/2", "builtin: built 0/2", "kept: built 2/2"]  # kept: nvcc, no HIP headers
    translated = (work / "translated" / "builtin" / "cuda-samples__samples__twice" / "twice.cu").read_text()
    assert "hipMalloc(&d, sizeof(h));" in translated and translated.startswith("#include <hip/hip_runtime.h>\n")
    helper = work / "translated-include" / "builtin" / "cuda-samples__Common" / "helper.h"
    assert helper.read_text() == "#pragma once\n#include <hip/hip_runtime.h>\n"
    kept = (work / "translated" / "kept" / "cuda-samples__samples__twice" / "twice.cu").read_text()
    assert "cudaMalloc(&d, sizeof(h));" in kept  # the CUDA sources keep their names
    result = json.loads(report.read_text())
    assert (result["gpu"], result["engines"], result["programs"][0]["original"]["built"]) == (
        [], ["builtin", "kept"], True)
