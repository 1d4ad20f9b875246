"""The one plan/change type every port strategy produces and the writer consumes, and the Python line edit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from migrate.model import Finding, Skipped

STRATEGIES = ("auto", "extension", "cmake", "make", "header", "fork")  # how a port may go; auto picks from the build


@dataclass(frozen=True)
class FileChange:
    """One file of the port: its old bytes (None: a new file), its new bytes, and why it changes."""

    relpath: str
    old: bytes | None
    new: bytes
    reason: str = "translated to HIP"
    mode: int | None = None  # for a new file; an existing file keeps its own mode


@dataclass(frozen=True)
class Fix:
    """One edit of a Python line: a span (1-based line, byte columns) and its replacement; unsafe fixes wait for
    --unsafe-fixes."""

    line: int
    start: int
    end: int
    text: str
    safe: bool
    message: str


@dataclass(frozen=True)
class Plan:
    """The whole port of a tree, computed without writing anything."""

    root: Path
    engine: str
    changes: tuple[FileChange, ...]
    findings: tuple[Finding, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    strategy: str = "fork"
    reason: str = ""
