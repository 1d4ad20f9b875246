"""The one plan/change type every port strategy produces and the writer consumes, the Python line edit, and the
options a port is planned with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from migrate.model import Finding, Skipped

RULE_LEFT = "rocm-guard-not-written"  # a place the port leaves for a person, with why


if TYPE_CHECKING:
    from migrate.apimap import Version
    from migrate.port.translate import Engine


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


@dataclass(frozen=True)
class PortOptions:
    """How a port is made beyond the repository's Settings (which give the files, rules and GPU targets): the
    engine (with the ROCm release it ports for), the strategy, and what else the port changes."""

    engine: Engine
    strategy: str = "auto"
    side_files: bool = True  # requirements, Dockerfiles, build files and Python fixes beside the sources
    in_place: bool = False  # edit requirements and Dockerfiles instead of adding ROCm side files
    unsafe_fixes: bool = False
    include_vendored: bool = False  # fork: translate vendored sources too

    @property
    def rocm(self) -> Version:
        """The ROCm release the port is for."""
        return self.engine.options.rocm_version
