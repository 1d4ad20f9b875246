"""A progress bar on stderr, shown only when a scan of many files runs on a terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

_SHOW_FROM = 500  # files; shorter scans finish before a bar would help


class ProgressBar:
    """Callable as progress(done, total); draws nothing for small scans (and imports rich only to draw)."""

    def __init__(self) -> None:
        self._bar: tuple[Progress, TaskID] | None = None

    def __call__(self, done: int, total: int) -> None:
        if total < _SHOW_FROM:
            return
        if self._bar is None:
            self._bar = _started(total)
        progress, task = self._bar
        progress.update(task, completed=done)
        if done >= total:
            progress.stop()


def _started(total: int) -> tuple[Progress, TaskID]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    progress = Progress(
        "scanning", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True,
    )
    progress.start()
    return progress, progress.add_task("scan", total=total)
