"""The repository a port writes into: found (or refused with git's reason, never taken for a plain directory),
and checked for a state no port may start from (an operation under way, conflicts, edits in the files it ports)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from migrate import gitcmd
from migrate.errors import MigrateError
from migrate.tools import EXIT_NOT_FOUND, ToolRun

# What git leaves in the git directory while an operation waits for the user (`git status` reads the same files).
_UNDER_WAY = (("rebase-merge", "a rebase"), ("rebase-apply", "a rebase or `git am`"), ("MERGE_HEAD", "a merge"),
              ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert"))
_UNMERGED = frozenset({"DD", "AU", "UD", "UA", "DU", "AA", "UU"})


class RepositoryError(MigrateError):
    """The repository is in no state to take a port; the message says why and what to do."""


@dataclass(frozen=True)
class Repository:
    """A git work tree: its top, its git directory (this worktree's), and the directory asked for (PREFIX, from
    the top: "" or "lib/")."""

    top: Path
    git_dir: Path
    prefix: str


_WHERE = ("--show-toplevel", "--absolute-git-dir", "--show-prefix")


def find(path: Path) -> Repository | None:
    """The repository PATH is in; None when there is no `.git` in or above PATH (a plain directory). A `.git`
    that git will not open (dubious ownership, git missing, a broken `.git`), or a work tree git places
    elsewhere (`core.worktree`), is a RepositoryError: writing in place would leave no way back."""
    done = gitcmd.run(path, "rev-parse", *_WHERE)
    if done.ok:
        lines = os.fsdecode(done.stdout).split("\n")
        if len(lines) != len(_WHERE) + 1:  # a newline in a path: one question at a time
            lines = [os.fsdecode(gitcmd.output(path, "rev-parse", flag, what="find the repository"))[:-1]
                     for flag in _WHERE]
        found = Repository(Path(lines[0]), Path(lines[1]), lines[2])
        _check_contains(found.top, path)
        return found
    marker = _git_marker(path)
    if marker is None:
        return None
    raise RepositoryError(_refusal(marker, done))


def _git_marker(path: Path) -> Path | None:
    """The nearest `.git` (directory or file) in or above PATH, or $GIT_DIR when set."""
    if os.environ.get("GIT_DIR"):
        return Path(os.environ["GIT_DIR"])
    for directory in (path.resolve(), *path.resolve().parents):
        if os.path.lexists(directory / ".git"):
            return directory / ".git"
    return None


def _refusal(marker: Path, done: ToolRun) -> str:
    """Why git would not open the repository at MARKER, and what the user can do."""
    where = f"{marker.parent} is a git repository ({marker})"
    if done.returncode == EXIT_NOT_FOUND and not done.stdout:
        return (f"{where}, but git is not installed (not found on PATH): without git there is no branch to go "
                "back to, so nothing was written; install git, or use --out-dir DIR for a ported copy")
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    reason = next((line.removeprefix("fatal: ") for line in lines if line.startswith("fatal:")), lines[0] if lines else "")
    hint = next((f"; if you trust it: {line}" for line in lines if "safe.directory" in line and " --add " in line), "")
    return f"{where}, but git will not open it: {reason}; nothing was written{hint}"


def _check_contains(top: Path, path: Path) -> None:
    """A work tree that does not contain PATH (core.worktree, GIT_WORK_TREE) would commit other files."""
    resolved = path.resolve()
    if resolved != top.resolve() and top.resolve() not in resolved.parents:
        raise RepositoryError(f"git places the work tree of {path} at {top} (core.worktree or GIT_WORK_TREE), "
                              "not around it: a commit there would not hold the files the port writes; "
                              "nothing was written")


def check_idle(git_dir: Path, changed: list[tuple[str, str]]) -> None:
    """Refuse a repository in the middle of a rebase, merge, cherry-pick or revert (its GIT_DIR says), or with
    unmerged files (CHANGED, from status())."""
    for name, operation in _UNDER_WAY:
        if os.path.lexists(git_dir / name):
            raise RepositoryError(f"the repository is in the middle of {operation} ({git_dir / name} exists): "
                                  "finish or abort it first; nothing was written")
    unmerged = sorted({path for state, path in changed if state in _UNMERGED})
    if unmerged:
        raise RepositoryError(f"{len(unmerged)} file(s) have unresolved conflicts: {', '.join(unmerged)}; "
                              "resolve and commit them first; nothing was written")


def status(root: Path) -> list[tuple[str, str]]:
    """Each tracked path with uncommitted changes, as (XY, path relative to the top): X the index, Y the work tree."""
    raw = gitcmd.output(root, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=all",
                        what="read the work tree status")
    entries: list[tuple[str, str]] = []
    fields = raw.split(b"\0")
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if len(entry) < 4:
            continue
        state = entry[:2].decode("ascii", "replace")
        entries.append((state, os.fsdecode(entry[3:])))
        if state[0] in "RC":  # a rename or copy names its source next
            index += 1
    return entries


def check_untouched(prefix: str, relpaths: Iterable[str], changed: list[tuple[str, str]]) -> None:
    """The port's files (RELPATHS, under PREFIX from the top) must have no uncommitted edit (CHANGED, from
    status()): committing the port would take the edit away from the user's branch (a staged one would survive
    only as a dangling blob)."""
    edited = {path: state for state, path in changed}
    hits = [(rel, edited[prefix + rel]) for rel in sorted(relpaths) if prefix + rel in edited]
    if hits:
        named = ", ".join(f"{rel} ({_edit_kind(state)})" for rel, state in hits)
        raise RepositoryError(f"{len(hits)} file(s) the port would rewrite have uncommitted edits: {named}; commit or "
                              "stash them first (--allow-dirty keeps uncommitted edits only in files the port does "
                              "not rewrite); nothing was written")


def _edit_kind(state: str) -> str:
    staged, unstaged = state[0] not in " ?", state[1] not in " ?"
    return "staged and unstaged" if staged and unstaged else "staged" if staged else "unstaged"
