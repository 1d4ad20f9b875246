"""Hardening, the result cache: it holds plain validated data, and only a directory and files the user
alone may write are read (issue 10, item 1)."""

from __future__ import annotations

import os
import pickle
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings
from migrate.errors import ConfigError
from migrate.scan import scan

from conftest import KERNEL


class Payload:
    """Unpickling this runs `touch MARKER`: what a shared cache directory let another user do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    for index in range(3):
        (root / f"k{index}.cu").write_text(KERNEL)
    return root


def settings_for(tmp_path: Path) -> Settings:
    return replace(Settings(jobs=1), cache_dir=str(tmp_path / "cache"))


def cache_files(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "cache").rglob("*") if p.is_file())


def test_cache_entries_are_never_unpickled(tmp_path: Path) -> None:
    root = repo(tmp_path)
    expected = scan(root, settings_for(tmp_path))
    files = cache_files(tmp_path)
    assert files, "the first scan stored results and the ruleset"
    marker = tmp_path / "PWNED"
    for path in files:
        path.write_bytes(pickle.dumps(Payload(marker)))
    assert scan(root, settings_for(tmp_path)) == expected
    assert not marker.exists()


def test_cache_files_are_plain_json(tmp_path: Path) -> None:
    import json

    scan(repo(tmp_path), settings_for(tmp_path))
    for path in cache_files(tmp_path):
        assert path.suffix == ".json"
        json.loads(path.read_text(encoding="utf-8"))


def test_cache_directory_writable_by_others_is_refused(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (tmp_path / "cache").mkdir(mode=0o700)
    (tmp_path / "cache").chmod(0o1777)
    with pytest.raises(ConfigError, match="writable by other users"):
        scan(root, settings_for(tmp_path))
    result = CliRunner().invoke(cli, ["scan", str(root), "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 2
    assert result.stderr.startswith("migrate: error: cache directory ") and result.stderr.count("\n") == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a directory's owner needs root")
def test_cache_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (tmp_path / "cache").mkdir(mode=0o755)
    os.chown(tmp_path / "cache", 65534, 65534)
    with pytest.raises(ConfigError, match="not owned by the current user"):
        scan(root, settings_for(tmp_path))


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_cache_file_of_another_user_is_a_miss(tmp_path: Path) -> None:
    root = repo(tmp_path)
    expected = scan(root, settings_for(tmp_path))
    stores = [p for p in cache_files(tmp_path) if "results" in p.parts]
    for path in stores:
        path.write_text(path.read_text().replace("cudaMalloc", "cudaFree"))  # a forged entry ...
        os.chown(path, 65534, 65534)  # ... by someone else
    assert scan(root, settings_for(tmp_path)) == expected
    assert all(p.stat().st_uid == os.geteuid() for p in cache_files(tmp_path)), "replaced by our own files"


def test_new_cache_directory_is_private(tmp_path: Path) -> None:
    scan(repo(tmp_path), settings_for(tmp_path))
    assert (tmp_path / "cache").stat().st_mode & 0o077 == 0


def test_an_old_file_is_not_read_again_but_any_edit_is_seen(tmp_path: Path) -> None:
    import migrate.cache.store

    root = repo(tmp_path)
    old = 1_600_000_000
    for path in root.iterdir():
        os.utime(path, (old, old))
    cold = scan(root, settings_for(tmp_path))
    assert all(stamp is None for stamp in _stamps(tmp_path)), "files changed in the last two seconds are hashed"
    os.utime(root / "k0.cu", (old, old))
    migrate.cache.store._SETTLED_NS = 0  # what two seconds later would see, without sleeping in a test
    try:
        assert scan(root, settings_for(tmp_path)) == cold
        assert all(stamp for stamp in _stamps(tmp_path))
        (root / "k1.cu").write_text(KERNEL.replace("cudaMalloc(&p, 4)", "cudaFree(p)      "))  # same size
        os.utime(root / "k1.cu", (old, old))  # and the old mtime: only ctime tells
        warm = scan(root, settings_for(tmp_path))
    finally:
        migrate.cache.store._SETTLED_NS = 2_000_000_000
    assert {f.symbol for f in warm.findings if f.path == "k1.cu"} != {f.symbol for f in cold.findings if f.path == "k1.cu"}


def _stamps(tmp_path: Path) -> list[object]:
    import json

    stores = [p for p in cache_files(tmp_path) if "results" in p.parts]
    return [entry[1] for store in stores for entry in json.loads(store.read_text())["entries"].values()]


def test_a_file_changed_while_it_is_scanned_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import migrate.cache.store
    import migrate.scan.pool

    root = repo(tmp_path)
    real = migrate.scan.pool.scan_file

    def editing(source, *rest):  # type: ignore[no-untyped-def]
        result = real(source, *rest)
        if source.relpath == "k1.cu":  # an editor saves the file while its result is on the way
            (root / "k1.cu").write_text("void g() {}\n" + KERNEL)
        return result

    monkeypatch.setattr(migrate.cache.store, "_SETTLED_NS", 0)
    monkeypatch.setattr(migrate.scan.pool, "scan_file", editing)
    scan(root, settings_for(tmp_path))
    monkeypatch.setattr(migrate.scan.pool, "scan_file", real)
    again = scan(root, settings_for(tmp_path))
    assert [f.line for f in again.findings if f.path == "k1.cu"] == [3, 4]  # the new content, not a stale result
