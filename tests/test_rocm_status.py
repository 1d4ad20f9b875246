"""ROCm status: the preprocessor as a HIP build sees it, the evidence, the levels, and the calibration fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate import preproc, rocm_status
from migrate.parse.lexer import lex
from migrate.cli import cli
from migrate.config import Settings
from migrate.model import FileKind, Severity
from migrate.weights import load_weights
from migrate.scan import scan

W = load_weights()


def directives(text: str) -> tuple[preproc.Directive, ...]:
    """The preprocessor lines of a C/C++/CUDA text, as the scan reads them (from the lexer's pass)."""
    return lex(text, frozenset()).directives


def write(root: Path, relpath: str, text: str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- the preprocessor ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("defined(__HIP_PLATFORM_AMD__)", (True, True)),
        ("!defined(USE_ROCM)", (False, True)),
        ("defined(__HIP_PLATFORM_NVIDIA__)", (False, True)),
        ("defined(GGML_USE_HIP) && defined(FOO)", (None, False)),
        ("defined(__CUDA_ARCH__) && !defined(MYLIB_USE_HIP)", (False, True)),
        ("defined(__CUDA_ARCH__) || defined(WITH_ROCM)", (True, True)),
        ("__CUDA_ARCH__ >= 800", (None, False)),  # a CUDA macro alone says nothing about HIP
        ("defined(NO_HIP_GRAPHS)", (None, False)),  # named for HIP, but says the opposite
        ("CUDART_VERSION >= 11000 && !defined(USE_ROCM)", (False, True)),
        ("(", (None, False)),
    ],
)
def test_conditions_evaluate_three_valued_with_the_hip_macros(expression: str, expected: tuple[object, bool]) -> None:
    assert preproc.evaluate(expression, {}) == expected


COMMON = """\
#pragma once
#ifndef COMMON_CUH
#define COMMON_CUH
#if !defined(GGML_USE_HIP) && __CUDA_ARCH__ >= 750
#define TURING_MMA_AVAILABLE
#endif
#if defined(GGML_USE_HIP)
#define WAVE64_BUILD 1
#else
#define CP_ASYNC_AVAILABLE 1
#endif
#endif
"""
MMA = """\
#include "common.cuh"
#ifdef TURING_MMA_AVAILABLE
asm("mma.sync.aligned.m16n8k16;");
#else
fallback();
#endif
#if CP_ASYNC_AVAILABLE
asm("cp.async.wait_all;");
#elif WAVE64_BUILD
amd();
#endif
#if __CUDA_ARCH__ >= 800
asm("ldmatrix.sync;");
#endif
#ifndef COMMON_CUH
never_guarded_by_an_include_guard();
#endif
"""


def test_macros_defined_only_when_hip_is_not_are_followed_across_headers() -> None:
    files = {"common.cuh": directives(COMMON), "mma.cu": directives(MMA)}
    table = preproc.settle(files)
    assert table["TURING_MMA_AVAILABLE"] == preproc.Macro(preproc.UNDEFINED, True)
    assert table["CP_ASYNC_AVAILABLE"] == preproc.Macro(preproc.UNDEFINED, True)
    assert table["WAVE64_BUILD"] == preproc.Macro(preproc.DEFINED, True, 1)
    assert "COMMON_CUH" not in table  # an include guard says nothing about the build
    assert preproc.dead_ranges(files["mma.cu"], table) == ((2, 4), (7, 9))


CHAIN = {  # each macro's state follows from the one before: three rounds to settle
    "a.h": "#ifndef USE_ROCM\n#define STEP1 1\n#endif\n",
    "b.h": "#ifndef STEP1\n#define STEP2 1\n#endif\n#if STEP2\nb_dead();\n#endif\n",
    "c.h": "#ifdef STEP2\n#else\n#define STEP3 1\n#endif\n",
    "d.cu": "#if defined(STEP3) || UNRELATED\nx();\n#endif\n#ifdef STEP1\ny();\n#endif\n",
    "e.cu": "#if !defined(STEP1)\nz();\n#endif\n",
}


def naive_settle(files: dict[str, tuple[preproc.Directive, ...]], rounds: int) -> dict[str, preproc.Macro]:
    table: dict[str, preproc.Macro] = {}
    for _ in range(rounds):
        new = preproc.table_from(preproc.run(found, table) for found in files.values())
        if new == table:
            break
        table = new
    return table


@pytest.mark.parametrize("rounds", [1, 2, 3, 5])
def test_settling_rewalks_only_what_changed_and_gives_what_walking_everything_gives(rounds: int) -> None:
    files = {path: directives(text) for path, text in {**CHAIN, "mma.cu": MMA, "common.cuh": COMMON}.items()}
    settled = preproc.Settled(files, rounds=rounds)
    table = naive_settle(files, rounds)
    assert settled.table == table == preproc.settle(files, rounds=rounds)
    for path, found in files.items():
        assert settled.dead_ranges(path) == preproc.dead_ranges(found, table), path
    if rounds >= 3:
        assert table["STEP1"] == preproc.Macro(preproc.UNDEFINED, True) and "STEP3" in table
        assert settled.dead_ranges("d.cu") == ((4, 6),) and settled.dead_ranges("e.cu") == ()


def test_continuation_lines_and_comments_in_directives() -> None:
    found = directives("#if defined(A) && \\\n    !defined(USE_ROCM) /* cuda */\nx\n#endif\n")
    assert found == (preproc.Directive(1, "if", "defined(A) &&      !defined(USE_ROCM)"), preproc.Directive(4, "endif", ""))
    assert preproc.dead_ranges(found, {}) == ((1, 4),)


# --- evidence and levels ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kind", "relpath", "text", "expected"),
    [
        (FileKind.CMAKE, "CMakeLists.txt", "if(USE_HIP)\n  enable_language(HIP)\nendif()\n", [("build", 1), ("build", 2)]),
        (FileKind.CMAKE, "CMakeLists.txt", "find_package(hip REQUIRED)\n", [("build", 1)]),
        (FileKind.SETUP_PY, "setup.py", "import torch\nif torch.version.hip:\n    pass\n", [("build", 2)]),
        (FileKind.PYTHON, "op_builder/builder.py", "if self.is_rocm_pytorch():\n    x = ROCM_HOME\n", [("build", 1), ("build", 2)]),
        (FileKind.PYTHON, "pkg/ops.py", "# torch.version.hip in a comment\nIS_HIP = torch.version.hip is not None\n", [("runtime", 2)]),
        (FileKind.CI_WORKFLOW, ".github/workflows/ci.yml", "jobs:\n  t:\n    runs-on: [self-hosted, mi300]\n", [("ci", 3)]),
        (FileKind.DOCKERFILE, "docker/Dockerfile.rocm", "FROM rocm/pytorch:latest\n", [("packaging", 1)]),
        (FileKind.REQUIREMENTS, "requirements-gpu.txt", "--index-url https://download.pytorch.org/whl/rocm6.2\n", [("packaging", 1)]),
        (FileKind.MARKDOWN, "README.md", "# x\n\nTo install on ROCm, run `pip install x`.\n", [("docs", 3)]),
        (FileKind.MARKDOWN, "README.md", "Runs on CUDA GPUs.\n", []),
        # docs that say ROCm is absent or only planned are not evidence of a ROCm path
        (FileKind.MARKDOWN, "README.md", "## Requirements\n\nAMD GPUs are not supported yet.\n", []),
        (FileKind.MARKDOWN, "README.md", "Native ROCm support is planned for a later release.\n", []),
        (FileKind.MARKDOWN, "README.md", "## What is missing\n\n- ROCm support\n- paged attention\n", []),
        (FileKind.MARKDOWN, "README.md", "## Roadmap\n\n## Install\n\n- ROCm support: pip install x[rocm]\n",
         [("docs", 5)]),
        (FileKind.SETUP_PY, "setup.py", "from torch.utils.cpp_extension import CUDAExtension\n", [("torch-extension", 1), ("torch-hipify", 1)]),
        (FileKind.CMAKE, "src/kernels/CMakeLists.txt", "set(S a.cu)\nADD_LIBRARY(kernels STATIC ${S})\n",
         [("library-build", 2), ("library-target", 2)]),
        (FileKind.CMAKE, "samples/scan/CMakeLists.txt", "add_library(util u.cu)\ncuda_add_executable(scan m.cu)\n",
         [("library-target", 1)]),
        (FileKind.CMAKE, "tools/CMakeLists.txt", "target_link_libraries(t PUBLIC core CUDA::cudart ${LIBS} -lm)\n",
         [("library-link", 1)]),
        (FileKind.CMAKE, "src/CMakeLists.txt", "# add_library(old) is gone\nadd_subdirectory(kernels)\n", []),
        (FileKind.MAKEFILE, "core/Makefile", "NAME = align\nLIB = ../lib/lib$(NAME).a\n$(LIB): $(OBJ)\n\tar rcs $(LIB) $(OBJ)\n",
         [("library-target", 1)]),
        (FileKind.MAKEFILE, "cli/Makefile", "LD_FLAGS = -L../lib -lalign -lpthread\nDEP_LIBS = ../lib/libalign.a\n",
         [("library-link", 1), ("library-link", 1)]),
        (FileKind.MAKEFILE, "app/Makefile", "LIB = libfoo.a\nall:\n\t$(CC) -o app main.c\n", [("library-link", 1)]),
        # configure's own HIP switch; a help text that only names HIP is not one
        (FileKind.AUTOCONF, "configure.ac", "AC_ARG_WITH([cuda])\nAC_ARG_WITH([hip], [AS_HELP_STRING([--with-hip])])\n",
         [("build", 2)]),
        (FileKind.AUTOCONF, "configure.ac", "AC_ARG_WITH([gpu], [AS_HELP_STRING([--with-gpu], [no HIP yet])])\n", []),
    ],
)
def test_evidence_per_file_kind(kind: FileKind, relpath: str, text: str, expected: list[tuple[str, int]]) -> None:
    assert [(e.kind, e.line) for e in rocm_status.evidence(kind, relpath, text)] == expected


def test_source_evidence_reads_the_lexed_code() -> None:
    text = ('// #include <hip/commented_out.h>\n#include "hip/hip_runtime.h"\n  #  include <hip/hip_fp16.h>\n'
            '#include <cuda.h>\n/* #include <hip/in_a_comment.h>\n */\n#ifdef USE_ROCM\n#include <hip/a.h>\n'
            '#include <hip/b.h>\n#endif\n')
    lexed = lex(text, frozenset())
    found = rocm_status.source_evidence("k.cu", text, lexed.includes, lexed.directives)
    assert [(e.kind, e.line, e.text, e.weight) for e in found] == [
        ("hip-source", 2, '#include "hip/hip_runtime.h"', 2),
        ("hip-source", 3, "#  include <hip/hip_fp16.h>", 2),
        ("hip-source", 8, "#include <hip/a.h>", 2),  # three per file
        ("guard", 7, "#ifdef USE_ROCM", 1),
    ]
    assert [e.kind for e in rocm_status.source_evidence("k.hip", "int x;\n", [], ())] == ["hip-source"]


def test_lexed_directives_are_the_preprocessor_lines_of_the_code() -> None:
    text = ('#define A 1 /* one */\n  # if defined(A) && \\\n    !defined(USE_ROCM) // cuda\nx\n#else\n#undef A\n#endif\n'
            '/*\n#if 0\n*/\nconst char* s = "\\n#if 0";\n')
    assert directives(text) == (  # not the #if in a comment, nor the one in a string
        preproc.Directive(1, "define", "A 1"),
        preproc.Directive(2, "if", "defined(A) &&      !defined(USE_ROCM)"),
        preproc.Directive(5, "else", ""),
        preproc.Directive(6, "undef", "A"),
        preproc.Directive(7, "endif", ""),
    )


def test_levels_follow_the_weights() -> None:
    build = rocm_status.evidence(FileKind.CMAKE, "CMakeLists.txt", "enable_language(HIP)\nfind_package(hip)\n")
    guard = rocm_status.guard_evidence("k.cu", directives("#ifdef USE_ROCM\n#endif\n"))
    docs = rocm_status.evidence(FileKind.MARKDOWN, "README.md", "Install on ROCm with pip.\n")
    assert rocm_status.assess([], W.status).level == "none"
    assert rocm_status.assess(docs, W.status).level == "none"
    assert rocm_status.assess(guard, W.status, guarded=3).level == "partial"
    assert rocm_status.assess(build, W.status).level == "partial"  # a build path alone: nothing HIP-specific yet
    supported = rocm_status.assess([*build, *guard], W.status, guarded=3)
    assert (supported.level, supported.score) == ("supported", 9)
    assert supported.hipify_dirs == ("",)


# --- the scan: guarded code, other backends, setup.py and CMake HIP branches ------------------------------

def test_a_finding_a_hip_build_never_compiles_is_guarded_not_work(tmp_path: Path) -> None:
    write(tmp_path, "src/common.cuh", COMMON)
    write(tmp_path, "src/mma.cu", MMA.replace('fallback();', '__global__ void k() {}'))
    result = scan(tmp_path, Settings(jobs=1))
    remaining = {(f.path, f.line) for f in result.findings if f.category == "inline-ptx"}
    held = {(f.path, f.line, f.status) for f in result.guarded_findings}
    assert ("src/mma.cu", 13) in remaining  # `#if __CUDA_ARCH__ >= 800`: unknown, so still work
    assert {("src/mma.cu", 3, "guarded"), ("src/mma.cu", 8, "guarded")} <= held
    assert result.guarded == len(result.guarded_findings)


@pytest.mark.parametrize("text, expected", [
    ("#if 0\na\n#endif\n", ((1, 3),)),
    ("#if 0\na\n#else\nb\n#endif\n", ((1, 3),)),
    ("#if (1)\na\n#elif FOO\nb\n#else\nc\n#endif\n", ((3, 5), (5, 7))),
    ("#if FOO\na\n#elif 0\nb\n#endif\n", ((3, 5),)),
    ("#if 0\n#ifdef __HIP_PLATFORM_AMD__\na\n#endif\n#endif\n", ((1, 5),)),
    ("#if FOO_0\na\n#endif\n#if 0 && FOO\nb\n#endif\n", ()),  # a name in it: not a hand-made switch
])
def test_disabled_ranges_are_numbers_alone(text: str, expected: tuple[tuple[int, int], ...]) -> None:
    assert preproc.disabled_ranges(directives(text)) == expected


def test_code_set_aside_by_if_0_is_info_and_no_port_evidence(tmp_path: Path) -> None:
    # a shuffle kept in an `#if 0` block compiles nowhere: info, still reported, and not counted as a ROCm guard
    write(tmp_path, "scan.cu", """\
__global__ void prefix(float* v) {
#if 0
  float x = __shfl_up_sync(0xffffffff, v[threadIdx.x], 1);
#else
  float x = __shfl_up_sync(0xffffffff, v[threadIdx.x], 2);
#endif
  v[threadIdx.x] = x;
}
""")
    result = scan(tmp_path, Settings(jobs=1))
    shuffles = [(f.line, f.severity, f.status) for f in result.findings if f.rule == "warp-full-mask"]
    assert shuffles == [(3, Severity.INFO, "covered"), (5, Severity.HIGH, "remaining")]
    assert result.guarded == 0 and result.rocm.level == "none"


def test_other_backends_are_not_cuda(tmp_path: Path) -> None:
    riscv = 'void f(void) {\n    __asm__ volatile("fence.i" ::: "memory");\n}\n'
    write(tmp_path, "ggml/src/ggml-cpu/arch/riscv/quants.c", riscv)
    write(tmp_path, "src/x86/fence.c", riscv)
    write(tmp_path, "src/cuda/fence.cu", riscv.replace("void f", "__device__ void f"))
    result = scan(tmp_path, Settings(jobs=1))
    assert [f.path for f in result.findings if f.rule == "inline-ptx"] == ["src/cuda/fence.cu"]
    assert sorted(f.path for f in result.guarded_findings) == ["ggml/src/ggml-cpu/arch/riscv/quants.c", "src/x86/fence.c"]


def test_python_of_other_vendors_backend_folders_is_not_the_ports(tmp_path: Path) -> None:
    """A multi-vendor package keeps a folder per accelerator vendor; ROCm runs none of the others' Python."""
    asm = ('import triton.language as tl\n'
           'def k(x):\n'
           '    return tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [x], tl.float32, True, 1)\n')
    write(tmp_path, "pkg/runtime/backend/_mthreads/ops/exp.py", asm)
    write(tmp_path, "pkg/backends/npu/exp.py", asm)
    write(tmp_path, "pkg/ops/exp.py", asm)
    write(tmp_path, "pkg/ops/npu_exp.py", asm)  # a file named for a vendor is not a vendor's folder
    result = scan(tmp_path, Settings(jobs=1))
    assert sorted(f.path for f in result.findings if f.rule == "python-triton-inline-asm") == [
        "pkg/ops/exp.py", "pkg/ops/npu_exp.py"]
    assert sorted(f.path for f in result.guarded_findings if f.rule == "python-triton-inline-asm") == [
        "pkg/backends/npu/exp.py", "pkg/runtime/backend/_mthreads/ops/exp.py"]


DEVICE_PASS = "#pragma once\n__host__ __device__ inline int lane() {\n#ifdef __CUDA_ARCH__\n  return threadIdx.x;\n#else\n  return 0;\n#endif\n}\n"


@pytest.mark.parametrize("compat, status", [
    (None, "remaining"),
    ("#if defined(USE_HIP)\n#define __CUDA_ARCH__ 1300\n#endif\n", "guarded"),  # ggml's vendors/hip.h
])
def test_a_device_pass_test_is_work_unless_the_repository_defines_cuda_arch(
    tmp_path: Path, compat: str | None, status: str
) -> None:
    write(tmp_path, "src/lane.cuh", DEVICE_PASS)
    if compat is not None:
        write(tmp_path, "src/vendors/hip.h", compat)
    result = scan(tmp_path, Settings(jobs=1))
    every = [*result.findings, *result.guarded_findings]
    assert [(f.path, f.line, f.status) for f in every if f.rule == "cuda-arch-device-pass"] == [
        ("src/lane.cuh", 3, status)]


PAIRED_ADD = "__device__ void splat(__half2* grid, __half2 g, int i) {\n  atomicAdd(grid + i, g);\n}\n"


@pytest.mark.parametrize("compat, status", [
    (None, "remaining"),
    # a project's own overload (a compare-and-swap on the 32-bit word), compiled for HIP too
    ("#if __CUDA_ARCH__ < 600 || defined(USE_ROCM)\n__device__ inline void atomicAdd(half2* address, half2 val) {\n"
     "  add_halves(address, val);\n}\n#endif\n", "guarded"),
    # a look-alike: a helper of another name, and a call, define nothing
    ("__device__ inline void atomic_add_pair(half2* address, half2 val) { atomicAdd(address, val); }\n", "remaining"),
])
def test_a_half2_atomic_add_is_work_unless_the_repository_defines_the_overload(
    tmp_path: Path, compat: str | None, status: str
) -> None:
    write(tmp_path, "csrc/grid.cu", PAIRED_ADD)
    if compat is not None:
        write(tmp_path, "csrc/compat.cuh", compat)
    result = scan(tmp_path, Settings(jobs=1))
    every = [*result.findings, *result.guarded_findings]
    calls = [("csrc/grid.cu", 2, status)] + ([("csrc/compat.cuh", 1, status)] if "atomic_add_pair" in (compat or "")
                                             else [])
    assert sorted((f.path, f.line, f.status) for f in every if f.rule == "atomic-add-half2") == sorted(calls)
    assert result.rocm is not None and all(e.kind != "paired-atomic-overload" for e in result.rocm.evidence)


SWITCH = "#if BUILD_CUDA\n__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n#endif\n"


@pytest.mark.parametrize("cmake, severity", [
    ("project(ops LANGUAGES CXX CUDA)\nadd_compile_definitions(BUILD_CUDA)\n", "low"),  # no ROCm build yet
    ("project(ops LANGUAGES CXX CUDA)\nif(BUILD_HIP)\n  enable_language(HIP)\n  add_compile_definitions(BUILD_CUDA)\n"
     "endif()\n", "info"),  # a HIP build path that may define the switch
])
def test_a_cuda_build_switch_is_work_where_no_rocm_build_exists(tmp_path: Path, cmake: str, severity: str) -> None:
    write(tmp_path, "csrc/ops.cu", SWITCH)
    write(tmp_path, "CMakeLists.txt", cmake)
    result = scan(tmp_path, Settings(jobs=1))
    every = [*result.findings, *result.guarded_findings]
    assert [(f.line, f.severity.label) for f in every if f.rule == "cuda-build-switch"] == [(1, severity)]


SETUP = """\
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension

IS_ROCM = torch.version.hip is not None
if IS_ROCM:
    flags = ["-O3"]
else:
    flags = ["-gencode", "arch=compute_80,code=sm_80"]
setup(name="x", ext_modules=[CUDAExtension("x", ["x.cu"], extra_compile_args={"nvcc": flags})])
"""


def test_the_hip_branches_of_setup_py_are_attached(tmp_path: Path) -> None:
    """parse/setup_py.py computed the HIP branches of setup.py but never attached them: the -gencode in the
    else-branch of `if IS_ROCM:` was reported as work."""
    write(tmp_path, "setup.py", SETUP)
    result = scan(tmp_path, Settings(jobs=1))
    assert [f.line for f in result.findings if f.path == "setup.py" and f.line in (8, 9)] == []
    assert [f.line for f in result.guarded_findings if f.path == "setup.py"] == [9]
    assert result.rocm is not None and {e.kind for e in result.rocm.evidence} == {"build", "torch-extension"}


def test_cmake_branches_that_test_hip_are_guarded(tmp_path: Path) -> None:
    write(tmp_path, "CMakeLists.txt", "if(USE_HIP)\n  enable_language(HIP)\nelseif(USE_CUDA)\n  enable_language(CUDA)\nendif()\n"
                                      "if(BUILD_GPU)\n  enable_language(CUDA)\nendif()\n")
    result = scan(tmp_path, Settings(jobs=1))
    assert [f.line for f in result.findings if f.rule == "cmake-cuda-language"] == [7]
    assert [(f.line, f.rule) for f in result.guarded_findings] == [(3, "cmake-cuda-backend-switch"),
                                                                   (4, "cmake-cuda-language")]


# --- calibration: one small repository per verdict class ----------------------------------------------------

CALIBRATION = {
    # name: (ROCm level, verdict, effort range in engineer-days it must fall in)
    "pytorch-trainer": ("none", "trivial", (0.0, 0.5)),
    "ported-residual": ("supported", "easy", (0.05, 2.0)),
    # priced by the program 9 in 10 stay within: most samples are a hipify pass, but 3 of 7 need warp, WMMA or
    # PTX rework (the expert's moderate for cuda-samples); the PTX one is listed as blocked, not priced
    "sample-collection": ("none", "moderate", (2.0, 10.0)),
    "cuda-extension": ("none", "hard", (8.0, 30.0)),
    # its kernel traits size the block as kNWarps * 32 (a warp-lane-math finding since review-p): 23-61 days
    "cutlass-kernels": ("none", "very-hard", (20.0, 65.0)),
}


def scan_fixture(name: str, make_repo, monkeypatch: pytest.MonkeyPatch) -> dict:  # type: ignore[type-arg]
    repo = make_repo(name)
    monkeypatch.chdir(repo.parent)
    done = CliRunner().invoke(cli, ["scan", repo.name, "--format", "json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)["summary"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(CALIBRATION))
def test_calibration_fixtures_keep_their_verdicts(name: str, make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    level, verdict, (low, high) = CALIBRATION[name]
    summary = scan_fixture(name, make_repo, monkeypatch)
    assert (summary["rocm_status"]["level"], summary["verdict"]) == (level, verdict)
    assert low <= summary["effort_days"]["low"] <= summary["effort_days"]["high"] <= high


def test_an_already_ported_project_names_its_evidence_and_its_add_on(make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    status = scan_fixture("ported-residual", make_repo, monkeypatch)["rocm_status"]
    kinds = {(e["kind"], e["path"]) for e in status["evidence"]}
    assert {("build", "CMakeLists.txt"), ("ci", ".github/workflows/rocm.yml"), ("guard", "src/gpu/common.cuh")} <= kinds
    never = {(f["path"], f["rule"]) for f in status["never_compiled"]}
    assert {("src/gpu/matmul.cu", "inline-ptx"), ("backends/riscv/vec_dot.c", "inline-ptx")} <= never
    by_name = {c["component"]: c for c in status["components"]}
    assert by_name["contrib/fastgemm"]["optional"] and by_name["contrib/fastgemm"]["blocked"]
    assert not by_name["src/gpu"]["optional"] and by_name["src/gpu"]["rules"] == ["warp-full-mask", "warp-literal-32"]


def test_a_sample_collection_is_priced_per_program(make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    collection = scan_fixture("sample-collection", make_repo, monkeypatch)["rocm_status"]["collection"]
    assert collection["programs"] == 7
    assert collection["blocked"] == ["samples/warpSpecialized"]


def test_the_terminal_report_leads_with_the_status(make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo("ported-residual")
    monkeypatch.chdir(repo.parent)
    output = CliRunner().invoke(cli, ["scan", repo.name], terminal_width=200).stdout
    lines = output.splitlines()
    assert lines[1].startswith("ROCm status: supported")
    assert lines[2].startswith("Already ports: build (CMakeLists.txt:8, CMakeLists.txt:9), 13 guarded sites")
    assert any(line.startswith("CUDA-only add-ons (not in the verdict): custom ops/kernels (contrib/fastgemm/) → inline PTX")
               for line in lines)


def test_a_cuda_variant_beside_a_rocm_one_is_covered(tmp_path: Path) -> None:
    write(tmp_path, "docker/docker-cuda/Dockerfile", "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    write(tmp_path, "docker/docker-rocm/Dockerfile", "ARG BASE=rocm/pytorch:latest\nFROM ${BASE}\n")
    write(tmp_path, "requirements/cuda.txt", "--extra-index-url https://download.pytorch.org/whl/cu121\n")
    write(tmp_path, "requirements/rocm.txt", "--extra-index-url https://download.pytorch.org/whl/rocm6.2\n")
    write(tmp_path, "deploy/Dockerfile.cuda", "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    result = scan(tmp_path, Settings(jobs=1))
    status = {f.path: f.status for f in result.findings}
    assert status == {"docker/docker-cuda/Dockerfile": "covered", "requirements/cuda.txt": "covered",
                      "deploy/Dockerfile.cuda": "remaining"}
    assert result.rocm is not None and ("packaging", "docker/docker-rocm/Dockerfile", 1) in {
        (e.kind, e.path, e.line) for e in result.rocm.evidence}


def test_an_unmarked_manifest_beside_its_rocm_suffixed_variant_is_covered(tmp_path: Path) -> None:
    write(tmp_path, "reqs/requirements.txt", "xformers==0.0.28\n")
    write(tmp_path, "reqs/requirements_amd.txt", "--extra-index-url https://download.pytorch.org/whl/rocm6.2\n")
    write(tmp_path, "Dockerfile", "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    write(tmp_path, "Dockerfile.rocm", "FROM rocm/pytorch:latest\n")
    write(tmp_path, "svc/requirements-cublas12.txt", "xformers==0.0.28\n")
    write(tmp_path, "svc/requirements-hipblas.txt", "--extra-index-url https://download.pytorch.org/whl/rocm6.2\n")
    # no ROCm variant beside these: they stay to port
    write(tmp_path, "other/requirements.txt", "xformers==0.0.28\n")
    write(tmp_path, "other/amd_notes.txt", "see the wiki\n")
    write(tmp_path, "cpu/requirements-cublas12.txt", "xformers==0.0.28\n")
    result = scan(tmp_path, Settings(jobs=1))
    status = {f.path: f.status for f in result.findings if f.severity >= Severity.LOW}
    assert status == {"reqs/requirements.txt": "covered", "Dockerfile": "covered",
                      "svc/requirements-cublas12.txt": "covered", "other/requirements.txt": "remaining",
                      "cpu/requirements-cublas12.txt": "remaining"}


def test_a_cuda_backend_beside_an_opencl_backend_with_sources_is_an_add_on(tmp_path: Path) -> None:
    # the OpenCL backends (a -cl folder, a CamelCase CL head, an opencl folder) run on AMD GPUs through ROCm's OpenCL
    # runtime: a HIP port of their CUDA twins is an add-on, outside the verdict
    ptx = '__device__ unsigned f(unsigned a) { unsigned r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); return r + a; }\n'
    write(tmp_path, "libsolver-cuda/solver_kernel.cu", ptx)
    write(tmp_path, "libsolver-cl/ClSolver.cpp", "#include <CL/cl.h>\nint solve() { return clFinish(0); }\n")
    write(tmp_path, "CudaSearchDevice/search.cu", ptx)
    write(tmp_path, "CLSearchDevice/CLSearchDevice.cpp", "#include <CL/cl.h>\nint open_device() { return 0; }\n")
    write(tmp_path, "src/backend/cuda/runner.cu", ptx)
    write(tmp_path, "src/backend/opencl/runner.cpp", "#include <CL/cl.h>\nint run() { return 0; }\n")
    # look-alikes that stay to port: an OpenCL word inside a word (include), and a cl/ folder of kernels only
    write(tmp_path, "include/cuda/helpers.cuh", ptx)
    write(tmp_path, "kernels/cuda/hash.cu", ptx)
    write(tmp_path, "kernels/cl/README.md", "OpenCL kernels are generated at build time\n")
    # a suite's parallel implementations: cuda/sort beside opencl/sort is a program of its own to port
    write(tmp_path, "cuda/sort/sort.cu", ptx)
    write(tmp_path, "opencl/sort/sort.cpp", "#include <CL/cl.h>\nint main() { return 0; }\n")
    result = scan(tmp_path, Settings(jobs=1))
    status = {f.path: f.status for f in result.findings if f.rule == "inline-ptx"}
    assert status == {"libsolver-cuda/solver_kernel.cu": "optional-gap", "CudaSearchDevice/search.cu": "optional-gap",
                      "src/backend/cuda/runner.cu": "optional-gap", "include/cuda/helpers.cuh": "remaining",
                      "kernels/cuda/hash.cu": "remaining", "cuda/sort/sort.cu": "remaining"}


CMAKE_SPLIT = """\
project(x LANGUAGES CXX)
if(GPU_LANG STREQUAL "CUDA")
  list(APPEND SRC "csrc/marlin/gemm.cu" "csrc/common/act.cu")
  file(GLOB FP8 "csrc/fp8/*.cu")
elseif(GPU_LANG STREQUAL "HIP")
  enable_language(HIP)
  list(APPEND SRC "csrc/rocm/attn.cu")
endif()
set(SHARED "csrc/common/act.cu" "csrc/common/norm.cu")
"""


def test_sources_the_cmake_build_lists_only_for_cuda_are_never_compiled_for_hip(tmp_path: Path) -> None:
    write(tmp_path, "CMakeLists.txt", CMAKE_SPLIT)
    ptx = '__device__ void f() { asm volatile("cp.async.wait_all;"); }\n'
    for path in ("csrc/marlin/gemm.cu", "csrc/marlin/helpers.cuh", "csrc/fp8/quant.cu", "csrc/common/act.cu",
                 "csrc/common/norm.cu", "csrc/rocm/attn.cu"):
        write(tmp_path, path, ptx)
    result = scan(tmp_path, Settings(jobs=1))
    assert sorted(f.path for f in result.findings if f.rule == "inline-ptx") == [
        "csrc/common/act.cu", "csrc/common/norm.cu", "csrc/rocm/attn.cu"]
    assert sorted(f.path for f in result.guarded_findings if f.rule == "inline-ptx") == [
        "csrc/fp8/quant.cu", "csrc/marlin/gemm.cu", "csrc/marlin/helpers.cuh"]
    assert result.rocm is not None and not {e.kind for e in result.rocm.evidence} & rocm_status.SOURCE_LISTS


CMAKE_TAKEN_OUT = """\
project(engine LANGUAGES CXX)
set(CPU_SRCS src/core.cc src/quant/pack.cc src/quant/pack_host.cc)
set(GPU_SRCS src/core_gpu.cu src/quant/pack_gpu.cu src/quant/unpack_gpu.cu)
if(ENGINE_USE_CUDA)
  enable_language(CUDA)
  add_library(engine ${CPU_SRCS} ${GPU_SRCS})
elseif(ENGINE_USE_HIP)
  enable_language(HIP)
  list(REMOVE_ITEM CPU_SRCS src/quant/pack.cc src/quant/pack_host.cc)
  list(REMOVE_ITEM GPU_SRCS src/quant/pack_gpu.cu src/quant/unpack_gpu.cu)
  set_source_files_properties(${GPU_SRCS} PROPERTIES LANGUAGE HIP)
  add_library(engine ${CPU_SRCS} ${GPU_SRCS})
endif()
if(ENGINE_USE_CUDA AND NOT ENGINE_SMALL)
  list(REMOVE_ITEM CPU_SRCS src/core.cc)
endif()
"""


def test_sources_the_hip_branch_takes_out_of_its_lists_are_never_compiled_for_hip(tmp_path: Path) -> None:
    write(tmp_path, "CMakeLists.txt", CMAKE_TAKEN_OUT)
    ptx = '__device__ void f() { asm volatile("cp.async.wait_all;"); }\n'
    for path in ("src/core_gpu.cu", "src/core.cc", "src/quant/pack_gpu.cu", "src/quant/unpack_gpu.cu",
                 "src/quant/tile.cuh", "src/quant/pack.cc"):
        write(tmp_path, path, ptx)
    result = scan(tmp_path, Settings(jobs=1))
    # the HIP branch removes the quantised kernels (and so their folder's header); a CUDA branch's removal is not it
    assert sorted(f.path for f in result.findings if f.rule == "inline-ptx") == ["src/core.cc", "src/core_gpu.cu"]
    assert sorted(f.path for f in result.guarded_findings if f.rule == "inline-ptx") == [
        "src/quant/pack.cc", "src/quant/pack_gpu.cu", "src/quant/tile.cuh", "src/quant/unpack_gpu.cu"]
    assert result.rocm is not None and not {e.kind for e in result.rocm.evidence} & rocm_status.SOURCE_LISTS



# a CUDA-only source list in a build with no HIP branch at all: the processor test names the x86-64 CPU, not AMD GPUs
CMAKE_CPU_TEST = """\
project(graphs LANGUAGES CXX)
if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "(x86)|(X86)|(amd64)|(AMD64)")
  message(STATUS "non-x86 host: no SSE kernels")
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_compile_options(-msse4.2)
endif()
if(USE_CUDA)
  enable_language(CUDA)
  file(GLOB GPU_SRCS src/gpu/*.cu)
  add_library(graphs src/core.cc src/gpu/spmm.cu)
else()
  add_library(graphs src/core.cc)
endif()
# ownership and relationship of the sources stay as they are
"""


@pytest.mark.parametrize(("extra", "guarded"), [
    ("", []),
    ("if(USE_HIP)\n  enable_language(HIP)\n  add_library(graphs_hip src/core.cc)\nendif()\n",
     ["src/gpu/spmm.cu"]),
])
def test_a_cpu_processor_test_is_not_a_hip_branch(tmp_path: Path, extra: str, guarded: list[str]) -> None:
    write(tmp_path, "CMakeLists.txt", CMAKE_CPU_TEST + extra)
    ptx = '__device__ void f() { asm volatile("cp.async.wait_all;"); }\n'
    for path in ("src/gpu/spmm.cu", "src/core.cc"):
        write(tmp_path, path, ptx)
    result = scan(tmp_path, Settings(jobs=1))
    # without a HIP branch the CUDA-only list is the only GPU build: its kernels are work, not code ROCm never compiles
    assert sorted(f.path for f in result.guarded_findings if f.rule == "inline-ptx") == guarded
    assert sorted(f.path for f in result.findings if f.rule == "inline-ptx") == sorted(
        {"src/core.cc", "src/gpu/spmm.cu"} - set(guarded))


FALLBACK_OP = """\
#include <torch/extension.h>
at::Tensor pool(const at::Tensor& x) {
  if (x.is_cuda()) {
#ifdef WITH_CUDA
    return pool_cuda(x);
#else
    AT_ERROR("no GPU build");
#endif
  }
  return pool_cpu(x);
}
"""


@pytest.mark.parametrize(("define", "expected"), [
    ("if CUDA_HOME is not None:", ("remaining", "high")),
    ("if CUDA_HOME is not None or torch.version.hip:", ("guarded", "info")),
])
def test_a_build_macro_fallback_is_work_unless_the_build_has_a_rocm_branch(
    tmp_path: Path, define: str, expected: tuple[str, str]
) -> None:
    write(tmp_path, "csrc/pool.cpp", FALLBACK_OP)
    write(tmp_path, "setup.py", f"import torch\nfrom torch.utils.cpp_extension import CUDA_HOME\nmacros = []\n"
                                f"{define}\n    macros.append(('WITH_CUDA', None))\n")
    result = scan(tmp_path, Settings(jobs=1))
    every = [*result.findings, *result.guarded_findings]
    found = [(f.status, f.severity.label) for f in every if f.rule == "cuda-macro-cpu-fallback"]
    assert found == [expected]
    assert (expected[0] == "guarded") == any(f.rule == "cuda-macro-cpu-fallback" for f in result.guarded_findings)


def test_a_scan_names_the_build_units_that_build_libraries_only(tmp_path: Path) -> None:
    write(tmp_path, "CMakeLists.txt", "project(p CUDA)\nadd_subdirectory(src/kernels)\nadd_subdirectory(examples/run)\n")
    write(tmp_path, "src/kernels/CMakeLists.txt", "add_library(kernels STATIC k.cu)\n")
    write(tmp_path, "examples/run/CMakeLists.txt", "add_executable(run main.cu)\ntarget_link_libraries(run CUDA::cudart)\n")
    result = scan(tmp_path, Settings(jobs=1))
    assert result.rocm is not None and result.rocm.library_dirs == ("src/kernels",)
    assert "library-build" not in dict(result.rocm.counts)  # used, never cited as ROCm evidence


def test_build_units_that_link_a_library_another_unit_defines_are_parts_of_one_project(tmp_path: Path) -> None:
    write(tmp_path, "CMakeLists.txt", "project(p CUDA)\nadd_subdirectory(core)\nadd_subdirectory(tools)\n")
    # the core builds its library and its tests (add_executable), and the tools and bindings link the library
    write(tmp_path, "core/CMakeLists.txt", "add_library(ragged STATIC ops.cu)\n"
                                           "add_executable(ops_test ops_test.cu)\ntarget_link_libraries(ops_test ragged gtest)\n")
    write(tmp_path, "tools/CMakeLists.txt", "add_executable(decode decode.cu)\n"
                                            "target_link_libraries(decode PRIVATE ragged ${TORCH_LIBRARIES})\n")
    # the look-alike: a sample that builds and links a library of its own, in its own unit, stays a program
    write(tmp_path, "samples/a/CMakeLists.txt", "add_library(helper h.cu)\nadd_executable(a a.cu)\n"
                                                "target_link_libraries(a helper)\n")
    result = scan(tmp_path, Settings(jobs=1))
    assert result.rocm is not None and result.rocm.library_dirs == ("core", "tools")
    assert not {"library-target", "library-link"} & set(dict(result.rocm.counts))  # used, never cited


def test_makefile_programs_that_link_the_core_archive_are_parts_of_one_project(tmp_path: Path) -> None:
    """A hand-written Makefile's archive (ar rcs lib$(NAME).a) linked by other Makefiles (-lNAME): one project."""
    write(tmp_path, "core/Makefile", "CU = nvcc\nNAME = align\nLIB = ../lib/lib$(NAME).a\n$(LIB): $(OBJ)\n"
                                     "\tar rcs $(LIB) $(OBJ)\n")
    write(tmp_path, "core/k.cu", "__global__ void k(int* x) { x[threadIdx.x] = 0; }\n")
    write(tmp_path, "cli/Makefile", "CU = nvcc\nLD_FLAGS = -L../lib -lalign -lm\n")
    # the look-alike: a program that links only system libraries stays a program of its own
    write(tmp_path, "bench/Makefile", "CU = nvcc\nLD_FLAGS = -lcudart -lm\n")
    result = scan(tmp_path, Settings(jobs=1))
    assert result.rocm is not None and result.rocm.library_dirs == ("cli", "core")


def test_a_cuda_source_with_a_hip_twin_is_guarded_and_a_directory_twin_covers(tmp_path: Path) -> None:
    kernel = "__global__ void k(float* x) { x[threadIdx.x] = __shfl_xor_sync(0xffffffffu, x[0], 16); }\n"
    for path in ("src/algo/SCAN-Cuda.cpp", "src/common/CudaGridScan.hpp", "core/Kokkos_Cuda_Team.hpp",
                 "kernels/cuda/norm.cu", "src/algo/SORT-Cuda.cpp", "src/Barracuda.cpp", "models/cuda/StreamCUDA.cu"):
        write(tmp_path, path, kernel)
    for path in ("src/algo/SCAN-Hip.cpp", "src/common/HipGridScan.hpp", "core/Kokkos_HIP_Team.hpp",
                 "kernels/hip/CMakeLists.txt", "src/Barrahip.cpp", "models/hip/StreamHIP.cpp"):
        write(tmp_path, path, "#include <hip/hip_runtime.h>\n")
    result = scan(tmp_path, Settings(jobs=1))
    guarded = {f.path for f in result.guarded_findings if f.rule == "warp-full-mask"}
    # a hip/ folder with sources of its own is the backend the ROCm build compiles instead of the cuda/ one
    assert guarded == {"src/algo/SCAN-Cuda.cpp", "src/common/CudaGridScan.hpp", "core/Kokkos_Cuda_Team.hpp",
                       "models/cuda/StreamCUDA.cu"}
    status = {f.path: f.status for f in result.findings if f.rule == "warp-full-mask"}
    # a hip/ folder of build files may compile the CUDA sources themselves; SORT has no twin; "cuda" inside a word
    assert status == {"kernels/cuda/norm.cu": "covered", "src/algo/SORT-Cuda.cpp": "remaining",
                      "src/Barracuda.cpp": "remaining"}


@pytest.mark.parametrize(("kind", "relpath", "text", "expected"), [
    (FileKind.CMAKE, "CMakeLists.txt", "if (ENABLE_HIP)\n  list(APPEND DEPS blt::hip)\nendif()\n", [("build", 1)]),
    (FileKind.CMAKE, "CMakeLists.txt", "if(Kokkos_ENABLE_HIP)\n  set(X 1)\nendif()\n", [("build", 1)]),
    (FileKind.CMAKE, "CMakeLists.txt", "if (ENABLE_CUDA)\n  enable_language(CUDA)\nendif()\n# hip later\n", []),
    (FileKind.REQUIREMENTS, "requirements/runtime_rocm.txt", "torch\n", [("packaging", 1)]),
    (FileKind.REQUIREMENTS, "requirements_hip.txt", "torch\n", [("packaging", 1)]),
    (FileKind.REQUIREMENTS, "requirements/shipping.txt", "torch\n", []),
    (FileKind.REQUIREMENTS, "requirements/runtime_cuda.txt", "torch\n", []),
])
def test_a_hip_build_switch_and_rocm_requirements_are_evidence(
    kind: FileKind, relpath: str, text: str, expected: list[tuple[str, int]]
) -> None:
    assert [(e.kind, e.line) for e in rocm_status.evidence(kind, relpath, text)] == expected


CMAKE_OPTIONAL_CUDA = """\
project(engine LANGUAGES CXX)
option(WITH_CUDA "CUDA backend" OFF)
option(WITH_HIP "HIP backend" OFF)
set(GPU_SRCS src/gemm_gpu.cu src/attention_gpu.cu)
if(WITH_CUDA)
  enable_language(CUDA)
  add_definitions(-DENGINE_WITH_GPU)
  if(WITH_FUSED_ATTN)
    add_definitions(-DENGINE_WITH_FUSED_ATTN)
    list(APPEND GPU_SRCS src/sm80/attn_fwd.cu)
  endif()
  target_compile_definitions(engine PRIVATE ENGINE_WITH_TUNED_GEMM ENGINE_WITH_SHARED=1)
elseif(WITH_HIP)
  enable_language(HIP)
  add_compile_definitions(ENGINE_WITH_GPU ENGINE_WITH_SHARED=1)
  set_source_files_properties(${GPU_SRCS} PROPERTIES LANGUAGE HIP)
endif()
add_library(engine ${GPU_SRCS})
"""
PTX = 'asm volatile("cp.async.wait_all;");'


def test_macros_only_the_cuda_branch_defines_rule_out_what_they_guard_and_the_headers_only_it_includes(
    tmp_path: Path,
) -> None:
    write(tmp_path, "CMakeLists.txt", CMAKE_OPTIONAL_CUDA)
    write(tmp_path, "src/attention_gpu.cu", (
        '#include "fused/kernel.h"\n'  # line 1: everywhere, so kernel.h is compiled
        "#ifdef ENGINE_WITH_FUSED_ATTN\n"
        '#include "fused/launch.h"\n'
        f"__device__ void a() {{ {PTX} }}\n"  # line 4: only the CUDA build defines the macro
        "#endif\n"
        "#ifdef ENGINE_WITH_GPU\n"
        f"__device__ void b() {{ {PTX} }}\n"  # line 7: both builds define it
        "#endif\n"
        "#ifdef ENGINE_WITH_SHARED\n"
        f"__device__ void c() {{ {PTX} }}\n"  # line 10: a value define in both
        "#endif\n"))
    write(tmp_path, "src/fused/launch.h", f'#pragma once\n#include "tiles.h"\n__device__ void d() {{ {PTX} }}\n')
    write(tmp_path, "src/fused/tiles.h", f"__device__ void e() {{ {PTX} }}\n")
    write(tmp_path, "src/fused/kernel.h", f"#pragma once\n__device__ void f() {{ {PTX} }}\n")
    write(tmp_path, "src/fused/orphan.h", f"__device__ void g() {{ {PTX} }}\n")  # included by nobody: kept
    write(tmp_path, "src/sm80/attn_fwd.cu", '#include "../fused/sm80_tile.h"\n')  # a source only CUDA lists
    write(tmp_path, "src/fused/sm80_tile.h", f"__device__ void h() {{ {PTX} }}\n")
    result = scan(tmp_path, Settings(jobs=1))
    kept = sorted((f.path, f.line) for f in result.findings if f.rule == "inline-ptx")
    held = sorted((f.path, f.line) for f in result.guarded_findings if f.rule == "inline-ptx")
    assert kept == [("src/attention_gpu.cu", 7), ("src/attention_gpu.cu", 10), ("src/fused/kernel.h", 2),
                    ("src/fused/orphan.h", 1)]
    assert held == [("src/attention_gpu.cu", 4), ("src/fused/launch.h", 3), ("src/fused/sm80_tile.h", 1),
                    ("src/fused/tiles.h", 1)]


CMAKE_DEFINITIONS_LIST = """\
project(solver LANGUAGES CXX)
set(SOLVER_DEFS "")
if(SOLVER_BACKEND STREQUAL "CUDA")
  enable_language(CUDA)
  set(SOLVER_DEFS ${SOLVER_DEFS} SOLVER_WITH_CUSPARSE SOLVER_GPU=1)
  if(SOLVER_WITH_GRAPHS)
    list(APPEND SOLVER_DEFS SOLVER_WITH_GRAPHS)
  endif()
  set(SOLVER_LIBS ${SOLVER_LIBS} SOLVER_WITH_UNUSED)
elseif(SOLVER_BACKEND STREQUAL "HIP")
  enable_language(HIP)
  list(APPEND SOLVER_DEFS SOLVER_GPU=1)
endif()
set(SOLVER_DEFS ${SOLVER_DEFS} SOLVER_LOGGING)
add_library(solver src/solver.cpp)
target_compile_definitions(solver PRIVATE ${SOLVER_DEFS})
"""


def test_names_a_cuda_branch_adds_to_a_definitions_list_are_cuda_only() -> None:
    found = rocm_status.cmake_sources("CMakeLists.txt", CMAKE_DEFINITIONS_LIST)
    # SOLVER_GPU is in both branches, SOLVER_LOGGING outside them, SOLVER_LIBS never reaches the definitions
    assert rocm_status.cuda_only_defines(found) == {"SOLVER_WITH_CUSPARSE", "SOLVER_WITH_GRAPHS"}
    # the list takes in a variable the file does not fill: it may hold any name, so none is CUDA-only
    unknown = CMAKE_DEFINITIONS_LIST.replace("${SOLVER_DEFS} SOLVER_LOGGING", "${SOLVER_DEFS} ${EXTRA_DEFS}")
    assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", unknown)) == frozenset()
    # ... unless a package manager fills it (Conan's CONAN_DEFINES: its dependencies' names)
    conan = CMAKE_DEFINITIONS_LIST.replace("${SOLVER_DEFS} SOLVER_LOGGING", "${SOLVER_DEFS} ${CONAN_DEFINES}")
    assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", conan)) == {
        "SOLVER_WITH_CUSPARSE", "SOLVER_WITH_GRAPHS"}
    # a backend switch compared to a lower-case name (PyTorch Kineto's `KINETO_BACKEND STREQUAL "cuda"`)
    lower = CMAKE_DEFINITIONS_LIST.replace('"CUDA"', '"cuda"').replace('"HIP"', '"rocm"')
    assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", lower)) == {
        "SOLVER_WITH_CUSPARSE", "SOLVER_WITH_GRAPHS"}
    # a list nothing hands to the compile definitions defines nothing
    unused = CMAKE_DEFINITIONS_LIST.replace("target_compile_definitions(solver PRIVATE ${SOLVER_DEFS})\n", "")
    assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", unused)) == frozenset()


def test_a_processor_test_for_amd64_is_no_hip_branch() -> None:
    # without a HIP branch nothing is CUDA-only: the ROCm build still to be written may define the same names
    unported = CMAKE_DEFINITIONS_LIST.replace('elseif(SOLVER_BACKEND STREQUAL "HIP")\n  enable_language(HIP)\n',
                                              "elseif(SOLVER_BACKEND STREQUAL \"OMP\")\n")
    assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", unported)) == frozenset()
    # an x86-64 processor test (AMD64) or a word that only holds the letters (CHIP) names no HIP build either
    for test in ('if(CMAKE_SYSTEM_PROCESSOR STREQUAL "AMD64")\n  set(SIMD ON)\nendif()\n',
                 "if(SOLVER_CHIP_TUNING)\n  set(TUNE ON)\nendif()\n"):
        cmake = unported + test
        assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", cmake)) == frozenset()


def test_a_definitions_list_handed_over_in_another_cmake_file_and_the_header_it_guards_is_held(
    tmp_path: Path,
) -> None:
    top, _, _ = CMAKE_DEFINITIONS_LIST.partition("add_library")
    write(tmp_path, "CMakeLists.txt", top + "add_subdirectory(src)\n")
    write(tmp_path, "src/CMakeLists.txt", (
        "add_library(solver solver.cpp)\n"
        'if(SOLVER_BACKEND STREQUAL "HIP")\n  target_compile_options(solver PRIVATE -fgpu-rdc)\nendif()\n'
        "target_compile_definitions(solver PRIVATE ${SOLVER_DEFS})\n"))
    write(tmp_path, "src/solver.cpp", (
        '#include "common.h"\n'
        "#ifdef SOLVER_WITH_CUSPARSE\n"
        '#include "sparse/cusparse_backend.h"\n'
        "#endif\n"
        "#ifdef SOLVER_GPU\n"
        f"__device__ void a() {{ {PTX} }}\n"  # line 6: both builds define it
        "#endif\n"))
    write(tmp_path, "src/common.h", f"#pragma once\n__device__ void b() {{ {PTX} }}\n")
    write(tmp_path, "src/sparse/cusparse_backend.h", f"#pragma once\n__device__ void c() {{ {PTX} }}\n")
    result = scan(tmp_path, Settings(jobs=1))
    kept = sorted((f.path, f.line) for f in result.findings if f.rule == "inline-ptx")
    held = sorted((f.path, f.line) for f in result.guarded_findings if f.rule == "inline-ptx")
    assert kept == [("src/common.h", 2), ("src/solver.cpp", 6)]
    assert held == [("src/sparse/cusparse_backend.h", 2)]
    # without the file that hands the list over, nothing says the names are compile definitions
    (tmp_path / "src/CMakeLists.txt").write_text("add_library(solver solver.cpp)\n")
    result = scan(tmp_path, Settings(jobs=1))
    assert sorted((f.path, f.line) for f in result.guarded_findings if f.rule == "inline-ptx") == []


def test_a_define_from_a_variable_keeps_every_cuda_only_define_possible() -> None:
    cmake = CMAKE_OPTIONAL_CUDA.replace("  add_compile_definitions(ENGINE_WITH_GPU ENGINE_WITH_SHARED=1)\n",
                                        "  add_definitions(${HIP_DEFINES})\n")
    assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", cmake)) == frozenset()
    # a variable the HIP branch fills itself: its names are read, the others stay CUDA-only
    listed = cmake.replace("  add_definitions(${HIP_DEFINES})\n",
                           "  list(APPEND HIP_DEFINES -DENGINE_WITH_GPU -DENGINE_WITH_TUNED_GEMM)\n"
                           "  add_definitions(${HIP_DEFINES})\n")
    assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", listed)) == {
        "ENGINE_WITH_FUSED_ATTN", "ENGINE_WITH_SHARED"}
    assert rocm_status.cuda_only_defines(rocm_status.cmake_sources("CMakeLists.txt", CMAKE_OPTIONAL_CUDA)) == {
        "ENGINE_WITH_FUSED_ATTN", "ENGINE_WITH_TUNED_GEMM"}
