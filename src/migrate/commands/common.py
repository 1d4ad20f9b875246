"""The option groups several commands share (exit codes and warnings: migrate.commands.output)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from migrate.defaults import DEFAULT_TIME_BUDGET
from migrate.model import Severity

SEVERITIES = [s.label for s in Severity]


def targets_callback(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...] | None:
    """The --target values, split at commas and checked; None when none is given."""
    from migrate.targets import validate

    names = tuple(t.strip() for v in value for t in v.split(",") if t.strip())
    return validate(names) or None



def target_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--target", "targets", multiple=True, callback=targets_callback, metavar="GFX[,GFX...]",
        help="AMD GPU targets (gfx names), default gfx942.",
    )(func)


def fail_on_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--fail-on", type=click.Choice(SEVERITIES), default=None,
        help="Exit 1 when a finding is at or above this severity.",
    )(func)


def cache_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--no-cache", is_flag=True, default=None, help="Neither read nor write the result cache.")(func)
    return click.option(
        "--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
        help="Result cache directory (default $XDG_CACHE_HOME/rocm-migrate).",
    )(func)


def scan_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """What any command that scans takes besides its own options: extra rules and the time budget."""
    func = click.option(
        "--rule-dir", "rule_dirs", multiple=True, metavar="DIR",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Also load the rule files (*.yaml) in DIR; repeatable. Any directory, unlike rule-dirs in the "
             "repository's own config, which must stay inside it.",
    )(func)
    return click.option(
        "--time-budget", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
        help=f"Stop the scan after this long and report what it found, the files not reached listed as skipped "
             f"(default {DEFAULT_TIME_BUDGET:g}).",
    )(func)


def narrow_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help="Leave out the findings recorded in this baseline file.",
    )(func)
    return click.option(
        "--diff-base", metavar="REF", default=None, help="Only findings on lines changed since this git ref."
    )(func)



def tty(stream: Any) -> bool:
    """True for a terminal; False also for a closed stream (`migrate scan . >&-` leaves sys.stdout None)."""
    return stream is not None and stream.isatty()

