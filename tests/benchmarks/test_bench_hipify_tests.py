"""benchmarks/bench_hipify_tests.py: RUN-line options mapped, FileCheck lines matched in order, a whole run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_hipify_tests import checks, map_options, missed_lines, run_options  # noqa: E402

LAUNCH = """// RUN: %run_test hipify "%s" "%t" %hipify_args 2 --roc --hip-kernel-execution-syntax %clang_args -D__X
// CHECK: #include <hip/hip_runtime.h>
__global__ void k(int *p) {}
void f(int *p) {
  // CHECK: hipMalloc(&p, 4);
  cudaMalloc(&p, 4);
  // CHECK: hipLaunchKernelGGL(k, {{(dim3\\()?}}1{{\\)?}}, {{(dim3\\()?}}1{{\\)?}}, 0, 0, p);
  k<<<1, 1>>>(p);
  // CHECK-NOT: cudaFree
  // CHECK-NEXT: hipFree(p);
  cudaFree(p);
}
"""


def test_run_line_options_are_mapped_or_set_apart() -> None:
    options, unmapped = map_options(run_options(LAUNCH), "6.2")
    assert (options.roc, options.launch_syntax, options.rocm, unmapped) == (True, "hipLaunchKernelGGL", "6.2", "")
    flags = run_options('// RUN: %run_test hipify "%s" "%t" %hipify_args 2 --use-hip-data-types --experimental')
    assert map_options(flags, "6.2")[1] == "--use-hip-data-types"


def test_checks_are_found_in_order_with_comments_cut() -> None:
    expected = checks(LAUNCH)
    assert expected[1] == "hipMalloc(&p, 4);" and len(expected) == 4  # CHECK-NOT is not counted
    assert missed_lines(expected[1:2], "// hipMalloc(&p, 4);\n") == ["hipMalloc(&p, 4);"]  # a comment is no match
    assert missed_lines(["b", "a"], "a\nb\n") == ["a"]  # after the previous match only
    assert missed_lines(["a(1, 2)"], "  a(1,   2)\n") == []  # whitespace normalised


def test_a_whole_run_on_a_hand_made_checkout(tmp_path: Path) -> None:
    tests = tmp_path / "tests" / "unit_tests" / "kernel_launch"
    tests.mkdir(parents=True)
    (tests / "launch.cu").write_text(LAUNCH)
    (tests / "notes.cu").write_text("// CHECK: not a test: no RUN line\n")
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_hipify_tests.py"), str(tmp_path)],
                         capture_output=True, text=True, check=True)
    rows = {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines() if line.strip()}
    assert rows["kernel_launch"] == ["1", "100.0%", "(4/4)", "75.0%", "(3/4)"]
    assert rows["total"] == ["1", "100.0%", "(4/4)", "75.0%", "(3/4)"]
