"""What `apply` writes for the families of edits real ROCm ports make: flag lists of JIT-built extensions, Python
switches and test skips, warp-size constants, hipcc-strict C++; each leaves the CUDA path as it was."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.port.apply import plan_port, write_port
from migrate.port.gitignore import HEADING
from migrate.port.plan import PortOptions
from migrate.port.buildflags import port_flag_lists
from migrate.port.verify import as_torch_builds
from migrate.port.hipccflags import hipcc_word
from migrate.port.translate import Engine

from conftest import FIXTURES, require_tool

PORT = FIXTURES / "port"
BUILTIN = Engine("builtin")


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(PORT / name, target)
    return target


def _plan(root: Path, strategy: str = "auto", targets: tuple[str, ...] = ("gfx942",)):  # type: ignore[no-untyped-def]
    settings = Settings(max_file_size=1 << 20, targets=targets)
    return plan_port(root, settings, PortOptions(BUILTIN, strategy=strategy))


def _changed(plan) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {c.relpath: c.new.decode() for c in plan.changes}


# -- JIT-built extensions: flag lists hipcc accepts ----------------------------------------------------------------


def test_hipcc_words_for_nvcc_options() -> None:
    assert {word: hipcc_word(word).words for word in (
        "--use_fast_math", "--allow-unsupported-compiler", "-res-usage", "--ftz=true", "--prec-div=false",
        "--fmad=false", "-Xcompiler=-fPIC,-Wall", "--maxrregcount=64", "-Xptxas=-v", "--generate-line-info", "-O3",
        "-DNDEBUG")} == {
        "--use_fast_math": ("-ffast-math",), "--allow-unsupported-compiler": (),
        "-res-usage": ("-Rpass-analysis=kernel-resource-usage",), "--ftz=true": ("-fgpu-flush-denormals-to-zero",),
        "--prec-div=false": ("-fno-hip-fp32-correctly-rounded-divide-sqrt",), "--fmad=false": ("-ffp-contract=off",),
        "-Xcompiler=-fPIC,-Wall": ("-fPIC", "-Wall"), "--maxrregcount=64": (), "-Xptxas=-v": (),
        "--generate-line-info": ("-gline-tables-only",), "-O3": ("-O3",), "-DNDEBUG": ("-DNDEBUG",)}
    assert [hipcc_word(w).drop_next for w in ("--maxrregcount", "-Xptxas", "-Xcompiler", "-gencode")] == [
        True, True, False, True]


def test_helper_forwarded_flags_get_a_hipcc_variant(tmp_path: Path) -> None:
    """The ops hand extra_cuda_cflags to the project's own helper, which forwards them to cpp_extension.load: the
    lists get a torch.version.hip variant where they are written, and the helper is left alone."""
    root = _copy("jit-helper", tmp_path)
    plan = _plan(root)
    assert plan.strategy == "extension"
    changed = _changed(plan)
    assert sorted(changed) == [".gitignore", "ops/bias.py", "ops/scale.py", "ops/scale_sum.cu"]
    assert ('_NVCC_FLAGS = ["--use_fast_math", "--allow-unsupported-compiler"]\n'
            'if torch.version.hip:  # ROCm torch: hipcc gets --offload-arch from PYTORCH_ROCM_ARCH\n'
            '    _NVCC_FLAGS = ["-ffast-math"]\n') in changed["ops/scale.py"]
    assert ('        extra_cuda_cflags=(["-O3", "--use_fast_math", "-res-usage", "--maxrregcount 64", "-Xptxas -O3",\n'
            '                           "-gencode=arch=compute_80,code=sm_80"] if not torch.version.hip else '
            '["-O3", "-ffast-math", "-Rpass-analysis=kernel-resource-usage"]),\n') in changed["ops/bias.py"]
    for relpath in ("ops/scale.py", "ops/bias.py"):  # nothing imported: torch already is
        original = (root / relpath).read_text()
        assert _imports(changed[relpath]) == _imports(original)
    assert not [f for f in plan.findings if f.category == "cuda-build-config"]
    again = write_port(plan, out_dir=tmp_path / "ported")
    assert again.written and _plan(tmp_path / "ported").changes == ()  # a second port changes nothing


def _imports(text: str) -> list[str]:
    return [ast.unparse(s) for s in ast.walk(ast.parse(text)) if isinstance(s, (ast.Import, ast.ImportFrom))]


def _rocm_lists(text: str) -> list[list[str]]:
    """The flag lists a ROCm torch sees: the else of `(cuda if not torch.version.hip else hip)` and the value
    assigned under `if torch.version.hip:`."""
    tree = ast.parse(text)
    found = [ast.literal_eval(n.orelse) for n in ast.walk(tree) if isinstance(n, ast.IfExp)]
    found += [ast.literal_eval(n.body[0].value) for n in ast.walk(tree)  # type: ignore[attr-defined]
              if isinstance(n, ast.If) and ast.unparse(n.test) == "torch.version.hip"]
    return found


@pytest.mark.slow
def test_ported_jit_flags_compile_with_hipcc(tmp_path: Path) -> None:
    """Each op's .cu compiles with Debian's hipcc under the flags the port gives a ROCm torch, hipified as that torch
    hipifies it; under the CUDA flags hipcc stops at the first nvcc-only option."""
    hipcc = require_tool("hipcc")
    out = tmp_path / "ported"
    write_port(_plan(_copy("jit-helper", tmp_path)), out_dir=out)
    flags = {"scale_sum.cu": _rocm_lists((out / "ops/scale.py").read_text()),
             "bias_add.cu": _rocm_lists((out / "ops/bias.py").read_text())}
    assert flags == {"scale_sum.cu": [["-ffast-math"]],
                     "bias_add.cu": [["-O3", "-ffast-math", "-Rpass-analysis=kernel-resource-usage"]]}
    cuda_flags = ["--use_fast_math", "--allow-unsupported-compiler"]
    torch_flags = as_torch_builds(out / "ops", BUILTIN)
    for unit, (rocm,) in flags.items():
        for words, ok in ((rocm, True), (cuda_flags, False)):
            done = subprocess.run(
                [hipcc, "--offload-arch=gfx90a", "-c", "-x", "hip", *torch_flags, *" ".join(words).split(), unit,
                 "-o", os.devnull], cwd=out / "ops", capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
            assert (done.returncode == 0) is ok, (unit, words, done.stderr[-2000:])
            if not ok:
                assert "unsupported option '--use_fast_math'" in done.stderr


GUARDED_SETUP = '''import sys

from setuptools import setup

try:
    import torch
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension
except ImportError:
    sys.exit("scale_ext needs PyTorch: install torch first (https://pytorch.org), then this package")

setup(
    name="scale_ext",
    ext_modules=[CUDAExtension("scale_ext", ["scale.cu"], extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]})],
    cmdclass={"build_ext": BuildExtension},
)
'''
FALLBACK_SETUP = '''try:
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension
    HAVE_TORCH = True
except ImportError:
    print("torch not found: the CUDA ops are not built")
    HAVE_TORCH = False

NVCC = ["-O3", "--use_fast_math", "-lineinfo"]
ext_modules = [CUDAExtension("ops", ["k.cu"], extra_compile_args={"nvcc": NVCC})] if HAVE_TORCH else []
print(len(ext_modules), "extensions")
'''


def _run_without_torch(script: Path) -> subprocess.CompletedProcess[str]:
    """Run SCRIPT as `python setup.py --version` would on a machine where `import torch` fails (sys.modules['torch']
    set to None makes every import of torch raise ImportError, installed or not)."""
    runner = ("import runpy, sys\nsys.modules['torch'] = None\nsys.argv = [sys.argv[1], '--version']\n"
              "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    return subprocess.run([sys.executable, "-c", runner, str(script)], cwd=script.parent, capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("original", [GUARDED_SETUP, FALLBACK_SETUP], ids=["exits", "carries-on"])
def test_port_keeps_a_setup_py_working_without_torch(tmp_path: Path, original: str) -> None:
    """IS_HIP_EXTENSION is imported inside the setup.py's own `try: import torch`, never above it: without torch the
    ported file says what the original says (the friendly message, not a traceback)."""
    ported, left = port_flag_lists(original, "setup.py")
    assert ported is not None and left == []
    lines = ported.splitlines()
    assert "    from torch.utils.cpp_extension import IS_HIP_EXTENSION" in lines  # in the try block, indented
    assert lines.index("    from torch.utils.cpp_extension import IS_HIP_EXTENSION") > lines.index("try:")
    runs = []
    for name, text in (("original", original), ("ported", ported)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "setup.py").write_text(text)
        done = _run_without_torch(tmp_path / name / "setup.py")
        runs.append((done.returncode, done.stdout, done.stderr))
        assert "Traceback" not in done.stderr
    assert runs[0] == runs[1]
    assert runs[0][1:] in {("", "scale_ext needs PyTorch: install torch first (https://pytorch.org), then this package\n"),
                           ("torch not found: the CUDA ops are not built\n0 extensions\n", "")}


def test_ported_setup_py_keeps_the_cuda_lists_as_they_were() -> None:
    """Taking out what the port added gives back the original file: the CUDA side reads exactly as before."""
    ported, _ = port_flag_lists(FALLBACK_SETUP, "setup.py")
    assert ported is not None
    added = {"    from torch.utils.cpp_extension import IS_HIP_EXTENSION", "    IS_HIP_EXTENSION = False",
             "if IS_HIP_EXTENSION:  # ROCm torch: hipcc gets --offload-arch from PYTORCH_ROCM_ARCH",
             '    NVCC = ["-O3", "-ffast-math", "-gline-tables-only"]'}
    assert added <= set(ported.splitlines())
    assert [line for line in ported.splitlines() if line not in added] == FALLBACK_SETUP.splitlines()
    inline, _ = port_flag_lists(GUARDED_SETUP, "setup.py")
    assert inline is not None and ('extra_compile_args={"nvcc": (["-O3", "--use_fast_math"] if not IS_HIP_EXTENSION '
                                   'else ["-O3", "-ffast-math"])}') in inline


def test_flag_lists_the_port_cannot_guard_are_reported() -> None:
    late = ('NVCC = ["-O3", "--use_fast_math"]\nfrom torch.utils.cpp_extension import CUDAExtension\n'
            'ext = CUDAExtension("ops", ["k.cu"], extra_compile_args={"nvcc": NVCC})\n')
    no_torch = 'from .build import build_op\nop = build_op("k", ["k.cu"], extra_cuda_cflags=["--use_fast_math"])\n'
    one_line = ('try: from torch.utils.cpp_extension import load\nexcept ImportError: load = None\n'
                'FLAGS = ["--use_fast_math"]\n')
    for text, line, why in (
        (late, 1, "no import of torch.utils.cpp_extension runs before this list in its scope"),
        (no_torch, 2, "torch is not imported in this file"),
        (one_line, 3, "no import of torch.utils.cpp_extension runs before this list in its scope"),
    ):
        new, left = port_flag_lists(text, "setup.py")
        assert new is None and [(f.line, f.rule, f.category) for f in left] == [(line, "rocm-guard-not-written", "cuda-build-config")]
        assert why in left[0].message
    threads = ('from torch.utils.cpp_extension import CUDAExtension\nn = "4"\n'
               'ext = CUDAExtension("m", ["k.cu"], extra_compile_args={"nvcc": ["-O3", "--threads", n]})\n')
    assert '(["-O3", "--threads", n] if not IS_HIP_EXTENSION else ["-O3"])' in (port_flag_lists(threads, "setup.py")[0] or "")
    quiet = ('import torch\nfrom .build import build_op\n'
             'op = build_op("k", ["k.cu"], extra_cuda_cflags=["-O3"], sources=["--use_fast_math"])\n')
    assert port_flag_lists(quiet, "ops.py") == (None, [])  # nothing nvcc-only passed as extra_cuda_cflags


# -- C/C++/CUDA: warp-size constants and the typename hipcc needs ------------------------------------------------------


def _ported(name: str, tmp_path: Path) -> tuple[Path, Path]:
    """The fixture NAME as it is and as `apply` writes it (two copies under TMP_PATH)."""
    original = _copy(name, tmp_path / "original")
    write_port(_plan(original), out_dir=tmp_path / "ported")
    return original, tmp_path / "ported"


def _hipcc(tree: Path, units: list[str]) -> list[subprocess.CompletedProcess[str]]:
    """Each unit of TREE compiled with Debian's hipcc as a ROCm torch builds it (hipified in a copy, -DUSE_ROCM=1)."""
    hipcc = require_tool("hipcc")
    copy = tree.parent / f"{tree.name}-hipified"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy)
    flags = as_torch_builds(copy, BUILTIN)
    return [subprocess.run([hipcc, "--offload-arch=gfx90a", "-fsyntax-only", "-x", "hip", *flags, unit], cwd=copy,
                           capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"}) for unit in units]


def _hipcc_compiles(tree: Path, units: list[str]) -> None:
    for unit, done in zip(units, _hipcc(tree, units)):
        assert done.returncode == 0, (unit, done.stderr[-3000:])


def _same_ptx(original: Path, ported: Path, units: list[str]) -> None:
    """nvcc makes the same PTX of each unit before and after the port: the CUDA path is unchanged (where nvcc is)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return
    for unit in units:
        ptx = [_INTERNAL_NAME.sub(rb"HASH\1HASH", subprocess.run(
            [nvcc, "-arch=sm_80", "-ptx", unit, "-o", "-"], cwd=tree, capture_output=True, check=True).stdout)
            for tree in (original, ported)]
        assert ptx[0] == ptx[1] and ptx[0], unit


# nvcc names a unit's file-local symbols (CUB's and libcu++'s internal globals) after a hash of the unit's text
_INTERNAL_NAME = re.compile(rb"(?<=_)[0-9a-f]{8}(_\d+_[A-Za-z0-9_]+?_cu_)[0-9a-f]{8}")


@pytest.mark.slow
def test_warp_size_constant_is_64_on_rocm_where_every_user_follows_it(tmp_path: Path) -> None:
    """reduce.cuh sizes all its warps by WARP_SIZE: the constant is 64 on ROCm, the ladder starts at WARP_SIZE / 2 and
    its shuffle keeps the wavefront's width. lanes.cu's kWarpSize sits beside `& 31` lane math and a 32-bit ballot
    (the scan reports both): it stays 32, for a hand port."""
    original, ported = _ported("warp-size", tmp_path)
    assert (ported / "csrc/reduce.cuh").read_text() == (original / "csrc/reduce.cuh").read_text().replace(
        "#define WARP_SIZE 32\n",
        "#ifdef USE_ROCM  // 64-lane wavefronts (CDNA); build RDNA targets with -mwavefrontsize64\n"
        "#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n").replace(
        "  for (int offset = 16; offset > 0; offset /= 2)\n    v += __shfl_down_sync(0xffffffff, v, offset);\n",
        "  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)\n"
        "#ifdef USE_ROCM  // non-sync form: ROCm < 6.2 has no *_sync builtins; the wavefront's width, as the warp size here\n"
        "    v += __shfl_down(v, offset);\n#else\n    v += __shfl_down_sync(0xffffffff, v, offset);\n#endif\n")
    lanes = (ported / "csrc/lanes.cu").read_text()
    assert "constexpr int kWarpSize = 32;\n" in lanes and "kWarpSize = 64" not in lanes
    assert (ported / "csrc/rownorm.cu").read_text() == (original / "csrc/rownorm.cu").read_text()
    _hipcc_compiles(ported, ["csrc/rownorm.cu", "csrc/lanes.cu"])
    _same_ptx(original, ported, ["csrc/rownorm.cu", "csrc/lanes.cu"])
    assert _plan(ported).changes == ()  # a second port changes nothing


def test_warp_size_stays_32_for_rdna_only_targets(tmp_path: Path) -> None:
    root = _copy("warp-size", tmp_path)
    plan = plan_port(root, Settings(max_file_size=1 << 20, targets=("gfx1100",)), PortOptions(BUILTIN))
    reduce = next(c.new.decode() for c in plan.changes if c.relpath == "csrc/reduce.cuh")
    assert "#define WARP_SIZE 64" not in reduce and "for (int offset = 16;" in reduce
    assert "    v += __shfl_down(v, offset, 32);\n" in reduce  # 32 lanes as on CUDA


@pytest.mark.slow
def test_typename_before_a_dependent_type_used_as_a_cast(tmp_path: Path) -> None:
    """`Ktraits::BlockPrefixT(storage).InclusiveSum(v)` compiles with nvcc and not with clang; the port adds
    `typename` there only: Ktraits::kThreads (a value) and Ktraits::ScaleT::apply (a static function) stay."""
    original, ported = _ported("typename", tmp_path)
    assert (ported / "csrc/prefix.cu").read_text() == (original / "csrc/prefix.cu").read_text().replace(
        "  value = Ktraits::BlockPrefixT(storage)", "  value = typename Ktraits::BlockPrefixT(storage)")
    (stopped,) = _hipcc(original, ["csrc/prefix.cu"])
    assert "missing 'typename' prior to dependent type name 'PrefixTraits<float, 256>::BlockPrefixT'" in stopped.stderr
    _hipcc_compiles(ported, ["csrc/prefix.cu"])
    _same_ptx(original, ported, ["csrc/prefix.cu"])
    assert _plan(ported).changes == ()


WARP_FORMS = {
    "setup.py": 'from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension("m", ["k.cu"])\n',
    "a.cuh": ("struct Sizes {\n  static constexpr int kWarpSize = 32;\n};\n__device__ float a(float v) {\n"
              "  for (int o = Sizes::kWarpSize / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n  return v;\n}\n"),
    "b.cuh": ("enum { THREADS_PER_WARP = 32 };\n__device__ float b(float v) {\n  for (int o = THREADS_PER_WARP / 2; o > 0; o /= 2)\n"
              "    v += __shfl_xor_sync(0xffffffff, v, o);\n  return v;\n}\n"),
    "c.cuh": ("template <int kThreads, int WARP_SIZE = 32>\n__device__ float c(float v) {\n  __shared__ float s[kThreads / WARP_SIZE];\n"
              "  for (int o = WARP_SIZE / 2; o > 0; o /= 2)\n    v += __shfl_xor_sync(0xffffffff, v, o);\n  return v;\n}\n"),
    # a shuffle in a macro body gets no branch, so the constant beside it stays 32
    "d.cuh": ("#define WARPSZ 32\n#define REDUCE(v) for (int o = WARPSZ / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o)\n"),
    # a second definition of a name whose other user is blocked (lane math on a literal 32) stays 32 everywhere
    "e.cuh": "#define WARP 32\n__device__ int e() { return threadIdx.x / WARP; }\n",
    "f.cu": "#define WARP 32\n__global__ void f(int* o) { o[threadIdx.x / WARP] = threadIdx.x & 31; }\n",
}


def test_warp_size_constant_forms(tmp_path: Path) -> None:
    for name, text in WARP_FORMS.items():
        (tmp_path / name).write_text(text)
    changed = _changed(_plan(tmp_path))
    assert changed.pop(".gitignore") == f"{HEADING}\n*.hip\n*_hip.*\n"
    rocm = {name: [line for line in text.splitlines() if line not in WARP_FORMS[name].splitlines() and not line.startswith("#")]
            for name, text in changed.items()}
    assert rocm == {
        "a.cuh": ["  static constexpr int kWarpSize = 64;", "  for (int o = Sizes::kWarpSize / 2; o > 0; o >>= 1) v += __shfl_xor(v, o);"],
        "b.cuh": ["enum { THREADS_PER_WARP = 64 };", "    v += __shfl_xor(v, o);"],
        "c.cuh": ["template <int kThreads, int WARP_SIZE = 64>", "    v += __shfl_xor(v, o);"],
    }
    assert "#define WARP 64" not in changed.get("e.cuh", "") + changed.get("f.cu", "")


def test_typename_only_where_the_name_is_surely_a_type() -> None:
    from migrate.port.guards import Facts, rocm_guards
    from migrate.port.typename import type_names

    header = ("struct A { static __device__ void Load(float*); using StoreT = Writer; };\n"
              "struct B { using Load = Reader; };\n")
    kernel = ("template <typename P>\n__device__ void f(float* s) {\n  P::Load(s);\n  P::StoreT(s).Store();\n"
              "  typename P::StoreT(s).Store();\n  Q::StoreT(s).Store();\n}\n"
              "__device__ void g(float* s) { A::StoreT(s).Store(); }\n")
    names = type_names({"a.h": header, "k.cu": kernel})
    assert names.names == frozenset({"StoreT"})  # Load is also a static function somewhere: never touched
    new, _ = rocm_guards(kernel, "k.cu", facts=Facts(types=names))
    assert new == kernel.replace("  P::StoreT(s).Store();\n  typename", "  typename P::StoreT(s).Store();\n  typename")


# -- Python: switches where a CUDA-only feature is chosen, and tests skipped on ROCm -----------------------------------


def _gates(text: str) -> list[str]:
    """The source of every expression that tests torch.version.hip (the port's gates, in file order)."""
    tree = ast.parse(text)
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.BoolOp, ast.IfExp)) and "torch.version.hip" in ast.unparse(n)]
    return [ast.unparse(n) for n in sorted(found, key=lambda n: (n.lineno, n.col_offset))]


def _value(expression: str, hip: str | None, capability: tuple[int, int]) -> object:
    """EXPRESSION evaluated on one machine: torch.version.hip and the capability the GPU reports."""
    from types import SimpleNamespace

    cuda = SimpleNamespace(get_device_capability=lambda *a: capability)
    names = {"torch": SimpleNamespace(version=SimpleNamespace(hip=hip), cuda=cuda), "cap": capability,
             "major": capability[0], "get_device_compute_capability": lambda: capability}
    return eval(expression, names)  # the port's own expressions, nothing from outside the test


def test_capability_gates_and_warp_counts_branch_on_rocm(tmp_path: Path) -> None:
    root = _copy("py-switch", tmp_path)
    changed = _changed(_plan(root))
    assert sorted(changed) == ["model/device.py", "model/kernels.py", "tests/test_device.py"]
    gates = _gates(changed["model/device.py"])
    assert gates == [
        "torch.version.hip is None and torch.cuda.get_device_capability() >= (8, 9)",
        "torch.version.hip is None and major >= 9",
    ]  # `>= 8` (bf16, tensor cores) holds on CDNA as well: left alone; `cap in [(9, 0), (10, 0)]` is False on gfx942
    both = _gates(_changed(_plan(root, targets=("gfx942", "gfx90a")))["model/device.py"])
    assert both == [*gates, "torch.version.hip is None and cap in [(9, 0), (10, 0)]"]  # gfx90a reports 9.0
    gates = both
    original = _gates_free((root / "model/device.py").read_text(), gates)
    for gate, before in zip(gates, original):
        for capability in ((8, 0), (8, 9), (9, 0), (10, 0)):  # NVIDIA GPUs: exactly as before
            assert _value(gate, None, capability) == _value(before, None, capability)
        for capability in ((9, 0), (9, 4), (9, 5), (11, 0)):  # gfx90a, gfx942, gfx950, gfx1100: no NVIDIA feature
            assert _value(gate, "6.2", capability) is False
    assert ("_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=block, num_warps=32 if torch.version.hip is None "
            "else 16)") in changed["model/kernels.py"]
    assert "triton.Config({}, num_warps=16)" in changed["model/kernels.py"]  # 16 warps fit a block on AMD too
    assert "        num_warps = 32 if torch.version.hip is None else 16\n" in changed["model/kernels.py"]
    warps = "32 if torch.version.hip is None else 16"
    assert (_value(warps, None, (9, 0)), _value(warps, "6.2", (9, 4))) == (32, 16)  # CUDA keeps its 32
    assert "    max_warps = 64  #" in changed["model/kernels.py"]  # not a warp count it launches with
    assert _plan(_written(root, tmp_path)).changes == ()  # already dual-path: a second port changes nothing


def _gates_free(text: str, gates: list[str]) -> list[str]:
    """Each gate's comparison as the original file has it."""
    return [gate.split(" and ", 1)[1] if " and " in gate else gate.split(" or ", 1)[1] for gate in gates]


def _written(root: Path, tmp_path: Path) -> Path:
    out = tmp_path / "ported"
    write_port(_plan(root), out_dir=out)
    return out


def test_tests_of_cuda_only_features_are_skipped_on_rocm(tmp_path: Path) -> None:
    """The Hopper FP8 gate (a project helper returning the device's major and minor) skips on ROCm; the sm80 gate
    stays; a test that builds a TensorRT engine gets a skip of its own; the other tests are untouched."""
    root = _copy("py-switch", tmp_path)
    new = _changed(_plan(root))["tests/test_device.py"]
    old = (root / "tests/test_device.py").read_text()
    assert new == old.replace(
        '@pytest.mark.skipif(get_device_compute_capability() < (9, 0), reason="FP8 tests require Hopper.")',
        '@pytest.mark.skipif(torch.version.hip is not None or get_device_compute_capability() < (9, 0), '
        'reason="FP8 tests require Hopper.")').replace(
        "\ndef test_engine_export(tmp_path):",
        '\n@pytest.mark.skipif(torch.version.hip is not None, reason="TensorRT: CUDA-only, no ROCm build")\n'
        "def test_engine_export(tmp_path):")
    skip = _gates(new)[0]
    assert _value(skip, "6.2", (9, 4)) is True and _value(skip, None, (9, 0)) is False and _value(skip, None, (8, 0)) is True


def test_python_switches_need_torch_and_leave_rocm_aware_files_alone() -> None:
    from migrate.port.pyswitch import switch_fixes

    gate = "def f():\n    return torch.cuda.get_device_capability() >= (9, 0)\n"
    assert switch_fixes("import torch\n" + gate, "m.py")
    assert switch_fixes("import torch as th\n" + gate, "m.py") == []  # torch is not a name here: nothing to test
    assert switch_fixes("import torch\nHIP = torch.version.hip\n" + gate, "m.py") == []  # already branches on ROCm
    low = "import torch\nuse_bf16 = torch.cuda.get_device_capability()[0] >= 8\nsm = torch.cuda.get_device_capability() > (8, 6)\n"
    assert switch_fixes(low, "m.py") == []  # sm80/sm86 gates hold on CDNA GPUs as well
    chained = "import torch\nok = (8, 9) <= torch.cuda.get_device_capability() < (10, 0)\n"
    assert switch_fixes(chained, "m.py") == []  # a chained comparison: left for a hand port


def test_gates_the_targets_already_fail_are_left_as_they_are() -> None:
    """A Blackwell or consumer-GPU gate (`major == 10`, `not in [10, 12]`) already reads "no feature" on gfx942
    (9.4): a maintainer leaves it. A gate gfx942 passes (`major == 9`, `>= (9, 0)`) gets the switch; RDNA 2 (gfx1030
    reports 10.3) passes the Blackwell-family gates, so a port for it writes them."""
    from migrate.port.pyswitch import rocm_capability, switch_fixes

    assert [rocm_capability(g) for g in ("gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "sm_90")] == [
        (9, 0), (9, 4), (9, 5), (10, 3), (11, 0), None]
    text = ("import torch\nmajor, minor = torch.cuda.get_device_capability()\n"
            "blackwell = major == 10\nconsumer = major not in [10, 11, 12]\nhopper = major == 9\n"
            "sm100 = torch.cuda.get_device_capability() == (10, 0)\n"
            "recent = torch.cuda.get_device_capability() >= (9, 0)\n")
    lines = text.splitlines()
    assert [lines[f.line - 1] for f in switch_fixes(text, "m.py")] == [
        "hopper = major == 9", "recent = torch.cuda.get_device_capability() >= (9, 0)"]
    assert [f.line for f in switch_fixes(text, "m.py", targets=("gfx1030",))] == [3, 4, 7]
    assert [f.line for f in switch_fixes(text, "m.py", targets=("gfx942", "gfx1030"))] == [3, 4, 5, 7]


def test_code_for_one_nvidia_architecture_gets_no_rocm_branch(tmp_path: Path) -> None:
    """Hopper/Blackwell code (named for sm90+, or using wgmma/TMA) is left out of a ROCm build, as the scan's
    arch-specific-sources says: the port writes no branch into it."""
    shuffle = "__device__ float f(float v) {\n  v += __shfl_xor_sync(0xffffffff, v, 1);\n  return v;\n}\n"
    (tmp_path / "setup.py").write_text(WARP_FORMS["setup.py"])
    (tmp_path / "hopper").mkdir()
    (tmp_path / "hopper" / "mainloop.cuh").write_text(shuffle)
    (tmp_path / "gemm_sm90.cu").write_text(shuffle)
    (tmp_path / "tma.cuh").write_text(shuffle + 'asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");\n')
    (tmp_path / "reduce.cuh").write_text(shuffle)
    assert sorted(_changed(_plan(tmp_path))) == [".gitignore", "reduce.cuh"]
    gate = "import torch\n\ndef test_tma():\n    assert torch.cuda.get_device_capability()[0] >= 9\n"
    (tmp_path / "tests" / "hopper").mkdir(parents=True)
    (tmp_path / "tests" / "hopper" / "test_tma.py").write_text(gate)
    (tmp_path / "tests" / "test_gemm.py").write_text(gate)
    (tmp_path / "hopper" / "setup.py").write_text(
        'from torch.utils.cpp_extension import CUDAExtension\n'
        'ext = CUDAExtension("fa3", ["mainloop.cu"], extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]})\n')
    assert sorted(_changed(_plan(tmp_path))) == [".gitignore", "reduce.cuh", "tests/test_gemm.py"]  # Hopper's tests and build too


def test_a_project_that_builds_for_rocm_keeps_its_torch_version_cuda_switches(tmp_path: Path) -> None:
    """`cutlass.forward if torch.version.cuda else ck.forward` is the CUDA/ROCm switch of a project that already
    builds for ROCm (the scan's ROCm status: supported): read as "any GPU build", it would send ROCm to CUTLASS."""
    dispatch = "import torch\n\nfrom . import ck, cutlass\n\nFORWARD = cutlass.forward if torch.version.cuda else ck.forward\n"
    for name, rocm in (("plain", False), ("rocm", True)):
        root = tmp_path / name
        (root / "ops").mkdir(parents=True)
        (root / "ops" / "dispatch.py").write_text(dispatch)
        if rocm:
            (root / "csrc").mkdir()
            (root / "csrc" / "attn_ck.cpp").write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = 1; }\n")
            (root / "setup.py").write_text(
                "import torch\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import ROCM_HOME, CUDAExtension\n"
                "is_rocm = torch.version.hip is not None and ROCM_HOME is not None\n"
                'setup(name="attn", ext_modules=[CUDAExtension("attn._C", ["csrc/attn_ck.cpp"] if is_rocm else ["csrc/attn.cu"])])\n')
            (root / ".github" / "workflows").mkdir(parents=True)
            (root / ".github" / "workflows" / "rocm.yml").write_text(
                "jobs:\n  test-rocm:\n    runs-on: [self-hosted, amd-mi300]\n    container: rocm/pytorch:latest\n"
                "    steps:\n      - run: python setup.py develop\n")
        changed = _changed(_plan(root)).get("ops/dispatch.py")
        assert changed == (None if rocm else dispatch.replace("if torch.version.cuda", "if (torch.version.cuda or torch.version.hip)"))


VERSION_GUARDED = """template <typename T>
__device__ T shfl_xor(T value, int lane_mask, int width = 32, unsigned int mask = 0xffffffff)
{
#if CUDA_VERSION >= 9000
    return __shfl_xor_sync(mask, value, lane_mask, width);
#else
    return __shfl_xor(value, lane_mask, width);
#endif
}

__device__ float reduce(float v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __syncwarp();
#endif
    v += __shfl_down_sync(0xffffffff, v, 1);
    return v;
}
"""


@pytest.mark.parametrize("macro", ["USE_ROCM", "__HIP_PLATFORM_AMD__"])
def test_code_a_hip_build_never_compiles_gets_no_branch(macro: str) -> None:
    """`#if CUDA_VERSION >= 9000` is false on ROCm (a ROCm torch hipifies CUDA_VERSION to TORCH_HIP_VERSION, 602 for
    6.2; without torch it is not defined), so its `#else` with the non-sync form is what hipcc compiles: the port
    leaves both, as the ROCm ports of apex and flash-attention did. Code under `__CUDA_ARCH__` is never compiled by
    hipcc either. The shuffle outside them gets its branch."""
    from migrate.port.guards import rocm_guards

    new, left = rocm_guards(VERSION_GUARDED, "softmax.h", macro=macro)
    assert left == [] and new == VERSION_GUARDED.replace(
        "    v += __shfl_down_sync(0xffffffff, v, 1);\n",
        f"#ifdef {macro}  // non-sync form: ROCm < 6.2 has no *_sync builtins; width 32 as on CUDA\n"
        "    v += __shfl_down(v, 1, 32);\n#else\n    v += __shfl_down_sync(0xffffffff, v, 1);\n#endif\n")
    legacy = VERSION_GUARDED.replace("CUDA_VERSION >= 9000", "CUDA_VERSION < 9000")  # the sync form is the #else now
    ported, _ = rocm_guards(legacy, "softmax.h", macro=macro)
    assert ported is not None and ported.count(f"#ifdef {macro}") == 2


def test_sources_built_on_tensor_cores_are_left_whole_for_a_rewrite(tmp_path: Path) -> None:
    """A kernel built on CUTLASS/CuTe, WMMA or mma.sync/ldmatrix PTX has no ROCm build: its ROCm form is a rewrite
    (Composable Kernel, rocWMMA), so branches beside its shuffles would be half a port; the port says so once per
    file. A CUTLASS include the file already keeps off ROCm, or PTX under `__CUDA_ARCH__`, does not count."""
    shuffle = "__device__ float f(float v) {\n  v += __shfl_xor_sync(0xffffffff, v, 1);\n  return v;\n}\n"
    (tmp_path / "setup.py").write_text(WARP_FORMS["setup.py"])
    (tmp_path / "gemm.cuh").write_text("#include <cutlass/gemm/gemm.h>\n" + shuffle)
    (tmp_path / "attn.cuh").write_text("#include <cute/tensor.hpp>\nusing namespace cute;\n" + shuffle)
    (tmp_path / "frag.cuh").write_text(shuffle + '__device__ void g(unsigned *r, unsigned a) {\n'
                                       '  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\\n" '
                                       ': "=r"(r[0]) : "r"(a));\n}\n')
    (tmp_path / "guarded.cuh").write_text("#ifndef USE_ROCM\n#include <cutlass/numeric_types.h>\n#endif\n" + shuffle)
    (tmp_path / "reduce.cuh").write_text(shuffle)
    (tmp_path / "fallback.cuh").write_text(  # the PTX only nvcc compiles; hipcc takes the #else
        shuffle + '__device__ void h(unsigned *r, unsigned a) {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n'
        '  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\\n" : "=r"(r[0]) : "r"(a));\n'
        '#else\n  r[0] = a;\n#endif\n}\n')
    plan = _plan(tmp_path)
    assert sorted(_changed(plan)) == [".gitignore", "fallback.cuh", "guarded.cuh", "reduce.cuh"]
    assert sorted(f.path for f in plan.findings if "tensor cores" in f.message) == ["attn.cuh", "frag.cuh", "gemm.cuh"]
    assert [f.line for f in plan.findings if f.path == "frag.cuh"] == [1]  # one finding a file, not one per PTX line


# -- CUB includes: hipCUB under CUB's name on ROCm ---------------------------------------------------------------

# A stand-in of the few hipCUB names the fixture uses (Debian ships rocPRIM but no hipCUB): enough for hipcc to check
# that the ROCm branch finds the header and that `cub::` resolves through the alias.
HIPCUB_STAND_IN = """#pragma once
namespace hipcub {
enum BlockLoadAlgorithm { BLOCK_LOAD_WARP_TRANSPOSE };
template <typename T, int kThreads, int kItems, BlockLoadAlgorithm A> struct BlockLoad {
  struct TempStorage { T data[kThreads * kItems]; };
  __device__ explicit BlockLoad(TempStorage&) {}
  __device__ void Load(const T* in, T (&items)[kItems]) { for (int i = 0; i < kItems; ++i) items[i] = in[i]; }
};
template <typename T, int kThreads> struct BlockScan {
  struct TempStorage { T data[kThreads]; };
  __device__ explicit BlockScan(TempStorage&) {}
  template <int kItems> __device__ void InclusiveSum(T (&in)[kItems], T (&out)[kItems]) {
    for (int i = 0; i < kItems; ++i) out[i] = in[i];
  }
};
template <typename T, int kThreads> struct BlockReduce {
  struct TempStorage { T data[kThreads]; };
  __device__ explicit BlockReduce(TempStorage&) {}
  __device__ T Sum(T v) { return v; }
};
template <typename T, int kItems> __device__ void StoreDirectBlocked(int, T* out, T (&items)[kItems]) {
  for (int i = 0; i < kItems; ++i) out[i] = items[i];
}
}  // namespace hipcub
"""


@pytest.mark.slow
def test_cub_includes_take_hipcub_under_cubs_name_on_rocm(tmp_path: Path) -> None:
    """Each run of CUB includes gets an `#ifdef USE_ROCM` branch with hipCUB (the alias once per file), as the ROCm
    ports of mamba and flashinfer write it; Thrust stays (rocThrust keeps its names), and so do a file that already
    takes hipCUB and an include only nvcc reads. The ROCm branch
    needs nothing from hipify (whose list of CUB headers differs by torch release): hipcc compiles the ported unit
    as it is, and stops at the original's CUB include."""
    original, ported = _ported("hipcub", tmp_path)
    assert (ported / "csrc/block_io.cuh").read_text() == (original / "csrc/block_io.cuh").read_text().replace(
        "\n    #include <cub/block/block_load.cuh>\n",
        "\n#ifdef USE_ROCM  // hipCUB: CUB's API in namespace hipcub\n    #include <hipcub/hipcub.hpp>\n"
        "    namespace cub = hipcub;\n#else\n    #include <cub/block/block_load.cuh>\n").replace(
        "    #include <cub/block/block_scan.cuh>\n", "    #include <cub/block/block_scan.cuh>\n#endif\n")
    assert (ported / "csrc/rowscan.cu").read_text() == (original / "csrc/rowscan.cu").read_text().replace(
        "#include <cub/cub.cuh>\n",
        "#ifdef USE_ROCM  // hipCUB: CUB's API in namespace hipcub\n#include <hipcub/hipcub.hpp>\n"
        "namespace cub = hipcub;\n#else\n#include <cub/cub.cuh>\n#endif\n").replace(
        "#include <cub/block/block_store.cuh>\n",
        "#ifdef USE_ROCM  // hipCUB: CUB's API in namespace hipcub\n#include <hipcub/hipcub.hpp>\n#else\n"
        "#include <cub/block/block_store.cuh>\n#endif\n")
    for same in ("csrc/rowsum.cu", "csrc/nvcc_only.cuh", "csrc/sort.cuh"):
        assert (ported / same).read_bytes() == (original / same).read_bytes(), same
    assert not [f for f in _plan(original).findings if f.rule == "rocm-guard-not-written"]
    stand_in = tmp_path / "hipcub-stand-in"
    (stand_in / "hipcub").mkdir(parents=True)
    (stand_in / "hipcub" / "hipcub.hpp").write_text(HIPCUB_STAND_IN)
    units = ["csrc/rowscan.cu", "csrc/rowsum.cu"]
    stopped, kept = (_hipcc_rocm(original, unit, stand_in) for unit in units)
    assert "'cub/cub.cuh' file not found" in stopped.stderr and kept.returncode == 0, kept.stderr[-2000:]
    for done in (_hipcc_rocm(ported, unit, stand_in) for unit in units):
        assert done.returncode == 0, done.stderr[-2000:]
    _same_ptx(original, ported, units)
    assert _plan(ported).changes == ()  # a second port changes nothing


def _hipcc_rocm(tree: Path, unit: str, include: Path) -> subprocess.CompletedProcess[str]:
    """UNIT of TREE checked by Debian's hipcc with a ROCm torch's -DUSE_ROCM=1 (and the HIP runtime header hipify adds) and
    INCLUDE on the path, not hipified."""
    hipcc = require_tool("hipcc")
    flags = ["-DUSE_ROCM=1", "-D__HIP_PLATFORM_AMD__=1", "-include", "hip/hip_runtime.h", f"-I{include}"]
    return subprocess.run([hipcc, "--offload-arch=gfx90a", "-fsyntax-only", "-x", "hip", *flags, unit], cwd=tree,
                          capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})


def test_cub_branch_keeps_crlf_and_is_for_torch_builds_only() -> None:
    """A CRLF source keeps its line ends in the branch; the compat-header strategies (`__HIP_PLATFORM_AMD__`) get no
    branch: their header includes hipCUB in place of the CUB include."""
    from migrate.port.guards import HIP_MACRO, rocm_guards

    text = "#include <cub/block/block_reduce.cuh>\r\n__global__ void k() {}\r\n"
    new, left = rocm_guards(text, "k.cu")
    assert new == ("#ifdef USE_ROCM  // hipCUB: CUB's API in namespace hipcub\r\n#include <hipcub/hipcub.hpp>\r\n"
                   "namespace cub = hipcub;\r\n#else\r\n#include <cub/block/block_reduce.cuh>\r\n#endif\r\n"
                   "__global__ void k() {}\r\n") and left == []
    assert rocm_guards(text, "k.cu", macro=HIP_MACRO) == (None, [])


# -- a repository that already builds for ROCm keeps its C/C++/CUDA sources ----------------------------------------

TWIN = {
    "setup.py": ("import glob\n\nimport torch\nfrom setuptools import setup\n"
                 "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
                 "if torch.version.hip:\n    sources = glob.glob(\"csrc/hip/*.hip\") + [\"csrc/bind.cpp\"]\n"
                 "else:\n    sources = glob.glob(\"csrc/cuda/*.cu\") + [\"csrc/bind.cpp\"]\n"
                 "setup(name=\"twin\", ext_modules=[CUDAExtension(\"twin._C\", sources)], "
                 "cmdclass={\"build_ext\": BuildExtension})\n"),
    "csrc/cuda/reduce.cu": ("#include <cub/cub.cuh>\n\n__device__ float warp_sum(float v) {\n"
                            "  for (int o = 16; o > 0; o /= 2)\n    v += __shfl_xor_sync(0xffffffff, v, o);\n"
                            "  return v;\n}\n"),
    "csrc/hip/reduce.hip": ("#include <hip/hip_runtime.h>\n\n__device__ float warp_sum(float v) {\n"
                            "  for (int o = warpSize / 2; o > 0; o /= 2)\n    v += __shfl_xor(v, o);\n  return v;\n}\n"),
    "csrc/bind.cpp": ("#include <torch/extension.h>\n#ifdef USE_ROCM\nconstexpr int kWarp = 64;\n#else\n"
                      "constexpr int kWarp = 32;\n#endif\nint warp() { return kWarp; }\n"),
    "twin/ops.py": ("import torch\n\nWARP = 64 if torch.version.hip else 32\n"
                    "BACKEND = \"hip\" if torch.version.hip is not None else \"cuda\"\n"),
}


def test_a_repository_with_its_own_rocm_path_keeps_its_sources(tmp_path: Path) -> None:
    """xformers (a CUDA kernel tree its ROCm build never compiles beside its Composable Kernel one) and triton (a
    CUDA driver beside its HIP driver) already build for ROCm: apply wrote branches and compat includes into CUDA code
    their ROCm builds leave out, and neither fork touched it. The same project without its HIP half gets them."""
    for name, text in TWIN.items():
        (tmp_path / "twin" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "twin" / name).write_text(text)
    plan = _plan(tmp_path / "twin")
    assert [c.relpath for c in plan.changes] == []
    assert plan.reason.endswith("the repository already builds for ROCm (scan: supported), so its C/C++/CUDA sources "
                                "keep their own ROCm path: no branches or compat header written")
    alone = tmp_path / "alone"
    for name in ("setup.py", "csrc/cuda/reduce.cu"):
        (alone / name).parent.mkdir(parents=True, exist_ok=True)
        (alone / name).write_text(TWIN[name].replace("if torch.version.hip:\n    sources = glob.glob(\"csrc/hip/*.hip\") "
                                                      "+ [\"csrc/bind.cpp\"]\nelse:\n    ", ""))
    plan = _plan(alone)
    assert [c.relpath for c in plan.changes] == [".gitignore", "csrc/cuda/reduce.cu"] and "already builds" not in plan.reason
    assert plan.changes[0].new.decode().splitlines()[1:] == ["*.hip", "*_hip.*", "/csrc/hip/"]  # hipify's cuda/ -> hip/
    assert "#ifdef USE_ROCM" in plan.changes[1].new.decode()


def test_no_cub_alias_where_the_repository_opens_cubs_namespace(tmp_path: Path) -> None:
    """A header that adds a trait to `namespace cub` would clash with the alias in any unit that includes both, so no
    file of the repository gets the branch; each CUB include is reported instead."""
    (tmp_path / "csrc").mkdir()
    (tmp_path / "setup.py").write_text('from torch.utils.cpp_extension import CUDAExtension\n'
                                       'ext = CUDAExtension("m", ["csrc/sort.cu"])\n')
    (tmp_path / "csrc" / "traits.cuh").write_text(
        "#pragma once\n#include <cub/util_type.cuh>\nstruct Key { unsigned int bits; };\n"
        "namespace cub {\ntemplate <> struct Traits<Key> : NumericTraits<unsigned int> {};\n}  // namespace cub\n")
    (tmp_path / "csrc" / "sort.cu").write_text('#include <cub/device/device_radix_sort.cuh>\n#include "traits.cuh"\n')
    plan = _plan(tmp_path)
    assert [c.relpath for c in plan.changes] == [".gitignore"]
    assert [(f.path, f.line, f.message) for f in plan.findings if f.rule == "rocm-guard-not-written"] == [
        (path, line, "no #ifdef branch written: csrc/traits.cuh opens namespace cub itself, so `namespace cub = "
         "hipcub;` would clash with it; include hipCUB by hand") for path, line in (("csrc/sort.cu", 1),
                                                                                    ("csrc/traits.cuh", 2))]
