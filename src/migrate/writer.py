"""The one way migrate writes a file: a complete temp file beside the target, then one rename; a failed write
leaves the old file whole. Reports, baselines, cache entries, translations and the port all go through here."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from migrate.lazyre import lazy_regex

TEMP_SUFFIX = ".migrate-tmp"


def write_file(path: Path, data: bytes | str, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace PATH with DATA atomically (str is written as UTF-8); an existing file keeps its mode, a new one
    gets MODE. DURABLE=False skips the fsync (for caches). Raises OSError; FileNotFoundError names the
    missing directory."""
    write_pieces(path, (data,), mode=mode, durable=durable)


def write_pieces(path: Path, pieces: Iterable[bytes | str], *, mode: int | None = None, durable: bool = True) -> None:
    """write_file of the concatenated PIECES, which are written as they come: a large report is never whole in
    memory."""
    if not path.parent.is_dir():
        raise FileNotFoundError(2, f"directory {path.parent} does not exist", str(path))
    if _is_special(path):
        # /dev/null, /dev/stdout, a FIFO: renaming over it would replace the device node itself
        with open(path, "wb") as handle:
            _write_all(handle, pieces)
        return
    replace(stage(path, pieces, mode, make_parents=False, durable=durable), path)


def write_report(path: Path, pieces: Iterable[bytes | str]) -> None:
    """write_pieces for what a user asked to be written (a report, a baseline): a failure is an InputError that
    names the file."""
    from migrate.errors import InputError

    try:
        write_pieces(path, pieces)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


_BLOCK = 1 << 18  # characters of text encoded and written at a time


def _write_all(handle: BinaryIO, pieces: Iterable[bytes | str]) -> None:
    """PIECES into HANDLE: text gathered to about _BLOCK characters, then encoded and written at once (a report
    comes a finding a piece)."""
    text: list[str] = []
    size = 0
    for piece in pieces:
        if isinstance(piece, str):
            text.append(piece)
            size += len(piece)
            if size < _BLOCK:
                continue
            piece, text, size = "".join(text).encode("utf-8"), [], 0
        elif text:
            handle.write("".join(text).encode("utf-8"))
            text, size = [], 0
        handle.write(piece)
    handle.write("".join(text).encode("utf-8"))


def _is_special(path: Path) -> bool:
    """An existing target (through a symlink too, as /dev/stdout) that is not a regular file: a device or FIFO."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return not stat.S_ISREG(info.st_mode)


def stage(
    target: Path, data: bytes | Iterable[bytes | str], new_mode: int | None = None, *, make_parents: bool = True,
    durable: bool = True,
) -> Path:
    """A synced temp file beside TARGET holding DATA (bytes, or pieces written as they come), with TARGET's mode
    (new files, and a symlink the rename replaces: NEW_MODE or 0o666 less the umask); the caller renames it over
    TARGET with replace()."""
    if make_parents:
        make_dirs(target.parent)
    try:
        info = os.stat(target, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISREG(info.st_mode):
        mode = info.st_mode & 0o7777
    else:  # new, or a symlink the rename replaces: a link's own mode is 0777, never a file's
        mode = new_mode or default_mode()
    fd, name = _new_temp(target.parent, f".{target.name[:64]}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_all(handle, (data,) if isinstance(data, bytes) else data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(name, mode)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


_TEMP_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _new_temp(directory: Path, prefix: str) -> tuple[int, str]:
    """A new file PREFIX + 8 random characters + TEMP_SUFFIX in DIRECTORY, open for writing, private to the user:
    what tempfile.mkstemp makes, without importing tempfile (and random) into every process that writes a file."""
    folder = os.path.abspath(directory)
    for _ in range(1000):
        name = os.path.join(folder, prefix + "".join(_TEMP_LETTERS[b % 37] for b in os.urandom(8)) + TEMP_SUFFIX)
        try:
            return os.open(name, _TEMP_FLAGS, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", str(directory))


def replace(tmp: Path, target: Path) -> None:
    """Rename TMP over TARGET (a symlink at TARGET is replaced, never followed)."""
    os.replace(tmp, target)


def leftovers(targets: Iterable[Path]) -> list[Path]:
    """The temp files stage() made beside TARGETS and no one removed (a run killed before it could)."""
    wanted: dict[Path, set[str]] = {}
    for target in targets:
        wanted.setdefault(target.parent, set()).add(f".{target.name[:64]}.")
    found = []
    for directory, prefixes in sorted(wanted.items()):
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in sorted(names):
            match = _TEMP_NAME.fullmatch(name)
            if match and match.group(1) in prefixes:
                found.append(directory / name)
    return found


_TEMP_NAME = lazy_regex(r"(\..*\.)[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX), re.DOTALL)  # mkstemp's 8 random characters


def make_dirs(path: Path) -> None:
    """`mkdir -p` that a tree thousands of levels deep cannot break: no recursion (Path.mkdir(parents=True)
    recurses once per missing level), and each level made relative to its parent's descriptor (a full path
    costs the kernel one lookup per component). Raises OSError."""
    if path.is_dir():
        return
    fd = os.open(path.anchor or ".", _TRAVERSE)
    try:
        for part in path.parts[1:] if path.anchor else path.parts:
            try:
                os.mkdir(part, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                below = os.open(part, _TRAVERSE, dir_fd=fd)
            except NotADirectoryError:
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path)) from None
            os.close(fd)
            fd = below
    finally:
        os.close(fd)


def remove_tree(top: Path) -> None:
    """`rm -r TOP` as make_dirs() makes trees: no recursion (shutil.rmtree recurses once per level), one open
    descriptor at a time, each step relative to it; a symlink is removed, never followed."""
    fd = os.open(top, _DIRECTORY | _NOFOLLOW)
    names: list[str] = []
    while True:
        below = None
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    below = below or entry.name
                else:
                    os.unlink(entry.name, dir_fd=fd)
        if below is not None:
            names.append(below)
            step = os.open(below, _DIRECTORY | _NOFOLLOW, dir_fd=fd)
        else:
            step = os.open("..", _DIRECTORY, dir_fd=fd) if names else -1
        os.close(fd)  # before the rmdir: removing a directory still open costs the file system a journal entry
        if below is None:
            if not names:
                os.rmdir(top)
                return
            os.rmdir(names.pop(), dir_fd=step)
        fd = step


_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_TRAVERSE = _DIRECTORY | getattr(os, "O_PATH", 0)  # O_PATH: a directory we may enter but not list is fine
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


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
