"""Findings of one rule in one component collapse to one row: the count, the first place, the rest folded; pure."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from migrate.assessment import Assessment
from migrate.model import Finding, Severity
from migrate.report import components


@dataclass(frozen=True)
class Group:
    """The findings of one rule in one component, in report order."""

    component: str
    title: str  # what the component is, and where: 'custom ops/kernels (csrc/)'
    rule: str
    findings: tuple[Finding, ...]

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def rest(self) -> tuple[Finding, ...]:
        return self.findings[1:]

    @property
    def severity(self) -> Severity:
        return max(f.severity for f in self.findings)

    @property
    def category(self) -> str:
        return self.first.category


def groups(record: Assessment, findings: Iterable[Finding] | None = None) -> list[Group]:
    """FINDINGS (default: every finding of the scan) by component and rule: the worst, then the largest, first."""
    chosen = record.result.findings if findings is None else tuple(findings)
    by_key: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in chosen:
        by_key[(record.context.component(finding.path), finding.rule)].append(finding)
    titles = titles_of(record)
    found = [Group(name, titles[name], rule, tuple(members)) for (name, rule), members in by_key.items()]
    return sorted(found, key=lambda g: (-g.severity, -len(g.findings), g.component, g.rule))


@dataclass(frozen=True)
class Row:
    """A Group in short, as the terminal shows it: its first finding, how many it holds and the worst severity."""

    component: str
    title: str
    rule: str
    first: Finding
    count: int
    severity: Severity


def rows(record: Assessment, findings: Iterable[Finding]) -> list[Row]:
    """The groups of FINDINGS in the order groups gives, each kept as a Row: no list of the findings (a large scan
    reads them back from disk, and its medium ones number in the hundred thousands)."""
    firsts: dict[tuple[str, str], Finding] = {}
    counts: Counter[tuple[str, str]] = Counter()
    worst: dict[tuple[str, str], Severity] = {}
    for finding in findings:
        key = (record.context.component(finding.path), finding.rule)
        firsts.setdefault(key, finding)
        counts[key] += 1
        worst[key] = max(worst.get(key, finding.severity), finding.severity)
    titles = titles_of(record)
    found = [Row(name, titles[name], rule, first, counts[name, rule], worst[name, rule])
             for (name, rule), first in firsts.items()]
    return sorted(found, key=lambda r: (-r.severity, -r.count, r.component, r.rule))


def titles_of(record: Assessment) -> dict[str, str]:
    """Each component's title: from its work where it has some, else from the kinds of its findings."""
    # a component's required work names it, not the optional part of it (an extra's packages) listed after
    titles = {c.name: components.title(c) for c in reversed(record.risk.components)}
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    for finding in record.result.findings:
        name = record.context.component(finding.path)
        if name not in titles:
            kinds[name][finding.category] += 1
    for name, counted in kinds.items():
        titles[name] = components.name_title(name, tuple(c for c, _ in counted.most_common()))
    return titles


def order(record: Assessment) -> list[str]:
    """Component names, the costliest first, then those without work by name."""
    named = [c.name for c in record.risk.components]
    others = sorted({record.context.component(f.path) for f in record.result.findings} - set(named))
    return named + others
