"""A progress bar on stderr, shown only when a scan of many files runs on a terminal."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TimeElapsedColumn

_SHOW_FROM = 500  # files; shorter scans finish before a bar would help


class ProgressBar:
    """Callable as progress(done, total); draws nothing for small scans."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._task = TaskID(0)

    def __call__(self, done: int, total: int) -> None:
        if total < _SHOW_FROM:
            return
        if self._progress is None:
            self._progress = Progress(
                "scanning", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                console=Console(stderr=True), transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("scan", total=total)
        self._progress.update(self._task, completed=done)
        if done >= total:
            self._progress.stop()
