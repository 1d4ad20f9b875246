"""cuQuantum, cuCollections and CuPy run-time kernels: one finding per file that lists each use as an occurrence."""

from __future__ import annotations

from pathlib import Path

from migrate.config import Settings
from migrate.scan import scan


def _findings(root: Path, rule: str) -> list[tuple[str, int, str, list[int]]]:
    result = scan(root, Settings(jobs=1))
    return [(f.path, f.line, f.severity.name.lower(), sorted(o.line for o in f.occurrences))
            for f in result.findings if f.rule == rule]


def test_cuquantum_headers_are_one_high_finding_per_file(tmp_path: Path) -> None:
    (tmp_path / "backend.cpp").write_text(
        "#include <cuda_runtime.h>\n#include <custatevec.h>\n#include <cutensornet.h>\nint n = 2;\n")
    (tmp_path / "plain.cpp").write_text('#include "custatevec_options.h"\nint m = 3;\n')
    assert _findings(tmp_path, "cuquantum-include") == [("backend.cpp", 2, "high", [2, 3])]


def test_cmake_cuquantum_search_is_one_finding_with_its_uses(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p CXX)\n"
        "find_library(SV NAMES custatevec)\n"
        "include_directories($ENV{CUQUANTUM_ROOT}/include)\n"
        "find_library(B NAMES openblas)\n")
    assert _findings(tmp_path, "cmake-find-cuquantum") == [("CMakeLists.txt", 2, "medium", [2, 3])]


def test_cupy_kernel_through_a_shim_is_found_and_an_array_call_is_not(tmp_path: Path) -> None:
    (tmp_path / "ops.py").write_text(
        "from .compat import cupy\n"
        "x = cupy.zeros(3)\n"
        "K = cupy.RawKernel('extern \"C\" __global__ void k() {}', 'k')\n")
    assert _findings(tmp_path, "python-cupy-raw-kernel") == [("ops.py", 3, "medium", [])]
