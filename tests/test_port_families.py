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
