"""Fortran GPU code (CUDA Fortran, OpenACC) and the NVHPC / NVPTX offload options that build it: exact findings."""

from __future__ import annotations

import textwrap
from pathlib import Path

from migrate.config import Settings
from migrate.parse.fortran import fortran_items
from migrate.scan import scan


def findings(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int, str, int]]:
    """(path, rule, line, severity, occurrences) of every finding in FILES."""
    for name, source in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = scan(tmp_path, Settings(jobs=1))
    assert not result.skipped
    return sorted((f.path, f.rule, f.line, f.severity.label, len(f.occurrences)) for f in result.findings)


def test_cuda_fortran_reports_its_device_code_once_per_file_and_its_library_use(tmp_path: Path) -> None:
    source = """\
        module scale_gpu
          use cudafor
        contains
          attributes(global) subroutine scale(x, n)
            real :: x(n)
            integer, value :: n
            integer :: i
            i = threadIdx%x
            if (i <= n) x(i) = 2.0 * x(i)
          end subroutine
          subroutine run(x_d, n)
            real, device :: x_d(n)
            integer :: n, istat
            call scale<<<1, n>>>(x_d, n)
            istat = cudaDeviceSynchronize()
          end subroutine
        end module
        """
    assert findings(tmp_path, {"src/scale.cuf": source}) == [
        ("src/scale.cuf", "fortran-cuda-kernel", 4, "high", 4),  # the kernel, threadIdx, device data, the launch
        ("src/scale.cuf", "fortran-cuda-library", 2, "medium", 2),  # use cudafor, cudaDeviceSynchronize
    ]


def test_comments_strings_and_look_alike_names_stay_quiet(tmp_path: Path) -> None:
    source = """\
        ! attributes(global) subroutine k ; call k<<<1,1>>> ; use cudafor
        subroutine host(device, n)
          integer :: device, n, managed_count
          character(len=40) :: s = "call k<<<1,1>>> and !$acc kernels"
          !  $acc parallel (a comment: the sentinel has no space)
          !$omp target teams distribute parallel do
          do n = 1, 4
          end do
        end subroutine
        """
    assert findings(tmp_path, {"host.f90": source}) == []


def test_fixed_form_comment_lines_are_skipped_and_its_sentinels_read() -> None:
    text = "C     attributes(global) subroutine old\n*     use cudafor\nC$ACC KERNELS\n      X = 1\n"
    assert [(i.name, i.line, i.value) for i in fortran_items(text, fixed=True)] == [
        ("openacc-directive", 3, "acc kernels")]


def test_nvhpc_and_nvptx_options_are_medium_unless_the_build_names_the_amd_target(tmp_path: Path) -> None:
    nvidia_only = """\
        FFLAGS = -O2 -acc -gpu=cc80 -Minfo=accel
        GCCFLAGS = -fopenmp -foffload=nvptx-none
        CPUFLAGS = -mp -stdpar=multicore
        OFFLOAD = -fopenmp -foffload="-lm -march=sm_70"
        HOST = -O3 -march=native
        """
    both = """\
        set(OFFLOAD_NVIDIA -fopenmp-targets=nvptx64-nvidia-cuda)
        set(OFFLOAD_AMD -fopenmp-targets=amdgcn-amd-amdhsa)
        """
    assert findings(tmp_path, {"nv/Makefile": nvidia_only, "omp/CMakeLists.txt": both}) == [
        ("nv/Makefile", "nvhpc-gpu-target-flag", 1, "medium", 0),
        ("nv/Makefile", "offload-nvptx-target", 2, "medium", 0),
        ("nv/Makefile", "offload-nvptx-target", 4, "medium", 0),
        ("omp/CMakeLists.txt", "offload-nvptx-target", 1, "info", 0),
    ]


def test_flags_inside_a_cmake_cache_value_of_a_build_script_are_read(tmp_path: Path) -> None:
    script = """\
        cmake -DCMAKE_Fortran_FLAGS:STRING="-O3 -mp=gpu -gpu=cc90" \\
              -DYAKL_CUDA_FLAGS="-O3 --use_fast_math" ..
        """
    assert findings(tmp_path, {"build.sh": script}) == [
        ("build.sh", "nvcc-only-flags", 2, "low", 0),
        ("build.sh", "nvhpc-gpu-target-flag", 1, "medium", 0),
    ]


def test_kokkos_cuda_configuration_is_medium_and_info_where_the_script_configures_hip_too(tmp_path: Path) -> None:
    cuda_only = """\
        cmake -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_HOPPER90=ON ..
        cmake -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_SKX=ON ..
        """
    both = """\
        cmake -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_VOLTA70=ON ..
        cmake -DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_AMD_GFX90A=ON ..
        """
    spaces = """\
        #include <Kokkos_Core.hpp>
        using Mem = Kokkos::CudaUVMSpace;
        #ifdef KOKKOS_ENABLE_HIP
        using Host = Kokkos::HIPHostPinnedSpace;
        #endif
        using Pinned = Kokkos::CudaHostPinnedSpace;
        """
    assert findings(tmp_path, {"nv.sh": cuda_only, "both.sh": both, "src/spaces.hpp": spaces}) == [
        ("both.sh", "kokkos-cuda-backend-config", 1, "info", 0),
        ("nv.sh", "kokkos-cuda-backend-config", 1, "medium", 0),
        ("src/spaces.hpp", "hip-branch-present", 3, "info", 0),  # the file's own KOKKOS_ENABLE_HIP branch
        ("src/spaces.hpp", "kokkos-cuda-space", 2, "medium", 2),  # lines 2 and 6
    ]


def test_cuda_fortran_shared_tiles_barriers_and_atomics_are_occurrences_of_the_device_code(tmp_path: Path) -> None:
    source = """\
        module halo_sum
          use cudafor
        contains
          attributes(global) subroutine block_total(vals, total)
            real(8), device :: vals(:)
            real(8), device :: total
            real(8), shared :: part(128)
            real(8) :: old
            part(threadIdx%x) = vals(threadIdx%x)
            call syncthreads()
            if (threadIdx%x == 1) old = atomicAdd(total, sum(part))
            call threadfence()
          end subroutine
        end module
        """
    assert [(i.line, i.value) for i in fortran_items(textwrap.dedent(source), fixed=False)
            if i.name == "cuda-fortran-code"] == [
        (4, "attributes(global)"), (5, "real(8), device ::"), (6, "real(8), device ::"),
        (7, "real(8), shared ::"), (9, "threadidx%"), (10, "call syncthreads"), (11, "threadidx%"),
        (12, "call threadfence")]


def test_shared_and_atomic_names_in_plain_fortran_stay_quiet(tmp_path: Path) -> None:
    source = """\
        subroutine tally(shared, counts, n)
          integer :: n, shared
          integer :: counts(n)
          !$omp parallel do shared(counts)
          do n = 1, 4
            counts(n) = atomicadd(counts(n), 1)
          end do
          call syncthreads_on_host()
        end subroutine
        """
    assert findings(tmp_path, {"tally.f90": source}) == []
