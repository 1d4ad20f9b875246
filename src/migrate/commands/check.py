"""`migrate check`: new findings in a few files, for a commit hook."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from migrate.commands.common import (
    EXIT_FINDINGS, EXIT_OK, cache_options, fail_on_option, narrow_options, scan_options, target_option,
    warn_unscanned,
)
from migrate.errors import InputError
from migrate.gcpause import paused


@click.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@target_option
@fail_on_option
@narrow_options
@scan_options
@cache_options
def check(files: tuple[Path, ...], **options: Any) -> None:
    """Fail on new findings at or above --fail-on (default high) in FILES (all tracked files if none)."""
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
        click.echo(visible(f"{finding.path}:{finding.line}:{finding.column}: {finding.rule} {finding.message}"))
    if failing:
        accepted = f" ({result.baselined} more in the baseline)" if result.baselined else ""
        label = settings.fail_on.label if settings.fail_on is not None else ""
        click.echo(f"migrate: {len(failing)} new finding(s) at or above {label}{accepted}", err=True)
    sys.exit(EXIT_FINDINGS if failing else EXIT_OK)


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

