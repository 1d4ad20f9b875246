"""The process that audits one repository: clone it if it is remote, scan it with the cache (migrate.memo, as
`migrate scan` does), and write its outcome and reports to stdout. isolate.py starts it, one per job, under the
job's limits; run as `python -m migrate.fleet.job` with the request as JSON on stdin."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from migrate.errors import InputError, MigrateError
from migrate.fleet.model import Job, Outcome, ScanOptions, failed, memory_reason, pack, redacted
from migrate.escape import visible

_PARENT_POLL = 0.5  # seconds between checks that the worker that started us is still there


def main() -> None:
    """Read the request, audit, write the payload; a clone or scan error is a failed outcome, not an exit."""
    request = json.loads(sys.stdin.buffer.read())
    job, options = Job.from_dict(request["job"]), ScanOptions(**request["options"])
    _cap_memory(job.memory)
    _follow_parent()
    started = time.monotonic()
    reports: dict[str, str] = {}
    try:
        outcome, reports = audit(job, options)
    except MemoryError:
        outcome = failed(job, memory_reason(job.memory))
    except MigrateError as exc:
        outcome = failed(job, visible(str(exc).replace(job.source, redacted(job.source))))
    outcome = replace(outcome, seconds=round(time.monotonic() - started, 2), peak_mb=peak_mb())
    sys.stdout.buffer.write(pack(outcome, reports))
    sys.stdout.buffer.flush()


def audit(job: Job, options: ScanOptions) -> tuple[Outcome, dict[str, str]]:
    """JOB's outcome and its reports (json, html): the repository cloned if remote, scanned, summarized."""
    # Imported here, after main() capped this process's memory: the cap counts the scanner's modules too, and the
    # thread that follows the parent must start before them (under a small cap it could not start after).
    from migrate.config import load_settings
    from migrate.fleet.summary import summarize
    from migrate.memo import Request, scan_reports
    from migrate.scan import ruleset_for
    from migrate.writer import remove_tree

    root, commit = _checkout(job, options)
    try:
        settings = load_settings(root, {"targets": job.targets, "jobs": options.jobs, "no_cache": options.no_cache,
                                        "cache_dir": options.cache_dir})
        report, page = scan_reports(root, settings, [Request("json"), Request("html")]).texts
        assert report is not None and page is not None  # asked for as texts, not written to files
        titles = {rule.id: rule.title for rule in ruleset_for(settings).rules}
        return summarize(job, json.loads(report), titles, commit), {"json": report, "html": page}
    finally:
        if job.remote:
            with contextlib.suppress(OSError):
                remove_tree(root)


def _checkout(job: Job, options: ScanOptions) -> tuple[Path, str]:
    """Where JOB's repository is to be scanned, and its commit."""
    from migrate.fleet.clone import clone, commit_of  # after the memory cap, as in audit()

    if not job.remote:
        root = Path(job.source)
        if not root.is_dir():
            raise InputError(f"no such directory: {job.source}")
        return root, commit_of(root)
    base = Path(options.clone_dir or Path(tempfile.gettempdir()) / f"rocm-migrate-fleet-{os.getuid()}")
    dest = base / job.slug
    return dest, clone(job.source, job.ref, dest)


def peak_mb() -> float:
    """The peak resident memory of this process or of its largest child (the scan's pool), in MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024, 1)  # ru_maxrss is in KiB on Linux


def _cap_memory(limit: int) -> None:
    """No process of this job may map more than LIMIT bytes (the scan's pool inherits the cap)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _follow_parent() -> None:
    """End this job and everything it started (git, the scan's pool) when the worker that started it dies: a
    killed worker's job is run again elsewhere, and must not go on writing beside it."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL)
        if os.getpgrp() == os.getpid():  # we lead our own process group (isolate.py starts us so)
            os.killpg(0, signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="follow-parent", daemon=True).start()


if __name__ == "__main__":
    main()
