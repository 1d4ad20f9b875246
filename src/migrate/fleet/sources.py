"""SOURCES of a fleet run -> Jobs: a list file (one repository a line: a local path or a git URL, and an optional
ref), its YAML form with per-repository options, or a directory whose subdirectories are checkouts."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from migrate.bounded import Refused, read_bytes
from migrate.errors import InputError
from migrate.fleet.model import Job
from migrate.escape import visible
from migrate.targets import validate

SCHEMES = ("https", "http", "ssh", "git", "file")  # the transports a clone may use; git's ext:: and others never
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!//)")  # git@host:org/repo.git
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B?)\s*$", re.IGNORECASE)
_REF = re.compile(r"^[A-Za-z0-9._/+-]+$")
_OPTIONS = frozenset({"targets", "timeout", "memory"})
_ENTRY = _OPTIONS | {"source", "ref", "name"}
MAX_SOURCES_FILE = 16 * 1024 * 1024


@dataclass(frozen=True)
class Sources:
    """The jobs SOURCES lists, each once, in its order, and how many repeated entries were left out."""

    jobs: tuple[Job, ...]
    duplicates: int


def read_sources(path: Path, defaults: Job) -> Sources:
    """The jobs PATH lists; DEFAULTS gives every option an entry does not set. InputError names a bad entry."""
    if path.is_dir():
        jobs = list(_checkouts(path, defaults))
    elif path.suffix.lower() in (".yaml", ".yml"):
        jobs = list(_yaml_entries(path, _text(path), defaults))
    else:
        jobs = list(_lines(path, _text(path), defaults))
    if not jobs:
        raise InputError(f"{path} lists no repositories")
    distinct = {job.key: job for job in reversed(jobs)}
    ordered = tuple(distinct[key] for key in dict.fromkeys(job.key for job in jobs))
    return Sources(ordered, len(jobs) - len(ordered))


def size_hint(job: Job) -> int | None:
    """The bytes of a local checkout's files (.git aside), to start the largest first and so keep the last
    minutes of a run from waiting on one big repository; None for a URL, whose size is known only once cloned."""
    if job.remote:
        return None
    total = 0
    for top, dirs, files in os.walk(job.source):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(top, name)).st_size
    return total


def parse_size(text: str) -> int:
    """'4GiB', '512M', '1.5G' or a number of bytes -> bytes; InputError otherwise."""
    match = _SIZE.match(str(text))
    if not match:
        raise InputError(f"cannot read {text!r} as a size (e.g. 4GiB, 512MiB)")
    number, unit = float(match.group(1)), match.group(2).upper()
    return int(number * (1 << (10 * " KMGT".index(unit or " "))))


def _text(path: Path) -> str:
    try:
        return read_bytes(path, limit=MAX_SOURCES_FILE).decode("utf-8")
    except (OSError, Refused) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text") from None


def _checkouts(folder: Path, defaults: Job) -> Iterator[Job]:
    """Each subdirectory of FOLDER (hidden ones aside), by name."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if not entry.name.startswith(".") and entry.is_dir():
            yield _job(entry.path, "", {}, defaults, folder)


def _lines(path: Path, text: str, defaults: Job) -> Iterator[Job]:
    """`SOURCE [REF]` a line; blank lines and # comments skipped. A line naming an existing path is that path."""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if (path.parent / line).exists():
            yield _job(line, "", {}, defaults, path.parent)
            continue
        parts = line.split()
        if len(parts) > 2:
            raise InputError(visible(f"{path}:{number}: expected SOURCE [REF], got {line!r}"))
        yield _at(f"{path}:{number}", lambda: _job(parts[0], parts[1] if len(parts) > 1 else "", {}, defaults,
                                                   path.parent))


def _yaml_entries(path: Path, text: str, defaults: Job) -> Iterator[Job]:
    """`repositories:` a list of SOURCE strings or mappings (source, ref, name, targets, timeout, memory), with
    optional `defaults:` for every entry."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(document, Mapping) or not isinstance(document.get("repositories"), list):
        raise InputError(f"{path}: expected a mapping with a 'repositories' list")
    _known(document, {"repositories", "defaults"}, f"{path}")
    shared = document.get("defaults") or {}
    if not isinstance(shared, Mapping):
        raise InputError(f"{path}: 'defaults' must be a mapping")
    _known(shared, _OPTIONS, f"{path}: defaults")
    base = _at(f"{path}: defaults", lambda: _options(defaults, shared))
    for index, entry in enumerate(document["repositories"], start=1):
        where = f"{path}: repositories[{index}]"
        if isinstance(entry, str):
            entry = {"source": entry}
        if not isinstance(entry, Mapping) or not isinstance(entry.get("source"), str):
            raise InputError(f"{where}: expected a source string or a mapping with 'source'")
        _known(entry, _ENTRY, where)
        yield _at(where, lambda: _job(entry["source"], str(entry.get("ref") or ""), entry, base, path.parent))


def _at(where: str, make: Any) -> Any:
    """make(), an InputError from it prefixed with WHERE."""
    try:
        return make()
    except InputError as exc:
        raise InputError(visible(f"{where}: {exc}")) from None


def _known(mapping: Mapping[Any, Any], allowed: Iterable[str], where: str) -> None:
    unknown = sorted(str(k) for k in mapping if k not in allowed)
    if unknown:
        raise InputError(visible(f"{where}: unknown key {', '.join(unknown)} (known: {', '.join(sorted(allowed))})"))


def _job(source: str, ref: str, entry: Mapping[str, Any], defaults: Job, base: Path) -> Job:
    """The Job for SOURCE at REF, with ENTRY's options over DEFAULTS; a relative path is taken from BASE."""
    remote = _is_url(source)
    if ref and (not remote or ref.startswith("-") or not _REF.match(ref)):
        raise InputError(f"ref {ref!r} " + ("is not a branch, tag or commit name" if remote else
                                             "given for a local path (a ref is for git URLs)"))
    where = source if remote else os.path.abspath(os.path.join(base, os.path.expanduser(source)))
    name = str(entry.get("name") or _name(where, remote))
    return _options(replace(defaults, source=where, ref=ref, name=name, remote=remote), entry)


def _options(job: Job, entry: Mapping[str, Any]) -> Job:
    """JOB with the targets, timeout and memory ENTRY sets."""
    values: dict[str, Any] = {}
    if "targets" in entry:
        raw = entry["targets"]
        names = raw.split(",") if isinstance(raw, str) else raw
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise InputError("targets: expected gfx names")
        values["targets"] = validate(tuple(n.strip() for n in names))
    if "timeout" in entry:
        timeout = entry["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise InputError("timeout: expected seconds, a positive number")
        values["timeout"] = float(timeout)
    if "memory" in entry:
        values["memory"] = parse_size(entry["memory"])
    return replace(job, **values)


def _is_url(source: str) -> bool:
    """A git URL (of an allowed transport); InputError for one git could reach only through another."""
    if _SCP_LIKE.match(source):
        return True
    if "://" not in source and not source.startswith("ext::"):
        return False
    scheme = urlsplit(source).scheme.lower() if "://" in source else "ext"
    if scheme not in SCHEMES:
        raise InputError(visible(f"{source!r}: git URLs must use one of {', '.join(SCHEMES)}"))
    if source.startswith("-"):
        raise InputError(visible(f"{source!r} is not a repository"))
    return True


def _name(source: str, remote: bool) -> str:
    """The repository's short name: the last part of its URL or path, without .git."""
    tail = re.split(r"[/:]", source.rstrip("/"))[-1] if remote else os.path.basename(source.rstrip(os.sep))
    return tail[:-4] if tail.endswith(".git") and len(tail) > 4 else tail or source
