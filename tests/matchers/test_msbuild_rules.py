"""Visual Studio C++ projects (issue 19, builds): NVIDIA's CUDA build customisation, the nvcc targets of a
configuration and the CUDA import libraries of a .vcxproj or .props file, with their exact findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.discover import classify
from migrate.model import FileKind
from migrate.scan import scan

from conftest import FIXTURES

PROJECT = FIXTURES / "rules" / "manifests" / "vs-project"


def _findings(root: Path, files: dict[str, str]) -> list[tuple]:
    for relpath, text in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    result = scan(root, Settings(jobs=1, max_file_size=10**6))
    return sorted((f.path, f.line, f.rule, f.severity.label, tuple(o.line for o in f.occurrences))
                  for f in result.findings)


@pytest.mark.parametrize(
    ("relpath", "kind"),
    [("app.vcxproj", FileKind.MSBUILD), ("build/cuda.props", FileKind.MSBUILD), ("app.vcxproj.filters", None),
     ("app.sln", None)],
)
def test_visual_studio_projects_are_classified_by_suffix(relpath: str, kind: FileKind | None) -> None:
    assert classify(relpath) is kind


def test_project_exact_findings(tmp_path: Path) -> None:
    """One build finding per project with the import and each CudaCompile item as occurrences; the nvcc targets and
    the CUDA import library; nothing from the commented-out lines."""
    files = {p.name: p.read_text(encoding="utf-8") for p in PROJECT.iterdir()}
    assert _findings(tmp_path, files) == [
        ("particles.vcxproj", 5, "msbuild-cuda-build", "medium", (5, 20, 27)),
        ("particles.vcxproj", 10, "msbuild-cuda-library", "medium", ()),
        ("particles.vcxproj", 14, "nvcc-arch-flags", "medium", ()),
    ]


def test_project_without_cuda_is_quiet(tmp_path: Path) -> None:
    project = (
        '<Project xmlns="http://schemas.microsoft.com/developer/msbuild/2003">\n'
        '  <Import Project="$(VCTargetsPath)\\Microsoft.Cpp.targets" />\n'
        "  <ItemGroup><ClCompile Include=\"solver.cpp\" /></ItemGroup>\n"
        "  <Link><AdditionalDependencies>d3d12.lib;dxgi.lib</AdditionalDependencies></Link>\n"
        "</Project>\n"
    )
    assert _findings(tmp_path, {"solver.vcxproj": project}) == []
