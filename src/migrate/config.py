"""Settings for a run: defaults, then configuration files, then command-line options.

Keys, in [tool.migrate] of pyproject.toml or at the top level of .migrate.toml (which wins): targets, include,
exclude, disable (rule ids), severity (a table rule id = level), fail-on, rule-dirs (extra rule files, same
schema), max-file-size, jobs (capped to the cores available), time-budget (seconds for the whole scan, at most the
default), baseline (a file inside the repository), rocm (the ROCm release translate, apply and verify port for,
instead of the installed one).
`_` and `-` are interchangeable; anything else is a ConfigError. A pyproject.toml that is not valid TOML
gives no settings (the scan reports it as skipped); an invalid .migrate.toml is a ConfigError."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from migrate import targets
from migrate.apimap import parse_version
from migrate.bounded import Refused, read_bytes
from migrate.defaults import (
    DEFAULT_BASELINE, DEFAULT_FILE_TIME_BUDGET, DEFAULT_MAX_FILE_SIZE, DEFAULT_TARGETS, DEFAULT_TIME_BUDGET,
)
from migrate.errors import ConfigError, InputError
from migrate.lazyre import lazy_regex
from migrate.model import Severity

CONFIG_FILES = (".migrate.toml", "pyproject.toml")  # the first that has settings wins
_RULE_ID = lazy_regex(r"^[a-z0-9][a-z0-9-]*$")
MAX_CONFIG_FILE = 4 * 1024 * 1024


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
    time_budget: float = DEFAULT_TIME_BUDGET
    file_time_budget: float = DEFAULT_FILE_TIME_BUDGET  # seconds one file may take (not a config key: tests lower it)
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)
    baseline: str | None = None  # a baseline file; findings in it are left out
    diff_base: str | None = None  # a git ref; only findings on lines changed since it are kept
    cache_dir: str | None = None  # None: no cache (the CLI fills in the user cache directory)
    config_file: str | None = None  # where the repository's settings came from, for messages
    rocm: str | None = None  # the ROCm release a port targets; None: the installed toolchain's


def load_settings(root: Path, options: Mapping[str, Any]) -> Settings:
    """Defaults, overridden by the repository's configuration, overridden by command-line OPTIONS."""
    base = Path(root) if Path(root).is_dir() else Path(root).parent
    values = _from_config(base)
    own_dirs = values.get("extra_rule_dirs", ())
    values.update(_from_options(options))
    values["extra_rule_dirs"] = (*own_dirs, *values.pop("rule_dirs", ()))  # --rule-dir adds to the repository's
    if values.pop("no_cache", False):
        values.pop("cache_dir", None)
    else:
        values.setdefault("cache_dir", str(default_cache_dir()))
    return replace(Settings(), **values)


def check_settings(root: Path, options: Mapping[str, Any]) -> Settings:
    """Settings for `migrate check`: fail on high by default, and use ROOT's baseline file if there is one."""
    settings = load_settings(root, options)
    if settings.fail_on is None:
        settings = replace(settings, fail_on=Severity.HIGH)
    default = Path(root) / DEFAULT_BASELINE
    if settings.baseline is None and os.path.lexists(default):
        if _inside(Path(root), default) is None:
            raise ConfigError(f"{DEFAULT_BASELINE}: a symlink that leads out of the repository; not read")
        if default.is_file():
            settings = replace(settings, baseline=str(default))
    return settings


def check_rule_ids(settings: Settings, known: set[str]) -> None:
    """A disabled rule or severity override must name a rule that exists: a typo would silently do nothing."""
    where = f"{Path(settings.config_file).name}: " if settings.config_file else ""
    overridden = [rule_id for rule_id, _ in settings.severity_overrides]
    for key, ids in (("disable", sorted(settings.disabled_rules)), ("severity", overridden)):
        unknown = [rule_id for rule_id in ids if rule_id not in known]
        if unknown:
            raise ConfigError(f"{where}{key}: unknown rule id(s): {', '.join(unknown)}")


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/rocm-migrate, else ~/.cache/rocm-migrate."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "rocm-migrate"


def _from_options(options: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in options.items():
        if value is None or value == () or value is False:
            continue
        if key == "fail_on":
            value = Severity.parse(value)
        elif key in ("baseline", "cache_dir"):
            value = str(value)
        elif key == "rule_dirs":
            value = tuple(str(Path(path).resolve()) for path in value)
        values[key] = value
    return values


def _from_config(base: Path) -> dict[str, Any]:
    for name in CONFIG_FILES:
        path = base / name
        if not os.path.lexists(path):
            continue
        if _inside(base, path) is None:  # a symlink out of the tree: never read, whatever it points at
            if name == "pyproject.toml":
                continue  # the project's, not ours: the scan lists it as skipped
            raise ConfigError(f"{name}: a symlink that leads out of the repository; not read")
        if not path.is_file():
            continue
        table = _read_table(path)
        if table is not None:
            where = f"{name}: [tool.migrate]" if name == "pyproject.toml" else f"{name}:"
            return {**_parse_table(table, base, where), "config_file": str(path)}
    return {}


def _read_table(path: Path) -> dict[str, Any] | None:
    """The [tool.migrate] table of PATH (for .migrate.toml also its top level); None when absent.

    A pyproject.toml that cannot be read or parsed gives no settings (it belongs to the project, and the scan
    reports it as skipped); a broken .migrate.toml, which exists only for us, is an error."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        document = tomllib.loads(read_bytes(path, limit=MAX_CONFIG_FILE).decode("utf-8"))
    except (OSError, UnicodeDecodeError, Refused) as exc:
        if path.name == "pyproject.toml":
            return None
        raise ConfigError(f"{path.name}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        if path.name == "pyproject.toml":
            return None
        raise ConfigError(f"{path.name}: invalid TOML: {exc}") from None
    table = document.get("tool", {}).get("migrate") if isinstance(document.get("tool"), dict) else None
    if table is None and path.name != "pyproject.toml":
        table = {k: v for k, v in document.items() if k != "tool"}
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path.name}: [tool.migrate] must be a table")
    return table


def _parse_table(table: Mapping[str, Any], base: Path, where: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for raw_key, raw in table.items():
        key = raw_key.replace("_", "-")
        if key not in _KEYS:
            known = ", ".join(sorted(_KEYS))
            raise ConfigError(f"{where} unknown key '{raw_key}' (known: {known})")
        field_name, convert = _KEYS[key]
        try:
            values[field_name] = convert(raw, base)
        except (TypeError, ValueError, InputError) as exc:
            raise ConfigError(f"{where} {raw_key}: {exc}") from None
    return values


def _strings(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = raw.split(",")
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise TypeError("expected a list of strings")
    return tuple(item.strip() for item in raw if item.strip())


def _targets(raw: Any, _base: Path) -> tuple[str, ...]:
    names = _strings(raw)
    if not names:
        raise ValueError("needs at least one target")
    return targets.validate(names)


def _rule_ids(raw: Any, _base: Path) -> frozenset[str]:
    ids = _strings(raw)
    for rule_id in ids:
        if not _RULE_ID.match(rule_id):
            raise ValueError(f"{rule_id!r} is not a rule id")
    return frozenset(ids)


def _overrides(raw: Any, _base: Path) -> tuple[tuple[str, Severity], ...]:
    if not isinstance(raw, dict):
        raise TypeError("expected a table of rule id = severity")
    pairs = []
    for rule_id, level in sorted(raw.items()):
        if not _RULE_ID.match(rule_id):
            raise ValueError(f"{rule_id!r} is not a rule id")
        if not isinstance(level, str):
            raise TypeError(f"{rule_id}: expected a severity name")
        pairs.append((rule_id, Severity.parse(level)))
    return tuple(pairs)


def _severity(raw: Any, _base: Path) -> Severity:
    if not isinstance(raw, str):
        raise TypeError("expected a severity name")
    return Severity.parse(raw)


def _directories(raw: Any, base: Path) -> tuple[str, ...]:
    """Rule directories the repository names: folders inside it, holding no rule file that leads out of it.
    Whether a path outside exists is never looked at, so the refusal tells nothing about the machine."""
    found = []
    for name in _strings(raw):
        path = _inside(base, base / name)
        if path is None:
            raise ValueError(f"{name!r} is not a folder inside the repository (name others with --rule-dir)")
        if not path.is_dir():
            raise ValueError(f"directory not found: {name}")
        if any(_inside(base, rule_file) is None for rule_file in path.glob("*.yaml")):
            raise ValueError(f"{name!r} holds a rule file that leads out of the repository (a symlink)")
        found.append(str(path))
    return tuple(found)


def _inside(base: Path, path: Path) -> Path | None:
    """PATH resolved (symlinks followed), when it lies inside BASE; else None."""
    try:
        resolved = path.resolve()
        resolved.relative_to(base.resolve())
    except (ValueError, OSError, RuntimeError):  # outside, or a symlink loop
        return None
    return resolved


def _size(raw: Any, _base: Path) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ValueError("expected a positive number of bytes")
    return int(raw)


def _budget(raw: Any, _base: Path) -> float:
    """A repository's time budget: capped to the default (scanning it must not take the machine for longer)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not raw > 0:
        raise ValueError("expected a positive number of seconds")
    return min(float(raw), DEFAULT_TIME_BUDGET)


def _jobs(raw: Any, _base: Path) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise ValueError("expected a number of worker processes (0: one per core)")
    return int(raw)


def _path(raw: Any, base: Path) -> str:
    """A file named by the repository's configuration: it must stay inside the repository."""
    if not isinstance(raw, str) or not raw:
        raise TypeError("expected a path")
    if _inside(base, base / raw) is None:
        raise ValueError(f"{raw!r} must be a file inside the repository")
    return str(base / raw)


def _release(raw: Any, _base: Path) -> str:
    """A ROCm release such as "6.2", written as a string: TOML's 6.10 would be the number 6.1."""
    if not isinstance(raw, str):
        raise TypeError('expected a ROCm release as a string, such as "6.2"')
    try:
        parse_version(raw.strip())
    except ValueError:
        raise ValueError(f'{raw!r} is not a ROCm release such as "6.2"') from None
    return raw.strip()


def _globs(raw: Any, _base: Path) -> tuple[str, ...]:
    return _strings(raw)


_KEYS: dict[str, tuple[str, Callable[[Any, Path], Any]]] = {
    "targets": ("targets", _targets),
    "include": ("include", _globs),
    "exclude": ("exclude", _globs),
    "disable": ("disabled_rules", _rule_ids),
    "severity": ("severity_overrides", _overrides),
    "fail-on": ("fail_on", _severity),
    "rule-dirs": ("extra_rule_dirs", _directories),
    "max-file-size": ("max_file_size", _size),
    "jobs": ("jobs", _jobs),
    "time-budget": ("time_budget", _budget),
    "baseline": ("baseline", _path),
    "rocm": ("rocm", _release),
}
