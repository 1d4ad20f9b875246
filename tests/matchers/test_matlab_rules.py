"""MATLAB builds of CUDA MEX functions: scripts (.m) and mex option files, exact findings."""

from __future__ import annotations

from pathlib import Path

from conftest import file_findings


def test_a_script_that_builds_mex_functions_with_nvcc_is_one_finding_with_its_occurrences(tmp_path: Path) -> None:
    source = """\
        % build the solver's MEX files
        mex -setup:'mex_CUDA_glnxa64.xml'
        mex('-largeArrayDims', 'solver_mex.cpp', 'solver_kernels.cu');
        mexcuda -largeArrayDims filter_mex.cu
        """
    assert file_findings(tmp_path, "matlab/compile_all.m", source) == [("matlab-cuda-mex", 2, "medium", 3)]


def test_commands_in_comments_and_messages_and_host_only_mex_stay_quiet(tmp_path: Path) -> None:
    source = """\
        %{
        mexcuda old_kernel.cu
        %}
        % mexcuda -v other.cu
        warning('mexcuda is not set up; using the CPU path');
        mex('-largeArrayDims', 'reader_mex.cpp');
        """
    assert file_findings(tmp_path, "matlab/setup_cpu.m", source) == []


def test_an_option_file_with_nvcc_as_compiler_and_its_arch_flags(tmp_path: Path) -> None:
    source = """\
        <config Name="nvcc" Location="$NVCC">
            <vars CXX="$NVCC" NVCCFLAGS="-gencode=arch=compute_75,code=sm_75" />
        </config>
        """
    assert file_findings(tmp_path, "mex_CUDA_maci64.xml", source) == [("matlab-cuda-mex", 1, "medium", 3),
                                                                 ("nvcc-arch-flags", 2, "medium", 0)]


def test_an_objective_c_source_named_like_a_matlab_script_yields_nothing(tmp_path: Path) -> None:
    source = '#import "AppDelegate.h"\n// builds nothing: NSLog(@"mexcuda, nvcc and -arch=sm_80 are words here");\n'
    assert file_findings(tmp_path, "ios/AppDelegate.m", source) == []


def test_a_gateway_on_gpuarray_data_is_one_high_finding_per_file(tmp_path: Path) -> None:
    source = """\
        #include "gpu/mxGPUArray.h"
        void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
          mxInitGPU();
          const mxGPUArray* in = mxGPUCreateFromMxArray(prhs[0]);
          plhs[0] = mxGPUCreateMxArrayOnGPU(in);
        }
        """
    assert file_findings(tmp_path, "mex/sum_gpu.cpp", source) == [("matlab-gpuarray-mex", 3, "high", 3)]


def test_a_script_computing_on_gpuarray_data_is_one_high_finding_with_its_occurrences(tmp_path: Path) -> None:
    source = """\
        % moves the data to a gpuArray on the device gpuDevice selects
        function y = whiten(x, useGPU)
        if useGPU
            gpuDevice(1);
            x = gpuArray(single(x));
            acc = gpuArray.zeros(size(x, 2), 'single');
        end
        y = gather(x' * x);
        end
        """
    assert file_findings(tmp_path, "preprocess/whiten.m", source) == [("matlab-gpuarray-script", 4, "high", 3)]


def test_gpuarray_in_strings_comments_and_longer_names_stays_quiet(tmp_path: Path) -> None:
    source = """\
        %{
        x = gpuArray(x);
        %}
        if isa(x, 'gpuArray'), x = gather(x); end
        warning('no gpuDevice: running on the CPU');
        usegpuArrays = false; mygpuDevice = [];
        """
    assert file_findings(tmp_path, "util/to_host.m", source) == []
