"""One job in a process of its own, under the job's time and memory limits: the task a Dask worker runs. A scan
that hangs, exhausts its memory or crashes comes back as a failed outcome with its reason, and the worker lives on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from migrate.fleet.model import Job, ScanOptions, failed, memory_reason, pack, request
from migrate.escape import visible

_DIED_OF_MEMORY = (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS)
# What a process says when its memory cap (RLIMIT_AS) refuses an allocation: Python, the loader, libc, C++.
_OUT_OF_MEMORY = ("MemoryError", "failed to map segment", "Cannot allocate memory", "std::bad_alloc")


def audit(job: Job, options: ScanOptions) -> bytes:
    """JOB's payload (model.pack): the audit run in a child process, killed with all it started past the timeout."""
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "migrate.fleet.job"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = child.communicate(request(job, options), timeout=job.timeout)
    except subprocess.TimeoutExpired:
        _kill(child)
        return pack(failed(job, f"timed out after {job.timeout:g} s", seconds=time.monotonic() - started), {})
    except BaseException:  # the worker is shutting down: take the job's processes with it
        _kill(child)
        raise
    if child.returncode == 0 and out:
        return out
    reason = _reason(child.returncode, err.decode("utf-8", "replace"), job)
    return pack(failed(job, reason, seconds=time.monotonic() - started), {})


def _kill(child: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's process group (git, the scan's pool) and reap the child."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.communicate()


def _reason(code: int, stderr: str, job: Job) -> str:
    """Why the job's process gave no outcome, in one line."""
    if any(sign in stderr for sign in _OUT_OF_MEMORY):
        return memory_reason(job.memory)
    if code < 0:
        name = signal.Signals(-code).name
        cap = f" (it may have reached the memory cap of {job.memory / (1 << 20):,.0f} MiB)" if -code in _DIED_OF_MEMORY else ""
        return f"the scan process died of {name}{cap}"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return visible(f"the scan process failed (exit {code})" + (f": {lines[-1][:300]}" if lines else ""))
