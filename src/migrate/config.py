"""Settings for a run: defaults, then configuration files, then command-line options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from migrate.model import Severity

DEFAULT_TARGETS = ("gfx942",)
DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024


@dataclass(frozen=True)
class Settings:
    """Everything that changes what a scan finds or how it runs."""

    targets: tuple[str, ...] = DEFAULT_TARGETS
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    jobs: int = 0  # 0: one worker per core
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    disabled_rules: frozenset[str] = frozenset()
    severity_overrides: tuple[tuple[str, Severity], ...] = ()
    extra_rule_dirs: tuple[str, ...] = ()
    fail_on: Severity | None = None
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


def load_settings(root: Path, options: Mapping[str, Any]) -> Settings:
    """Defaults, overridden by the repository's configuration, overridden by command-line OPTIONS."""
    values: dict[str, Any] = {}
    for key, value in options.items():
        if value is None or value == ():
            continue
        if key == "fail_on":
            value = Severity.parse(value)
        values[key] = value
    return replace(Settings(), **values)
