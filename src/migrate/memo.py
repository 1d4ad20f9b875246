"""A scan's reports, rendered, or handed back whole from the cache when nothing the scan reads has changed since
the last one (the same files by their stat stamps, rules, settings and code): a warm scan of an unchanged tree
then costs its discovery, not the reading of every file's results, the repository's status and the rendering."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from migrate.cache.reports import ReportMemo, open_memo
from migrate.config import Settings
from migrate.inputs import Inputs, inputs, ruleset_for
from migrate.model import Severity
from migrate.writer import write_report

if TYPE_CHECKING:
    from migrate.assessment import Assessment
    from migrate.scan import Progress


@dataclass(frozen=True)
class Request:
    """One report a run asks for: a format, in colour or not (the terminal format only)."""

    fmt: str
    color: bool = False
    path: Path | None = None  # written there as it is rendered, never whole in memory, instead of handed back

    @property
    def name(self) -> str:
        return f"{self.fmt}-color" if self.color else self.fmt


@dataclass(frozen=True)
class Reports:
    """The reports of one run, in the order they were asked for (None for one written to its path), and the highest
    severity they report."""

    texts: tuple[str | None, ...]
    worst: Severity | None
    unscanned: int = 0  # files the scan's time budget left unread (a memo never holds such a scan)


def scan_reports(root: Path, settings: Settings, requests: Sequence[Request], *,
                 progress: Progress | None = None) -> Reports:
    """The reports REQUESTS ask for of a scan of ROOT; those with a path are written there."""
    found = inputs(root, settings)
    memo = _memo(root, settings, found, as_discovered=True)
    names = [request.name for request in requests]
    files = {request.name for request in requests if request.path is not None}
    kept = memo.get(names, files=files) if memo else None
    if kept is not None:
        for request in requests:
            if request.path is not None:
                _copy(Path(kept[0][request.name]), request.path)
        return Reports(tuple(None if r.path else str(kept[0][r.name]) for r in requests), kept[1])
    # The scan, the assessment and the renderers are imported only here: a warm scan hands back the kept reports
    # without them.
    from migrate.assessment import assess
    from migrate.scan import scan_inputs

    result = scan_inputs(root, settings, found, progress=progress, assessed=True)
    record = assess(result)  # once, for every format asked for
    texts = {r.name: _rendered(record, r) for r in requests if r.path is None}
    for request in requests:
        if request.path is not None:
            _write(record, request, memo)
    worst = max((f.severity for f in result.findings), default=None)
    if memo and not result.unscanned and memo == _memo(root, settings, found, as_discovered=False):  # unchanged since
        memo.put(texts, worst)
    elif memo and files:
        memo.discard()
    return Reports(tuple(texts.get(r.name) for r in requests), worst, result.unscanned)


def _rendered(record: Assessment, request: Request) -> str:
    from migrate.report import render

    if request.fmt == "terminal":
        return render(record, request.fmt, color=request.color)
    return render(record, request.fmt)


def _write(record: Assessment, request: Request, memo: ReportMemo | None) -> None:
    """REQUEST's report into its file, rendered as it is written: through the memo's copy when there is a memo
    (the output may be a device such as /dev/null, which cannot be copied back)."""
    from migrate.report import pieces

    assert request.path is not None
    kept = memo.keep(request.name, pieces(record, request.fmt)) if memo else None
    if kept is not None:
        _copy(kept, request.path)
    else:
        write_report(request.path, pieces(record, request.fmt))


def _copy(kept: Path, target: Path) -> None:
    """A report the memo kept, copied to TARGET a block at a time."""
    with open(kept, "rb") as handle:
        write_report(target, iter(lambda: handle.read(1 << 20), b""))


def _memo(root: Path, settings: Settings, found: Inputs, *, as_discovered: bool) -> ReportMemo | None:
    """The memo entry of a whole-tree scan of what FOUND lists, as discovery saw the files (AS_DISCOVERED: no stat
    of its own) or as they stand now."""
    if not found.complete:
        return None
    extra = [str(root), *(f"{s.path}\0{s.reason}" for s in found.skipped), *sorted(found.packages)]
    since = found.discovered_after if as_discovered else None
    return open_memo(root, ruleset_for(settings), settings, found.found, extra, since=since)
