"""PTX in an #if that only a __CUDA_ARCH__ comparison keeps from a HIP build, with portable code in the #else: ROCm
compiles the #else (hipcc defines no __CUDA_ARCH__), so the asm is low; with an abort, nothing or more asm there it
keeps its severity."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.matchers.cuda_arch_fallback import arch_fallbacks
from migrate.model import FileKind, SourceFile
from migrate.parse.lexer import lex
from migrate.ruleset import load_builtin
from migrate.scan import scan_file

from conftest import FIXTURES

CUDA = FIXTURES / "rules" / "cuda"


def ptx_findings(path: Path) -> list[tuple[int, str, str]]:
    source = SourceFile(path, path.name, FileKind.CUDA, path.stat().st_size)
    result = scan_file(source, load_builtin(), Settings())
    assert result.skipped is None
    return sorted((f.line, f.rule, f.severity.label) for f in result.findings if f.category == "inline-ptx")


def test_ptx_with_a_portable_else_is_low() -> None:
    assert ptx_findings(CUDA / "ptx_arch_fallback.cu") == [
        (9, "ptx-bit-manipulation", "low"), (21, "inline-ptx", "low"), (26, "inline-ptx", "low")]


def test_ptx_without_a_replacement_on_rocm_keeps_its_severity() -> None:
    assert ptx_findings(CUDA / "ptx_arch_stub.cu") == [
        (10, "inline-ptx", "blocker"), (21, "inline-ptx", "blocker"), (30, "inline-ptx", "blocker"),
        (33, "inline-ptx", "blocker"), (42, "inline-ptx", "blocker")]


def _ranges(code: str) -> tuple[tuple[int, int], ...]:
    return arch_fallbacks(lex(code, frozenset()))


@pytest.mark.parametrize(("code", "expected"), [
    ("#if __CUDA_ARCH__ >= 350\nfast();\n#else\nx = y << 2;\n#endif\n", ((2, 2),)),
    ("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\na();\nb();\n#else\n#define F(x) (x)\n#endif\n", ((2, 3),)),
    ("#if __CUDA_ARCH__ >= 900\na();\n#elif __CUDA_ARCH__ >= 700\nb();\n#else\nc = d;\n#endif\n", ((2, 2), (4, 4))),
    ("#if __CUDA_ARCH__ >= 350\nfast();\n#endif\n", ()),  # no #else: ROCm gets nothing
    ("#if __CUDA_ARCH__ >= 350\nfast();\n#else\nassert(false);\n#endif\n", ()),  # an abort is no fallback
    ("#if __CUDA_ARCH__ >= 350\nfast();\n#else\nprintf(\"sm_35 needed\\n\"); return 0;\n#endif\n", ()),
    ("#if __CUDA_ARCH__ >= 350\nfast();\n#else\nasm(\"ex2.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(v));\n#endif\n", ()),
    ("#if __CUDA_ARCH__ < 700\nptx();\n#else\nx = y;\n#endif\n", ()),  # true on ROCm: the PTX is compiled
    ("#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800\nboth();\n#else\nx = y;\n#endif\n", ()),
    ("#if __CUDA_ARCH__ >= MIN_ARCH\nfast();\n#else\nx = y;\n#endif\n", ()),  # a macro of the project decides
    ("#if defined(USE_ROCM) || __CUDA_ARCH__ >= 800\nfast();\n#else\nx = y;\n#endif\n", ()),  # names HIP: guarded
    ("#ifdef FAST\n#if __CUDA_ARCH__ >= 350\nfast();\n#else\nslow = 1;\n#endif\n#endif\n", ((3, 3),)),
])
def test_arch_fallbacks(code: str, expected: tuple[tuple[int, int], ...]) -> None:
    assert _ranges(code) == expected


def test_a_repository_that_defines_cuda_arch_for_hip_keeps_the_severity(tmp_path: Path) -> None:
    from migrate.scan import scan

    kernel = (CUDA / "ptx_arch_fallback.cu").read_text(encoding="utf-8")
    (tmp_path / "kernel.cu").write_text(kernel, encoding="utf-8")
    assert {f.severity.label for f in scan(tmp_path, Settings(jobs=1)).findings if f.category == "inline-ptx"} == {"low"}
    (tmp_path / "hip_compat.h").write_text("#ifdef __HIP_PLATFORM_AMD__\n#define __CUDA_ARCH__ 900\n#endif\n",
                                            encoding="utf-8")
    found = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.category == "inline-ptx"]
    assert [(f.line, f.severity.label) for f in found] == [(9, "high"), (21, "blocker")]  # 26: never compiled
    assert all("#else holds portable code" not in f.message for f in found)
