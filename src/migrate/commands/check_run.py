"""`migrate check`'s work, and the plain command lines it runs without click: a commit hook's file names and a few
options, checked as click checks them (anything else goes through click: migrate.__main__)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from stat import S_ISREG
from typing import Any, NoReturn

from migrate.commands.output import EXIT_FINDINGS, EXIT_OK, echo, failed, warn_unscanned
from migrate.errors import InputError
from migrate.codecache import kept
from migrate.gcpause import paused
from migrate.model import Severity


def run(files: tuple[Path, ...], options: Mapping[str, Any]) -> int:
    """Print the new findings at or above --fail-on (default high) in FILES (all tracked files if none); the exit
    code."""
    with kept("check"):  # the dataclasses' methods and the patterns the scan compiles, kept (migrate.codecache)
        return _run(files, options)


def _run(files: tuple[Path, ...], options: Mapping[str, Any]) -> int:
    with paused():  # the scan's modules: many classes, functions and patterns, no garbage
        from migrate.config import check_settings
        from migrate.scan import scan as run_scan

    root = _work_tree()
    settings = check_settings(root, options)
    _refuse_unstaged_in_hook(root, files)
    result = run_scan(root, settings, files=files, substitutions=False)
    warn_unscanned(result.unscanned, settings.time_budget)
    from migrate.escape import visible

    failing = [f for f in result.findings if settings.fail_on is not None and f.severity >= settings.fail_on]
    for finding in failing:
        echo(visible(f"{finding.path}:{finding.line}:{finding.column}: {finding.rule} {finding.message}"))
    if failing:
        accepted = f" ({result.baselined} more in the baseline)" if result.baselined else ""
        label = settings.fail_on.label if settings.fail_on is not None else ""
        echo(f"migrate: {len(failing)} new finding(s) at or above {label}{accepted}", err=True)
    return EXIT_FINDINGS if failing else EXIT_OK


def plain(args: list[str]) -> tuple[tuple[Path, ...], dict[str, Any]] | None:
    """The files and options of check's ARGS (what follows `check`) when they are file names, `--no-cache`,
    `--fail-on LEVEL` and `--cache-dir DIR`, each at most once and each value one click accepts; else None (help,
    `--`, other options, values click refuses: click parses those and says what it says)."""
    files: list[Path] = []
    options: dict[str, Any] = {}
    words = iter(args)
    for word in words:
        name, equals, value = word.partition("=")
        if not word.startswith("-"):
            if not _readable_or_absent(word, directory=False):
                return None
            files.append(Path(word))
        elif word == "--no-cache" and "no_cache" not in options:
            options["no_cache"] = True
        elif name in ("--fail-on", "--cache-dir") and name[2:].replace("-", "_") not in options:
            value = value if equals else next(words, "")
            if name == "--fail-on" and value in [s.label for s in Severity]:
                options["fail_on"] = value
            elif name == "--cache-dir" and _readable_or_absent(value, directory=True):
                options["cache_dir"] = Path(value)
            else:
                return None
        else:
            return None
    return tuple(files), options


def run_plain(files: tuple[Path, ...], options: Mapping[str, Any]) -> NoReturn:
    """run(), its failures said and its exit code given as the click group does; then the process ends."""
    try:
        code = run(files, options)
    except BaseException as exc:
        failure = failed(exc)
        if failure is None:
            raise
        code = failure
    _end(code)


def _end(code: int) -> NoReturn:
    """Exit with CODE, what was written flushed, without Python's clean-up when there is none to do: it would free the
    rules, the API map and the findings one object at a time (5-8 ms that a commit hook waits for). A check of a few
    files leaves no thread, child, open file or exit handler; one of many files ran a pool (multiprocessing), whose
    exit handler is left to run."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(code)  # Python's own exit says it, as before
    if "multiprocessing" in sys.modules:
        sys.exit(code)
    os._exit(code)


def _readable_or_absent(value: str, directory: bool) -> bool:
    """VALUE passes click.Path's test (`exists` off, `readable` on; with DIRECTORY, `file_okay` off) and does not
    look like an option."""
    if not value or value.startswith("-"):
        return False
    try:
        mode = os.stat(value).st_mode
    except OSError:
        return True
    return not (directory and S_ISREG(mode)) and os.access(value, os.R_OK)


def _work_tree() -> Path:
    """The git work tree around the current directory (pre-commit runs hooks there), else the directory."""
    from migrate.gitcmd import toplevel

    return toplevel(Path.cwd()) or Path.cwd()


def _refuse_unstaged_in_hook(root: Path, files: tuple[Path, ...]) -> None:
    """check reads the work tree. Run by git as a hook (git sets GIT_INDEX_FILE), the commit holds the index: a
    checked file with unstaged changes would be judged on text that is not committed, so it is refused. The
    pre-commit framework stashes unstaged changes before its hooks run, so there it never is."""
    from migrate.gitcmd import toplevel, unstaged

    if not os.environ.get("GIT_INDEX_FILE") or toplevel(root) is None:
        return
    named = [os.path.relpath(os.path.abspath(f), root).replace(os.sep, "/") for f in files]
    differ = [p for p in unstaged(root) if not named or any(n in (".", p) or p.startswith(n + "/") for n in named)]
    if differ:
        from migrate.escape import visible

        raise InputError(visible(
            f"{len(differ)} checked file(s) have unstaged changes, and git runs check as a hook on what is staged: "
            f"{', '.join(differ)}; stage them, or stash them (git stash --keep-index) before committing, or run "
            "check through the pre-commit framework, which stashes them for its hooks"))
