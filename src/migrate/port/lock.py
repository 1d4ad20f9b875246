"""One apply at a time per repository, and the way back from one that was killed: a lock file in the git
directory, held with flock (the kernel releases it when the holder dies), that also records what the write
phase is about to change, so the next run can undo exactly what a killed run wrote."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from migrate import gitcmd, writer
from migrate.bounded import Refused, read_bytes
from migrate.port.repo import Repository, RepositoryError
from migrate.escape import visible
from migrate.tools import ToolRun

LOCK_NAME = "migrate-apply.lock"
_JOURNAL_LIMIT = 64 << 20
_WRITTEN_LIMIT = 1 << 30  # a file the port wrote: a ported source, far smaller (the journal may be planted)
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class Journal:
    """What a write phase changes: the branch it makes from HEAD (REF, or the commit HEAD when detached), and
    each file (path from the top of the work tree, whether it existed, sha256 of the bytes written). The git
    directory of a repository handed to us may hold a planted one: the roll-back trusts none of it blindly."""

    pid: int
    branch: str
    head: str
    ref: str | None
    files: tuple[tuple[str, bool, str], ...]


class ApplyLock:
    """The held lock of one apply; record() notes what the write phase changes before it changes anything."""

    def __init__(self, repository: Repository, fd: int) -> None:
        self.repository = repository
        self.path = repository.git_dir / LOCK_NAME
        self._fd = fd

    def record(self, *, branch: str = "", head: str = "", ref: str | None = None,
               files: Iterable[tuple[str, bool, bytes]] = ()) -> None:
        """Write the journal that a later run reads if this one is killed (synced when it names a branch: the
        files written after it are synced too)."""
        listed = [[path, existed, hashlib.sha256(data).hexdigest()] for path, existed, data in files]
        entry = {"pid": os.getpid(), "branch": branch, "head": head, "ref": ref, "files": listed}
        data = json.dumps(entry, ensure_ascii=True).encode("ascii")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)
        if branch:
            os.fsync(self._fd)

    def release(self, *, keep: bool = False) -> None:
        """Remove the lock file (still holding it, so no one takes a file about to vanish) and let go; KEEP
        leaves the file, and its journal, for the next run."""
        if not keep:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        os.close(self._fd)


@contextlib.contextmanager
def hold(repository: Repository) -> Iterator[ApplyLock]:
    """The repository's apply lock for the duration; RepositoryError when another apply holds it. A lock left by
    a killed run is taken over after undoing what that run wrote, and RepositoryError says what was done."""
    lock = ApplyLock(repository, _acquire(repository.git_dir / LOCK_NAME))
    left = _read(lock._fd)
    if left is not None and left.branch:
        try:
            account = _recover(repository.top, left)
        except BaseException:
            lock.release(keep=True)
            raise
        lock.release()
        raise RepositoryError(visible(account))
    try:
        lock.record()  # the holder's pid, for the message a second run gives
        yield lock
    finally:
        lock.release()


def _acquire(path: Path) -> int:
    """An open descriptor of PATH holding its exclusive flock; the file is checked to be the one at PATH now
    (a holder unlinks it on release, so a waiter may have locked a file that is gone)."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        try:
            fd = os.open(path, flags, 0o600)
        except OSError as exc:
            raise RepositoryError(f"cannot open the apply lock {path}: {exc.strerror or exc}") from None
        try:
            _lock(fd, path)
            if os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino:
                return fd
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise RepositoryError(f"cannot take the apply lock {path}: it keeps being replaced")


def _lock(fd: int, path: Path) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise RepositoryError(f"the apply lock {path} is not a regular file; remove it")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read(fd)
        who = f" (pid {holder.pid})" if holder is not None else ""
        raise RepositoryError(f"another migrate apply{who} is writing to this repository (lock {path} is held); "
                              "wait for it to finish, then run apply again") from None


def _read(fd: int) -> Journal | None:
    """The journal in the lock file, if it holds a valid one (a run killed while writing it left none)."""
    try:
        size = os.fstat(fd).st_size
        if size > _JOURNAL_LIMIT:
            return None
        entry = json.loads(os.pread(fd, size, 0))
        files = tuple((str(p), bool(e), str(h)) for p, e, h in entry["files"])
        ref, head = entry["ref"], str(entry["head"])
        if entry["branch"] and not _OBJECT_ID.fullmatch(head):
            return None
        return Journal(int(entry["pid"]), str(entry["branch"]), head, None if ref is None else str(ref), files)
    except (ValueError, TypeError, KeyError, OSError):
        return None


# -- the way back from a killed run -------------------------------------------------------------------------------


def _recover(top: Path, left: Journal) -> str:
    """Undo what the killed run LEFT wrote (only files still holding exactly its bytes), put HEAD back and remove
    the branch it made; a run killed after its commit, or a HEAD moved since, is only reported. Nothing it does
    can lose a commit or a byte the journal does not name. The account, in one line."""
    targets = [(path, existed, digest) for path, existed, digest in left.files if _inside(top, path)]
    temps = writer.leftovers(top / path for path, _, _ in targets)
    writer.discard(temps)
    killed = f"a previous migrate apply (pid {left.pid}) was killed"
    start = _short(left.ref) or left.head[:12]
    tip = _commit(top, f"refs/heads/{left.branch}")
    if tip is not None and tip != left.head:
        switch = f"git switch {start}" if left.ref else f"git switch --detach {start}"
        return (f"{killed} after it committed the port on branch {left.branch} ({tip[:12]}); nothing to undo, "
                f"{len(temps)} temp file(s) removed; `{switch}` goes back to where it started")
    if _commit(top, "HEAD") != left.head:
        return (f"{killed} while writing branch {left.branch}, and HEAD has moved since: nothing rolled back, "
                f"{len(temps)} temp file(s) removed; see `git status`")
    ours = [(path, existed) for path, existed, digest in targets if _holds(top / path, digest)]
    _restore(top, left.head, [path for path, existed in ours if existed])
    _remove(top, left.head, [path for path, existed in ours if not existed])
    done = [f"{len(ours)} file(s) restored", f"{len(temps)} temp file(s) removed"]
    done += _head_back(top, left, start)
    return f"{killed} while writing branch {left.branch}; now rolled back: {', '.join(done)}; run apply again"


def _inside(top: Path, relpath: str) -> bool:
    """A journal path names a file under TOP, reached without a symlink (the lock file may be planted)."""
    parts = Path(relpath).parts
    if not parts or Path(relpath).is_absolute() or ".." in parts or "\0" in relpath:
        return False
    target = top / relpath
    try:
        base, parent = top.resolve(), target.parent.resolve()
        return not target.is_symlink() and (parent == base or base in parent.parents)
    except (OSError, RuntimeError):
        return False


def _holds(path: Path, digest: str) -> bool:
    try:
        return not path.is_symlink() and hashlib.sha256(read_bytes(path, limit=_WRITTEN_LIMIT)).hexdigest() == digest
    except (OSError, Refused):
        return False


def _commit(top: Path, ref: str) -> str | None:
    done = gitcmd.run(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return os.fsdecode(done.stdout).strip() if done.ok else None


def _restore(top: Path, head: str, paths: list[str]) -> None:
    """The files as the start commit has them, in the work tree and the index."""
    if paths:
        _must(gitcmd.run_paths(top, paths, "checkout", "-q", head), "restore the files")


def _remove(top: Path, head: str, paths: list[str]) -> None:
    """New files the run created: deleted, and out of the index if it had staged them."""
    for path in paths:
        with contextlib.suppress(OSError):
            (top / path).unlink()
    if paths:
        _must(gitcmd.run_paths(top, paths, "reset", "-q", head), "unstage the new files")


def _head_back(top: Path, left: Journal, start: str) -> list[str]:
    """HEAD from the port branch back to where it was, and the branch removed: only while both still point at
    the start commit (HEAD was checked to), so no commit becomes unreachable."""
    branch_ref = f"refs/heads/{left.branch}"
    head = gitcmd.run(top, "symbolic-ref", "--quiet", "HEAD")
    done = []
    if head.ok and os.fsdecode(head.stdout).strip() == branch_ref:
        if left.ref is None:
            _must(gitcmd.run(top, "update-ref", "--no-deref", "HEAD", left.head), "put HEAD back")
        elif left.ref.startswith("refs/heads/") and left.ref != branch_ref and _commit(top, left.ref) == left.head:
            _must(gitcmd.run(top, "symbolic-ref", "HEAD", left.ref), "put HEAD back")
        else:
            return [f"HEAD left on {left.branch} ({start} has moved)"]
        done.append(f"back on {start}")
    if _commit(top, branch_ref) == left.head and gitcmd.run(top, "update-ref", "-d", branch_ref, left.head).ok:
        done.append(f"branch {left.branch} removed")
    return done


def _must(done: ToolRun, what: str) -> None:
    if not done.ok:
        raise RepositoryError(f"a previous migrate apply was killed, and git could not {what} for it: "
                              f"{done.describe()}; if no git command is running, remove a leftover "
                              "index.lock in the git directory, then run apply again")


def _short(ref: str | None) -> str | None:
    return ref.removeprefix("refs/heads/") if ref else None
