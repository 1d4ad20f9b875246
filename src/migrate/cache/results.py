"""Per-file scan results, kept between runs in CACHE_DIR/results/<namespace>/<shard>.json, keyed by content hash.

The namespace (store.namespace) covers the repository path, the tool version, our code and rule files, every rule
and the settings that change one file's findings. Each entry is [content key, stat stamp, FileResult.to_dict()],
read back through FileResult.from_dict when it is used (`check` reads a few shards and uses none of their other
entries, which are written back as they came): an entry of any other shape is a miss."""

from __future__ import annotations

import contextlib
import os
import zlib
from pathlib import Path
from typing import Any

from migrate.bounded import Refused
from migrate.cache.store import (
    FORMAT, atomic_write, check_directory, content_key, dumps, load_json, namespace, private_dir, prune, stat_stamp,
)
from migrate.config import Settings
from migrate.gcpause import paused
from migrate.model import FileResult, SourceFile
from migrate.packed import decode
from migrate.ruleset import Ruleset

_SHARDS = 256  # a store is split by path hash, so checking a few files reads a few small shards
# content key, stat stamp (when trusted), result (as read, until it is used)
_Entry = tuple[str, "str | None", "FileResult | dict[str, Any]"]


class Cache:
    """The stored results of one repository under one rules/settings/tool version; a no-op without a directory."""

    def __init__(self, directory: Path | None, root: Path, ruleset: Ruleset, settings: Settings) -> None:
        self.directory = directory
        self.store = directory / "results" / namespace(root, ruleset, settings) if directory else None
        self._shards: dict[str, dict[str, _Entry]] = {}
        self._dirty: set[str] = set()
        self._used: set[str] = set()
        self._keys: dict[str, tuple[str | None, str | None]] = {}  # (content key, stat) taken before a scan

    @property
    def enabled(self) -> bool:
        """The cache stores results (a no-op cache neither reads nor keeps any: its caller need not make a
        SourceFile to ask it)."""
        return self.store is not None

    def get(self, source: SourceFile) -> FileResult | None:
        """The stored result for SOURCE if its content and kind are unchanged; None otherwise."""
        if self.store is None:
            return None
        entry = self._shard(source.relpath).get(source.relpath)
        stamp = stat_stamp(source)
        if entry is not None and stamp is not None and entry[1] == stamp:
            entry = self._decoded(source.relpath, entry)
            if entry is not None:
                self._used.add(source.relpath)  # unchanged since it was hashed: no need to read it again
                return entry[2]
        if entry is None and stamp is not None:  # a new file: hashed when its result comes, if still unchanged
            self._keys[source.relpath] = (None, stamp)
            return None
        key = content_key(source)
        self._keys[source.relpath] = (key, stamp)
        if key is None or entry is None or entry[0] != key:
            return None
        entry = self._decoded(source.relpath, entry)
        if entry is None:
            return None
        if stamp is not None:
            self._shard(source.relpath)[source.relpath] = (key, stamp, entry[2])
            self._dirty.add(_shard_name(source.relpath))
        self._used.add(source.relpath)
        return entry[2]

    def _decoded(self, relpath: str, entry: _Entry) -> tuple[str, str | None, FileResult] | None:
        """ENTRY with its result read back (and kept so); None, and the entry dropped, when it is not a result of
        RELPATH."""
        key, stamp, result = entry
        if isinstance(result, FileResult):
            return key, stamp, result
        try:
            decoded = FileResult.from_dict(result)
        except ValueError:
            decoded = None
        shard = self._shard(relpath)
        if decoded is None or decoded.relpath != relpath:
            del shard[relpath]
            self._dirty.add(_shard_name(relpath))
            return None
        shard[relpath] = (key, stamp, decoded)
        return key, stamp, decoded

    def put(self, source: SourceFile, result: FileResult) -> FileResult:
        """Remember RESULT for SOURCE (keyed by its content as read before the scan) and hand it back."""
        if self.store is not None:
            taken = self._keys.pop(source.relpath, None)
            key, stamp = taken if taken is not None else (content_key(source), None)
            if key is None and stamp is not None:  # hashed while the workers scan others
                key = content_key(source)
                # changed since the scan began, maybe while it was hashed: keep nothing
                if stat_stamp(source) != stamp:
                    key = None
            if key is not None:
                self._shard(source.relpath)[source.relpath] = (key, stamp, result)
                self._dirty.add(_shard_name(source.relpath))
                self._used.add(source.relpath)
        return result

    def save(self, *, complete: bool) -> None:
        """Write changed shards; a COMPLETE run also drops files no longer scanned. Failures are ignored."""
        if self.store is None or self.directory is None:
            return
        if complete:
            self._forget_unused()
        with contextlib.suppress(OSError, Refused), paused():  # a cold scan writes every finding: no cycles
            private_dir(self.store)
            for name in sorted(self._dirty):
                entries = {relpath: [key, stamp, _stored(result) if isinstance(result, FileResult) else result]
                           for relpath, (key, stamp, result) in self._shards[name].items()}
                atomic_write(self.store / f"{name}.json", dumps({"format": FORMAT, "entries": entries}))
            if complete:
                for stale in set(os.listdir(self.store)) - {f"{n}.json" for n in self._shards if self._shards[n]}:
                    os.unlink(self.store / stale)
            os.utime(self.store)
            prune(self.store.parent)

    def _shard(self, relpath: str) -> dict[str, _Entry]:
        name = _shard_name(relpath)
        if name not in self._shards:
            assert self.store is not None
            self._shards[name] = _read(self.store / f"{name}.json")
        return self._shards[name]

    def _forget_unused(self) -> None:
        for name, entries in self._shards.items():
            unused = [relpath for relpath in entries if relpath not in self._used]
            for relpath in unused:
                del entries[relpath]
            if unused:
                self._dirty.add(name)


def open_cache(root: Path, ruleset: Ruleset, settings: Settings) -> Cache:
    """The cache for this run: settings.cache_dir, or a no-op cache when it is None."""
    if settings.cache_dir:
        check_directory(Path(settings.cache_dir))
    return Cache(Path(settings.cache_dir) if settings.cache_dir else None, root, ruleset, settings)


def _stored(result: FileResult) -> dict[str, Any]:
    """RESULT as the store keeps it, its findings decoded when a worker sent them encoded (held so until here)."""
    data = result.to_dict()
    if result.packed:
        data["findings"] = [f.to_dict() for f in decode(result.packed)]
    return data


def _shard_name(relpath: str) -> str:
    return f"{zlib.crc32(relpath.encode('utf-8', 'surrogateescape')) % _SHARDS:02x}"


def _read(path: Path) -> dict[str, _Entry]:
    """A shard's entries; a missing, corrupt or foreign file counts as empty, and so does a malformed entry."""
    with paused():
        return _entries(load_json(path))


def _entries(found: Any) -> dict[str, _Entry]:
    if not (isinstance(found, dict) and found.get("format") == FORMAT and isinstance(found.get("entries"), dict)):
        return {}
    return {relpath: (value[0], value[1], value[2]) for relpath, value in found["entries"].items()
            if isinstance(value, list) and len(value) == 3 and type(value[0]) is str
            and type(value[1]) in (str, type(None)) and type(value[2]) is dict}
