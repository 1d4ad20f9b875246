"""How a repository is ported: its kind (PyTorch extension, CMake, Make) read from the scan, or `--strategy`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from migrate.bounded import Refused, read_source
from migrate.defaults import STRATEGIES
from migrate.errors import InputError
from migrate.model import FileKind, Finding, Skipped, SourceFile
from migrate.port.buildsys import compat_changes
from migrate.port.extension import extension_changes
from migrate.port.gitignore import hipify_ignores
from migrate.port.guards import HIP_MACRO, guard_changes, repo_facts
from migrate.port.plan import FileChange, Plan

if TYPE_CHECKING:
    from migrate.config import Settings
    from migrate.port.plan import PortOptions

# (strategy, rules whose finding shows the project is of that kind, what the finding means), in priority order
_KINDS = (
    ("extension", frozenset({"torch-cuda-extension-build", "python-cpp-extension"}), "builds a PyTorch CUDA extension"),
    ("cmake", frozenset({"cmake-cuda-language", "cmake-find-cuda"}), "builds CUDA with CMake"),
    ("make", frozenset({"nvcc-invocation"}), "calls nvcc from a Makefile"),
    # a JIT of the project's own (Python that finds nvcc through CUDA_HOME or runs it): the sources stay one tree
    ("extension", frozenset({"python-nvcc-call", "python-cuda-home"}), "builds its CUDA sources from Python"),
)
# a build the scan leaves quiet because it already handles ROCm: a torch extension, or CMake with a HIP path
_EXTENSION_BUILD = re.compile(rb"\bCUDAExtension\b|\bcpp_extension\b[^\n]*\bload(?:_inline)?\b")
_HIPIFY_CMAKE = re.compile(rb"\bhipify\w*\s*\(", re.I)
_HIP_CMAKE = re.compile(rb"enable_language\(\s*HIP\b|\bCMAKE_HIP_\w+|find_package\(\s*hip\b|\bUSE_ROCM\b")
_OWN_ROCM_PATH = ("the repository already builds for ROCm (scan: supported), so its C/C++/CUDA sources keep their own "
                  "ROCm path: no branches or compat header written")
_PYTHON_KINDS = frozenset({FileKind.SETUP_PY, FileKind.PYTHON})
_CMAKE_KINDS = frozenset({FileKind.CMAKE})
_WHY = {
    "extension": "a ROCm torch hipifies the CUDA sources at build time, so they keep their CUDA names",
    "jit": "the sources keep their CUDA names, with ROCm branches under #ifdef USE_ROCM (its build must hipify them "
           "and pass -DUSE_ROCM=1 on ROCm, as a ROCm torch does)",
    "cmake": "a USE_HIP build path and one compat header, so the same sources build for NVIDIA and AMD",
    "make": "a Makefile.rocm and one compat header, so the same sources build for NVIDIA and AMD",
    "header": "one compat header, so the same sources build with nvcc and hipcc",
    "fork": "every source translated to HIP (a hard fork of the CUDA tree)",
}


@dataclass(frozen=True)
class Choice:
    """The strategy a port uses and why."""

    name: str
    reason: str


def choose(requested: str, findings: Sequence[Finding], sources: Sequence[SourceFile] = ()) -> Choice:
    """The strategy REQUESTED, or for `auto` the one the project's build calls for: from the scan FINDINGS, else
    (a build the scan leaves quiet, often because it already handles ROCm) from the build files in SOURCES."""
    if requested not in STRATEGIES:
        raise InputError(f"unknown strategy {requested!r}; choose one of {', '.join(STRATEGIES)}")
    if requested != "auto":
        return Choice(requested, f"--strategy {requested}: {_WHY[requested]}")
    for name, rules, what in _KINDS:
        found = sorted((f for f in findings if f.rule in rules and not f.vendored and _is_build_file(f.path, name)),
                       key=Finding.key)
        jit = "python-nvcc-call" in rules
        if found:
            return Choice(name, f"{found[0].path}:{found[0].line} {what} ({found[0].rule}): {_WHY['jit' if jit else name]}")
        quiet = None if jit else _quiet_build(name, sources)
        if quiet is not None:
            return Choice(name, quiet)
    return Choice("header", f"no CUDA extension, CMake or nvcc Makefile build found: {_WHY['header']}")


def _quiet_build(name: str, sources: Sequence[SourceFile]) -> str | None:
    """Why NAME fits a build the scan leaves quiet (it already handles ROCm, or calls CUDAExtension indirectly)."""
    if name == "extension":
        python = _first(sources, _PYTHON_KINDS, _EXTENSION_BUILD)
        if python:
            return f"{python} builds a PyTorch CUDA extension (the scan reports no work in its build): {_WHY[name]}"
        cmake = _first(sources, _CMAKE_KINDS, _HIPIFY_CMAKE)
        return f"{cmake} hipifies the CUDA sources at build time, so they keep their CUDA names" if cmake else None
    if name == "cmake":
        cmake = _first(sources, _CMAKE_KINDS, _HIP_CMAKE)
        return f"{cmake} already has a HIP build path: {_WHY[name]}" if cmake else None
    return None


def _first(sources: Sequence[SourceFile], kinds: frozenset[FileKind], pattern: re.Pattern[bytes]) -> str | None:
    """path:line of PATTERN's first match outside a comment line in a non-vendored file of KINDS."""
    for source in sorted(sources, key=lambda s: s.relpath):
        if source.vendored or source.kind not in kinds:
            continue
        try:
            data = read_source(source)
        except (OSError, Refused):
            continue
        for found in pattern.finditer(data):
            start = data.rfind(b"\n", 0, found.start()) + 1
            if not data[start : found.start()].lstrip().startswith(b"#"):
                line = data.count(b"\n", 0, found.start()) + 1
                return f"{source.relpath}:{line}"
    return None


def _is_build_file(path: str, strategy: str) -> bool:
    name = PurePosixPath(path).name
    if strategy == "make":
        return name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk")
    return True


def plan_kept_sources(
    root: Path, choice: Choice, sources: Sequence[SourceFile], skipped: Sequence[Skipped], settings: Settings,
    options: PortOptions, *, side: tuple[list[FileChange], list[Finding]] | None, scanned: Sequence[Finding] = (),
    rocm_supported: bool = False,
) -> Plan:
    """The plan of a port that keeps the CUDA sources (extension, cmake, make, header): ROCm branches for the GPU
    targets of SETTINGS, and for the builds that are not torch extensions one compat header (for the ROCm release of
    OPTIONS), with the side files (SIDE) where asked. A repository that already builds for ROCm (ROCM_SUPPORTED, the
    scan's ROCm status) keeps its C/C++/CUDA sources: what its ROCm build compiles compiles there, and what it
    leaves out (CUDA-only kernels, a CUDA backend beside its HIP one) needs no branches."""
    kernels = () if rocm_supported else sources
    facts = repo_facts(kernels, scanned, settings.targets)
    if choice.name == "extension":
        changes, findings = extension_changes(sources, facts, side=side, kernels=kernels)
        ignores = hipify_ignores(root, kernels) if side is not None else None
        changes += [ignores] if ignores is not None and all(c.relpath != ignores.relpath for c in changes) else []
    else:
        changes, findings = compat_changes(root, kernels, rocm=options.rocm, limit=settings.max_file_size)
        by_path = {c.relpath: c for c in changes}
        findings += guard_changes(kernels, by_path, facts, HIP_MACRO)
        changes = list(by_path.values())
        if side is not None:
            changes += [c for c in side[0] if c.relpath not in by_path]
            findings += side[1]
    reason = choice.reason + (f"; {_OWN_ROCM_PATH}" if rocm_supported else "")
    return Plan(root, options.engine.name, tuple(sorted(changes, key=lambda c: c.relpath)), tuple(sorted(findings)),
                tuple(sorted(skipped)), strategy=choice.name, reason=reason)
