"""A fleet run: the jobs not yet in the store -> the cluster -> each outcome stored and its reports written the
moment it arrives -> the fleet report. Run again after a kill, it picks up where the store stops."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from migrate.errors import InputError
from migrate.fleet import report, since
from migrate.fleet.engine import Cluster, Finished
from migrate.fleet.model import DONE, FAILED, Job, Outcome, ScanOptions, failed, unpack
from migrate.fleet.sources import size_hint
from migrate.fleet.store import Store
from migrate.writer import make_dirs, write_file

STORE, LOCK = "fleet.db", ".fleet.lock"


@dataclass(frozen=True)
class Plan:
    """What to audit and how: the jobs, the output folder, the cluster and the scan options."""

    jobs: tuple[Job, ...]
    out: Path
    options: ScanOptions = ScanOptions()
    workers: int | None = None  # local worker processes (default: one per core)
    scheduler: str | None = None  # an existing Dask scheduler instead
    retry_failed: bool = False
    since: Path | None = None


@dataclass(frozen=True)
class Counts:
    """Where a run stands, for a progress bar."""

    total: int
    resumed: int  # already in the store when the run started
    done: int  # finished by this run, with a report
    failed: int  # finished by this run, without one
    running: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Repositories finished by this run per minute."""
        return (self.done + self.failed) * 60.0 / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True)
class FleetRun:
    """A finished run: every job's outcome (in the sources' order), what this run did, and what it wrote."""

    outcomes: tuple[Outcome, ...]
    resumed: int
    audited: int
    changes: since.Changes | None
    written: tuple[Path, ...]
    cluster: str


Progress = Callable[[Counts, Outcome | None], None]


def run_fleet(plan: Plan, *, progress: Progress | None = None) -> FleetRun:
    """Audit PLAN's jobs that the store does not hold yet, then write the fleet report over all of them."""
    make_dirs(plan.out)
    before = since.load(plan.since) if plan.since else None  # a bad --since fails now, not after the audit
    with _locked(plan.out), contextlib.closing(Store(plan.out / STORE)) as store:
        kept = store.outcomes()
        todo = [j for j in plan.jobs if j.key not in kept or (plan.retry_failed and kept[j.key].status == FAILED)]
        resumed = len(plan.jobs) - len(todo)
        cluster = "none"
        if todo:
            cluster = _audit(store, plan, todo, resumed, progress)
        outcomes = _in_order(plan.jobs, store.outcomes())
        _export_missing(store, plan.out, outcomes)
    changes = since.compare(str(plan.since), before, outcomes) if before is not None and plan.since else None
    written = _write_reports(plan.out, outcomes, changes)
    return FleetRun(outcomes, resumed, len(todo), changes, written, cluster)


def _audit(store: Store, plan: Plan, todo: Sequence[Job], resumed: int, progress: Progress | None) -> str:
    """Run the jobs still to do on the cluster, storing each outcome as it comes; the cluster's address."""
    options = plan.options if plan.scheduler else replace(plan.options, clone_dir=str(plan.out.absolute() / "clones"))
    started = time.monotonic()
    done = failures = 0
    with Cluster(workers=plan.workers, scheduler=plan.scheduler) as cluster:
        run = store.begin_run(cluster=cluster.address, jobs=len(todo))
        for finished in cluster.run(todo, options, _largest_first(todo)):
            outcome = None
            if finished is not None:
                outcome = _store(store, run, plan.out, finished)
                done += outcome.status == DONE
                failures += outcome.status == FAILED
            if progress is not None:
                counts = Counts(len(plan.jobs), resumed, done, failures, cluster.running(), time.monotonic() - started)
                progress(counts, outcome)
        store.end_run(run)
        return cluster.address


def _largest_first(jobs: Sequence[Job]) -> dict[str, int]:
    """Start priorities: the largest local checkouts first, and URLs before them (their clones wait on the network)."""
    sizes = {job.key: size_hint(job) for job in jobs}
    known = [size for size in sizes.values() if size is not None]
    first = max(known, default=0) + 1
    return {key: first if size is None else size for key, size in sizes.items()}


def _store(store: Store, run: int, out: Path, finished: Finished) -> Outcome:
    """The outcome FINISHED carries, committed to the store, then its reports written under OUT/repos."""
    reports: dict[str, str] = {}
    if finished.payload is None:
        outcome = failed(finished.job, finished.error)
    else:
        outcome, reports = unpack(finished.payload)
    store.put(run, outcome, reports)
    _export(out, outcome, reports)
    return outcome


def _export(out: Path, outcome: Outcome, reports: dict[str, str]) -> None:
    """A repository's own reports, as OUT/repos/SLUG/report.FORMAT."""
    for fmt, text in reports.items():
        target = out / report.report_path(outcome, fmt)
        make_dirs(target.parent)
        write_file(target, text, durable=False)  # the store holds them durably; these are its export


def _export_missing(store: Store, out: Path, outcomes: Sequence[Outcome]) -> None:
    """Reports of earlier runs whose files are gone (a run killed between its commit and its export)."""
    for outcome in outcomes:
        if outcome.status == DONE and not (out / report.report_path(outcome)).is_file():
            _export(out, outcome, store.reports(outcome.key))


def _in_order(jobs: Sequence[Job], stored: dict[str, Outcome]) -> tuple[Outcome, ...]:
    return tuple(stored[job.key] for job in jobs if job.key in stored)


def _write_reports(out: Path, outcomes: Sequence[Outcome], changes: since.Changes | None) -> tuple[Path, ...]:
    texts = {
        "fleet.json": report.render_json(outcomes, changes),
        "fleet.csv": report.render_csv(outcomes),
        "fleet.html": report.render_html(outcomes, changes),
    }
    for name, text in texts.items():
        write_file(out / name, text)
    return tuple(out / name for name in texts)


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """One run at a time writes OUT: a second gets a one-line error instead of scanning the same repositories."""
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"another fleet run is writing {out}") from None
        yield
    finally:
        os.close(fd)
