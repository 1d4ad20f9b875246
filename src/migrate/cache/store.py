"""What the caches share: the namespace of a run, the stamp of a file, and private, bounded JSON reads and writes."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from migrate import __version__, digests
from migrate.bounded import Refused, check_private, read_bytes
from migrate.config import Settings
from migrate.data import rules_dir
from migrate.discover import Found
from migrate.errors import ConfigError
from migrate.model import SourceFile
from migrate.ruleset import Ruleset
from migrate.writer import write_pieces

FORMAT = 6
MAX_FILE = 256 * 1024 * 1024  # a shard, report or ruleset file larger than this is not one of ours
_SETTLED_NS = 2_000_000_000  # a file modified this recently may change again within the same mtime tick
_KEEP_STORES = 32  # namespaces (repository x rules x settings x version) kept; older ones are removed
# Settings that decide which files are scanned or how a run goes, but not what one file yields.
_NOT_PER_FILE = frozenset(
    {"jobs", "include", "exclude", "max_file_size", "fail_on", "baseline", "diff_base", "cache_dir", "config_file",
     "time_budget"}
)


def namespace(root: Path, ruleset: Ruleset, settings: Settings) -> str:
    """A digest of everything besides a file's own content that decides its findings."""
    per_file = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings) if f.name not in _NOT_PER_FILE}
    digest = digests.sha256()
    for part in (str(Path(root).resolve()), __version__, code_digest(), rules_digest(ruleset), stable(per_file)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()[:32]


def stable(value: Any) -> str:
    """VALUE as text that does not depend on the order of its dicts and sets."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k!r}:{stable(v)}" for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(repr(v) for v in value)) + "}"
    return repr(value)


def rules_digest(ruleset: Ruleset) -> str:
    """Every field of every rule, not only what Ruleset.version covers (hip text, category, ...); for rules read back
    from the ruleset cache, the digest kept with them."""
    kept = _KEPT_DIGESTS.get(id(ruleset))
    if kept is not None and kept[0] is ruleset:
        return kept[1]
    return digests.sha256("\n".join(repr(rule) for rule in ruleset.rules).encode()).hexdigest()


def remember_rules_digest(ruleset: Ruleset, digest: str) -> None:
    """DIGEST is rules_digest(RULESET), kept in the ruleset cache beside the rules it was made from."""
    _KEPT_DIGESTS[id(ruleset)] = (ruleset, digest)


_KEPT_DIGESTS: dict[int, tuple[Ruleset, str]] = {}  # id -> the ruleset (kept alive, so its id is not reused), digest


@cache
def code_digest() -> str:
    """Size and mtime of our own code and rule data, so an edited checkout never reads old results."""
    return tree_digest(Path(__file__).resolve().parents[1]) + tree_digest(rules_dir())


def tree_digest(top: Path) -> str:
    """Size and mtime of every file under TOP."""
    digest = digests.sha256()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            with contextlib.suppress(OSError):
                stat = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def stat_stamp(source: SourceFile | Found) -> str | None:
    """Size, mtime, ctime and inode of SOURCE (and its kind): equal stamps mean unchanged content, as for git's
    index. None for a file modified in the last two seconds, whose mtime alone could miss the next edit.
    ctime cannot be set back by a user, so touching a file back to its old mtime still changes its stamp."""
    try:
        info = os.stat(source.path)
    except OSError:
        return None
    return _stamp(source, info.st_size, (info.st_mtime_ns, info.st_ctime_ns, info.st_ino), time.time_ns())


def seen_stamp(found: Found, since: int) -> str | None:
    """stat_stamp(FOUND) as discovery's stat saw it, that stat taken after SINCE (time.time_ns())."""
    return _stamp(found, found.size, found.seen, since)


def _stamp(source: SourceFile | Found, size: int, seen: tuple[int, int, int], now: int) -> str | None:
    mtime, ctime, inode = seen
    if now - max(mtime, ctime) < _SETTLED_NS:
        return None
    return f"{size}:{mtime}:{ctime}:{inode}:{source.kind.value}:{int(source.vendored)}"


def content_key(source: SourceFile) -> str | None:
    """A digest of SOURCE's bytes, kind and vendoring; None when it cannot be read."""
    try:
        data = source.path.read_bytes()
    except OSError:
        return None
    digest = digests.blake2b(data, digest_size=20)
    digest.update(f"\0{source.kind.value}\0{int(source.vendored)}".encode())
    return digest.hexdigest()


def check_directory(directory: Path) -> None:
    """ConfigError unless DIRECTORY (when it exists) is the user's own and no one else may write to it."""
    try:
        info = os.stat(directory)
    except OSError:
        return  # created (private) on the first write, or not at all
    try:
        check_private(info)
    except Refused as exc:
        raise ConfigError(f"cache directory {directory} is {exc}: refused (use another --cache-dir or --no-cache)") from None


def private_dir(path: Path) -> None:
    """Create PATH and its missing parents (mode 0700); Refused when PATH is not the user's own."""
    missing = [path, *(parent for parent in path.parents if not parent.exists())]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    check_private(os.stat(path))


def load_json(path: Path) -> Any:
    """The JSON in PATH when it is a regular file of the user's own that no one else may write; else None."""
    try:
        return json.loads(read_bytes(path, limit=MAX_FILE, private=True))
    except (OSError, Refused, ValueError, RecursionError):
        return None


def dumps(document: Any) -> str:
    """DOCUMENT as compact JSON, ASCII: surrogate-escaped paths survive as \\udcXX."""
    return json.dumps(document, separators=(",", ":"))


def atomic_write(path: Path, content: str | bytes | Iterable[str]) -> None:
    """CONTENT (or its pieces, written as they come) in PATH, private to the user, whole or not at all."""
    write_pieces(path, (content,) if isinstance(content, (str, bytes)) else content, mode=0o600, durable=False)


def prune(directory: Path) -> None:
    """Keep the most recently used stores (or rulesets) in DIRECTORY."""
    entries = [e for e in os.scandir(directory) if not e.name.startswith(".")]  # temp files
    for entry in sorted(entries, key=lambda e: e.stat().st_mtime, reverse=True)[_KEEP_STORES:]:
        import shutil  # here: with bz2 and lzma, a cost to every `migrate check`, which seldom has one to remove

        with contextlib.suppress(OSError):
            shutil.rmtree(entry.path) if entry.is_dir() else os.unlink(entry.path)
