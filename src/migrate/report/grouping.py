"""Findings of one rule in one component collapse to one row: the count, the first place, the next few by index;
gathered in one read of the findings, never a list of them (a large scan reads them back from disk); pure."""

from __future__ import annotations

import heapq
from array import array
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from migrate.assessment import Assessment
from migrate.model import Finding, Severity
from migrate.report import components


@dataclass(frozen=True)
class Group:
    """The findings of one rule in one component, in short: the first, how many, the worst severity, where the next
    few are (indices into the findings read) and, while every one is a rename at low severity, the renames."""

    component: str
    title: str
    rule: str
    first: Finding
    count: int
    severity: Severity
    places: array[int] = field(default_factory=lambda: array("q"))  # the next findings after the first, in order
    renames: frozenset[tuple[str, str]] | None = None  # (symbol or code, HIP name) of each, or None

    @property
    def category(self) -> str:
        return self.first.category


class _Gathered:
    """One group as its findings come."""

    def __init__(self, index: int, finding: Finding, keep: int) -> None:
        self.first = finding
        self.count = 0
        self.worst = finding.severity
        self.places: array[int] = array("q")
        self.keep = keep
        self.renames: set[tuple[str, str]] | None = set()
        self.add(index, finding)

    def add(self, index: int, finding: Finding) -> None:
        if self.count and len(self.places) < self.keep:
            self.places.append(index)
        self.count += 1
        if finding.severity > self.worst:
            self.worst = finding.severity
        if self.renames is not None:
            if finding.hip and finding.severity <= Severity.LOW:
                self.renames.add((finding.symbol or finding.evidence.strip(), finding.hip))
            else:
                self.renames = None


@dataclass(frozen=True)
class Tally:
    """What the reports read of a scan's findings, gathered in one read of them: the groups (each with up to
    `places` next findings), the components' titles, the counts by severity and category, the files with findings."""

    groups: tuple[Group, ...]  # the worst, then the largest, first
    titles: dict[str, str]
    order: tuple[str, ...]  # the components with findings: the costliest first, then those without work by name
    by_severity: Counter[Severity]
    by_category: Counter[str]
    files: int
    worst_files: tuple[tuple[str, Severity, int], ...] = ()  # (path, worst severity, findings), the worst first


def tally(record: Assessment, *, places: int = 0, least: Severity = Severity.INFO, worst_files: int = 0) -> Tally:
    """Every finding of the scan counted in one read, those at LEAST severity or above grouped (keeping PLACES
    findings' indices per group); with WORST_FILES, that many files with the most weight of findings."""
    gathered: dict[tuple[str, str], _Gathered] = {}
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    by_severity: Counter[Severity] = Counter()
    by_category: Counter[str] = Counter()
    by_file: _Files | _InOrder = _InOrder(worst_files)
    component = record.context.component
    findings = record.result.findings
    for index, finding in enumerate(findings):
        name = component(finding.path)
        if finding.severity >= least:
            _gather(gathered, (name, finding.rule), index, finding, places)
        kinds[name][finding.category] += 1
        by_severity[finding.severity] += 1
        by_category[finding.category] += 1
        by_file.add(finding)
    if isinstance(by_file, _InOrder) and by_file.unordered:  # findings not in report order (made by hand): by path
        by_file = _Files(weighed=worst_files > 0)
        for finding in findings:
            by_file.add(finding)
    titles = _titles(record, kinds)
    named = [c.name for c in record.risk.components]
    order = [n for n in named if n in kinds] + sorted(set(kinds) - set(named))
    return Tally(_sorted(gathered, titles), titles, tuple(order), by_severity, by_category, by_file.files,
                 by_file.worst_files(worst_files))


class _InOrder:
    """_Files for findings in report order, path first, so each file's come together: a file at a time, then only
    the KEPT of most weight so far (a dict of every file of a large tree grew with it). UNORDERED once a path comes
    after a greater one: the counts are then not those of _Files."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self.files = 0
        self.unordered = False
        self.path: str | None = None
        self.count = self.weight = 0
        self.worst = Severity.INFO
        self.heaviest: list[tuple[int, int, str, Severity, int]] = []  # (weight, -files before, path, worst, count)

    def add(self, finding: Finding) -> None:
        path = finding.path
        if path != self.path:
            if self.path is not None:
                self.unordered = self.unordered or path < self.path
                self._close()
            self.path, self.count, self.weight, self.worst = path, 0, 0, Severity.INFO
            self.files += 1
        self.count += 1
        if self.kept:
            self.weight += 4 ** int(finding.severity)
            self.worst = max(self.worst, finding.severity)

    def _close(self) -> None:
        if not self.kept or self.path is None:
            return
        entry = (self.weight, -self.files, self.path, self.worst, self.count)
        if len(self.heaviest) < self.kept:
            heapq.heappush(self.heaviest, entry)
        elif entry[:2] > self.heaviest[0][:2]:
            heapq.heapreplace(self.heaviest, entry)

    def worst_files(self, count: int) -> tuple[tuple[str, Severity, int], ...]:
        """The COUNT (as KEPT) files of most weight (of equals, the first seen): what _Files.worst_files gives."""
        if not count:
            return ()
        self._close()
        self.path = None
        return tuple((path, worst, found) for _, _, path, worst, found in sorted(self.heaviest, reverse=True)[:count])


class _Files:
    """Per file with findings: how many and, WEIGHED, the worst severity and the weight (4 ** severity, summed)."""

    def __init__(self, *, weighed: bool) -> None:
        self.weighed = weighed
        self.count: Counter[str] = Counter()
        self.weight: Counter[str] = Counter()
        self.worst: dict[str, Severity] = {}

    def add(self, finding: Finding) -> None:
        path = finding.path
        self.count[path] += 1
        if self.weighed:
            self.weight[path] += 4 ** int(finding.severity)
            self.worst[path] = max(self.worst.get(path, Severity.INFO), finding.severity)

    @property
    def files(self) -> int:
        return len(self.count)

    def worst_files(self, count: int) -> tuple[tuple[str, Severity, int], ...]:
        """The COUNT files of most weight (of equals, the first seen)."""
        if not count:
            return ()
        return tuple((path, self.worst[path], self.count[path]) for path, _ in self.weight.most_common(count))


def placed(findings: Sequence[Finding], group: Group) -> list[Finding]:
    """The findings GROUP keeps the places of, read from FINDINGS (those the tally read) in order."""
    return [findings[i] for i in group.places]


def _gather(gathered: dict[tuple[str, str], _Gathered], key: tuple[str, str], index: int, finding: Finding,
            places: int) -> None:
    group = gathered.get(key)
    if group is None:
        gathered[key] = _Gathered(index, finding, places)
    else:
        group.add(index, finding)


def _sorted(gathered: dict[tuple[str, str], _Gathered], titles: dict[str, str]) -> tuple[Group, ...]:
    found = [Group(name, titles[name], rule, g.first, g.count, g.worst, g.places,
                   frozenset(g.renames) if g.renames is not None else None)
             for (name, rule), g in gathered.items()]
    return tuple(sorted(found, key=lambda g: (-g.severity, -g.count, g.component, g.rule)))


def _titles(record: Assessment, kinds: dict[str, Counter[str]]) -> dict[str, str]:
    """Each component's title: from its work where it has some, else from KINDS, its findings' categories counted."""
    # a component's required work names it, not the optional part of it (an extra's packages) listed after
    titles = {c.name: components.title(c) for c in reversed(record.risk.components)}
    for name, counted in kinds.items():
        if name not in titles:
            titles[name] = components.name_title(name, tuple(c for c, _ in counted.most_common()))
    return titles
