"""What `apply` writes for the families of edits real ROCm ports make: flag lists of JIT-built extensions, Python
switches and test skips, warp-size constants, hipcc-strict C++; each leaves the CUDA path as it was."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.port.apply import plan_port, write_port
from migrate.port.buildflags import port_flag_lists
from migrate.port.extension import as_torch_builds
from migrate.port.hipccflags import hipcc_word
from migrate.port.translate import Engine

from conftest import FIXTURES, require_tool

PORT = FIXTURES / "port"
BUILTIN = Engine("builtin")


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(PORT / name, target)
    return target


def _plan(root: Path, strategy: str = "auto"):  # type: ignore[no-untyped-def]
    return plan_port(root, BUILTIN, max_file_size=1 << 20, targets=("gfx942",), strategy=strategy)


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
    assert sorted(changed) == ["ops/bias.py", "ops/scale.py", "ops/scale_sum.cu"]
    assert ('_NVCC_FLAGS = ["--use_fast_math", "--allow-unsupported-compiler"]\n'
            'if torch.version.hip:  # ROCm torch: hipcc gets --offload-arch from PYTORCH_ROCM_ARCH\n'
            '    _NVCC_FLAGS = ["-ffast-math"]\n') in changed["ops/scale.py"]
    assert ('        extra_cuda_cflags=(["-O3", "--use_fast_math", "-res-usage", "--maxrregcount 64", "-Xptxas -O3",\n'
            '                           "-gencode=arch=compute_80,code=sm_80"] if not torch.version.hip else '
            '["-O3", "-ffast-math", "-Rpass-analysis=kernel-resource-usage"]),\n') in changed["ops/bias.py"]
    for relpath in ("ops/scale.py", "ops/bias.py"):  # nothing imported: torch already is
        original = (root / relpath).read_text()
        assert _imports(changed[relpath]) == _imports(original)
    assert not [f for f in plan.findings if f.category == "nvcc-flags"]
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
        assert new is None and [(f.line, f.rule, f.category) for f in left] == [(line, "rocm-guard-not-written", "nvcc-flags")]
        assert why in left[0].message
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
        ptx = [subprocess.run([nvcc, "-arch=sm_80", "-ptx", unit, "-o", "-"], cwd=tree, capture_output=True, check=True).stdout
               for tree in (original, ported)]
        assert ptx[0] == ptx[1] and ptx[0], unit


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
    plan = plan_port(root, BUILTIN, max_file_size=1 << 20, targets=("gfx1100",))
    reduce = next(c.new.decode() for c in plan.changes if c.relpath == "csrc/reduce.cuh")
    assert "#define WARP_SIZE 64" not in reduce and "for (int offset = 16;" in reduce
    assert "    v += __shfl_down(v, offset, 32);\n" in reduce  # 32 lanes as on CUDA


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
