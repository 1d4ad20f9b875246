"""A component whose kernel code is mostly blocker work (inline PTX: mma.sync, ldmatrix, cp.async, lop3) is a
rewrite for ROCm, not a port of a few places: the score it floors the project at; pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from migrate.finding_status import Context
from migrate.model import Finding, Severity
from migrate.weights import Weights

_KERNEL_SOURCES = (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl")


class _Unit(Protocol):
    """A component of risk.py, as far as the floor reads it."""

    @property
    def name(self) -> str: ...
    @property
    def blocked(self) -> bool: ...
    @property
    def optional(self) -> bool: ...


def candidates(components: Iterable[_Unit], program: str | None) -> list[str]:
    """The components the floor reads: the required blocked ones; of a collection, the PROGRAM that prices it."""
    if program is not None:
        return [program]
    return [c.name for c in components if c.blocked and not c.optional]


@dataclass
class _Tally:
    """One component's remaining kernel work: its files, those with a blocker, the blockers' effort and rules."""

    files: set[str] = field(default_factory=set)
    blocked: set[str] = field(default_factory=set)
    days: float = 0.0
    rules: dict[str, int] = field(default_factory=dict)


class Kernels:
    """Each component's remaining kernel work, tallied during the one read of the priced findings."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.tallies: dict[str, _Tally] = {}

    def add(self, finding: Finding, status: str, low: float, high: float) -> None:
        """One priced finding: a C/C++/CUDA one with remaining work counts its file, a blocker its effort."""
        if status != "remaining" or not finding.path.endswith(_KERNEL_SOURCES):
            return
        tally = self.tallies.setdefault(self.context.component(finding.path), _Tally())
        tally.files.add(finding.path)
        if finding.severity is Severity.BLOCKER:
            tally.blocked.add(finding.path)
            tally.days += (low + high) / 2
            tally.rules[finding.rule] = tally.rules.get(finding.rule, 0) + 1

    def floor(self, candidates: Iterable[str], weights: Weights) -> list[tuple[int, str]]:
        """The rewrite floor (score, why) of the CANDIDATES components (required and blocked): one whose C/C++/CUDA
        files with remaining work are at least `file_share` files with a blocker, with `blockers` blocker places and
        more, `blocker_days` (midpoint) of work and more. Never in code that already runs on ROCm, nor in kernels a
        separate ROCm backend replaces."""
        rule, context = weights.rewrite, self.context
        names = {c for c in candidates if rule.floor and c not in context.replaced and not _runs(c, context, weights)}
        found = [(name, t) for name, t in sorted(self.tallies.items())
                 if name in names and t.days >= rule.blocker_days and sum(t.rules.values()) >= rule.blockers
                 and len(t.blocked) >= rule.file_share * len(t.files)]
        if not found:
            return []
        name, tally = max(found, key=lambda item: item[1].days)
        rules = ", ".join(sorted(tally.rules, key=lambda r: -tally.rules[r]))
        return [(rule.floor, f"a rewrite: {len(tally.blocked)} of the {len(tally.files)} files with work in {name} "
                             f"are blocker code ({rules}), {tally.days:.1f} engineer-days of it")]


def _runs(name: str, context: Context, weights: Weights) -> bool:
    return context.level == "supported" or context.runs(name, weights)
