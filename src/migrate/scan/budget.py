"""One file's time budget: a timer signal stops a file that takes too long (crafted input, not real code)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass


class OverBudget(Exception):
    """A file took longer than its time budget."""


def reason(seconds: float) -> str:
    """Why a file over its budget of SECONDS is skipped."""
    return f"took longer than the time budget of {seconds:g} s a file"


@dataclass
class Timer:
    """Whether a file's budget ran out: OverBudget raised inside a C extension's callback can come out as that
    extension's own error (tree-sitter compiling a query's regex reports a QueryError)."""

    expired: bool = False


@contextlib.contextmanager
def file_budget(seconds: float) -> Iterator[Timer]:
    """Raise OverBudget in this block after SECONDS (a no-op where SIGALRM is missing or off the main thread)."""
    timer = Timer()
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield timer
        return

    def expire(_signum: int, _frame: object) -> None:
        timer.expired = True
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield timer
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
