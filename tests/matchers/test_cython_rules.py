"""Cython sources that bind CUDA (extern headers, calls, cuda-python cimports): exact findings."""

from __future__ import annotations

from pathlib import Path

from conftest import file_findings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rules" / "manifests" / "cython-binding"


def test_an_extern_block_of_the_runtime_and_its_calls_are_reported(tmp_path: Path) -> None:
    source = (FIXTURES / "stream_copy.pyx").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "pkg/stream_copy.pyx", source) == [
        ("cython-cuda-header", 5, "medium", 0), ("cython-cuda-call", 9, "medium", 4),
        ("cython-cuda-library-load", 29, "medium", 0)]


def test_comments_strings_and_a_non_cuda_extern_stay_quiet(tmp_path: Path) -> None:
    source = (FIXTURES / "cpu_boxes.pyx").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "pkg/cpu_boxes.pyx", source) == []


def test_cuda_python_bindings_cimported_in_a_pxd(tmp_path: Path) -> None:
    source = (FIXTURES / "pool_handles.pxd").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "pkg/pool_handles.pxd", source) == [
        ("cython-cuda-bindings-cimport", 3, "medium", 0), ("cython-cuda-header", 8, "medium", 0)]


def test_a_cython_file_without_extern_or_cimport_is_not_read(tmp_path: Path) -> None:
    source = """\
        def launch(lib):
            return cudaLaunchKernel(lib)  # a Python-level name, never declared for C
        """
    assert file_findings(tmp_path, "pkg/plain.pyx", source) == []


def test_an_attribute_call_of_a_python_module_is_not_a_cuda_call(tmp_path: Path) -> None:
    source = """\
        import numba.cuda
        def run(buf):
            return numba.cuda.cudaMalloc(buf)  # attribute access, a Python object's method
        """
    assert file_findings(tmp_path, "pkg/probe.pyx", source) == []
