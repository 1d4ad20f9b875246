"""One bounded reader for what a repository or a shared directory hands us: regular files only, at most a
size limit, without blocking on a FIFO or a device, and (for the cache) only files the user alone may write."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from migrate.model import SourceFile


class Refused(ValueError):
    """The file is not one we read: the message says why."""


def read_bytes(path: str | os.PathLike[str], *, limit: int, private: bool = False) -> bytes:
    """PATH's bytes; Refused when it is not a regular file, is larger than LIMIT or (PRIVATE) is not the user's own."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (_NOFOLLOW if private else 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file")
        if info.st_size > limit:
            raise Refused(f"larger than {limit:,} bytes")
        if private:
            check_private(info)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise Refused(f"larger than {limit:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], *, limit: int) -> str | None:
    """PATH's text (UTF-8, undecodable bytes replaced); none when it is missing, not a regular file or larger than
    LIMIT: for the few files a project-wide step reads again (a setup.py, a Makefile, a header's includes)."""
    try:
        return read_bytes(path, limit=limit).decode("utf-8", errors="replace")
    except (OSError, Refused):
        return None


def read_source(source: SourceFile) -> bytes:
    """A discovered file's bytes; Refused when it has become something else since discovery (not a regular file,
    or much larger than it was)."""
    return read_bytes(source.path, limit=2 * source.size + 65536)


def check_private(info: os.stat_result) -> None:
    """Refused unless the user owns the file or directory and no one else may write to it."""
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise Refused("not owned by the current user")
    if info.st_mode & (stat.S_IWOTH | stat.S_IWGRP):
        raise Refused("writable by other users")


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
