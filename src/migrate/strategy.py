"""How a repository is ported: its kind (PyTorch extension, CMake, Make) read from the scan, or `--strategy`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from migrate.errors import InputError
from migrate.model import Finding, Skipped, SourceFile

if TYPE_CHECKING:
    from migrate.apply import FileChange, Plan

STRATEGIES = ("auto", "extension", "cmake", "make", "fork")
# (strategy, rules whose finding shows the project is of that kind, what the finding means), in priority order
_KINDS = (
    ("extension", frozenset({"torch-cuda-extension-build", "python-cpp-extension"}), "builds a PyTorch CUDA extension"),
    ("cmake", frozenset({"cmake-cuda-language", "cmake-find-cuda"}), "builds CUDA with CMake"),
    ("make", frozenset({"nvcc-invocation"}), "calls nvcc from a Makefile"),
)
_WHY = {
    "extension": "a ROCm torch hipifies the CUDA sources at build time, so they keep their CUDA names",
    "cmake": "a USE_HIP build path and one compat header, so the same sources build for NVIDIA and AMD",
    "make": "a Makefile.rocm and one compat header, so the same sources build for NVIDIA and AMD",
    "fork": "every source translated to HIP (a hard fork of the CUDA tree)",
}


@dataclass(frozen=True)
class Choice:
    """The strategy a port uses and why."""

    name: str
    reason: str


def choose(requested: str, findings: Sequence[Finding]) -> Choice:
    """The strategy REQUESTED, or for `auto` the one the project's build (from the scan findings) calls for."""
    if requested not in STRATEGIES:
        raise InputError(f"unknown strategy {requested!r}; choose one of {', '.join(STRATEGIES)}")
    if requested != "auto":
        return Choice(requested, f"--strategy {requested}: {_WHY[requested]}")
    for name, rules, what in _KINDS:
        found = sorted((f for f in findings if f.rule in rules and not f.vendored and _is_build_file(f.path, name)),
                       key=Finding.key)
        if found:
            where = f"{found[0].path}:{found[0].line} {what}"
            return Choice(name, f"{where} ({found[0].rule}): {_WHY[name]}")
    return Choice("fork", f"no CUDA extension, CMake or nvcc Makefile build found: {_WHY['fork']}")


def _is_build_file(path: str, strategy: str) -> bool:
    name = PurePosixPath(path).name
    if strategy == "make":
        return name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk")
    return True


def plan_kept_sources(
    root: Path, choice: Choice, engine: str, sources: Sequence[SourceFile], skipped: Sequence[Skipped], *,
    side: tuple[list[FileChange], list[Finding]] | None,
) -> Plan:
    """The plan of a port that keeps the CUDA sources (extension, cmake, make): guards or a compat header,
    with the side files (SIDE) where asked."""
    from migrate.apply import Plan

    if choice.name == "extension":
        from migrate.port_extension import extension_changes

        changes, findings = extension_changes(sources, side=side)
    else:
        from migrate.port_buildsys import compat_changes

        changes, findings = compat_changes(root, sources)
        if side is not None:
            changes += side[0]
            findings += side[1]
    return Plan(root, engine, tuple(sorted(changes, key=lambda c: c.relpath)), tuple(sorted(findings)),
                tuple(sorted(skipped)), strategy=choice.name, reason=choice.reason)
