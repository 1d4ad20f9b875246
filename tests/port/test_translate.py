"""The builtin CUDA -> HIP engine against golden files, the hipify wrappers, and `migrate translate`."""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from migrate.cli import cli
from migrate.errors import InputError, ToolNotFound
from migrate.tools import run_tool
from migrate.port.translate import Engine, Options, ToolFailed, make_options, original_line, select_engine, translate_bytes, translate_file

from conftest import FIXTURES, ROOT, require_tool

INPUTS = FIXTURES / "translate" / "input"
GOLDEN = FIXTURES / "translate" / "expected"
NAMES = sorted(p.name for p in INPUTS.iterdir())
DEBIAN_ROCM = "5.2"  # Debian's hipcc is HIP 5.2.3: the goldens for an older release use it
# Option sets with their own goldens (expected/<variant>/<name>), beside the defaults (newest ROCm).
VARIANTS = {
    "rocm5.2": (make_options(rocm=DEBIAN_ROCM), ["warp.cu"]),
    "roc": (make_options(roc=True), ["libraries.cu", "unsupported.cu"]),
    "launch": (make_options(launch_syntax="hipLaunchKernelGGL"), ["kernels.cu", "helpers.cu"]),
}
CASES = [("", Options(), name) for name in NAMES] + [
    (variant, options, name) for variant, (options, names) in VARIANTS.items() for name in names
]


@pytest.mark.parametrize(("variant", "options", "name"), CASES, ids=[f"{v or 'default'}-{n}" for v, _, n in CASES])
def test_golden_translation(variant: str, options: Options, name: str, update_golden: bool) -> None:
    done = translate_bytes((INPUTS / name).read_bytes(), name, options)
    golden = GOLDEN / variant / name
    if update_golden:
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(done.translated)
    assert golden.exists(), f"missing golden {golden}; run pytest --update-golden and read the diff"
    assert done.translated == golden.read_bytes()


@pytest.mark.parametrize(("variant", "options", "name"), CASES, ids=[f"{v or 'default'}-{n}" for v, _, n in CASES])
def test_translation_is_idempotent(variant: str, options: Options, name: str) -> None:
    once = translate_bytes((INPUTS / name).read_bytes(), name, options).translated
    assert translate_bytes(once, name, options).translated == once


def test_lines_are_kept_so_errors_map_back() -> None:
    """Every line keeps its number, except the one HIP runtime include a .cu file without it gets."""
    for name in NAMES:
        source = (INPUTS / name).read_bytes()
        added = int(name.endswith(".cu") and b"hip/hip_runtime.h" not in source and b"cuda_runtime.h" not in source
                    and b"<cuda.h>" not in source)
        for options in (Options(), *(o for o, _ in VARIANTS.values())):
            assert translate_bytes(source, name, options).translated.count(b"\n") == source.count(b"\n") + added, name


def test_runtime_api_renamed_but_not_comments_strings_or_members() -> None:
    out = (GOLDEN / "runtime_api.cu").read_text()
    assert "hipMemcpyAsync(dev, host" in out and "hipStream_t stream" in out
    assert "/* cudaMalloc in a block comment stays; so does \"cudaMemcpy\" in a string. */" in out
    assert 'printf("uploaded with cudaMemcpyAsync\\n");' in out
    assert "a.cudaMalloc(16)" in out and "pa->cudaMalloc(32)" in out


def test_headers_map_once_and_thrust_stays() -> None:
    out = (GOLDEN / "runtime_api.cu").read_text()
    assert out.count("#include <hip/hip_runtime.h>") == 1
    assert "cuda.h" not in out and "cuda_runtime.h" not in out
    libs = (GOLDEN / "libraries.cu").read_text()
    for header in ("hipblas.h", "hiprand/hiprand.h", "hipfft/hipfft.h", "hipsparse.h",
                   "hipcub/hipcub.hpp", "rccl/rccl.h", "thrust/device_vector.h"):
        assert f"#include <{header}>" in libs
    assert "hipcub::DeviceReduce::Sum" in libs and "thrust::reduce" in libs


def test_launch_syntax_is_kept() -> None:
    out = (GOLDEN / "kernels.cu").read_text()
    assert "saxpy<<<grid, block, 0, stream>>>(n, 2.0f, x, y);" in out


def test_launch_as_hipify_clang_writes_it() -> None:
    source = b"#include <cuda.h>\nvoid f() {\n  k<<<1,n>>>(d, n);\n  e<<<g , b>>> ( );\n  t<float, 2><<<dim3(1, 1), 4, 0,\n    s>>>(p);\n}\n"
    out = translate_bytes(source, "l.cu", make_options(launch_syntax="hipLaunchKernelGGL")).translated
    assert out.splitlines()[2:6] == [
        b"  hipLaunchKernelGGL(k, dim3(1), dim3(n), 0, 0, d, n);", b"  hipLaunchKernelGGL(e, dim3(g), dim3(b), 0, 0);",
        b"  hipLaunchKernelGGL(HIP_KERNEL_NAME(t<float, 2>), dim3(1, 1), dim3(4), 0,", b"    s, p);",
    ]


def test_user_declared_names_are_never_renamed() -> None:
    out = (GOLDEN / "lookalikes.cuh").read_text()
    assert "inline int cudaGetDeviceCount(int *count)" in out
    assert "  cudaGetDeviceCount(&n);" in out
    assert "inline void sync_all() { hipDeviceSynchronize(); }" in out


def test_already_hip_code_is_unchanged() -> None:
    source = (INPUTS / "hip_ported.cpp").read_bytes()
    assert not translate_bytes(source, "hip_ported.cpp").changed


def test_cudnn_is_left_and_reported() -> None:
    done = translate_bytes((INPUTS / "unsupported.cu").read_bytes(), "unsupported.cu")
    assert b"cudnnCreateTensorDescriptor(&desc);" in done.translated
    assert b"hipDeviceSynchronize();" in done.translated
    assert [(f.line, f.symbol, f.category) for f in done.findings] == [
        (4, "cudnnHandle_t", "unsupported-api"),
        (5, "cudnnTensorDescriptor_t", "unsupported-api"),
        (6, "cudnnCreateTensorDescriptor", "unsupported-api"),
    ]


def test_name_without_hip_equivalent_is_reported() -> None:
    done = translate_bytes(b"void f() { cudaArrayGetPlane(0, 0, 0); cudaFree(0); }\n", "x.cpp")
    assert [(f.symbol, f.rule, f.column) for f in done.findings] == [("cudaArrayGetPlane", "translate-unsupported-api", 12)]
    assert done.translated == b"void f() { cudaArrayGetPlane(0, 0, 0); hipFree(0); }\n"


def test_crlf_is_kept() -> None:
    source = b"#include <cuda_runtime.h>\r\nvoid f(float **p) {\r\n  cudaMalloc(p, 4);\r\n}\r\n"
    done = translate_bytes(source, "crlf.cu")
    assert done.translated == b"#include <hip/hip_runtime.h>\r\nvoid f(float **p) {\r\n  hipMalloc(p, 4);\r\n}\r\n"


def test_latin1_file_round_trips() -> None:
    source = "// Kommentar: Größe in Bytes\nvoid f(float **p) { cudaMalloc(p, 4); }\n".encode("latin-1")
    done = translate_bytes(source, "latin1.cpp")
    assert done.translated == source.replace(b"cudaMalloc", b"hipMalloc")
    assert "Größe".encode("latin-1") in done.translated


def test_utf8_bom_and_missing_final_newline_are_kept() -> None:
    source = b"\xef\xbb\xbf// \xc3\xa9\nvoid f() { cudaDeviceSynchronize(); }"
    assert translate_bytes(source, "bom.cpp").translated == source.replace(b"cudaDevice", b"hipDevice")


def test_guarded_hip_branch_is_left_alone() -> None:
    source = b"#ifdef __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime.h>\n#else\n#include <cuda_runtime.h>\n#endif\n"
    assert not translate_bytes(source, "dual.h").changed


def test_binary_file_is_skipped(tmp_path: Path) -> None:
    blob = tmp_path / "blob.cu"
    blob.write_bytes(b"\x00\x01cudaMalloc")
    done = translate_file(blob, "blob.cu", Engine("builtin"))
    assert done.skipped == "binary file" and not done.changed


# -- engines -------------------------------------------------------------------------------------------------------


def _fake_tool(tmp_path: Path, name: str, script: str) -> Path:
    path = tmp_path / "bin" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_auto_falls_back_to_builtin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    monkeypatch.setattr("migrate.tools.search_dirs", lambda: [tmp_path / "rocm" / "bin"])
    assert select_engine("auto").name == "builtin"
    with pytest.raises(ToolNotFound, match="hipify-perl not found"):
        select_engine("perl")


def test_auto_prefers_hipify_clang_then_perl(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    perl = _fake_tool(tmp_path, "hipify-perl", "exit 0\n")
    monkeypatch.setenv("PATH", str(perl.parent))
    monkeypatch.setattr("migrate.tools.search_dirs", lambda: [])
    assert select_engine("auto") == Engine("hipify-perl", perl)
    clang = _fake_tool(tmp_path, "hipify-clang", "exit 0\n")
    assert select_engine("auto").name == "hipify-clang" and select_engine("auto").executable == clang


def test_tool_found_in_rocm_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rocm_bin = tmp_path / "rocm" / "bin"
    rocm_bin.mkdir(parents=True)
    _fake_tool(tmp_path, "hipify-perl", "exit 0\n").rename(rocm_bin / "hipify-perl")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    assert select_engine("perl").executable == rocm_bin / "hipify-perl"


def test_hipify_perl_output_and_warnings_become_data(tmp_path: Path) -> None:
    perl = _fake_tool(tmp_path, "hipify-perl", (
        "sed 's/cudaMalloc/hipMalloc/g' \"$1\"\n"
        "echo \"  warning: $1:#2 : unsupported device function \\\"__nanosleep\\\"\" >&2\n"
    ))
    source = tmp_path / "k.cu"
    source.write_text("void f(float **p) { cudaMalloc(p, 4); }\n__device__ void g() { __nanosleep(10); }\n")
    done = translate_file(source, "k.cu", Engine("hipify-perl", perl))
    assert done.translated.startswith(b"void f(float **p) { hipMalloc(p, 4); }")
    assert [(f.line, f.category, f.rule) for f in done.findings] == [(2, "unsupported-api", "hipify-unconverted")]
    assert "__nanosleep" in done.findings[0].message


def test_failing_tool_is_an_error_not_a_success(tmp_path: Path) -> None:
    perl = _fake_tool(tmp_path, "hipify-perl", "echo 'error: cannot open file' >&2\nexit 3\n")
    source = tmp_path / "k.cu"
    source.write_text("void f() { cudaDeviceSynchronize(); }\n")
    with pytest.raises(ToolFailed, match="hipify-perl exited with 3: error: cannot open file") as caught:
        translate_file(source, "k.cu", Engine("hipify-perl", perl))
    assert caught.value.run.returncode == 3


def test_tool_with_empty_output_is_a_failure(tmp_path: Path) -> None:
    perl = _fake_tool(tmp_path, "hipify-perl", "exit 0\n")
    source = tmp_path / "k.cu"
    source.write_text("void f() { cudaDeviceSynchronize(); }\n")
    with pytest.raises(ToolFailed, match="produced no output"):
        translate_file(source, "k.cu", Engine("hipify-perl", perl))


def test_hipify_clang_uses_compile_db_and_reports_warnings(tmp_path: Path) -> None:
    clang = _fake_tool(tmp_path, "hipify-clang", (
        "echo \"$@\" > \"$(dirname \"$0\")/args\"\n"
        "out=\"\"; prev=\"\"; for a in \"$@\"; do [ \"$prev\" = -o ] && out=\"$a\"; prev=\"$a\"; done\n"
        "sed 's/cudaFree/hipFree/g' \"$1\" > \"$out\"\n"
        "echo \"$1:1:12: warning: CUDA identifier is unsupported in HIP.\" >&2\n"
    ))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "compile_commands.json").write_text("[]")
    source = repo / "k.cu"
    source.write_text("void f() { cudaFree(0); }\n")
    engine = select_engine("clang", hipify_clang=clang, root=repo)
    done = translate_file(source, "k.cu", engine)
    assert done.translated == b"void f() { hipFree(0); }\n"
    assert [(f.line, f.column) for f in done.findings] == [(1, 12)]
    assert f"-p {repo}" in (clang.parent / "args").read_text()


def _hipify_perl() -> Path:
    """The real hipify-perl: $MIGRATE_HIPIFY_PERL (CI points it at ../shared/tools/hipify), else PATH."""
    given = os.environ.get("MIGRATE_HIPIFY_PERL") or shutil.which("hipify-perl")
    if given and Path(given).is_file():
        return Path(given)
    message = f"hipify-perl not found (MIGRATE_HIPIFY_PERL={os.environ.get('MIGRATE_HIPIFY_PERL', '')!r})"
    if os.environ.get("MIGRATE_REQUIRE_TOOLS"):
        pytest.fail(f"{message} and MIGRATE_REQUIRE_TOOLS is set")
    pytest.skip(message)


@pytest.mark.slow
def test_real_hipify_perl_translates_fixtures() -> None:
    perl = _hipify_perl()
    done = translate_file(INPUTS / "kernels.cu", "kernels.cu", select_engine("perl", hipify_perl=perl))
    assert done.engine == "hipify-perl" and b"hipStreamCreateWithFlags(&stream, hipStreamNonBlocking);" in done.translated
    assert b"saxpy<<<grid, block, 0, stream>>>(n, 2.0f, x, y);" in done.translated


@pytest.mark.slow
def test_real_hipify_perl_gets_roc_and_launch_options() -> None:
    perl = _hipify_perl()
    options = make_options(roc=True, launch_syntax="hipLaunchKernelGGL")
    engine = select_engine("perl", hipify_perl=perl, options=options)
    libraries = translate_file(INPUTS / "libraries.cu", "libraries.cu", engine).translated
    assert b"rocblas_sdot(handle, n, x, 1, y, 1, &result);" in libraries
    kernels = translate_file(INPUTS / "kernels.cu", "kernels.cu", engine).translated
    assert b"hipLaunchKernelGGL(saxpy, grid, block, 0, stream, n, 2.0f, x, y);" in kernels


@pytest.mark.slow
def test_real_hipify_perl_through_the_command(tmp_path: Path) -> None:
    perl = _hipify_perl()
    out = tmp_path / "k.hip"
    args = ["translate", str(INPUTS / "kernels.cu"), "-o", str(out), "--engine", "perl", "--hipify-perl", str(perl)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "engine: hipify-perl" in result.stderr and b"hipStreamSynchronize(stream);" in out.read_bytes()


def test_real_hipify_clang_translates_runtime_fixture() -> None:
    # hipify-clang is not packaged for Debian (apt-cache search hipify: nothing) nor on PyPI, so even CI skips it.
    if not shutil.which("hipify-clang"):
        pytest.skip("hipify-clang is not installed (not installable here: no Debian or PyPI package)")
    done = translate_file(INPUTS / "kernels.cu", "kernels.cu", select_engine("clang"))
    assert b"hipStreamCreateWithFlags" in done.translated


# -- what the builtin engine fixes beyond names ----------------------------------------------------------------------


def test_cu_file_gets_the_runtime_header_once_before_its_first_directive() -> None:
    source = b"// licence\r\n#include <cstdio>\r\n__global__ void k() {}\r\n"
    out = translate_bytes(source, "k.cu").translated
    assert out == b"// licence\r\n#include <hip/hip_runtime.h>\r\n#include <cstdio>\r\n__global__ void k() {}\r\n"
    assert translate_bytes(b"#include <cuda_runtime.h>\nvoid f();\n", "k.cu").translated.count(b"hip_runtime") == 1
    assert not translate_bytes(source, "k.cuh").changed and not translate_bytes(source, "k.cpp").changed


@pytest.mark.parametrize(("source", "translated"), [
    (b"#pragma once\n#include <cstdio>\n", b"#pragma once\n#include <hip/hip_runtime.h>\n#include <cstdio>\n"),
    (b"// g\n#ifndef G_CUH\n#define G_CUH\nint g;\n#endif\n",
     b"// g\n#ifndef G_CUH\n#include <hip/hip_runtime.h>\n#define G_CUH\nint g;\n#endif\n"),
    (b"#ifndef G_CUH\n#pragma once\n#define G_CUH\n#endif\n",
     b"#ifndef G_CUH\n#include <hip/hip_runtime.h>\n#pragma once\n#define G_CUH\n#endif\n"),
    # not a guard: the #ifndef tests another name than it defines, or defines nothing first
    (b"#ifndef N\n#define M 1\n#endif\n", b"#include <hip/hip_runtime.h>\n#ifndef N\n#define M 1\n#endif\n"),
    (b"#ifndef N\nint n;\n#define N\n#endif\n", b"#include <hip/hip_runtime.h>\n#ifndef N\nint n;\n#define N\n#endif\n"),
])
def test_runtime_header_goes_inside_the_include_guard_and_after_pragma_once(source: bytes, translated: bytes) -> None:
    assert translate_bytes(source, "g.cu").translated == translated


def test_a_comment_naming_the_runtime_header_does_not_stand_for_its_include() -> None:
    source = b"// ported from CUDA; see hip/hip_runtime.h\n__global__ void k() {}\n"
    out = translate_bytes(source, "k.cu").translated
    assert out == b"// ported from CUDA; see hip/hip_runtime.h\n#include <hip/hip_runtime.h>\n__global__ void k() {}\n"
    assert translate_bytes(out, "k.cu").translated == out


def test_roc_names_the_rocblas_types() -> None:
    source = b"cuComplex a; cuDoubleComplex b; __half *h; __nv_bfloat16 *bf;\n"
    roc = translate_bytes(source, "t.cpp", make_options(roc=True)).translated
    assert roc == b"rocblas_float_complex a; rocblas_double_complex b; rocblas_half *h; rocblas_bfloat16 *bf;\n"
    hip = translate_bytes(source, "t.cpp", make_options(rocm="6.2")).translated
    assert hip == b"hipComplex a; hipDoubleComplex b; __half *h; __hip_bfloat16 *bf;\n"


def test_warp_intrinsics_follow_the_rocm_release() -> None:
    source = (INPUTS / "warp.cu").read_bytes()
    old = translate_bytes(source, "warp.cu", make_options(rocm="5.2"))
    assert [(f.line, f.symbol) for f in old.findings] == [
        (4, "__shfl_down_sync"), (9, "__shfl_down_sync"), (14, "__shfl_sync"), (15, "__ballot_sync"),
        (16, "__syncwarp"), (17, "__any_sync"), (18, "__shfl_xor_sync"),
    ]
    assert {f.rule for f in old.findings} == {"translate-warp-size"} and "32-lane" in old.findings[0].message
    new = translate_bytes(source, "warp.cu", make_options(rocm="6.2"))
    assert [(f.line, f.symbol) for f in new.findings] == [(4, "__shfl_down_sync"), (14, "__shfl_sync")]
    assert new.translated == translate_bytes(source, "warp.cu").translated  # the default is the newest release


def test_default_rocm_is_the_newest_release_in_the_knowledge_base() -> None:
    lines = yaml.safe_load((ROOT / "rules" / "data" / "gpu_archs.yaml").read_text(encoding="utf-8"))["lines"]
    releases = [tuple(map(int, v.split("."))) for label in lines.values() for v in re.findall(r"\d+\.\d+", label)]
    assert Options().rocm_version == max(releases)


def test_options_are_checked() -> None:
    with pytest.raises(InputError, match="--rocm six: expected a ROCm release"):
        make_options(rocm="six")
    with pytest.raises(InputError, match="--launch-syntax"):
        make_options(launch_syntax="triple-chevron")
    assert make_options(rocm="6.2").rocm_version == (6, 2) and Options().rocm_version >= (6, 2)


@pytest.mark.parametrize(("rocm", "header"), [("5.2", b"hip/hip_bfloat16.h"), ("6.2", b"hip/hip_bf16.h")])
def test_bf16_header_follows_the_rocm_release(rocm: str, header: bytes) -> None:
    out = translate_bytes(b"#include <cuda_bf16.h>\n", "b.h", make_options(rocm=rocm)).translated
    assert out == b"#include <" + header + b">\n"


@pytest.mark.parametrize(("rocm", "scalar", "pair"), [
    ("5.2", b"hip_bfloat16 *x", b"__nv_bfloat162 *y"),  # the old struct; no pair type before hip_bf16.h
    ("6.2", b"__hip_bfloat16 *x", b"__hip_bfloat162 *y"),
])
def test_bf16_types_follow_the_rocm_release(rocm: str, scalar: bytes, pair: bytes) -> None:
    source = b"__global__ void k(__nv_bfloat16 *x, __nv_bfloat162 *y) {}\n"
    out = translate_bytes(source, "b.cu", make_options(rocm=rocm))
    assert scalar in out.translated and pair in out.translated
    assert [f.symbol for f in out.findings] == ([] if rocm == "6.2" else ["__nv_bfloat162"])


def test_hipify_header_spellings() -> None:
    source = b"#include <math_constants.h>\n#include <curand_mtgp32_host.h>\n#include <device_functions.h>\n"
    assert translate_bytes(source, "h.h").translated == (
        b"#include <hip/hip_math_constants.h>\n#include <hiprand/hiprand_mtgp32_host.h>\n#include <hip/device_functions.h>\n"
    )


def test_cub_namespace_renamed_only_where_cub_is_included() -> None:
    body = b"using namespace cub;\n#define SUM cub::DeviceReduce::Sum\n"
    out = translate_bytes(b"#include <cub/cub.cuh>\n" + body, "r.h").translated
    assert out == b"#include <hipcub/hipcub.hpp>\nusing namespace hipcub;\n#define SUM hipcub::DeviceReduce::Sum\n"
    assert translate_bytes(body, "r.h").translated == body


@pytest.mark.parametrize(("call", "translated"), [
    (b"cudaStreamWaitEvent(s, e)", b"hipStreamWaitEvent(s, e, 0)"),  # CUDA defaults the flags, HIP on AMD only
    (b"cudaStreamWaitEvent(s, e, 1)", b"hipStreamWaitEvent(s, e, 1)"),
    (b"cudaEventCreate(e, cudaEventDisableTiming)", b"hipEventCreateWithFlags(e, hipEventDisableTiming)"),
    (b"cudaEventCreate(e)", b"hipEventCreate(e)"),
    (b"cudaMalloc3DArray(a, d, x, 2)", b"hipMalloc3DArray(a, d, x, 2)"),  # an unexpected arity is left alone
    (b"cudaMallocHost(&buf, n)", b"hipHostMalloc(&buf, n, hipHostMallocDefault)"),
    (b"cudaHostAlloc(&buf, n, cudaHostAllocMapped)", b"hipHostMalloc(&buf, n, hipHostMallocMapped)"),
    # CUDA 12's three-argument form; CUDA 11's five arguments are HIP's own
    (b"cudaGraphInstantiate(&exec, g, 0)", b"hipGraphInstantiateWithFlags(&exec, g, 0)"),
    (b"cudaGraphInstantiate(&exec, g, 0, 0, 0)", b"hipGraphInstantiate(&exec, g, 0, 0, 0)"),
    (b"cusparseSpSM_solve(h, a, b, &one, A, B, C, t, alg, d)",
     b"hipsparseSpSM_solve(h, a, b, &one, A, B, C, t, alg, d, nullptr)"),
    (b"cuOccupancyMaxPotentialBlockSizeWithFlags(&g, &b, fn, 0, 64, 0, 1)",
     b"hipModuleOccupancyMaxPotentialBlockSizeWithFlags(&g, &b, fn, 64, 0, 1)"),
    (b"cudaGraphAddMemcpyNodeToSymbol(&n, g, 0, 0, table, src, 8, 0, cudaMemcpyHostToDevice)",
     b"hipGraphAddMemcpyNodeToSymbol(&n, g, 0, 0, HIP_SYMBOL(table), src, 8, 0, hipMemcpyHostToDevice)"),
    (b"cudaGraphExecMemcpyNodeSetParamsFromSymbol(e, n, dst, table, 8, 0, cudaMemcpyDeviceToHost)",
     b"hipGraphExecMemcpyNodeSetParamsFromSymbol(e, n, dst, HIP_SYMBOL(table), 8, 0, hipMemcpyDeviceToHost)"),
])
def test_call_rewrites_follow_the_number_of_arguments(call: bytes, translated: bytes) -> None:
    source = b"void f() { " + call + b"; }\n"
    assert translate_bytes(source, "c.cpp").translated == b"void f() { " + translated + b"; }\n"


def test_original_line_skips_the_inserted_include() -> None:
    source = b"// c\nvoid f() {\n  cudaDeviceSynchronize();\n}\n"
    out = translate_bytes(source, "f.cu").translated
    assert out.splitlines()[1] == b"#include <hip/hip_runtime.h>"
    assert [original_line(source, out, n) for n in range(1, 6)] == [1, 1, 2, 3, 4]
    assert original_line(source, source.replace(b"cuda", b"hip"), 3) == 3


def _compile(hipcc: str, path: Path) -> str:
    run = run_tool([hipcc, "--offload-arch=gfx90a", "-fsyntax-only", "-x", "hip", path], env={"HIP_PLATFORM": "amd"})
    return "" if run.ok else run.stderr


@pytest.mark.slow
def test_translated_fixtures_compile_with_the_installed_hipcc(tmp_path: Path) -> None:
    """The builtin output for hipcc's own ROCm release compiles; before 6.2 the newest release's *_sync calls do not."""
    hipcc = require_tool("hipcc")
    found = re.search(r"HIP version:\s*(\d+\.\d+)", run_tool([hipcc, "--version"], env={"HIP_PLATFORM": "amd"}).stdout.decode())
    assert found, "hipcc --version names no HIP version"
    options = make_options(rocm=found.group(1))
    for name in NAMES:
        (tmp_path / name).write_bytes(translate_bytes((INPUTS / name).read_bytes(), name, options).translated)
    for name in ("kernels.cu", "runtime_api.cu", "warp.cu", "helpers.cu"):
        assert _compile(hipcc, tmp_path / name) == "", name
    if options.rocm_version < (6, 2):
        (tmp_path / "new.cu").write_bytes(translate_bytes((INPUTS / "warp.cu").read_bytes(), "warp.cu").translated)
        assert "__shfl_down_sync" in _compile(hipcc, tmp_path / "new.cu")
