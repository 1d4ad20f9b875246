"""How a fleet run shows itself while it runs: a live bar on a terminal (done / failed / running, the rate), or
one line per finished repository elsewhere (a CI log)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from migrate.fleet.model import DONE, Outcome
from migrate.fleet.runner import Counts
from migrate.escape import visible


def status_text(counts: Counts) -> str:
    """'12 done · 1 failed · 2 running · 4.3 repos/min'."""
    return (f"{counts.done} done · {counts.failed} failed · {counts.running} running · "
            f"{counts.rate:.1f} repos/min")


class LiveBar:
    """A rich progress bar on stderr, redrawn as results come and while they are awaited."""

    def __init__(self) -> None:
        self._progress = Progress(
            TextColumn("fleet"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(), console=Console(stderr=True), transient=True,
        )
        self._task: TaskID | None = None

    def __call__(self, counts: Counts, outcome: Outcome | None) -> None:
        finished = counts.resumed + counts.done + counts.failed
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task("fleet", total=counts.total, status="")
        self._progress.update(self._task, completed=finished, status=status_text(counts))

    def close(self) -> None:
        self._progress.stop()


class LineLog:
    """One line per finished repository, for a log that is not a terminal."""

    def __init__(self, echo: Callable[[str], None]) -> None:
        self._echo = echo

    def __call__(self, counts: Counts, outcome: Outcome | None) -> None:
        if outcome is None:
            return
        finished = counts.resumed + counts.done + counts.failed
        what = (f"{outcome.verdict}, ROCm {outcome.rocm_status}" if outcome.status == DONE
                else f"failed: {outcome.reason}")
        self._echo(visible(f"[{finished}/{counts.total}] {outcome.name}: {what}"))

    def close(self) -> None:
        """Nothing to close: each line was written whole."""
