"""Julia packages on CUDA.jl (Project.toml dependencies, CUDA.jl code, warp and NVVM intrinsics): exact findings."""

from __future__ import annotations

from pathlib import Path

from conftest import file_findings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rules" / "manifests" / "julia-package"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_a_cuda_only_package_reports_cuda_and_nccl_once_each(tmp_path: Path) -> None:
    # [compat] holds versions, not packages; the [extras] repeat of CUDA is the same package
    assert file_findings(tmp_path, "Project.toml", _fixture("Project.toml")) == [
        ("julia-cuda-package", 6, "medium", 0), ("julia-nccl-package", 8, "medium", 0)]


def test_a_package_with_an_amdgpu_extension_is_info(tmp_path: Path) -> None:
    assert file_findings(tmp_path, "Project.toml", _fixture("ported/Project.toml")) == [
        ("julia-cuda-package-with-rocm", 10, "info", 0)]


def test_an_environment_beside_the_package_is_low(tmp_path: Path) -> None:
    assert file_findings(tmp_path, "docs/Project.toml", _fixture("docs/Project.toml")) == [
        ("julia-cuda-environment", 2, "low", 0)]


def test_cuda_code_warp_intrinsics_and_an_nvvm_llvmcall_are_reported(tmp_path: Path) -> None:
    assert file_findings(tmp_path, "src/gpu_sum.jl", _fixture("src/gpu_sum.jl")) == [
        ("julia-cuda-code", 4, "low", 4), ("julia-cuda-warp", 10, "high", 3),
        ("julia-nvvm-intrinsic", 26, "medium", 0)]


def test_docstrings_comments_messages_and_kernelabstractions_stay_quiet(tmp_path: Path) -> None:
    assert file_findings(tmp_path, "src/portable.jl", _fixture("src/portable.jl")) == []


def test_a_julia_file_without_a_cuda_word_is_not_read(tmp_path: Path) -> None:
    source = """\
        function warp_total(x)  # a name, not CUDA.jl's intrinsic
            return sum(x)
        end
        """
    assert file_findings(tmp_path, "src/plain.jl", source) == []


def test_a_julia_project_without_gpu_packages_is_quiet(tmp_path: Path) -> None:
    source = """\
        name = "Plain"
        uuid = "0c5d3f2e-1b4a-4e6f-8a9b-7c6d5e4f3a21"

        [deps]
        Statistics = "10745b16-79ce-11e8-11f9-7d13ad32a3b2"
        """
    assert file_findings(tmp_path, "Project.toml", source) == []


def test_warp_named_functions_of_a_file_without_cuda_jl_stay_quiet(tmp_path: Path) -> None:
    source = """\
        using AMDGPU

        # this package's own helpers, named as CUDA.jl's are (the CUDA extension has its own)
        warpsize(::ROCBackend) = AMDGPU.Device.wavefrontsize()
        laneid() = AMDGPU.Device.activelane() + 1
        """
    assert file_findings(tmp_path, "ext/RocExt.jl", source) == []
