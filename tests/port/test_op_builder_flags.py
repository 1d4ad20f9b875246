"""Op-builder flag methods: a method in one file returns nvcc flags that a builder in another file passes to torch's
CUDAExtension or load(); the port gives the list a ROCm variant where it is written and keeps the CUDA list."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from migrate.cli import cli
from migrate.port.buildflags import port_flag_lists
from migrate.port.flagproviders import providers_in
from migrate.port.hipccflags import hipcc_word

from conftest import git, init_repo

BASE = '''\
"""Builds the project's CUDA ops with torch."""
try:
    import torch
except ImportError:
    torch = None


class Op:
    NAME = "op"

    def sources(self):
        return []

    def flags_for_nvcc(self):
        return []

    def extension(self):
        from torch.utils.cpp_extension import CUDAExtension
        return CUDAExtension(self.NAME, self.sources(),
                             extra_compile_args={"cxx": ["-O2"], "nvcc": self.flags_for_nvcc()})

    def jit(self):
        from torch.utils.cpp_extension import load
        return load(self.NAME, self.sources(), extra_cuda_cflags=self.flags_for_nvcc())
'''
SCALE = '''\
from .base import Op


class ScaleOp(Op):
    NAME = "scale"

    def flags_for_nvcc(self):
        return ["-O3",
                "--use_fast_math",
                "-lineinfo"] + self.macros()

    def macros(self):
        return ["-DSCALE_OP"]
'''
NORM = '''\
from .base import Op
from .util import with_macros


class NormOp(Op):
    NAME = "norm"

    def flags_for_nvcc(self):
        """Flags of the norm kernels."""
        limits = ['--maxrregcount=64']
        flags = ['-O3', '--use_fast_math'] + limits
        return with_macros(flags)
'''
UTIL = '''\
def with_macros(flags):
    return flags + ["-DNORM_OP"]
'''
MIXED = '''\
import torch
from .base import Op


class MixedOp(Op):
    def flags_for_nvcc(self):
        return ["-O3", "--ftz=true"]
'''
QUIET = {  # look-alikes: a method the build never hands to nvcc, a command list, a list of sources
    "op_builder/cpu_op.py": 'from .base import Op\n\n\nclass CpuOp(Op):\n    def cxx_flags(self):\n'
                            '        return ["-O3", "--use_fast_math"]\n',
    "tools/probe.py": 'def flags_for_nvcc():\n    return ["nvcc", "--use_fast_math", "--version"]\n',
}
GOLDEN = '''\
diff --git a/.gitignore b/.gitignore
new file mode 100644
--- /dev/null
+++ b/.gitignore
@@ -0,0 +1,3 @@
+# written by a ROCm PyTorch build (torch.utils.hipify), not sources
+*.hip
+*_hip.*
diff --git a/op_builder/mixed_op.py b/op_builder/mixed_op.py
--- a/op_builder/mixed_op.py
+++ b/op_builder/mixed_op.py
@@ -4,4 +4,4 @@
 
 class MixedOp(Op):
     def flags_for_nvcc(self):
-        return ["-O3", "--ftz=true"]
+        return (["-O3", "--ftz=true"] if not torch.version.hip else ["-O3", "-fgpu-flush-denormals-to-zero"])
diff --git a/op_builder/norm_op.py b/op_builder/norm_op.py
--- a/op_builder/norm_op.py
+++ b/op_builder/norm_op.py
@@ -7,6 +7,9 @@
 
     def flags_for_nvcc(self):
         """Flags of the norm kernels."""
+        import torch
         limits = ['--maxrregcount=64']
-        flags = ['-O3', '--use_fast_math'] + limits
+        if torch.version.hip:  # ROCm torch: hipcc gets --offload-arch from PYTORCH_ROCM_ARCH
+            limits = []
+        flags = (['-O3', '--use_fast_math'] if not torch.version.hip else ['-O3', '-ffast-math']) + limits
         return with_macros(flags)
diff --git a/op_builder/scale_op.py b/op_builder/scale_op.py
--- a/op_builder/scale_op.py
+++ b/op_builder/scale_op.py
@@ -5,9 +5,10 @@
     NAME = "scale"
 
     def flags_for_nvcc(self):
-        return ["-O3",
+        import torch
+        return (["-O3",
                 "--use_fast_math",
-                "-lineinfo"] + self.macros()
+                "-lineinfo"] if not torch.version.hip else ["-O3", "-ffast-math", "-gline-tables-only"]) + self.macros()
 
     def macros(self):
         return ["-DSCALE_OP"]
'''


def _project(root: Path) -> Path:
    files = {"op_builder/__init__.py": "", "op_builder/base.py": BASE, "op_builder/scale_op.py": SCALE,
             "op_builder/norm_op.py": NORM, "op_builder/util.py": UTIL, "op_builder/mixed_op.py": MIXED,
             "csrc/scale.cu": "__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n", **QUIET}
    for relpath, text in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text)
    return init_repo(root)


def _apply(repo: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["apply", str(repo), "--engine", "builtin", "--strategy", "extension", *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_flag_methods_the_build_passes_to_nvcc_get_a_rocm_list(tmp_path: Path) -> None:
    """The golden diff: a lazy `import torch` where the file has none, the file's own torch where it has one, and
    nothing for base.py (no nvcc-only flag), the cxx method, or the nvcc command of a script."""
    repo = _project(tmp_path / "repo")
    assert _apply(repo, "--dry-run").partition("diff --git")[2] == GOLDEN.partition("diff --git")[2]


def _cuda_form(text: str) -> str:
    """TEXT without what the port adds for ROCm: the lazy import, `if torch.version.hip:` blocks, and the
    `... if not torch.version.hip else [...]` of an inline list."""
    text = re.sub(r"\n +import torch\n", "\n", text)
    text = re.sub(r"\n +if torch\.version\.hip:.*\n +\w+ = \[.*\]\n", "\n", text)
    return re.sub(r"\((\[[^]]*\]) if not torch\.version\.hip else \[[^]]*\]\)", r"\1", text, flags=re.S)


def _rocm_words(text: str) -> list[str]:
    tree = ast.parse(text)
    lists = [n.orelse for n in ast.walk(tree) if isinstance(n, ast.IfExp)]
    lists += [n.body[0].value for n in ast.walk(tree)  # type: ignore[attr-defined]
              if isinstance(n, ast.If) and ast.unparse(n.test) == "torch.version.hip"]
    return [word for node in lists for word in ast.literal_eval(node)]


def test_the_cuda_lists_stay_and_the_rocm_lists_are_hipcc_words(tmp_path: Path) -> None:
    repo = _project(tmp_path / "repo")
    _apply(repo)
    changed = git(repo, "diff", "--name-only", "main", "HEAD").split()
    assert changed == [".gitignore", "op_builder/mixed_op.py", "op_builder/norm_op.py", "op_builder/scale_op.py"]
    for relpath in changed[1:]:
        ported = (repo / relpath).read_text()
        assert _cuda_form(ported) == git(repo, "show", f"main:{relpath}")
        words = _rocm_words(ported)
        assert words and all(hipcc_word(w).words == (w,) for w in words), words
    assert _apply(repo, "--dry-run").count("diff --git") == 0  # a second port changes nothing


def test_the_op_modules_still_import_without_torch(tmp_path: Path) -> None:
    """The import of torch sits in the method, so importing the package without torch behaves as before."""
    repo = _project(tmp_path / "repo")
    _apply(repo)
    runner = ("import sys\nsys.modules['torch'] = None\nsys.path.insert(0, sys.argv[1])\n"
              "import op_builder.scale_op, op_builder.norm_op\nprint(op_builder.scale_op.ScaleOp().macros())\n")
    done = subprocess.run([sys.executable, "-c", runner, str(repo)], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "['-DSCALE_OP']\n"), done.stderr


def test_flag_methods_are_the_calls_inside_what_the_build_passes_to_nvcc() -> None:
    assert sorted(set(providers_in(BASE))) == ["flags_for_nvcc"]
    both = ('from torch.utils.cpp_extension import load\n'
            'm = load("m", ["k.cu"], extra_cflags=cxx_args(), extra_cuda_cflags=strip(self.nvcc_args()) + arch())\n')
    assert sorted(set(providers_in(both))) == ["arch", "nvcc_args", "strip"]
    assert list(providers_in("x = {'cxx': cxx_args()}\nload(extra_cflags=f())\n")) == []


def test_flag_methods_the_port_leaves() -> None:
    """A method whose body shares the def line is reported; a ROCm-aware file, a list the method does not return, and
    a module-level list in a file without torch are left as they are."""
    one_line = 'class Op:\n    def nvcc_args(self): return ["--use_fast_math"]\n'
    new, left = port_flag_lists(one_line, "op_builder/op.py", frozenset({"nvcc_args"}))
    assert new is None and [(f.line, f.rule, f.category) for f in left] == [(2, "rocm-guard-not-written", "cuda-build-config")]
    for text in (
        'import torch\n\n\ndef nvcc_args():\n    if torch.version.hip:\n        return ["-O3"]\n'
        '    return ["--use_fast_math"]\n',
        'def nvcc_args():\n    unused = ["--use_fast_math"]\n    return ["-O3"]\n',
        'def helper():\n    return ["--use_fast_math"]\n',
    ):
        assert port_flag_lists(text, "op_builder/op.py", frozenset({"nvcc_args"})) == (None, [])
    module_level = 'FLAGS = ["--use_fast_math"]\n\n\ndef nvcc_args():\n    return FLAGS\n'
    new, left = port_flag_lists(module_level, "op_builder/op.py", frozenset({"nvcc_args"}))
    assert new is None and [f.line for f in left] == [1] and "torch is not imported" in left[0].message
