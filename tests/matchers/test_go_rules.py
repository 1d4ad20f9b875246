"""Go packages that bind CUDA through cgo, and PTX kept in Go strings: exact findings."""

from __future__ import annotations

from pathlib import Path

from conftest import file_findings


def test_a_driver_binding_reports_its_header_link_flags_calls_and_module_load(tmp_path: Path) -> None:
    source = """\
        package cu

        // #cgo LDFLAGS: -lcuda -L/usr/local/cuda/lib64/stubs
        // #include <cuda.h>
        import "C"

        func Init() { C.cuInit(0) }

        func Load(image string) (m C.CUmodule) {
            C.cuModuleLoadData(&m, unsafe.Pointer(C.CString(image)))
            C.cuModuleGetFunction(nil, m, C.CString("k"))
            return
        }
        """
    assert file_findings(tmp_path, "cu/module.go", source) == [
        ("cuda-link-library", 3, "medium", 0), ("cuda-install-path", 3, "medium", 0),
        ("go-cgo-cuda-header", 4, "medium", 0), ("go-cgo-cuda-call", 7, "medium", 2),
        ("go-cgo-module-load", 10, "medium", 0)]


def test_a_comment_that_is_not_the_preamble_and_go_without_cgo_stay_quiet(tmp_path: Path) -> None:
    source = """\
        package cu

        // #include <cuda.h> in a comment that a blank line separates from the import

        import "C"

        // C.cudaFree in a comment, and in a message:
        var msg = "C.cudaFree failed"
        """
    assert file_findings(tmp_path, "cu/doc.go", source) == []
    plain = """\
        package tensor

        func cudaFree(p uintptr) {}  // a Go function named like the API, no cgo
        func use() { C.cudaFree(0) }
        """
    assert file_findings(tmp_path, "tensor/free.go", plain) == []


def test_ptx_texts_of_a_generated_wrapper_are_one_high_finding_per_file(tmp_path: Path) -> None:
    source = """\
        package kernels

        var add_map = map[int]string{50: add_ptx_50, 70: add_ptx_70}

        const (
            add_ptx_50 = `
        .version 6.4
        .target sm_50
        `
            add_ptx_70 = `
        .version 6.4
        .target sm_70
        `
        )
        """
    assert file_findings(tmp_path, "kernels/add_wrapper.go", source) == [("go-embedded-ptx", 6, "high", 2)]


def test_a_string_that_only_talks_about_ptx_stays_quiet(tmp_path: Path) -> None:
    source = 'package doc\n\nconst help = "write .version and .target sm_80 lines at the top of a PTX file"\n'
    assert file_findings(tmp_path, "doc/help.go", source) == []


def test_comment_markers_inside_literals_are_text(tmp_path: Path) -> None:
    """A `//` or `/*` inside a raw string or a rune is not a comment, so it starts no preamble; a quote inside a
    rune ends nothing."""
    source = """\
        package p

        var slash = '"'
        var help = `
        // #include <cuda_runtime.h>`
        import "C"

        var path = "/* C.cudaMalloc */"
        """
    assert file_findings(tmp_path, "p/lit.go", source) == []
