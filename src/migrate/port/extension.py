"""The PyTorch-extension port: CUDA sources keep their names (a ROCm torch hipifies them at build time) and get
`#ifdef USE_ROCM` branches (guards.py); nvcc-only flags go behind IS_HIP_EXTENSION (buildflags.py)."""

from __future__ import annotations

from collections.abc import Sequence

from migrate.model import FileKind, Finding, SourceFile
from migrate.port.buildflags import build_flags
from migrate.port.flagproviders import flag_providers
from migrate.port.guards import TORCH_MACRO, Facts, guard_changes, nvidia_arch_path
from migrate.port.plan import FileChange


def extension_changes(
    sources: Sequence[SourceFile], facts: Facts, *, side: tuple[list[FileChange], list[Finding]] | None,
    kernels: Sequence[SourceFile] | None = None,
) -> tuple[list[FileChange], list[Finding]]:
    """ROCm guards in the CUDA sources (KERNELS, all SOURCES by default), ROCm-aware extension flags in the Python
    build files, and the side files."""
    changes: dict[str, FileChange] = {c.relpath: c for c in (side[0] if side else [])}
    findings = list(side[1]) if side else []
    findings += guard_changes(sources if kernels is None else kernels, changes, facts, TORCH_MACRO)
    if side is not None:
        providers = flag_providers(sources)
        for source in sources:
            if (not source.vendored and source.kind in (FileKind.SETUP_PY, FileKind.PYTHON)
                    and not nvidia_arch_path(source.relpath)):
                change, left = build_flags(source, changes.get(source.relpath), providers)
                findings += left
                if change is not None:
                    changes[change.relpath] = change
    return list(changes.values()), findings
