"""One file's time budget: a timer signal stops a file that takes too long (crafted input, not real code)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class OverBudget(Exception):
    """A file took longer than its time budget."""


def reason(seconds: float) -> str:
    """Why a file over its budget of SECONDS is skipped."""
    return f"took longer than the time budget of {seconds:g} s a file"


@contextlib.contextmanager
def file_budget(seconds: float) -> Iterator[None]:
    """Raise OverBudget in this block after SECONDS (a no-op where SIGALRM is missing or off the main thread)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
