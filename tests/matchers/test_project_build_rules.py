"""Project builds (issue 19, builds) of renderers and simulators: Visual Studio C++ projects (NVIDIA's CUDA build
customisation, the nvcc targets of a configuration and the CUDA import libraries of a .vcxproj or .props file) and
the OptiX SDK a CMake build looks for, with their exact findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.discover import classify
from migrate.model import FileKind

from conftest import FIXTURES, tree_findings

PROJECT = FIXTURES / "rules" / "manifests" / "vs-project"


@pytest.mark.parametrize(
    ("relpath", "kind"),
    [("app.vcxproj", FileKind.MSBUILD), ("build/cuda.props", FileKind.MSBUILD), ("app.vcxproj.filters", None),
     ("app.sln", None)],
)
def test_visual_studio_projects_are_classified_by_suffix(relpath: str, kind: FileKind | None) -> None:
    assert classify(relpath) is kind


def test_project_exacttree_findings(tmp_path: Path) -> None:
    """One build finding per project with the import and each CudaCompile item as occurrences; the nvcc targets and
    the CUDA import library; nothing from the commented-out lines."""
    files = {p.name: p.read_text(encoding="utf-8") for p in PROJECT.iterdir()}
    assert tree_findings(tmp_path, files) == [
        ("particles.vcxproj", 5, "msbuild-cuda-build", "medium", (5, 20, 27)),
        ("particles.vcxproj", 10, "msbuild-cuda-library", "medium", ()),
        ("particles.vcxproj", 14, "nvcc-arch-flags", "medium", ()),
    ]


def test_project_without_cuda_is_quiet(tmp_path: Path) -> None:
    project = (
        '<Project xmlns="http://schemas.microsoft.com/developer/msbuild/2003">\n'
        '  <Import Project="$(VCTargetsPath)\\Microsoft.Cpp.targets" />\n'
        "  <ItemGroup><ClCompile Include=\"solver.cpp\" /></ItemGroup>\n"
        "  <Link><AdditionalDependencies>d3d12.lib;dxgi.lib</AdditionalDependencies></Link>\n"
        "</Project>\n"
    )
    assert tree_findings(tmp_path, {"solver.vcxproj": project}) == []


def test_optix_sdk_in_cmake_exacttree_findings(tmp_path: Path) -> None:
    """The SDK's search and its install-path variable; not an on/off option, a commented-out search or a list of
    the project's own sources named after OptiX."""
    cmake = (FIXTURES / "rules" / "manifests" / "renderer" / "CMakeLists.txt").read_text(encoding="utf-8")
    found = [f for f in tree_findings(tmp_path, {"CMakeLists.txt": cmake}) if f[2] == "cmake-optix-sdk"]
    assert found == [("CMakeLists.txt", 6, "cmake-optix-sdk", "high", ()),
                     ("CMakeLists.txt", 13, "cmake-optix-sdk", "high", ())]


def test_optix_package_helper_call_in_cmake_exacttree_findings(tmp_path: Path) -> None:
    """The call of the framework's OptiX helper; not the helper's own definition or its helper for another package."""
    cmake = (FIXTURES / "rules" / "manifests" / "renderer" / "CMakeLists.txt").read_text(encoding="utf-8")
    found = [f for f in tree_findings(tmp_path, {"CMakeLists.txt": cmake}) if f[2] == "cmake-optix-package-macro"]
    assert found == [("CMakeLists.txt", 34, "cmake-optix-package-macro", "high", ())]


def test_cpp_sources_marked_cuda_exacttree_findings(tmp_path: Path) -> None:
    """LANGUAGE CUDA on C++ sources, at the value; not LANGUAGE HIP or another property whose value is CUDA."""
    cmake = (FIXTURES / "rules" / "manifests" / "renderer" / "CMakeLists.txt").read_text(encoding="utf-8")
    found = [f for f in tree_findings(tmp_path, {"CMakeLists.txt": cmake}) if f[2] == "cmake-source-language-cuda"]
    assert found == [("CMakeLists.txt", 22, "cmake-source-language-cuda", "medium", ())]


def test_cuda_only_library_fetch_exacttree_findings(tmp_path: Path) -> None:
    """Downloads of CUTLASS, CUB, apex, MinkowskiEngine and spconv by git, wget and curl (in scripts and an install
    guide), at the URL; not hipCUB, ROCm/apex, a look-alike repository name, an echo of the URL or a link in prose."""
    fetch = FIXTURES / "rules" / "manifests" / "fetch-deps"
    files = {p.name: p.read_text(encoding="utf-8") for p in fetch.iterdir()}
    found = [f for f in tree_findings(tmp_path, files) if f[2] == "cuda-only-library-fetch"]
    assert found == [("INSTALL.md", 7, "cuda-only-library-fetch", "medium", ()),
                     ("INSTALL.md", 15, "cuda-only-library-fetch", "medium", ()),
                     ("INSTALL.md", 22, "cuda-only-library-fetch", "medium", ()),
                     ("Makefile", 4, "cuda-only-library-fetch", "medium", ()),
                     ("get_deps.sh", 6, "cuda-only-library-fetch", "medium", ()),
                     ("get_deps.sh", 8, "cuda-only-library-fetch", "medium", ())]


ARCH_DOCS_CMAKE = """\
option(BENCH_CUDA_ARCH "Target GPU for the CUDA model, written as a compute capability: for example sm_80 on A100" OFF)
set(BENCH_ARCH "" CACHE STRING "Only read for an NVIDIA card - the value, such as sm_90, goes to the compiler as is")
set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -gencode arch=compute_80,code=sm_80 --use_fast_math -lineinfo -O3 here")
set(BENCH_ARCH_LIST "sm_60 sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_100")
set(BENCH_GENCODE "90a" CACHE STRING "Passed to -gencode as arch and code, such as 90a on Hopper or 100a on Blackwell")
"""


def test_architectures_in_cmake_documentation_strings_are_quiet(tmp_path: Path) -> None:
    """A compute capability named as an example in an option's or cache entry's documentation is prose; one in a flag
    string or in a quoted list of architectures is what the build passes, and so is a flag a documentation names."""
    found = [f[1] for f in tree_findings(tmp_path, {"CMakeLists.txt": ARCH_DOCS_CMAKE}) if f[2] == "nvcc-arch-flags"]
    assert found == [3] + [4] * 8 + [5]  # the flag string's value; each architecture of the list; the named flag


def test_variable_set_to_nvccs_path_exacttree_findings(tmp_path: Path) -> None:
    script = (
        "#!/bin/sh\n"
        "cc_path=$1/bin/nvcc\n"
        "NVCC_FLAGS=-O3\n"
        "HIPCC=/opt/rocm/bin/hipcc\n"
        "nvcc_log=logs/nvcc\n"
        '[ -f "$cc_path" ] || exit 1\n'
    )
    dockerfile = "FROM ubuntu:22.04\nENV NVCC=/usr/local/cuda-12.1/bin/nvcc\n"
    assert tree_findings(tmp_path, {"configure.sh": script, "Dockerfile": dockerfile}) == [
        ("Dockerfile", 2, "nvcc-path-variable", "medium", ()),
        ("configure.sh", 2, "nvcc-path-variable", "medium", ()),
    ]


def test_pytorch_cuda_wheel_url_exacttree_findings(tmp_path: Path) -> None:
    """A CUDA torch / torchvision wheel installed by its URL in a Dockerfile, a script and an install guide; not the
    ROCm or CPU build of a release, an echoed hint or the server named in prose."""
    urls = FIXTURES / "rules" / "manifests" / "torch-wheel-urls"
    files = {p.name: p.read_text(encoding="utf-8") for p in urls.iterdir()}
    found = [f for f in tree_findings(tmp_path, files) if f[2] == "pytorch-cuda-wheel-url"]
    assert found == [("Dockerfile", 4, "pytorch-cuda-wheel-url", "medium", ()),
                     ("README.md", 7, "pytorch-cuda-wheel-url", "medium", ()),
                     ("setup_env.sh", 5, "pytorch-cuda-wheel-url", "medium", ())]


def test_float_atomic_in_loop_macros_exacttree_findings(tmp_path: Path) -> None:
    """Float atomics inside a grid-stride loop macro with a block, through an indexing macro and on a gradient buffer
    of a template type, at the call; not the integer counters beside them or a template histogram's totals."""
    kernel = (FIXTURES / "rules" / "cuda" / "float_atomic_loops.cu").read_text(encoding="utf-8")
    found = [f for f in tree_findings(tmp_path, {"splat.cu": kernel}) if f[2] == "atomic-add-float"]
    assert found == [("splat.cu", 17, "atomic-add-float", "low", ()),
                     ("splat.cu", 29, "atomic-add-float", "low", ()),
                     ("splat.cu", 41, "atomic-add-float", "low", ())]


def test_float_atomic_on_an_accessor_element_exacttree_findings(tmp_path: Path) -> None:
    """An atomicAdd into an element of a floating PackedTensorAccessor (`&volume[i][j]`) is a float atomic; the one
    into an integer accessor declared beside it is not (the declarations are not read across parameters)."""
    kernel = (FIXTURES / "rules" / "cuda" / "float_atomic_accessor.cu").read_text(encoding="utf-8")
    found = [f for f in tree_findings(tmp_path, {"splat.cu": kernel}) if f[2] == "atomic-add-float"]
    assert found == [("splat.cu", 16, "atomic-add-float", "low", ())]
