"""The one way migrate runs git: a repository's own configuration can never make git run a command."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from migrate.errors import MigrateError
from migrate.tools import EXIT_NOT_FOUND, ToolRun, run_tool

# Everything a repository's config (or a hostile environment) could use to make git run a program: hooks,
# fsmonitor, external diff, pagers, signing, background maintenance. Filters and textconv are per-driver
# names, so those come from the repository's own config (see _driver_overrides) and --no-textconv.
HARDENING = (
    "-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null", "-c", "diff.external=", "-c", "core.pager=cat",
    "-c", "core.quotePath=false", "-c", "core.editor=true", "-c", "sequence.editor=true", "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.sshCommand=false",
    "-c", "credential.helper=", "-c", "core.askPass=", "-c", "protocol.allow=never",
    "-c", "safe.bareRepository=explicit", "-c", "submodule.recurse=false", "-c", "diff.ignoreSubmodules=all",
)
_DRIVER_KEYS = ("clean", "smudge", "process", "command", "textconv")
# Commands that never run a filter or diff driver: no need to read the repository's config for them first.
_NO_DRIVERS = frozenset({"rev-parse", "ls-files", "check-ignore", "check-ref-format", "symbolic-ref", "update-ref",
                         "config"})
_UNSET = ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "SSH_ASKPASS",
          "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND")


__all__ = ["EXIT_NOT_FOUND", "GitError", "output", "run", "run_paths", "split_z", "text", "toplevel", "unstaged"]


class GitError(MigrateError):
    """A git command failed; the message says what we were doing."""


def run(root: Path, *args: str, stdin: bytes | None = None) -> ToolRun:
    """Run `git ARGS` in ROOT, hardened; the outcome is data (a failure is a non-zero return code)."""
    drivers = {} if args and args[0] in _NO_DRIVERS else _driver_overrides(str(root))
    env = {**drivers, **_BASE_ENV}
    return run_tool(["git", "--no-pager", *HARDENING, *args], cwd=root, env=env, unset=_UNSET, stdin=stdin)


def run_paths(root: Path, paths: Iterable[str], *args: str) -> ToolRun:
    """`git ARGS` on PATHS, read NUL-separated from stdin (no argument-length limit) and taken literally."""
    listed = b"".join(os.fsencode(path) + b"\0" for path in paths)
    return run(root, "--literal-pathspecs", *args, "--pathspec-from-file=-", "--pathspec-file-nul", stdin=listed)


def output(root: Path, *args: str, what: str) -> bytes:
    """Stdout of `git ARGS` in ROOT; GitError naming WHAT on failure."""
    done = run(root, *args)
    if not done.ok:
        raise GitError(f"git could not {what}: {done.describe()}")
    return done.stdout


def text(root: Path, *args: str, what: str) -> str:
    """Stdout of `git ARGS`, decoded as file names are (surrogate-escaped), stripped."""
    return os.fsdecode(output(root, *args, what=what)).strip()


def toplevel(path: Path) -> Path | None:
    """The work tree containing PATH, or None outside git (or when git is missing)."""
    if not path.is_dir():
        return None
    done = run(path, "rev-parse", "--show-toplevel")
    top = os.fsdecode(done.stdout).strip()
    return Path(top) if done.ok and top else None


def unstaged(root: Path) -> list[str]:
    """Tracked files whose work-tree content differs from the index (paths from the top of the work tree)."""
    return split_z(output(root, "diff", "--name-only", "-z", "--no-ext-diff", "--no-textconv",
                          "--ignore-submodules=all", what="compare the work tree with the index"))


def split_z(data: bytes) -> list[str]:
    """NUL-separated git output (-z) as file names, surrogate-escaped like every path migrate reads."""
    return [os.fsdecode(item) for item in data.split(b"\0") if item]


_BASE_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "PAGER": "cat",
             "GIT_ATTR_NOSYSTEM": "1"}


@lru_cache(maxsize=64)
def _driver_overrides(root: str) -> dict[str, str]:
    """Blank every filter/diff driver command the repository's config names, passed as GIT_CONFIG_* entries
    (driver names may hold any character, which `-c name=value` cannot carry)."""
    listed = run_tool(["git", "--no-pager", *HARDENING, "config", "-z", "--get-regexp", r"^(filter|diff)\."],
                      cwd=Path(root), env=_BASE_ENV, unset=_UNSET)
    keys: set[str] = set()
    for entry in listed.stdout.split(b"\0"):
        key = os.fsdecode(entry.split(b"\n", 1)[0])
        section, _, rest = key.partition(".")
        driver, _, name = rest.rpartition(".")
        if driver and name.lower() in _DRIVER_KEYS:
            keys.update(f"{section}.{driver}.{k}" for k in _DRIVER_KEYS)
            keys.add(f"{section}.{driver}.required")
    first = _user_entries()  # the user's own GIT_CONFIG_KEY_n entries (e.g. safe.directory in CI) are kept
    env = {"GIT_CONFIG_COUNT": str(first + len(keys))}
    for index, key in enumerate(sorted(keys), start=first):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = "false" if key.endswith(".required") else ""
    return env


def _user_entries() -> int:
    try:
        return max(0, int(os.environ.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        return 0
