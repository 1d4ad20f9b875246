"""nvcc flags of PyTorch extension builds whose sources are all C++: no compiler reads them (info), and the build is
plain C++ (info), while a build with a .cu / .cuh source, or sources this file does not name, keeps its severity."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.matchers.python_build_sources import host_only_build
from migrate.model import FileKind, SourceFile
from migrate.parse.python import parse_python
from migrate.ruleset import load_builtin
from migrate.scan import scan_file

from conftest import FIXTURES

FLAG_RULES = {"nvcc-flag-hipcc-rejects", "nvcc-flag-hipcc-ignores", "nvcc-half-macros", "extension-nvcc-flags"}
PYTHON = FIXTURES / "rules" / "python"


def flag_findings(path: Path, kind: FileKind) -> list[tuple[int, str, str]]:
    source = SourceFile(path, path.name, kind, path.stat().st_size)
    result = scan_file(source, load_builtin(), Settings())
    assert result.skipped is None
    return sorted((f.line, f.rule, f.severity.label) for f in result.findings if f.rule in FLAG_RULES)


def test_flags_of_builds_with_cuda_or_unknown_sources_keep_their_severity() -> None:
    assert flag_findings(PYTHON / "nvcc_flags_cuda_sources.py", FileKind.PYTHON) == [
        (22, "extension-nvcc-flags", "low"),
        (22, "nvcc-flag-hipcc-rejects", "high"),
        (29, "extension-nvcc-flags", "low"),
        (29, "nvcc-flag-hipcc-rejects", "high"),
    ]


def test_flags_of_builds_of_cpp_files_only_are_info() -> None:
    assert flag_findings(PYTHON / "nvcc_flags_cuda_sources_quiet.py", FileKind.PYTHON) == [
        (17, "nvcc-flag-hipcc-rejects", "info"),
        (19, "nvcc-half-macros", "info"),
        (23, "extension-nvcc-flags", "info"),
        (43, "extension-nvcc-flags", "info"),
        (43, "nvcc-flag-hipcc-rejects", "info"),
        (48, "extension-nvcc-flags", "info"),
    ]
    assert flag_findings(PYTHON / "host_only_setup" / "setup.py", FileKind.SETUP_PY) == [
        (15, "extension-nvcc-flags", "info"),
        (15, "nvcc-flag-hipcc-rejects", "info"),
        (21, "extension-nvcc-flags", "info"),
        (21, "nvcc-flag-hipcc-ignores", "info"),
    ]


def _host_only(tmp_path: Path, code: str) -> bool:
    path = tmp_path / "build.py"
    path.write_text(code, encoding="utf-8")
    return host_only_build(parse_python(SourceFile(path, "build.py", FileKind.PYTHON, len(code)), code))


HEAD = "import glob, os\nfrom torch.utils.cpp_extension import load, load_inline, CppExtension, CUDAExtension\n"


@pytest.mark.parametrize(("code", "expected"), [
    ("m = load('a', ['a.cpp', 'b.cc'], extra_cuda_cflags=['-O3'])\n", True),
    ("m = load('a', ['a.cpp', 'k.cu'])\n", False),
    ("m = load('a', ['a.cpp', 'k.cuh'])\n", False),
    ("S = ['a.cpp']\nS.append('k.cu')\nm = load('a', S)\n", False),  # a CUDA file added later
    ("S = ['a.cpp']\nS += glob.glob('*.cu')\nm = load('a', S)\n", False),
    ("m = load('a', glob.glob('src/*'))\n", False),  # a glob of anything
    ("m = load('a', sorted(glob.glob(os.path.join('src', '*.cpp'))))\n", True),
    ("def build(files):\n    return load('a', files)\n", False),  # the caller names them
    ("def build(extra):\n    return load('a', ['a.cpp'] + extra)\n", False),
    ("from other import FILES\nm = load('a', FILES)\n", False),  # named in another module
    ("m = load('a', [f for f in os.listdir('src')])\n", False),
    ("m = load('a', [os.path.join('src', f) for f in ['a.cpp', 'b.cpp']])\n", True),
    ("e = CppExtension('a', ['a.cpp'])\nc = CUDAExtension('b', ['b.cpp', 'b_kernel.cu'])\n", False),  # one CUDA build
    ("m = load_inline('a', cpp_sources='int f();', functions=['f'])\n", True),
    ("m = load_inline('a', cpp_sources='int f();', cuda_sources=KERNEL)\n", False),
    ("import torch\nstate = torch.load('weights.pt')\n", False),  # no extension build at all
])
def test_host_only_build(tmp_path: Path, code: str, expected: bool) -> None:
    assert _host_only(tmp_path, HEAD + code) is expected


def extension_findings(path: Path) -> list[tuple[int, str]]:
    source = SourceFile(path, path.name, FileKind.PYTHON, path.stat().st_size)
    result = scan_file(source, load_builtin(), Settings())
    return sorted((f.line, f.severity.label) for f in result.findings if f.rule == "python-cpp-extension")


def test_the_extension_build_itself_is_info_when_it_compiles_no_cuda_source() -> None:
    assert extension_findings(PYTHON / "nvcc_flags_cuda_sources_quiet.py") == [(23, "info"), (39, "info"), (48, "info")]
    assert extension_findings(PYTHON / "nvcc_flags_cuda_sources.py") == [(18, "medium"), (29, "medium")]
