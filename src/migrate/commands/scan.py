"""`migrate scan` and `migrate baseline`: a whole repository scanned, reported or recorded."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from migrate.commands.common import cache_options, fail_on_option, narrow_options, scan_options, target_option, tty
from migrate.commands.output import EXIT_FINDINGS, EXIT_OK, warn_unscanned
from migrate.defaults import DEFAULT_BASELINE
from migrate.report.formats import FORMATS, REPORT_SUFFIXES, format_of


def _report_path(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None and format_of(value) is None:
        raise click.BadParameter(f"cannot tell the format of {value.name!r}: use one of {', '.join(REPORT_SUFFIXES)}")
    return value



@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="terminal", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here.")
@click.option(
    "--report", type=click.Path(dir_okay=False, path_type=Path), callback=_report_path, metavar="FILE",
    help="Also write a report to FILE, its format following the suffix (.md, .html, .sarif, .json, .txt).",
)
@target_option
@fail_on_option
@click.option("--max-file-size", type=click.IntRange(min=1), default=None, help="Skip files larger than this (bytes).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None, help="Worker processes (0: one per core).")
@narrow_options
@scan_options
@cache_options
def scan(path: Path, fmt: str, output: Path | None, report: Path | None, **options: Any) -> None:
    """Scan a repository for what needs porting to ROCm."""
    from migrate.config import load_settings
    from migrate.memo import Request, scan_reports

    settings = load_settings(path, options)
    color = tty(sys.stdout)
    requests = [Request(fmt, color and fmt == "terminal", path=output)]
    if output is not None:
        requests.append(Request("terminal", color))
    if report is not None:
        requests.append(Request(format_of(report) or "terminal", path=report))
    reports = scan_reports(path, settings, requests, progress=_progress_bar())
    if output is None:
        click.echo(reports.texts[0], nl=False)
    else:
        click.echo(reports.texts[1], nl=False)
        click.echo(f"report written to {output}")
    if report is not None:
        click.echo(f"report written to {report}", err=True)
    warn_unscanned(reports.unscanned, settings.time_budget)
    failing = settings.fail_on is not None and reports.worst is not None and reports.worst >= settings.fail_on
    sys.exit(EXIT_FINDINGS if failing else EXIT_OK)



@click.command("baseline")
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Default PATH/.migrate-baseline.json."
)
@target_option
@scan_options
@cache_options
def baseline_command(path: Path, output: Path | None, **options: Any) -> None:
    """Record the current findings as accepted, so check and --baseline report only new ones."""
    from dataclasses import replace

    from migrate.baseline import render as render_baseline
    from migrate.config import load_settings
    from migrate.scan import scan as run_scan

    settings = replace(load_settings(path, options), baseline=None, diff_base=None)
    result = run_scan(path, settings, substitutions=False)
    warn_unscanned(result.unscanned, settings.time_budget)
    target = output or path / DEFAULT_BASELINE
    _write(target, render_baseline(result.findings))
    click.echo(f"recorded {len(result.findings)} finding(s) in {target}")



def _write(path: Path, text: str) -> None:
    from migrate.writer import write_report

    write_report(path, (text,))



def _progress_bar() -> Callable[[int, int], None] | None:
    """A rich progress bar on stderr for long scans on a terminal; None otherwise."""
    if not tty(sys.stderr):
        return None
    from migrate.report.progress import ProgressBar

    return ProgressBar()

