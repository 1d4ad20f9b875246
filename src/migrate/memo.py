"""A scan's reports, rendered, or handed back whole from the cache when nothing the scan reads has changed since
the last one (the same files by their stat stamps, rules, settings and code): a warm scan of an unchanged tree
then costs its discovery, not the reading of every file's results, the repository's status and the rendering."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from migrate.assessment import assess
from migrate.cache import ReportMemo, open_memo
from migrate.config import Settings
from migrate.model import Severity
from migrate.report import render
from migrate.scan import Inputs, Progress, inputs, ruleset_for, scan_inputs


@dataclass(frozen=True)
class Request:
    """One report a run asks for: a format, in colour or not (the terminal format only)."""

    fmt: str
    color: bool = False

    @property
    def name(self) -> str:
        return f"{self.fmt}-color" if self.color else self.fmt


@dataclass(frozen=True)
class Reports:
    """The reports of one run, in the order they were asked for, and the highest severity they report."""

    texts: tuple[str, ...]
    worst: Severity | None
    unscanned: int = 0  # files the scan's time budget left unread (a memo never holds such a scan)


def scan_reports(root: Path, settings: Settings, requests: Sequence[Request], *,
                 progress: Progress | None = None) -> Reports:
    """The reports REQUESTS ask for of a scan of ROOT."""
    found = inputs(root, settings)
    memo = _memo(root, settings, found)
    names = [request.name for request in requests]
    kept = memo.get(names) if memo else None
    if kept is not None:
        return Reports(tuple(kept[0][name] for name in names), kept[1])
    result = scan_inputs(root, settings, found, progress=progress)
    record = assess(result)  # once, for every format asked for
    texts = {r.name: render(record, r.fmt, color=r.color) if r.fmt == "terminal" else render(record, r.fmt)
             for r in requests}
    worst = max((f.severity for f in result.findings), default=None)
    if memo and not result.unscanned and memo == _memo(root, settings, found):  # nothing changed meanwhile
        memo.put(texts, worst)
    return Reports(tuple(texts[name] for name in names), worst, result.unscanned)


def _memo(root: Path, settings: Settings, found: Inputs) -> ReportMemo | None:
    """The memo entry of a whole-tree scan of what FOUND lists, as the files stand now."""
    if not found.complete:
        return None
    extra = [str(root), *(f"{s.path}\0{s.reason}" for s in found.skipped), *sorted(found.packages)]
    return open_memo(root, ruleset_for(settings), settings, found.sources, extra)
