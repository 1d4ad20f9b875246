"""The one way migrate writes a file: a complete temp file beside the target, then one rename; a failed write
leaves the old file whole. Reports, baselines, cache entries, translations and the port all go through here."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

TEMP_SUFFIX = ".migrate-tmp"


def write_file(path: Path, data: bytes | str, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace PATH with DATA atomically (str is written as UTF-8); an existing file keeps its mode, a new one
    gets MODE. DURABLE=False skips the fsync (for caches). Raises OSError; FileNotFoundError names the
    missing directory."""
    content = data.encode("utf-8") if isinstance(data, str) else data
    if not path.parent.is_dir():
        raise FileNotFoundError(2, f"directory {path.parent} does not exist", str(path))
    if _is_special(path):
        # /dev/null, /dev/stdout, a FIFO: renaming over it would replace the device node itself
        with open(path, "wb") as handle:
            handle.write(content)
        return
    replace(stage(path, content, mode, make_parents=False, durable=durable), path)


def _is_special(path: Path) -> bool:
    """An existing target (through a symlink too, as /dev/stdout) that is not a regular file: a device or FIFO."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return not stat.S_ISREG(info.st_mode)


def stage(
    target: Path, data: bytes, new_mode: int | None = None, *, make_parents: bool = True, durable: bool = True
) -> Path:
    """A synced temp file beside TARGET holding DATA, with TARGET's mode (new files, and a symlink the rename
    replaces: NEW_MODE or 0o666 less the umask); the caller renames it over TARGET with replace()."""
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        info = os.stat(target, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISREG(info.st_mode):
        mode = info.st_mode & 0o7777
    else:  # new, or a symlink the rename replaces: a link's own mode is 0777, never a file's
        mode = new_mode or default_mode()
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:64]}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(name, mode)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def replace(tmp: Path, target: Path) -> None:
    """Rename TMP over TARGET (a symlink at TARGET is replaced, never followed)."""
    os.replace(tmp, target)


def discard(paths: Iterable[Path]) -> None:
    """Remove temp files, ignoring those already gone."""
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass


def default_mode() -> int:
    """The mode a new file gets: 0o666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
