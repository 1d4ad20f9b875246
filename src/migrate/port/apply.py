"""The port as changes: one unified diff (dry run) or safe writes; the only module that writes into a user's tree."""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import signal
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType

from migrate import gitcmd, writer
from migrate.bounded import Refused, read_bytes
from migrate.config import Settings
from migrate.discover import discover, list_files
from migrate.errors import MigrateError
from migrate.model import Finding, Skipped, SourceFile
from migrate.port import repo
from migrate.port.lock import ApplyLock, hold
from migrate.port.plan import FileChange, Plan, PortOptions
from migrate.port.sidefiles import side_changes
from migrate.port.strategy import choose, plan_kept_sources
from migrate.port.translate import Engine, Translation, is_translatable, translate_file
from migrate.scan import Inputs, inputs, scan_inputs

DEFAULT_BRANCH = "rocm-port"
COMMIT_MESSAGE = "Port to ROCm/HIP (migrate apply)"
_NO_NEWLINE = b"\\ No newline at end of file\n"
_MAX_INDEX = 2 << 30  # git's index: a few hundred MB in the largest monorepos
_COLORS = {b"+": b"\x1b[32m", b"-": b"\x1b[31m", b"@": b"\x1b[36m"}
# Signals that end a run the way Ctrl-C does: rolled back, exit 130 (SIGHUP: the terminal went away).
_INTERRUPTS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class ApplyError(MigrateError):
    """The port could not be written as asked; the message says what was and was not written."""


class ApplyInterrupted(ApplyError):
    """Ctrl-C, SIGTERM or SIGHUP while writing: rolled back, exit 130."""

    exit_code = 130


@dataclass(frozen=True)
class ApplyResult:
    """What a write did: the files written, and where (branch and commit, or a copy)."""

    written: tuple[str, ...]
    branch: str | None = None
    commit: str | None = None
    out_dir: Path | None = None


def plan_port(root: Path, settings: Settings, options: PortOptions) -> Plan:
    """Port the tree in memory by the strategy of OPTIONS (see migrate.port.strategy; fork translates every
    source), with the files, rules and GPU targets of SETTINGS (the repository's [tool.migrate] included): an
    excluded file is neither changed nor read, a disabled rule's findings steer nothing. Nothing is written."""
    # a baseline and --diff-base narrow what a scan reports, not what a port changes; the port's writes stay the
    # tree's (no result cache)
    settings = replace(settings, baseline=None, diff_base=None, cache_dir=None)
    found = inputs(root, settings)
    sources, skipped = list(found.sources), list(found.skipped)
    needs_scan = options.side_files or options.strategy != "fork"
    scanned, supported = _scan(root, settings, found) if needs_scan else ((), False)
    choice = choose(options.strategy, scanned, sources)
    side = _side(root, sources, settings, options, scanned, supported) if options.side_files else None
    if choice.name != "fork":
        return plan_kept_sources(root, choice, sources, skipped, settings, options, side=side, scanned=scanned,
                                 rocm_supported=supported)
    engine = options.engine
    chosen = [s for s in sources if is_translatable(s.relpath) and (options.include_vendored or not s.vendored)]
    translations = [translate_file(s.path, s.relpath, engine, limit=settings.max_file_size) for s in chosen]
    changes = [FileChange(t.relpath, t.original, t.translated) for t in translations if t.changed]
    skipped += [Skipped(t.relpath, t.skipped) for t in translations if t.skipped]
    findings = [f for t in translations for f in t.findings]
    if side is not None:
        changes += side[0]
        findings += side[1]
    return Plan(root, engine.name, tuple(sorted(changes, key=lambda c: c.relpath)), tuple(sorted(findings)),
                tuple(sorted(skipped)), reason=choice.reason)


def _side(
    root: Path, sources: list[SourceFile], settings: Settings, options: PortOptions, scanned: tuple[Finding, ...],
    rocm_supported: bool,
) -> tuple[list[FileChange], list[Finding]]:
    return side_changes(root, sources, settings, options, scan_findings=scanned, rocm_supported=rocm_supported)


def _scan(root: Path, settings: Settings, found: Inputs) -> tuple[tuple[Finding, ...], bool]:
    """The scan's findings (which say which requirement lines are CUDA-only and what replaces them), and whether the
    repository already builds for ROCm (then its torch.version.cuda tests are its own CUDA/ROCm switches)."""
    result = scan_inputs(root, settings, found)
    return tuple(result.findings), result.rocm is not None and result.rocm.level == "supported"


# -- the dry run: one unified diff that `git apply` accepts ------------------------------------------------------


def render_diff(plan: Plan, *, color: bool = False) -> bytes:
    """Every change as one git-style unified diff, bytes as they are on disk (any encoding, CRLF kept)."""
    out = b"".join(_file_diff(change) for change in plan.changes)
    return _colorize(out) if color else out


def _file_diff(change: FileChange) -> bytes:
    name = change.relpath.encode("utf-8", "surrogateescape")
    old_lines = _git_lines(change.old or b"")
    new_lines = _git_lines(change.new)
    head = [b"diff --git a/" + name + b" b/" + name + b"\n"]
    if change.old is None:
        head.append(b"new file mode 100644\n")
    before = b"/dev/null" if change.old is None else b"a/" + name
    body = difflib.diff_bytes(difflib.unified_diff, old_lines, new_lines, before, b"b/" + name, lineterm=b"\n")
    return b"".join(head) + b"".join(_terminated(line) for line in body)


def _git_lines(data: bytes) -> list[bytes]:
    """Lines as git counts them: ended by LF only (a CR-only file is one line)."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _terminated(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\n" + _NO_NEWLINE


def _colorize(diff: bytes) -> bytes:
    lines = []
    for line in _git_lines(diff):
        code = _COLORS.get(line[:1]) if not line.startswith((b"+++", b"---")) else b"\x1b[1m"
        lines.append(code + line.rstrip(b"\n") + b"\x1b[0m\n" if code else line)
    return b"".join(lines)


# -- writing -------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def prepared(root: Path, *, branch: str = DEFAULT_BRANCH, allow_dirty: bool = False) -> Iterator[ApplyLock | None]:
    """Before a port into ROOT's tree is planned: the repository found (a `.git` git refuses is an error, never a
    plain directory), locked for this apply, and checked (branch name, a commit, no operation under way, clean
    unless ALLOW_DIRTY). Yields the lock for write_port, or None outside git."""
    found = repo.find(root)
    if found is None:
        yield None
        return
    _check_branch_name(root, branch)
    with hold(found) as held:
        _check_has_commit(root)
        changed = repo.status(root)
        repo.check_idle(found.git_dir, changed)
        _check_clean(changed, allow_dirty)
        yield held


def write_port(
    plan: Plan, *, out_dir: Path | None = None, branch: str = DEFAULT_BRANCH, allow_dirty: bool = False,
    use_git: bool = True, lock: ApplyLock | None = None,
) -> ApplyResult:
    """Write the plan: into a ported copy (OUT_DIR), or into the tree on a new git branch with one commit, under
    the repository's apply LOCK (taken here when not given). Any failure or interrupt rolls the tree (and the
    repository) back to where it was; USE_GIT=False writes in place, as outside git."""
    if out_dir is not None:
        target = fresh_dir(out_dir, plan.root, inside="the repository")
        with _emptied_on_failure(target):
            _copy_tree(plan.root.resolve(), target)
            return ApplyResult(write_changes(target, plan.changes), out_dir=out_dir)
    if not plan.changes:
        return ApplyResult(())
    found = lock.repository if lock is not None else repo.find(plan.root) if use_git else None
    if found is None:
        with _transaction(plan, None):
            return ApplyResult(write_changes(plan.root, plan.changes))
    with contextlib.ExitStack() as stack:
        if lock is None:
            _check_branch_name(plan.root, branch)
            _check_has_commit(plan.root)
        held = lock or stack.enter_context(hold(found))
        start = _git_start(plan, found, branch, allow_dirty)
        held.record(branch=branch, head=start.head, ref=start.ref,
                    files=((found.prefix + c.relpath, c.old is not None, c.new) for c in plan.changes))
        with _transaction(plan, start):
            _start_branch(plan.root, start)
            written = write_changes(plan.root, plan.changes)
            _commit(plan.root, written, branch)
            commit = gitcmd.text(plan.root, "rev-parse", "--short", "HEAD", what="read the commit")
    return ApplyResult(written, branch=branch, commit=commit)


def write_changes(root: Path, changes: Iterable[FileChange]) -> tuple[str, ...]:
    """Write each change atomically: all temp files first, then one rename each; a file that is not what the
    plan read (edited, deleted or created since) is never overwritten; a failure names what was written."""
    todo = list(changes)
    staged: list[tuple[Path, Path, FileChange]] = []
    written: list[str] = []
    try:
        try:
            _check_parses(todo)
            for change in todo:
                target = _safe_target(root, change.relpath)
                _check_unchanged(target, change)
                staged.append((writer.stage(target, change.new, change.mode), target, change))
        except (OSError, ApplyError) as exc:
            raise ApplyError(f"nothing was written: {_reason(exc)}") from None
        for index, (tmp, target, change) in enumerate(staged):
            try:
                _check_unchanged(target, change)
                writer.replace(tmp, target)
            except (OSError, ApplyError) as exc:
                left = [c.relpath for _, _, c in staged[index:]]
                raise ApplyError(
                    f"writing {change.relpath} failed ({_reason(exc)}); written: {', '.join(written) or 'none'}; "
                    f"left unchanged: {', '.join(left)}"
                ) from None
            written.append(change.relpath)
    finally:
        writer.discard(tmp for tmp, _, _ in staged[len(written):])
    return tuple(written)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")
    return str(exc)


def _safe_target(root: Path, relpath: str) -> Path:
    """The path to write; refuses symlinks (never followed) and anything that resolves outside ROOT."""
    base = root.resolve()
    target = base / relpath
    if target.is_symlink():
        raise ApplyError(f"{relpath} is a symlink; not followed")
    parent = target.parent
    while not parent.exists():
        parent = parent.parent
    try:
        parent.resolve().relative_to(base)
    except ValueError:
        raise ApplyError(f"{relpath} resolves outside {root}; not written") from None
    return target


def _check_unchanged(target: Path, change: FileChange) -> None:
    """Compare before replace: the file must still hold what the plan read (a new file must still be absent)."""
    if not _holds(target, change.old):
        raise ApplyError(f"{change.relpath} changed since the plan (edited, deleted or created meanwhile); "
                         "not overwritten: run apply again")


def _holds(target: Path, data: bytes | None) -> bool:
    """Whether TARGET holds exactly DATA (None: TARGET is absent); reads no more than DATA's size, and never waits
    on a FIFO or a device."""
    try:
        if data is None:
            return not os.path.lexists(target)
        return read_bytes(target, limit=len(data)) == data
    except (OSError, Refused):
        return False


def _check_parses(changes: Iterable[FileChange]) -> None:
    """An edited Python file that parsed before must still parse: otherwise nothing is written."""
    for change in changes:
        if change.relpath.endswith((".py", ".pyi")) and change.old is not None and _python_error(change.old) is None:
            error = _python_error(change.new)
            if error is not None:
                raise ApplyError(f"{change.relpath} would no longer parse after the edit ({error}); a bug of migrate")


def _python_error(source: bytes) -> str | None:
    try:
        compile(source, "<port>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _copy_tree(base: Path, target: Path) -> None:
    """Copy the repository's files (the shared file lister's view) into TARGET."""
    for relpath in copyable(base, (rel for rel, _ in list_files(base))):
        destination = target / relpath
        writer.make_dirs(destination.parent)
        shutil.copy2(base / relpath, destination, follow_symlinks=False)


def copyable(base: Path, relpaths: Iterable[str]) -> Iterator[str]:
    """The listed files that are regular files, or symlinks that stay inside BASE."""
    for relpath in relpaths:
        path = base / relpath
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) or (stat.S_ISLNK(mode) and _inside(path, base)):
            yield relpath


def _inside(path: Path, base: Path) -> bool:
    try:
        path.resolve().relative_to(base)
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def fresh_dir(out_dir: Path, base: Path, *, inside: str = "the input") -> Path:
    """OUT_DIR resolved and created: it must be outside BASE and new or empty."""
    try:
        target = out_dir.resolve()
        resolved = base.resolve()
        if target == resolved or resolved in target.parents:
            raise ApplyError(f"--out-dir {out_dir} is inside {inside}; choose a directory outside it")
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise ApplyError(f"--out-dir {out_dir} exists and is not an empty directory")
        writer.make_dirs(target)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop in OUT_DIR
        reason = (exc.strerror or exc) if isinstance(exc, OSError) else exc
        raise ApplyError(f"cannot create --out-dir {out_dir}: {reason}") from None
    return target


@contextlib.contextmanager
def _emptied_on_failure(target: Path) -> Iterator[None]:
    """A ported copy that fails half-way is removed again (TARGET was checked new or empty before)."""
    try:
        yield
    except BaseException as exc:
        with _signals_ignored():
            for entry in list(target.iterdir()):
                if entry.is_dir() and not entry.is_symlink():
                    writer.remove_tree(entry)
                else:
                    entry.unlink()
        if isinstance(exc, OSError):
            raise ApplyError(f"cannot write the ported copy in {target}: {_reason(exc)}; removed again") from None
        raise


# -- rollback: a failed or interrupted write leaves the tree and the repository as they were -----------------------


@dataclass
class _GitStart:
    """Where the repository was before the port: HEAD (a branch or a commit), the index, the branch to make."""
    branch: str
    head: str
    ref: str | None
    index_path: Path
    index: bytes | None
    created: list[str] = field(default_factory=list)


@contextlib.contextmanager
def _transaction(plan: Plan, start: _GitStart | None) -> Iterator[None]:
    """Run the write with SIGTERM and SIGHUP as interrupts; on any failure restore the files and the repository."""
    previous = [(signum, _on_signal(signum, _interrupt)) for signum in _INTERRUPTS]
    try:
        yield
    except BaseException as exc:
        with _signals_ignored():
            undone = _roll_back(plan, start)
        if isinstance(exc, KeyboardInterrupt):
            raise ApplyInterrupted(f"interrupted; rolled back: {undone}") from None
        if isinstance(exc, (OSError, MigrateError)):
            raise ApplyError(f"{_reason(exc)}; rolled back: {undone}") from None
        raise
    finally:
        for signum, handler in previous:
            _on_signal(signum, handler)


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _on_signal(signum: signal.Signals, handler: object) -> object:
    """Install HANDLER, returning the previous one (a no-op outside the main thread)."""
    try:
        return signal.signal(signum, handler)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return handler


@contextlib.contextmanager
def _signals_ignored() -> Iterator[None]:
    """The rollback itself must not be interrupted half-way."""
    saved = [(s, _on_signal(s, signal.SIG_IGN)) for s in (signal.SIGINT, *_INTERRUPTS)]
    try:
        yield
    finally:
        for signum, handler in saved:
            _on_signal(signum, handler)


def _roll_back(plan: Plan, start: _GitStart | None) -> str:
    """Put back every file that holds what the port wrote, then HEAD, the branch and the index."""
    restored = 0
    for change in plan.changes:
        target = plan.root / change.relpath
        with contextlib.suppress(OSError):
            if not target.is_symlink() and _holds(target, change.new):
                if change.old is None:
                    target.unlink()
                    _remove_empty_parents(target.parent, plan.root)
                else:
                    writer.write_file(target, change.old)
                restored += 1
    done = [f"{restored} file(s) restored"]
    if start is not None:
        done += _roll_back_git(plan.root, start)
    return ", ".join(done)


def _remove_empty_parents(directory: Path, root: Path) -> None:
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _roll_back_git(root: Path, start: _GitStart) -> list[str]:
    if start.ref is not None:
        gitcmd.run(root, "symbolic-ref", "HEAD", start.ref)
    else:
        gitcmd.run(root, "update-ref", "--no-deref", "HEAD", start.head)
    with contextlib.suppress(OSError):
        if start.index is None:
            start.index_path.unlink(missing_ok=True)
        else:
            writer.write_file(start.index_path, start.index)
    done = [f"back on {_short(start.ref) or start.head[:12]}"]
    for ref in start.created:
        if gitcmd.run(root, "update-ref", "-d", ref).ok:
            done.append(f"branch {_short(ref)} removed")
    return done


def _short(ref: str | None) -> str | None:
    return ref.removeprefix("refs/heads/") if ref else None


# -- git -----------------------------------------------------------------------------------------------------------


def _check_has_commit(root: Path) -> None:
    if not gitcmd.run(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").ok:
        raise ApplyError("the repository has no commit yet: commit first (the port is a branch off a commit), "
                         "or use --out-dir")


def _check_clean(changed: list[tuple[str, str]], allow_dirty: bool) -> None:
    if changed and not allow_dirty:
        raise ApplyError(f"the work tree has {len(changed)} uncommitted change(s); commit or stash them, "
                         "or pass --allow-dirty")


def _check_branch_name(root: Path, branch: str) -> None:
    """A name `git branch` would take as given: not HEAD, not a ref path (refs/heads/x), not @{-1} or -."""
    done = gitcmd.run(root, "check-ref-format", "--branch", branch)
    if branch.startswith(("-", "refs/")) or not done.ok or os.fsdecode(done.stdout).strip() != branch:
        raise ApplyError(f"--branch {branch!r} is not a valid git branch name (give a short name, such as "
                         f"{DEFAULT_BRANCH})")


def _git_start(plan: Plan, found: repo.Repository, branch: str, allow_dirty: bool) -> _GitStart:
    """Check everything the branch write needs (under the lock), before anything is written, and note where we
    start."""
    root = plan.root
    changed = repo.status(root)
    repo.check_idle(found.git_dir, changed)
    _check_clean(changed, allow_dirty)
    repo.check_untouched(found.prefix, (c.relpath for c in plan.changes), changed)
    if gitcmd.run(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").ok:
        raise ApplyError(f"git could not create branch {branch}: it already exists (pass --branch NAME)")
    _check_tracked(root, plan.changes)
    ref = gitcmd.run(root, "symbolic-ref", "--quiet", "HEAD")
    head = _git(root, "rev-parse", "--verify", "HEAD", what="read HEAD")
    index_path = Path(_git(root, "rev-parse", "--path-format=absolute", "--git-path", "index", what="find the index"))
    try:
        index: bytes | None = read_bytes(index_path, limit=_MAX_INDEX)
    except FileNotFoundError:
        index = None
    except (OSError, Refused) as exc:
        raise ApplyError(f"cannot read the git index: {_reason(exc)}") from None
    return _GitStart(branch, head, os.fsdecode(ref.stdout).strip() if ref.ok else None, index_path, index)


def _check_tracked(root: Path, changes: Iterable[FileChange]) -> None:
    """Untracked and ignored files are not the port's to change: committing them on the branch would take them
    away from the user's branch (a `git checkout -` would delete them)."""
    tracked = set(gitcmd.split_z(gitcmd.output(root, "ls-files", "-z", "--cached", what="list tracked files")))
    foreign = sorted(c.relpath for c in changes if c.relpath not in tracked and os.path.lexists(root / c.relpath))
    if foreign:
        raise ApplyError(f"{len(foreign)} file(s) the port would change are not tracked by git (untracked or "
                         f"ignored): {', '.join(foreign)}; commit or move them, or use --out-dir")


def _start_branch(root: Path, start: _GitStart) -> None:
    ref = f"refs/heads/{start.branch}"
    _git(root, "update-ref", ref, start.head, "", what=f"create branch {start.branch}")  # "": must not exist yet
    start.created.append(ref)
    moving = f"checkout: moving from {_short(start.ref) or start.head} to {start.branch}"  # what `git checkout -` reads
    _git(root, "symbolic-ref", "-m", moving, "HEAD", ref, what=f"switch to branch {start.branch}")


def _commit(root: Path, written: tuple[str, ...], branch: str) -> None:
    """Stage and commit exactly the written files (the user's own staged changes stay staged, uncommitted)."""
    _git_paths(root, written, "add", "-f", what="stage the port")
    _git_paths(root, written, "commit", "-q", "--no-verify", "-m", COMMIT_MESSAGE, what=f"commit the port on {branch}")


def _git_paths(root: Path, paths: Iterable[str], *args: str, what: str) -> None:
    done = gitcmd.run_paths(root, paths, *args)
    if not done.ok:
        raise ApplyError(f"git could not {what}: {done.describe()}")


def _git(root: Path, *args: str, what: str) -> str:
    run = gitcmd.run(root, *args)
    if not run.ok:
        raise ApplyError(f"git could not {what}: {run.describe()}")
    return os.fsdecode(run.stdout).strip()
