"""The cluster a fleet runs on: Dask distributed, either a LocalCluster of worker processes on this machine or an
existing scheduler (`--scheduler tcp://HOST:8786`). The only module that imports `distributed` (the fleet extra)."""

from __future__ import annotations

import importlib
import logging
import os
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from migrate.errors import InputError
from migrate.fleet.isolate import audit
from migrate.fleet.model import Job, ScanOptions

EXTRA_HINT = "migrate fleet needs the fleet extra: pip install 'rocm-migrate[fleet]'"
_POLL = 0.25  # seconds between looks at the cluster while no result is ready
_CONNECT_TIMEOUT = "30s"


@dataclass(frozen=True)
class Finished:
    """A job the cluster is done with: its payload (model.pack), or why the cluster could not run it."""

    job: Job
    payload: bytes | None
    error: str = ""


class LostScheduler(InputError):
    """The scheduler went away: nothing more can finish in this run (what finished is stored)."""


class Cluster:
    """A Dask client on a LocalCluster of WORKERS processes, or on the scheduler at SCHEDULER."""

    def __init__(self, *, workers: int | None = None, scheduler: str | None = None) -> None:
        self._workers, self._scheduler = workers, scheduler
        self._client: Any = None
        self._local: Any = None
        self._futures: dict[Any, Job] = {}

    def __enter__(self) -> Cluster:
        distributed = _distributed()
        if self._scheduler:
            try:
                self._client = distributed.Client(self._scheduler, timeout=_CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError(f"cannot reach the Dask scheduler at {self._scheduler}: {exc}") from None
        else:
            self._local = distributed.LocalCluster(
                n_workers=self._workers or cores(), threads_per_worker=1, processes=True, dashboard_address=None,
                memory_limit=0, silence_logs=logging.ERROR,  # each job caps its own memory (job.py)
            )
            self._client = distributed.Client(self._local)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None) -> None:
        if self._client is not None:
            self._client.close()
        if self._local is not None:
            self._local.close()

    @property
    def address(self) -> str:
        """The scheduler's address ('local' for a LocalCluster of ours)."""
        return self._scheduler or "local"

    def workers(self) -> int:
        """How many workers the scheduler has now."""
        return len(self._client.scheduler_info().get("workers", {}))

    def running(self) -> int:
        """How many of our jobs workers are running now (a worker may hold a few more, queued, than it has threads)."""
        ours = {future.key for future in self._futures}
        held = sum(1 for keys in self._client.processing().values() for key in keys if key in ours)
        threads: int = sum(self._client.nthreads().values())
        return min(held, threads)

    def run(self, jobs: Iterable[Job], options: ScanOptions, priority: Mapping[str, int]) -> Iterator[Finished | None]:
        """Each job's Finished as soon as it is done, in the order they finish; None now and then while none is.
        PRIORITY (by job key) orders the start: higher first (submitted in that order too, as the first tasks to
        reach the scheduler go to idle workers before the rest arrive)."""
        distributed = _distributed()
        token = uuid.uuid4().hex[:8]  # keys unique to this run: a scheduler may remember an earlier run's
        self._futures = {
            self._client.submit(audit, job, options, key=f"audit-{job.key}-{token}", pure=False,
                                priority=priority.get(job.key, 0)): job
            for job in sorted(jobs, key=lambda job: -priority.get(job.key, 0))
        }
        pending = distributed.as_completed(list(self._futures))
        while not pending.is_empty():
            if not pending.has_ready():
                time.sleep(_POLL)
                yield None
                continue
            for future in pending.next_batch(block=False):
                yield self._finished(future)

    def _finished(self, future: Any) -> Finished:
        """The payload of a done FUTURE, or the cluster's reason; the scheduler then forgets it."""
        job = self._futures.pop(future)
        try:
            if future.cancelled():
                raise LostScheduler("the Dask scheduler cancelled the run; run the same command again to resume")
            payload = future.result()
        except LostScheduler:
            raise
        except Exception as exc:  # noqa: BLE001 - a worker that died too often, a task that raised: data
            return Finished(job, None, _cluster_reason(exc))
        finally:
            future.release()
        return Finished(job, payload)


def _distributed() -> Any:
    """The distributed package (untyped, so Any), or the one-line hint to install the fleet extra."""
    try:
        return importlib.import_module("distributed")
    except ImportError:
        raise InputError(EXTRA_HINT) from None


def _cluster_reason(exc: Exception) -> str:
    """Why the cluster gave no result for a job, in one line."""
    if type(exc).__name__ == "KilledWorker":
        return "every worker that ran it died (Dask's KilledWorker); the repository may crash the scan"
    return f"the cluster could not run it: {type(exc).__name__}: {exc}"


def cores() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
