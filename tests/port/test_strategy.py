"""`apply --strategy`: the kind of project decides the port; what each strategy writes compiles with hipcc and nvcc."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.port.apply import plan_port, write_port
from migrate.port.plan import PortOptions
from migrate.cli import cli
from migrate.config import Settings
from migrate.discover import discover
from migrate.parse.cuda import parse_cuda
from migrate.model import FileKind, SourceFile
from migrate.port.buildflags import rocm_build_flags
from migrate.port.guards import rocm_guards
from migrate.scan import scan
from migrate.port.strategy import choose
from migrate.port.translate import Engine
from migrate.port.verify import verify

from conftest import GIT_ENV, REPOS, ROOT, init_repo, require_tool

TORCH_HEADERS = ROOT / "tests" / "data" / "torch_headers"
BUILTIN = Engine("builtin")
KERNEL = ("#include <cuda_runtime.h>\n__global__ void k(float *x) { x[threadIdx.x] = 1; }\n"
          "int main() { float *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaDeviceSynchronize(); cudaFree(d); return 0; }\n")
MAKEFILE = ("NVCC ?= nvcc\nNVCCFLAGS := -O2 --use_fast_math -gencode arch=compute_80,code=sm_80\n"
            "app: kern.cu\n\t$(NVCC) $(NVCCFLAGS) -o $@ $< -lcudart\n")


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(REPOS / name, target)
    return target


def _plan(root: Path, strategy: str = "auto", **flags: object):  # type: ignore[no-untyped-def]
    options = PortOptions(BUILTIN, strategy=strategy, **flags)  # type: ignore[arg-type]
    return plan_port(root, Settings(max_file_size=1 << 20, targets=("gfx90a",)), options)


JIT = """from torch.utils.cpp_extension import load

_C = load(
    name="ops",
    sources=["csrc/ops.cu"],
    extra_cuda_cflags=["-O3", "--use_fast_math", "-gencode=arch=compute_80,code=sm_80"],
)
"""


def _jit_project(root: Path) -> Path:
    """A JIT-built extension (torch.utils.cpp_extension.load) whose kernel uses the fixture's warp reduction."""
    (root / "csrc").mkdir(parents=True)
    shutil.copy(REPOS / "cuda-extension" / "csrc" / "common.cuh", root / "csrc")
    (root / "csrc" / "ops.cu").write_text(
        '#include "common.cuh"\n__global__ void k(float* x) { x[threadIdx.x] = warp_reduce_sum(x[threadIdx.x]); }\n')
    (root / "ops.py").write_text(JIT)
    return root


def _make_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "kern.cu").write_text(KERNEL)
    (root / "Makefile").write_text(MAKEFILE)
    return root


# -- the choice -------------------------------------------------------------------------------------------------


def test_auto_reads_the_project_kind_from_the_scan(tmp_path: Path) -> None:
    def chosen(root: Path) -> tuple[str, str]:
        sources = [s for s in discover(root, max_file_size=1 << 20) if isinstance(s, SourceFile)]
        choice = choose("auto", scan(root, Settings(jobs=1)).findings, sources)
        return choice.name, choice.reason

    assert chosen(_copy("cuda-extension", tmp_path)) == ("extension", (
        "setup.py:19 builds a PyTorch CUDA extension (torch-cuda-extension-build): "
        "a ROCm torch hipifies the CUDA sources at build time, so they keep their CUDA names"))
    assert chosen(_copy("cmake-hpc", tmp_path))[1].startswith(
        "CMakeLists.txt:2 builds CUDA with CMake (cmake-cuda-language): a USE_HIP build path and one compat header")
    assert chosen(_make_project(tmp_path / "mk"))[1].startswith("Makefile:1 calls nvcc from a Makefile (nvcc-invocation)")
    assert chosen(_jit_project(tmp_path / "jit"))[1].startswith(
        "ops.py:3 builds a PyTorch CUDA extension (python-cpp-extension)")
    indirect = _copy("cuda-extension", tmp_path / "indirect")  # torch_scatter's `Extension = CUDAExtension`
    setup = (indirect / "setup.py").read_text()
    (indirect / "setup.py").write_text(setup.replace("        CUDAExtension(", "        Extension(").replace(
        "nvcc_flags = [", "Extension = CUDAExtension\nnvcc_flags = ["))
    assert chosen(indirect) == ("extension", (
        "setup.py:6 builds a PyTorch CUDA extension (torch-cuda-extension-build): "
        "a ROCm torch hipifies the CUDA sources at build time, so they keep their CUDA names"))
    cmake_hip = _copy("cmake-hpc", tmp_path / "cmake-hip")  # a HIP path of its own and no CUDA left in CMake
    (cmake_hip / "CMakeLists.txt").write_text("project(heatsolve LANGUAGES CXX)\nset(CMAKE_HIP_STANDARD 17)\n"
                                              "enable_language(HIP)\nadd_executable(heatsolve src/main.cpp src/stencil.cu)\n")
    assert chosen(cmake_hip) == ("cmake", "CMakeLists.txt:2 already has a HIP build path: a USE_HIP build path and "
                                          "one compat header, so the same sources build for NVIDIA and AMD")
    (cmake_hip / "CMakeLists.txt").write_text("project(x LANGUAGES CXX)\nhipify_sources_target(SRCS x ${CUDA_SRCS})\n")
    assert chosen(cmake_hip) == ("extension", "CMakeLists.txt:2 hipifies the CUDA sources at build time, so they keep their CUDA names")
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "k.cu").write_text(KERNEL)
    assert chosen(tmp_path / "bare") == (
        "header", "no CUDA extension, CMake or nvcc Makefile build found: one compat header, so the same sources build with nvcc and hipcc")
    assert choose("fork", []).reason == "--strategy fork: every source translated to HIP (a hard fork of the CUDA tree)"


def test_cli_says_which_strategy_and_why(tmp_path: Path) -> None:
    repo = init_repo(_copy("cuda-extension", tmp_path))
    result = CliRunner().invoke(cli, ["apply", str(repo), "--dry-run", "--engine", "builtin"])
    assert result.exit_code == 0, result.output
    assert "strategy: extension (setup.py:19 builds a PyTorch CUDA extension" in result.stderr
    forced = CliRunner().invoke(cli, ["apply", str(repo), "--dry-run", "--engine", "builtin", "--strategy", "fork"])
    assert forced.exit_code == 0, forced.output
    assert "strategy: fork (--strategy fork: every source translated to HIP" in forced.stderr
    assert b"+#include <hip/hip_runtime.h>" in forced.stdout_bytes  # the fork renames sources, as before
    bad = CliRunner().invoke(cli, ["apply", str(repo), "--strategy", "hipify"])
    assert bad.exit_code == 2 and "'hipify' is not one of 'auto', 'extension', 'cmake', 'make', 'header', 'fork'" in bad.stderr


# -- PyTorch extension ------------------------------------------------------------------------------------------


def _without_rocm_branches(text: str) -> str:
    """TEXT with every `#ifdef USE_ROCM ... #else` prefix and its `#endif` removed: the CUDA code as it was."""
    return re.sub(r"#ifdef USE_ROCM[^\n]*\n.*?#else\n(.*?)#endif\n", r"\1", text, flags=re.S)


def test_extension_port_keeps_every_cuda_name(tmp_path: Path) -> None:
    root = _copy("cuda-extension", tmp_path)
    plan = _plan(root)
    assert plan.strategy == "extension"
    assert [c.relpath for c in plan.changes] == [".gitignore", "csrc/common.cuh", "csrc/softmax.cu", "requirements-rocm.txt", "setup.py"]
    for change in plan.changes:
        if change.relpath.startswith("csrc/"):
            assert change.old is not None
            assert _without_rocm_branches(change.new.decode()) == change.old.decode()  # no rename anywhere
    new = {c.relpath: c.new.decode() for c in plan.changes}
    assert "#ifdef USE_ROCM  // non-sync form: ROCm < 6.2 has no *_sync builtins; width 32 as on CUDA\n" \
           "    value += __shfl_xor(value, offset, 32);\n#else\n" \
           "    value += __shfl_xor_sync(0xffffffff, value, offset);\n#endif\n" in new["csrc/common.cuh"]
    rocm_lines = [line for line in new["csrc/softmax.cu"].splitlines()
                  if line.strip() and not line.startswith("#") and line not in root.joinpath("csrc/softmax.cu").read_text().splitlines()]
    assert rocm_lines == [
        "  id = __lane_id();",
        "  y = exp2f(x);",
        "  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_down(m, offset, 32));",
        "  m = __shfl(m, 0, 32);",
        "  unsigned active = __ballot(s > 0.f);",
    ]
    assert not [f for f in plan.findings if f.rule == "rocm-guard-not-written"]


def test_extension_setup_py_flags_behind_is_hip_extension(tmp_path: Path) -> None:
    root = _copy("cuda-extension", tmp_path)
    new = next(c.new.decode() for c in _plan(root).changes if c.relpath == "setup.py")
    tree = ast.parse(new)
    assert "from torch.utils.cpp_extension import IS_HIP_EXTENSION\n" in new
    branch = next(n for n in tree.body if isinstance(n, ast.If))
    assert ast.unparse(branch.test) == "IS_HIP_EXTENSION"
    assert ast.literal_eval(branch.body[0].value) == ["-O3", "-ffast-math"]  # type: ignore[attr-defined]
    original = next(n for n in tree.body if isinstance(n, ast.Assign))
    assert "-gencode" in ast.literal_eval(original.value)  # the CUDA flags are kept as they were
    assert rocm_build_flags(new) is None  # already ROCm-aware: a second port leaves it alone


def test_build_flags_inline_lists_and_jit_load() -> None:
    setup = ('from torch.utils.cpp_extension import CUDAExtension\n'
             'ext = CUDAExtension("m", ["k.cu"], extra_compile_args={"cxx": ["-O3"], '
             '"nvcc": ["-O3", "-arch=sm_90", "--expt-relaxed-constexpr", f"-DN={n}"]})\n')
    assert rocm_build_flags(setup) == (
        'from torch.utils.cpp_extension import CUDAExtension\n'
        'from torch.utils.cpp_extension import IS_HIP_EXTENSION\n'
        'ext = CUDAExtension("m", ["k.cu"], extra_compile_args={"cxx": ["-O3"], '
        '"nvcc": (["-O3", "-arch=sm_90", "--expt-relaxed-constexpr", f"-DN={n}"] if not IS_HIP_EXTENSION '
        'else ["-O3", f"-DN={n}"])})\n')
    jit = ('import torch.utils.cpp_extension as ext\n\ndef build():\n'
           '    flags = ["-lineinfo", "-Xptxas=-v"]\n    return ext.load("k", ["k.cu"], extra_cuda_cflags=flags)\n')
    ported = rocm_build_flags(jit)
    assert ported is not None and ast.parse(ported)
    assert ('    flags = ["-lineinfo", "-Xptxas=-v"]\n'
            '    if IS_HIP_EXTENSION:  # ROCm torch: hipcc gets --offload-arch from PYTORCH_ROCM_ARCH\n'
            '        flags = ["-gline-tables-only"]\n') in ported  # ptxas options mean nothing to hipcc
    assert rocm_build_flags("import torch\nflags = ['-gencode', 'arch=compute_80,code=sm_80']\n") is None  # not a build
    probe = 'from torch.utils.cpp_extension import load\nimport subprocess\nsubprocess.call(["nvcc", "--version"])\n'
    assert rocm_build_flags(probe) is None  # a command, not a flag list
    assert rocm_build_flags("from torch.utils.cpp_extension import load\nflags = ['-O3']\n") is None  # nothing nvcc-only
    fatbin = 'from torch.utils.cpp_extension import load\nflags = ["-O3", "-Xfatbin", "-compress-all"]\n'
    assert 'if IS_HIP_EXTENSION:  # ROCm torch: hipcc gets --offload-arch from PYTORCH_ROCM_ARCH\n    flags = ["-O3"]\n' in (
        rocm_build_flags(fatbin) or "")  # hipcc 5.2 rejects -compress-all: the option goes with its value


@pytest.mark.slow
def test_jit_extension_port_compiles_with_hipcc(tmp_path: Path) -> None:
    """No torch header needed here: the guarded warp reduction compiles as a ROCm torch's hipcc would see it."""
    require_tool("hipcc")
    root = _jit_project(tmp_path / "jit")
    plan = _plan(root)
    assert [c.relpath for c in plan.changes] == [".gitignore", "csrc/common.cuh", "ops.py"]
    ops = next(c.new.decode() for c in plan.changes if c.relpath == "ops.py")
    assert ('    extra_cuda_cflags=(["-O3", "--use_fast_math", "-gencode=arch=compute_80,code=sm_80"] '
            'if not IS_HIP_EXTENSION else ["-O3", "-ffast-math"]),\n') in ops and ast.parse(ops)
    result = verify(root, "gfx90a", Settings(max_file_size=1 << 20), PortOptions(BUILTIN))
    assert (result.strategy, [u.relpath for u in result.units], result.findings) == ("extension", ["csrc/ops.cu"], ())


def _guards(text: str) -> tuple[str | None, list[str]]:
    new, findings = rocm_guards(text, "k.cu")
    return new, [f"{f.line}: {f.message}" for f in findings]


def test_rocm_guards_cases() -> None:
    text = ("__device__ int f(int v, unsigned m) {\n"
            "  v += __shfl_down_sync(m, v, 1, 16) + __shfl_up_sync(m, v, 2);  // width 16 kept\n"
            "  __syncwarp();\n"
            "  return __any_sync(__activemask(), v > 0) ? v : 0;\n"
            "}\n")
    new, left = _guards(text)
    assert left == [] and new is not None
    assert [line for line in new.splitlines() if line not in text.splitlines() and not line.startswith("#")] == [
        "  v += __shfl_down(v, 1, 16) + __shfl_up(v, 2, 32);  // width 16 kept",
        "  __builtin_amdgcn_wave_barrier();",
        "  return __any(v > 0) ? v : 0;",
    ]
    assert _guards(new) == (None, [])  # idempotent: the branches are HIP-guarded code now
    unknown = '__device__ void g(unsigned *p) {\n  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(p[0]), "l"(p));\n}\n'
    assert _guards(unknown) == (None, [
        "2: no #ifdef USE_ROCM branch written: inline PTX `cp.async.ca.shared.global [%0], [%1], 16;` has no known HIP form; port it by hand"])
    overload = ("__device__ half __shfl_up_sync(unsigned m, half v, unsigned d);\n"
                "__device__ half f(half v) {\n  return __shfl_up_sync(0xffffffff, v, 1);\n}\n")
    assert _guards(overload) == (None, [])  # the file's own overload, not the CUDA intrinsic
    crlf, _ = rocm_guards("__device__ void s() {\r\n  __syncwarp();\r\n}\r\n", "k.cu")
    assert crlf is not None and crlf.count("\r\n") == crlf.count("\n") == 7
    shared = "__device__ int h(int v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
    assert _guards(shared) == (None, [
        "1: no #ifdef USE_ROCM branch written: shares its line with other code, or sits in a macro; add the ROCm branch by hand"])


@pytest.mark.slow
def test_extension_guards_compile_with_hipcc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """verify compiles the port as a ROCm torch would (hipified, -DUSE_ROCM=1); the fork leaves the PTX and fails.
    The torch declarations are stand-ins (tests/data/torch_headers says why); test_real_headers.py uses the real ones."""
    require_tool("hipcc")
    monkeypatch.setenv("CPATH", str(TORCH_HEADERS))
    root = _copy("cuda-extension", tmp_path)
    result = verify(root, "gfx90a", Settings(max_file_size=1 << 20), PortOptions(BUILTIN))
    assert (result.strategy, result.failed, result.findings) == ("extension", (), ())
    assert [u.relpath for u in result.units] == ["csrc/binding.cpp", "csrc/rmsnorm.cu", "csrc/softmax.cu"]
    fork = verify(root, "gfx90a", Settings(max_file_size=1 << 20), PortOptions(BUILTIN, strategy="fork"))
    assert [u.relpath for u in fork.failed] == ["csrc/softmax.cu"]  # inline PTX: no engine translates it
    out = tmp_path / "ported"
    write_port(_plan(root), out_dir=out)
    for relpath in ("csrc/common.cuh", "csrc/softmax.cu", "csrc/rmsnorm.cu"):
        doc = parse_cuda(SourceFile(out / relpath, relpath, FileKind.CUDA, 0), (out / relpath).read_text())
        assert not doc.root.has_error  # the CUDA side still parses


# -- CMake and Make: one compat header --------------------------------------------------------------------------


def test_cmake_port_compat_header_names_exactly_what_is_used(tmp_path: Path) -> None:
    root = _copy("cmake-hpc", tmp_path)
    plan = _plan(root)
    assert plan.strategy == "cmake"
    assert [c.relpath for c in plan.changes] == [
        "CMakeLists.txt", "Dockerfile.rocm", "src/cuda_hip_compat.h", "src/main.cpp", "src/solver.cu", "src/stencil.cu"]
    new = {c.relpath: c.new.decode() for c in plan.changes}
    header = new["src/cuda_hip_compat.h"]
    assert re.findall(r"^#define (\w+) (\w+)$", header, re.M) == [
        ("CUDA_R_64F", "HIP_R_64F"), ("CUSPARSE_INDEX_32I", "HIPSPARSE_INDEX_32I"),
        ("CUSPARSE_INDEX_BASE_ZERO", "HIPSPARSE_INDEX_BASE_ZERO"), ("cublasCreate", "hipblasCreate"),
        ("cublasDestroy", "hipblasDestroy"), ("cublasDnrm2", "hipblasDnrm2"), ("cublasHandle_t", "hipblasHandle_t"),
        ("cudaDeviceProp", "hipDeviceProp_t"), ("cudaDeviceSynchronize", "hipDeviceSynchronize"), ("cudaFree", "hipFree"),
        ("cudaGetDeviceCount", "hipGetDeviceCount"), ("cudaGetDeviceProperties", "hipGetDeviceProperties"),
        ("cudaMalloc", "hipMalloc"), ("cudaMemset", "hipMemset"), ("cudaStreamCreate", "hipStreamCreate"),
        ("cudaStreamDestroy", "hipStreamDestroy"), ("cudaStreamSynchronize", "hipStreamSynchronize"),
        ("cudaStream_t", "hipStream_t"), ("cusparseCreate", "hipsparseCreate"), ("cusparseCreateCsr", "hipsparseCreateCsr"),
        ("cusparseDestroy", "hipsparseDestroy"), ("cusparseDestroySpMat", "hipsparseDestroySpMat"),
        ("cusparseHandle_t", "hipsparseHandle_t"), ("cusparseSpMatDescr_t", "hipsparseSpMatDescr_t")]
    assert re.findall(r"^#include <(.+)>$", header, re.M) == [
        "hip/hip_runtime.h", "hipblas/hipblas.h", "hipsparse/hipsparse.h", "cuda_runtime.h", "cublas_v2.h", "cusparse.h"]
    for relpath in ("src/main.cpp", "src/solver.cu", "src/stencil.cu"):
        expected, seen = [], False  # the first CUDA include becomes the compat header's, the others empty lines
        for line in (root / relpath).read_text().splitlines():
            if re.match(r"#include <(cuda_runtime|cublas_v2|cusparse)\.h>", line):
                line, seen = ("" if seen else '#include "cuda_hip_compat.h"'), True
            expected.append(line)
        assert new[relpath].splitlines() == expected
    assert "USE_HIP" in new["CMakeLists.txt"]  # the same USE_HIP path the fork writes (sidefiles.rocm_cmake)
    written = tmp_path / "out"
    write_port(plan, out_dir=written)
    assert _plan(written).changes == ()  # a second port changes nothing


def _runtime_only_cmake(tmp_path: Path) -> Path:
    """cmake-hpc without the cuBLAS/cuSPARSE solver and the Thrust file: none of these libraries is installed here
    for ROCm (nor cuBLAS/cuSPARSE for CUDA); reduce.cu is not in the CMake build either."""
    root = _copy("cmake-hpc", tmp_path)
    (root / "src" / "solver.cu").unlink()
    (root / "src" / "reduce.cu").unlink()
    cmake = (root / "CMakeLists.txt").read_text()
    trimmed = cmake.replace(" src/solver.cu", "").replace(" CUDA::cublas CUDA::cusparse", "")
    assert trimmed.count("\n") == cmake.count("\n") and trimmed != cmake
    (root / "CMakeLists.txt").write_text(trimmed)
    return root


@pytest.mark.slow
def test_cmake_port_builds_for_cuda_and_compiles_with_hipcc(tmp_path: Path) -> None:
    require_tool("hipcc")
    root = _runtime_only_cmake(tmp_path)
    assert write_port(_plan(root), use_git=False).written == (
        "CMakeLists.txt", "Dockerfile.rocm", "src/cuda_hip_compat.h", "src/main.cpp", "src/stencil.cu")
    result = verify(root, "gfx90a", Settings(max_file_size=1 << 20), PortOptions(BUILTIN))
    assert (result.strategy, [u.relpath for u in result.units], result.findings) == (
        "cmake", ["src/main.cpp", "src/stencil.cu"], ())
    require_tool("cmake")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    build = tmp_path / "build-cuda"
    for command in (["cmake", "-S", root, "-B", build, "-DUSE_HIP=OFF"], ["cmake", "--build", build]):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (build / "heatsolve").is_file()


@pytest.mark.slow
def test_cmake_full_fixture_fails_only_on_missing_rocm_libraries(tmp_path: Path) -> None:
    """Debian ships no hipBLAS or rocThrust headers: the full fixture's errors are those includes, nothing in the port."""
    require_tool("hipcc")
    result = verify(_copy("cmake-hpc", tmp_path), "gfx90a", Settings(max_file_size=1 << 20), PortOptions(BUILTIN))
    assert {(f.path, f.message) for f in result.findings} == {
        ("src/cuda_hip_compat.h", "hipcc: 'hipblas/hipblas.h' file not found"),
        ("src/reduce.cu", "hipcc: 'thrust/device_vector.h' file not found")}


@pytest.mark.slow
def test_make_port_builds_with_hipcc_and_nvcc(tmp_path: Path) -> None:
    require_tool("hipcc")
    require_tool("make")
    root = _make_project(tmp_path / "mk")
    plan = _plan(root)
    assert (plan.strategy, [c.relpath for c in plan.changes]) == ("make", ["Makefile.rocm", "cuda_hip_compat.h", "kern.cu"])
    kern = next(c.new.decode() for c in plan.changes if c.relpath == "kern.cu")
    assert kern == KERNEL.replace("#include <cuda_runtime.h>", '#include "cuda_hip_compat.h"')
    write_port(plan, use_git=False)
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    done = subprocess.run(["make", "-f", "Makefile.rocm"], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "--offload-arch=gfx90a" in done.stdout and (root / "app").is_file()
    if shutil.which("nvcc") is None:
        return
    (root / "app").unlink()
    done = subprocess.run(["make"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (root / "app").is_file()


def test_compat_header_never_overwrites_a_users_file(tmp_path: Path) -> None:
    root = _make_project(tmp_path / "mk")
    (root / "cuda_hip_compat.h").write_text("// ours\n")
    plan = _plan(root)
    assert [c.relpath for c in plan.changes] == ["Makefile.rocm"]
    assert [(f.rule, f.message) for f in plan.findings] == [("compat-header-exists", (
        "cuda_hip_compat.h exists and was not written by migrate: no compat header written; rename it and re-run"))]


def test_header_strategy_without_a_build_keeps_line_numbers(tmp_path: Path) -> None:
    """No build file: one compat header (never a fork unless asked); CR-only and CRLF files keep their line ends."""
    (tmp_path / "a.cu").write_bytes(b"#include <cuda.h>\r\n#include <cuda_runtime.h>\r\nvoid f(float **p) { cudaMalloc(p, 4); }\r\n")
    (tmp_path / "b.cu").write_bytes(b"#include <cuda_runtime.h>\rvoid g() { cudaDeviceSynchronize(); }\r")
    (tmp_path / "c.cu").write_bytes(b"\x00\x01cudaMalloc")  # binary: left alone
    plan = _plan(tmp_path)
    assert plan.strategy == "header"
    new = {c.relpath: c.new for c in plan.changes}
    assert sorted(new) == ["a.cu", "b.cu", "cuda_hip_compat.h"]
    assert new["a.cu"] == b'#include "cuda_hip_compat.h"\r\n\r\nvoid f(float **p) { cudaMalloc(p, 4); }\r\n'
    assert new["b.cu"] == b'#include "cuda_hip_compat.h"\rvoid g() { cudaDeviceSynchronize(); }\r'
    assert b"#define cudaMalloc hipMalloc\n#else\n#include <cuda_runtime.h>\n#include <cuda.h>\n#endif\n" in new[
        "cuda_hip_compat.h"].replace(b"#define cudaDeviceSynchronize hipDeviceSynchronize\n", b"")


# -- fork: today's behaviour -----------------------------------------------------------------------------------


def test_fork_translates_every_source(tmp_path: Path) -> None:
    root = _copy("cmake-hpc", tmp_path)
    plan = _plan(root, "fork")
    assert plan.strategy == "fork" and plan.reason.startswith("--strategy fork")
    new = {c.relpath: c.new.decode() for c in plan.changes}
    assert "src/cuda_hip_compat.h" not in new
    assert "  hipMalloc(&g.u, sizeof(double) * g.nx * g.ny);" in new["src/main.cpp"].splitlines()
    assert "#include <hip/hip_runtime.h>" in new["src/stencil.cu"]
