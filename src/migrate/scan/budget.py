"""One file's time budget: a timer signal stops a file that takes too long (crafted input, not real code)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

FILE_TIME_BUDGET = 20.0  # seconds a file may take; past it the file is skipped


class OverBudget(Exception):
    """A file took longer than FILE_TIME_BUDGET."""


def reason() -> str:
    """Why a file over its budget is skipped."""
    return f"took longer than the time budget of {FILE_TIME_BUDGET:g} s a file"


@contextlib.contextmanager
def file_budget() -> Iterator[None]:
    """Raise OverBudget in this block after FILE_TIME_BUDGET seconds (a no-op where SIGALRM is missing or off the
    main thread)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, FILE_TIME_BUDGET)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
