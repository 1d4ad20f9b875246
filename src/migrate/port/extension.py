"""The PyTorch-extension port: CUDA sources keep their names (a ROCm torch hipifies them at build time) and get
`#ifdef USE_ROCM` branches (guards.py); nvcc-only flags go behind IS_HIP_EXTENSION (buildflags.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from migrate.model import FileKind, Finding, SourceFile
from migrate.port.plan import FileChange

if TYPE_CHECKING:
    from migrate.port.guards import Facts
    from migrate.port.translate import Engine


def extension_changes(
    sources: Sequence[SourceFile], facts: Facts, *, side: tuple[list[FileChange], list[Finding]] | None,
) -> tuple[list[FileChange], list[Finding]]:
    """ROCm guards in the CUDA sources, ROCm-aware extension flags in the Python build files, and the side files."""
    from migrate.port.buildflags import build_flags
    from migrate.port.guards import TORCH_MACRO, guard_changes

    changes: dict[str, FileChange] = {c.relpath: c for c in (side[0] if side else [])}
    findings = list(side[1]) if side else []
    findings += guard_changes(sources, changes, facts, TORCH_MACRO)
    if side is not None:
        for source in sources:
            if not source.vendored and source.kind in (FileKind.SETUP_PY, FileKind.PYTHON):
                change, left = build_flags(source, changes.get(source.relpath))
                findings += left
                if change is not None:
                    changes[change.relpath] = change
    return list(changes.values()), findings


# -- verify: compile as a ROCm torch builds the extension ------------------------------------------------------------


def as_torch_builds(tree: Path, engine: Engine) -> list[str]:
    """Hipify TREE in place as a ROCm torch does at build time; the flags its hipcc gets (torch's include
    directories when torch is installed beside migrate)."""
    from migrate.port.apply import translate_paths

    translate_paths([tree], engine, in_place=True)
    return ["-DUSE_ROCM=1", "-D__HIP_PLATFORM_AMD__=1", *_torch_includes()]


def _torch_includes() -> list[str]:
    import importlib.util
    import sysconfig

    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return []
    base = Path(spec.origin).parent / "include"
    found = [base, base / "torch" / "csrc" / "api" / "include", Path(sysconfig.get_paths()["include"])]
    return [f"-I{d}" for d in found if d.is_dir()]
