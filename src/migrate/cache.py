"""Per-file scan results, keyed by content hash, rules, settings and tool version, kept between runs.

Layout: CACHE_DIR/results/<namespace>/<shard>.pickle, the namespace a digest of the repository path, the tool version,
our code and rule files, every rule (a superset of Ruleset.version) and the settings that change one file's
findings; CACHE_DIR/rulesets/*.pickle keeps the validated rules for fast start-up. Pickle, because
restoring frozen findings from it is twice as fast as from JSON; the directory is the user's own."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import shutil
import sys
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from migrate import __version__
from migrate.config import Settings
from migrate.model import FileResult, SourceFile
from migrate.ruleset import Ruleset, rules_dir

FORMAT = 3
_SHARDS = 256  # a store is split by path hash, so checking a few files reads a few small shards
_KEEP_STORES = 32  # namespaces (repository x rules x settings x version) kept; older ones are removed
# Settings that decide which files are scanned or how a run goes, but not what one file yields.
_NOT_PER_FILE = frozenset(
    {"jobs", "include", "exclude", "max_file_size", "fail_on", "baseline", "diff_base", "cache_dir", "config_file"}
)


class Cache:
    """The stored results of one repository under one rules/settings/tool version; a no-op without a directory."""

    def __init__(self, directory: Path | None, root: Path, ruleset: Ruleset, settings: Settings) -> None:
        self.directory = directory
        self.store = directory / "results" / namespace(root, ruleset, settings) if directory else None
        self._shards: dict[str, dict[str, tuple[str, FileResult]]] = {}
        self._dirty: set[str] = set()
        self._used: set[str] = set()
        self._keys: dict[str, str | None] = {}  # content keys taken before a file is scanned

    def get(self, source: SourceFile) -> FileResult | None:
        """The stored result for SOURCE if its content and kind are unchanged; None otherwise."""
        if self.store is None:
            return None
        key = self._keys[source.relpath] = _content_key(source)
        entry = self._shard(source.relpath).get(source.relpath)
        if key is None or entry is None or entry[0] != key:
            return None
        self._used.add(source.relpath)
        return entry[1]

    def put(self, source: SourceFile, result: FileResult) -> FileResult:
        """Remember RESULT for SOURCE (keyed by its content as read before the scan) and hand it back."""
        if self.store is not None:
            key = self._keys.pop(source.relpath, None) or _content_key(source)
            if key is not None:
                self._shard(source.relpath)[source.relpath] = (key, result)
                self._dirty.add(_shard_name(source.relpath))
                self._used.add(source.relpath)
        return result

    def save(self, *, complete: bool) -> None:
        """Write changed shards; a COMPLETE run also drops files no longer scanned. Failures are ignored."""
        if self.store is None or self.directory is None:
            return
        if complete:
            self._forget_unused()
        with contextlib.suppress(OSError):
            self.store.mkdir(parents=True, exist_ok=True)
            for name in sorted(self._dirty):
                document = (FORMAT, self._shards[name])
                _atomic_write(self.store / f"{name}.pickle", pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL))
            if complete:
                for stale in set(os.listdir(self.store)) - {f"{n}.pickle" for n in self._shards if self._shards[n]}:
                    os.unlink(self.store / stale)
            os.utime(self.store)
            _prune(self.store.parent)

    def _shard(self, relpath: str) -> dict[str, tuple[str, FileResult]]:
        name = _shard_name(relpath)
        if name not in self._shards:
            assert self.store is not None
            self._shards[name] = _read(self.store / f"{name}.pickle")
        return self._shards[name]

    def _forget_unused(self) -> None:
        for name, entries in self._shards.items():
            unused = [relpath for relpath in entries if relpath not in self._used]
            for relpath in unused:
                del entries[relpath]
            if unused:
                self._dirty.add(name)


def _shard_name(relpath: str) -> str:
    return f"{zlib.crc32(relpath.encode('utf-8', 'surrogateescape')) % _SHARDS:02x}"


def load_ruleset(settings: Settings, load: Callable[[], Ruleset]) -> Ruleset:
    """LOAD's validated ruleset, kept pickled until a rule file, our code or the settings change.

    Reading and validating the YAML costs more than checking a few files, so `migrate check` keeps it."""
    if settings.cache_dir is None:
        return load()
    path = Path(settings.cache_dir) / "rulesets" / f"{_ruleset_key(settings)}.pickle"
    try:
        found = pickle.loads(path.read_bytes())
        if isinstance(found, Ruleset):
            return found
    except Exception:  # noqa: BLE001  a missing, truncated or foreign pickle is a miss, whatever it raises
        pass
    ruleset = load()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(path, pickle.dumps(ruleset, protocol=pickle.HIGHEST_PROTOCOL))
        _prune(path.parent)
    return ruleset


def _ruleset_key(settings: Settings) -> str:
    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0{_code_digest()}\0".encode())
    digest.update(f"{_stable(settings.disabled_rules)}\0{settings.severity_overrides!r}".encode())
    for directory in settings.extra_rule_dirs:
        digest.update(f"\0{directory}\0{_tree_digest(Path(directory))}".encode())
    return digest.hexdigest()[:32]


def open_cache(root: Path, ruleset: Ruleset, settings: Settings) -> Cache:
    """The cache for this run: settings.cache_dir, or a no-op cache when it is None."""
    return Cache(Path(settings.cache_dir) if settings.cache_dir else None, root, ruleset, settings)


def namespace(root: Path, ruleset: Ruleset, settings: Settings) -> str:
    """A digest of everything besides a file's own content that decides its findings."""
    per_file = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings) if f.name not in _NOT_PER_FILE}
    digest = hashlib.sha256()
    for part in (str(Path(root).resolve()), __version__, _code_digest(), _rules_digest(ruleset), _stable(per_file)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()[:32]


def _stable(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k!r}:{_stable(v)}" for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(repr(v) for v in value)) + "}"
    return repr(value)


def _rules_digest(ruleset: Ruleset) -> str:
    """Every field of every rule, not only what Ruleset.version covers (hip text, category, ...)."""
    return hashlib.sha256("\n".join(repr(rule) for rule in ruleset.rules).encode()).hexdigest()


@cache
def _code_digest() -> str:
    """Size and mtime of our own code and rule data, so an edited checkout never reads old results."""
    return _tree_digest(Path(__file__).resolve().parent) + _tree_digest(rules_dir())


def _tree_digest(top: Path) -> str:
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            with contextlib.suppress(OSError):
                stat = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def _content_key(source: SourceFile) -> str | None:
    try:
        data = source.path.read_bytes()
    except OSError:
        return None
    digest = hashlib.blake2b(data, digest_size=20)
    digest.update(f"\0{source.kind.value}\0{int(source.vendored)}".encode())
    return digest.hexdigest()


def _read(path: Path) -> dict[str, tuple[str, FileResult]]:
    """A shard's entries; a missing, corrupt or foreign file counts as empty, and so does a foreign entry."""
    try:
        found = pickle.loads(path.read_bytes())
    except Exception:  # noqa: BLE001  unpickling garbage can raise almost anything; it is only a miss
        return {}
    if not (isinstance(found, tuple) and len(found) == 2 and found[0] == FORMAT and isinstance(found[1], dict)):
        return {}
    return {k: v for k, v in found[1].items() if _is_entry(v)}


def _is_entry(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], FileResult)


def _atomic_write(path: Path, content: str | bytes) -> None:
    from migrate.writer import write_file

    write_file(path, content, mode=0o600, durable=False)


def _prune(directory: Path) -> None:
    """Keep the most recently used stores (or ruleset pickles) in DIRECTORY."""
    entries = [e for e in os.scandir(directory) if not e.name.startswith(".")]  # temp files
    for entry in sorted(entries, key=lambda e: e.stat().st_mtime, reverse=True)[_KEEP_STORES:]:
        with contextlib.suppress(OSError):
            shutil.rmtree(entry.path) if entry.is_dir() else os.unlink(entry.path)
