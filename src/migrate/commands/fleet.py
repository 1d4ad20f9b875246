"""`migrate fleet`: many repositories audited at once."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from migrate.commands.common import cache_options, target_option, tty
from migrate.commands.output import EXIT_OK
from migrate.defaults import DEFAULT_TARGETS
from migrate.errors import InputError


@click.command()
@click.argument("sources", type=click.Path(exists=True, path_type=Path))
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for fleet.db, fleet.html, fleet.json, fleet.csv and repos/ (a run there resumes).")
@click.option("--workers", type=click.IntRange(min=1), help="Local worker processes (default: one per core).")
@click.option("--scheduler", metavar="ADDR", help="Run on an existing Dask cluster (tcp://HOST:8786).")
@click.option("--since", type=click.Path(dir_okay=False, path_type=Path), metavar="PREVIOUS.db",
              help="The fleet.db of an earlier audit: report what changed since.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=900.0, show_default=True,
              help="Seconds a repository may take (clone and scan).")
@click.option("--memory", default="4GiB", show_default=True, help="Memory a repository's scan may use.")
@click.option("--retry-failed", is_flag=True, help="Audit again what an earlier run recorded as failed.")
@target_option
@cache_options
def fleet(sources: Path, out: Path, workers: int | None, scheduler: str | None, since: Path | None, timeout: float,
          memory: str, retry_failed: bool, targets: tuple[str, ...] | None, no_cache: bool | None,
          cache_dir: Path | None) -> None:
    """Audit many repositories at once on a Dask cluster (SOURCES: a list file, its YAML form, or a folder of
    checkouts) into one store and one fleet report."""
    from migrate.fleet.model import Job, ScanOptions
    from migrate.fleet.runner import Plan, run_fleet
    from migrate.fleet.sources import parse_size, read_sources

    if workers and scheduler:
        raise InputError("--workers is for a local cluster; an existing one (--scheduler) has its own workers")
    defaults = Job(source="", targets=targets or DEFAULT_TARGETS, timeout=timeout, memory=parse_size(memory))
    listed = read_sources(sources, defaults)
    options = ScanOptions(cache_dir=str(cache_dir) if cache_dir else None, no_cache=bool(no_cache))
    progress = _fleet_progress()
    try:
        done = run_fleet(Plan(listed.jobs, out, options, workers, scheduler, retry_failed, since), progress=progress)
    finally:
        progress.close()
    _echo_fleet(done, listed.duplicates)
    sys.exit(EXIT_OK)


def _fleet_progress() -> Any:
    from migrate.fleet.progress import LineLog, LiveBar

    return LiveBar() if tty(sys.stderr) else LineLog(lambda line: click.echo(line, err=True))


def _echo_fleet(done: Any, duplicates: int) -> None:
    from migrate.fleet.model import DONE
    from migrate.escape import visible

    finished = [o for o in done.outcomes if o.status == DONE]
    click.echo(f"{len(done.outcomes)} repositories: {len(finished)} audited, {len(done.outcomes) - len(finished)} "
               f"failed, {sum(o.ready for o in finished)} ROCm-ready ({done.audited} this run, {done.resumed} "
               f"from the store{f'; {duplicates} repeated entries left out' if duplicates else ''})")
    for outcome in done.outcomes:
        if outcome.status != DONE:
            click.echo(visible(f"failed: {outcome.name}: {outcome.reason}"))
    if done.changes is not None:
        click.echo(f"since {done.changes.previous}: {len(done.changes.became_ready)} became ROCm-ready, "
                   f"{len(done.changes.with_new_blockers)} have new blockers")
    click.echo(f"fleet report: {done.written[-1]} (and {', '.join(p.name for p in done.written[:-1])}, fleet.db)")

