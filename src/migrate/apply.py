"""The port as changes: one unified diff (dry run) or safe writes; the only module that writes into a user's tree."""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from migrate.discover import SKIP_DIRS, discover
from migrate.errors import MigrateError
from migrate.model import Finding, Skipped, SourceFile
from migrate.tools import run_tool
from migrate.translate import Engine, Translation, is_translatable, translate_file

DEFAULT_BRANCH = "rocm-port"
COMMIT_MESSAGE = "Port to ROCm/HIP (migrate apply)"
_NO_NEWLINE = b"\\ No newline at end of file\n"
_COLORS = {b"+": b"\x1b[32m", b"-": b"\x1b[31m", b"@": b"\x1b[36m"}


class ApplyError(MigrateError):
    """The port could not be written as asked; the message says what was and was not written."""


@dataclass(frozen=True)
class FileChange:
    """One file of the port: its old bytes (None: a new file), its new bytes, and why it changes."""

    relpath: str
    old: bytes | None
    new: bytes
    reason: str = "translated to HIP"
    mode: int | None = None  # for a new file; an existing file keeps its own mode


@dataclass(frozen=True)
class Plan:
    """The whole port of a tree, computed without writing anything."""

    root: Path
    engine: str
    changes: tuple[FileChange, ...]
    findings: tuple[Finding, ...] = ()
    skipped: tuple[Skipped, ...] = ()


@dataclass(frozen=True)
class ApplyResult:
    """What a write did: the files written, and where (branch and commit, or a copy)."""

    written: tuple[str, ...]
    branch: str | None = None
    commit: str | None = None
    out_dir: Path | None = None


def plan_port(
    root: Path, engine: Engine, *, max_file_size: int, include_vendored: bool = False, side_files: bool = True,
    in_place: bool = False, unsafe_fixes: bool = False, targets: tuple[str, ...] = ("gfx942",),
) -> Plan:
    """Translate the tree's sources (and propose side files) in memory; nothing is written."""
    sources, skipped = _sources(root, max_file_size)
    chosen = [s for s in sources if is_translatable(s.relpath) and (include_vendored or not s.vendored)]
    translations = [translate_file(s.path, s.relpath, engine) for s in chosen]
    changes = [FileChange(t.relpath, t.original, t.translated) for t in translations if t.changed]
    skipped += [Skipped(t.relpath, t.skipped) for t in translations if t.skipped]
    findings = [f for t in translations for f in t.findings]
    if side_files:
        from migrate.sidefiles import side_changes

        extra, extra_findings = side_changes(root, sources, in_place=in_place, unsafe_fixes=unsafe_fixes,
                                             scan_findings=_scan_findings(root, max_file_size), gfx_targets=targets)
        changes += extra
        findings += extra_findings
    return Plan(root, engine.name, tuple(sorted(changes, key=lambda c: c.relpath)), tuple(sorted(findings)),
                tuple(sorted(skipped)))


def _scan_findings(root: Path, max_file_size: int) -> tuple[Finding, ...]:
    """The scan's findings, which say which requirement lines are CUDA-only and what replaces them."""
    from migrate.config import Settings
    from migrate.scan import scan

    return scan(root, Settings(max_file_size=max_file_size, jobs=1)).findings


def plan_from_translations(root: Path, engine: str, translations: Iterable[Translation]) -> Plan:
    """A plan made of already computed translations (the translate command)."""
    done = list(translations)
    changes = tuple(FileChange(t.relpath, t.original, t.translated) for t in done if t.changed)
    skipped = tuple(sorted(Skipped(t.relpath, t.skipped) for t in done if t.skipped))
    return Plan(root, engine, changes, tuple(sorted(f for t in done for f in t.findings)), skipped)


def _sources(root: Path, max_file_size: int) -> tuple[list[SourceFile], list[Skipped]]:
    sources: list[SourceFile] = []
    skipped: list[Skipped] = []
    for item in discover(root, max_file_size=max_file_size):
        (skipped if isinstance(item, Skipped) else sources).append(item)  # type: ignore[arg-type]
    return sources, skipped


# -- the dry run: one unified diff that `git apply` accepts ------------------------------------------------------


def render_diff(plan: Plan, *, color: bool = False) -> bytes:
    """Every change as one git-style unified diff, bytes as they are on disk (any encoding, CRLF kept)."""
    out = b"".join(_file_diff(change) for change in plan.changes)
    return _colorize(out) if color else out


def _file_diff(change: FileChange) -> bytes:
    name = change.relpath.encode("utf-8", "surrogateescape")
    old_lines = (change.old or b"").splitlines(keepends=True)
    new_lines = change.new.splitlines(keepends=True)
    head = [b"diff --git a/" + name + b" b/" + name + b"\n"]
    if change.old is None:
        head.append(b"new file mode 100644\n")
    before = b"/dev/null" if change.old is None else b"a/" + name
    body = difflib.diff_bytes(difflib.unified_diff, old_lines, new_lines, before, b"b/" + name, lineterm=b"\n")
    return b"".join(head) + b"".join(_terminated(line) for line in body)


def _terminated(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\n" + _NO_NEWLINE


def _colorize(diff: bytes) -> bytes:
    lines = []
    for line in diff.splitlines(keepends=True):
        code = _COLORS.get(line[:1]) if not line.startswith((b"+++", b"---")) else b"\x1b[1m"
        lines.append(code + line.rstrip(b"\n") + b"\x1b[0m\n" if code else line)
    return b"".join(lines)


# -- writing -------------------------------------------------------------------------------------------------------


def write_port(
    plan: Plan, *, out_dir: Path | None = None, branch: str = DEFAULT_BRANCH, allow_dirty: bool = False,
    use_git: bool = True,
) -> ApplyResult:
    """Write the plan: into a ported copy (OUT_DIR), or into the tree on a new git branch with one commit."""
    if out_dir is not None:
        _copy_tree(plan.root, out_dir)
        return ApplyResult(write_changes(out_dir, plan.changes), out_dir=out_dir)
    if not plan.changes:
        return ApplyResult(())
    if not use_git or not _is_git(plan.root):
        return ApplyResult(write_changes(plan.root, plan.changes))
    _check_clean(plan.root, allow_dirty)
    _git(plan.root, "checkout", "-q", "-b", branch, what=f"create branch {branch}")
    written = write_changes(plan.root, plan.changes)
    _git(plan.root, "add", "--", *written, what="stage the port")
    _git(plan.root, "commit", "-q", "--no-verify", "-m", COMMIT_MESSAGE,
         what=f"commit the port (files are written on branch {branch}, uncommitted)")
    commit = _git(plan.root, "rev-parse", "--short", "HEAD", what="read the commit")
    return ApplyResult(written, branch=branch, commit=commit)


def write_changes(root: Path, changes: Iterable[FileChange]) -> tuple[str, ...]:
    """Write each change atomically: all temp files first, then one rename each; a failure names what was written."""
    staged: list[tuple[Path, Path, str]] = []
    try:
        for change in changes:
            target = _safe_target(root, change.relpath)
            staged.append((_stage(target, change.new, change.mode), target, change.relpath))
    except (OSError, ApplyError) as exc:
        _discard(tmp for tmp, _, _ in staged)
        raise ApplyError(f"nothing was written: {_reason(exc)}") from None
    written: list[str] = []
    for index, (tmp, target, relpath) in enumerate(staged):
        try:
            _replace(tmp, target)
        except OSError as exc:
            _discard(t for t, _, _ in staged[index:])
            left = [r for _, _, r in staged[index:]]
            raise ApplyError(
                f"writing {relpath} failed ({_reason(exc)}); written: {', '.join(written) or 'none'}; "
                f"left unchanged: {', '.join(left)}"
            ) from None
        written.append(relpath)
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


def _stage(target: Path, data: bytes, new_mode: int | None = None) -> Path:
    """A temp file beside TARGET holding DATA, with TARGET's mode (new files: NEW_MODE or 0o666 less the umask)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o7777 if target.exists() else (new_mode or _default_mode())
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".migrate-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(name, mode)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _replace(tmp: Path, target: Path) -> None:
    os.replace(tmp, target)


def _discard(paths: Iterable[Path]) -> None:
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass


def _copy_tree(root: Path, out_dir: Path) -> None:
    """Copy the repository's files (git's view, or a filtered walk) into a new or empty OUT_DIR."""
    base = root.resolve()
    target = out_dir.resolve()
    if target == base or base in target.parents:
        raise ApplyError(f"--out-dir {out_dir} is inside the repository; choose a directory outside it")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ApplyError(f"--out-dir {out_dir} exists and is not an empty directory")
    for relpath in _tree_files(base):
        source = base / relpath
        if source.is_symlink() and not _inside(source, base):
            continue
        destination = target / relpath
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination, follow_symlinks=False)


def _inside(path: Path, base: Path) -> bool:
    try:
        path.resolve().relative_to(base)
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def _tree_files(root: Path) -> Iterator[str]:
    if _is_git(root):
        listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", what="list files")
        yield from sorted(p for p in listed.split("\0") if p and (root / p).is_file())
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield (Path(dirpath) / name).relative_to(root).as_posix()


# -- git -----------------------------------------------------------------------------------------------------------


def _is_git(root: Path) -> bool:
    run = run_tool(["git", "-C", root, "rev-parse", "--is-inside-work-tree"])
    return run.ok and run.stdout.strip() == b"true"


def ensure_clean(root: Path, *, allow_dirty: bool = False) -> None:
    """Refuse a git work tree with uncommitted changes (unless ALLOW_DIRTY); a no-op outside git."""
    if _is_git(root):
        _check_clean(root, allow_dirty)


def _check_clean(root: Path, allow_dirty: bool) -> None:
    status = _git(root, "status", "--porcelain", "--untracked-files=no", what="read the work tree status")
    if status.strip() and not allow_dirty:
        count = len(status.strip().splitlines())
        raise ApplyError(f"the work tree has {count} uncommitted change(s); commit or stash them, or pass --allow-dirty")


def _git(root: Path, *args: str, what: str) -> str:
    run = run_tool(["git", "-C", root, *args])
    if not run.ok:
        raise ApplyError(f"git could not {what}: {run.describe()}")
    return run.stdout.decode("utf-8", "surrogateescape").strip()


# -- the translate command: files and directories, to -o / --out-dir / in place -------------------------------------


@dataclass(frozen=True)
class TranslateOutcome:
    """What `migrate translate` did."""

    engine: str
    translated: tuple[str, ...]
    written: tuple[str, ...]
    destination: Path
    findings: tuple[Finding, ...] = ()
    skipped: tuple[Skipped, ...] = ()


def translate_paths(
    paths: Iterable[Path], engine: Engine, *, output: Path | None = None, out_dir: Path | None = None,
    in_place: bool = False,
) -> TranslateOutcome:
    """Translate files and directories to OUTPUT (one file), OUT_DIR (a mirrored tree) or in place."""
    given = [Path(p) for p in paths]
    if sum((output is not None, out_dir is not None, in_place)) != 1:
        raise ApplyError("choose exactly one of -o FILE, --out-dir DIR or --in-place")
    for path in given:
        if not path.exists():
            raise ApplyError(f"path does not exist: {path}")
    if output is not None:
        return _translate_one(given, output, engine)
    base, files = _expand(given)
    translations = [translate_file(base / rel, rel, engine) for rel in files if is_translatable(rel)]
    changes = [FileChange(t.relpath, t.original, t.translated) for t in translations if t.changed]
    destination = base
    if out_dir is not None:
        destination = _fresh_dir(out_dir, base)
        done = {t.relpath: t for t in translations if t.skipped is None}
        changes = [_mirrored(base, rel, done.get(rel)) for rel in files]
    plan = plan_from_translations(base, engine.name, translations)
    written = write_changes(destination, changes)
    return TranslateOutcome(engine.name, tuple(c.relpath for c in plan.changes), written, destination,
                            plan.findings, plan.skipped)


def _translate_one(given: list[Path], output: Path, engine: Engine) -> TranslateOutcome:
    if len(given) != 1 or not given[0].is_file():
        raise ApplyError("-o takes exactly one input file; use --out-dir for several files or a directory")
    done = translate_file(given[0], given[0].name, engine)
    if done.skipped:
        raise ApplyError(f"{given[0]}: {done.skipped}")
    out = output.resolve()
    change = FileChange(out.name, None, done.translated, mode=given[0].stat().st_mode & 0o7777)
    written = write_changes(out.parent, [change])
    translated = (given[0].name,) if done.changed else ()
    return TranslateOutcome(engine.name, translated, written, out.parent, done.findings)


def _expand(given: list[Path]) -> tuple[Path, list[str]]:
    """The common base directory and every file under the paths, relative to it."""
    resolved = [p.resolve() for p in given]
    if len(resolved) == 1 and resolved[0].is_dir():
        base = resolved[0]
    else:
        base = Path(os.path.commonpath([p if p.is_dir() else p.parent for p in resolved]))
    files: set[str] = set()
    for path in resolved:
        if path.is_dir():
            inside = (rel for rel in _tree_files(path) if _inside(path / rel, base))
            files.update((path / rel).relative_to(base).as_posix() for rel in inside)
        else:
            files.add(path.relative_to(base).as_posix())
    return base, sorted(files)


def _fresh_dir(out_dir: Path, base: Path) -> Path:
    target = out_dir.resolve()
    if target == base or base in target.parents:
        raise ApplyError(f"--out-dir {out_dir} is inside the input; choose a directory outside it")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ApplyError(f"--out-dir {out_dir} exists and is not an empty directory")
    target.mkdir(parents=True, exist_ok=True)
    return target


def _mirrored(base: Path, relpath: str, done: Translation | None) -> FileChange:
    source = base / relpath
    mode = source.stat().st_mode & 0o7777
    data = done.translated if done is not None else source.read_bytes()
    return FileChange(relpath, None, data, reason="translated" if done else "copied", mode=mode)
