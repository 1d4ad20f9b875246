"""The `migrate` command: options -> Settings -> one core call -> render -> exit code.

Exit codes: 0 done; 1 findings at or above --fail-on; 2 usage or input error; 3 internal error;
130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from migrate import __version__
from migrate.errors import MigrateError
from migrate.model import ScanResult, Severity

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
SEVERITIES = [s.label for s in Severity]


class _Group(click.Group):
    """Turns MigrateError into a one-line message and exit 2, anything unexpected into exit 3."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MigrateError as exc:
            click.echo(f"migrate: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("migrate: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except Exception as exc:  # a bug of ours: say so in one line, exit 3
            if os.environ.get("MIGRATE_DEBUG"):
                raise
            click.echo(f"migrate: internal error: {type(exc).__name__}: {exc} (set MIGRATE_DEBUG=1 for details)", err=True)
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="migrate")
def cli() -> None:
    """Find what stands between a CUDA codebase and AMD ROCm, and port the mechanical part."""


def _targets(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...] | None:
    names = tuple(t.strip() for v in value for t in v.split(",") if t.strip())
    for name in names:
        if not name.startswith("gfx"):
            raise click.BadParameter(f"{name!r} is not a gfx target name (e.g. gfx942, gfx1100)")
    return names or None


def target_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--target", "targets", multiple=True, callback=_targets, metavar="GFX[,GFX...]",
        help="AMD GPU targets (gfx names), default gfx942.",
    )(func)


def fail_on_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--fail-on", type=click.Choice(SEVERITIES), default=None,
        help="Exit 1 when a finding is at or above this severity.",
    )(func)


@cli.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here.")
@target_option
@fail_on_option
@click.option("--max-file-size", type=click.IntRange(min=1), default=None, help="Skip files larger than this (bytes).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None, help="Worker processes (0: one per core).")
def scan(path: Path, fmt: str, output: Path | None, **options: Any) -> None:
    """Scan a repository for what needs porting to ROCm."""
    from migrate.config import load_settings
    from migrate.scan import scan as run_scan

    settings = load_settings(path, options)
    result = run_scan(path, settings, progress=_progress_bar())
    _emit(result, fmt, output)
    sys.exit(_exit_code(result, settings.fail_on))


def _emit(result: ScanResult, fmt: str, output: Path | None) -> None:
    from migrate.report import render

    if output is None:
        color = fmt == "terminal" and sys.stdout.isatty()
        text = render(result, fmt, color=color) if fmt == "terminal" else render(result, fmt)
        click.echo(text, nl=False)
        return
    _write(output, render(result, fmt))
    click.echo(render(result, "terminal", color=sys.stdout.isatty()), nl=False)
    click.echo(f"report written to {output}")


def _write(path: Path, text: str) -> None:
    from migrate.errors import InputError

    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _exit_code(result: ScanResult, fail_on: Severity | None) -> int:
    if fail_on is not None and any(f.severity >= fail_on for f in result.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _progress_bar() -> Callable[[int, int], None] | None:
    """A rich progress bar on stderr for long scans on a terminal; None otherwise."""
    if not sys.stderr.isatty():
        return None
    from migrate.report.progress import ProgressBar

    return ProgressBar()


def main() -> None:
    cli(prog_name="migrate")
