"""Findings + weights (rules/data/risk.yaml) -> risk score, effort range, verdict, drivers; pure."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml

from migrate import targets
from migrate.errors import RuleFileError
from migrate.model import CATEGORIES, Finding, Rule, ScanResult, Severity

VERDICTS = ("trivial", "easy", "moderate", "hard", "very-hard")


@dataclass(frozen=True)
class Category:
    """How one category weighs, reads and where it falls in the checklist."""

    factor: float
    label: str
    phase: str


@dataclass(frozen=True)
class Phase:
    """One step of the porting checklist."""

    id: str
    title: str
    hint: str


@dataclass(frozen=True)
class Weights:
    """The model's parameters, as read from rules/data/risk.yaml."""

    severity_days: Mapping[Severity, tuple[float, float]]
    categories: Mapping[str, Category]
    mechanical_max: Severity
    mechanical_exponent: float
    repeat_exponent: float
    repeat_floor: float
    phase_scope: Mapping[str, str]
    vendored_factor: float
    guarded_credit: float
    scale_days: float
    floors: Mapping[Severity, int]
    verdicts: tuple[tuple[str, int], ...]
    drivers: int
    phases: tuple[Phase, ...]


@dataclass(frozen=True)
class Effort:
    """An effort range in engineer-days."""

    low: float = 0.0
    high: float = 0.0

    @property
    def mid(self) -> float:
        return (self.low + self.high) / 2

    def __add__(self, other: Effort) -> Effort:
        return Effort(self.low + other.low, self.high + other.high)

    def scaled(self, factor: float) -> Effort:
        return Effort(self.low * factor, self.high * factor)

    def to_dict(self) -> dict[str, float]:
        return {"low": round(self.low, 2), "high": round(self.high, 2)}


@dataclass(frozen=True)
class Rollup:
    """Effort and findings summed over one file, directory or category."""

    key: str
    findings: int
    files: int
    worst: Severity
    effort: Effort
    share: float  # of the total midpoint effort, 0..1


@dataclass(frozen=True)
class Driver:
    """One of the few things that dominate the effort, in a sentence."""

    category: str
    files: int
    findings: int
    share: float
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category, "files": self.files, "findings": self.findings,
            "share": round(self.share, 2), "text": self.text,
        }


@dataclass(frozen=True)
class Risk:
    """The assessment of one set of findings."""

    score: int
    verdict: str
    effort: Effort
    blockers: int
    blocker_effort: Effort
    guarded: int
    drivers: tuple[Driver, ...]
    by_category: tuple[Rollup, ...]
    by_file: tuple[Rollup, ...]
    by_directory: tuple[Rollup, ...]


@dataclass(frozen=True)
class ChecklistItem:
    """One phase of the port that this repository needs, with the files it touches."""

    phase: Phase
    findings: int
    paths: tuple[str, ...]
    effort: Effort


@cache
def load_weights(path: Path | None = None) -> Weights:
    """The weights from PATH (default: the built-in rules/data/risk.yaml), validated."""
    from migrate.ruleset import data_path

    source = path or data_path("risk.yaml")
    try:
        raw = yaml.safe_load(source.read_text(encoding="utf-8"))
        return _weights(raw)
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as exc:
        raise RuleFileError(f"{source}: invalid risk weights: {exc}") from None


def _weights(raw: dict[str, Any]) -> Weights:
    categories = {name: _category_weights(name, c) for name, c in raw["categories"].items()}
    missing = set(CATEGORIES) - set(categories)
    if missing:
        raise ValueError(f"categories missing: {', '.join(sorted(missing))}")
    phases = tuple(Phase(p["id"], p["title"], p["hint"]) for p in raw["phases"])
    unknown = {c.phase for c in categories.values()} - {p.id for p in phases}
    if unknown:
        raise ValueError(f"unknown phase(s): {', '.join(sorted(unknown))}")
    verdicts = tuple((str(k), int(v)) for k, v in raw["verdicts"].items())
    if tuple(k for k, _ in verdicts) != VERDICTS or [v for _, v in verdicts] != sorted(v for _, v in verdicts):
        raise ValueError(f"verdicts must be {', '.join(VERDICTS)} with increasing scores")
    return Weights(
        severity_days={Severity.parse(k): (float(v[0]), float(v[1])) for k, v in raw["severity_days"].items()},
        categories=categories,
        mechanical_max=Severity.parse(raw["mechanical"]["max_severity"]),
        mechanical_exponent=float(raw["mechanical"]["exponent"]),
        repeat_exponent=float(raw["repeats"]["exponent"]),
        repeat_floor=float(raw["repeats"]["floor"]),
        phase_scope={str(k): str(v) for k, v in raw["repeats"]["scope"].items()},
        vendored_factor=float(raw["vendored_factor"]),
        guarded_credit=float(raw["guarded_credit"]),
        scale_days=float(raw["score"]["scale_days"]),
        floors={Severity.parse(k): int(v) for k, v in raw["score"]["floors"].items()},
        verdicts=verdicts,
        drivers=int(raw["drivers"]),
        phases=phases,
    )


def _category_weights(name: str, raw: dict[str, Any]) -> Category:
    if set(raw) != {"factor", "label", "phase"}:
        raise ValueError(f"category {name}: expected keys factor, label, phase (got {', '.join(map(str, raw))})")
    return Category(float(raw["factor"]), str(raw["label"]), str(raw["phase"]))


def assess(findings: Iterable[Finding], weights: Weights, *, guarded: int = 0) -> Risk:
    """Score FINDINGS (GUARDED more already sit behind HIP guards) with WEIGHTS."""
    items = _ordered(findings)
    costs = finding_efforts(items, weights, guarded=guarded)
    total = sum(costs.values(), Effort())
    worst = max((f.severity for f in items), default=Severity.INFO)
    score = _score(total, worst, weights)
    blockers = [f for f in items if f.severity == Severity.BLOCKER]
    by_category = _rollup(items, costs, total, lambda f: f.category)
    return Risk(
        score=score,
        verdict=verdict(score, weights),
        effort=total,
        blockers=len(blockers),
        blocker_effort=sum((costs[f] for f in blockers), Effort()),
        guarded=guarded,
        drivers=_drivers(by_category, weights),
        by_category=by_category,
        by_file=_rollup(items, costs, total, lambda f: f.path),
        by_directory=_rollup(items, costs, total, directory),
    )


def assess_result(result: ScanResult, weights: Weights | None = None) -> Risk:
    """The assessment of a whole scan (computed once per result when the built-in weights are used)."""
    if weights is None or weights is load_weights():
        return _assess_builtin(result)
    return assess(result.findings, weights, guarded=result.guarded)


@lru_cache(maxsize=4)
def _assess_builtin(result: ScanResult) -> Risk:
    return assess(result.findings, load_weights(), guarded=result.guarded)


def _ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Distinct findings in report order."""
    return sorted(set(findings), key=Finding.key)


def finding_efforts(findings: Iterable[Finding], weights: Weights, *, guarded: int = 0) -> dict[Finding, Effort]:
    """Each finding's share of the effort: severity range x category factor, with repeats damped."""
    items = _ordered(findings)
    credit = 1 - weights.guarded_credit * guarded / (guarded + len(items)) if items else 1.0
    groups: dict[tuple[str, ...], list[Finding]] = defaultdict(list)
    for finding in items:
        groups[_repeat_group(finding, weights)].append(finding)
    costs: dict[Finding, Effort] = {}
    for key, group in groups.items():
        single = {f: _single(f, weights).scaled(credit) for f in group}
        if key[0] == "vendored":
            costs.update(_once(single))
        elif key[0] == "mechanical":
            costs.update(_damped(single, weights.mechanical_exponent, 0.0))
        else:
            costs.update(_damped(single, weights.repeat_exponent, weights.repeat_floor))
    return costs


def _single(finding: Finding, weights: Weights) -> Effort:
    """A rule's own effort range if it sets one, else severity range x category factor."""
    vendored = weights.vendored_factor if finding.vendored else 1.0
    if finding.effort is not None:
        return Effort(*finding.effort).scaled(vendored)
    low, high = weights.severity_days[finding.severity]
    factor = weights.categories[_category(finding, weights)].factor
    return Effort(low, high).scaled(factor * vendored)


def _repeat_group(finding: Finding, weights: Weights) -> tuple[str, ...]:
    """Vendored code and renames repeat per rule; other work per rule or per file and category, as its
    phase's scope says."""
    if finding.vendored:
        return ("vendored", finding.rule)
    if finding.severity <= weights.mechanical_max:
        return ("mechanical", finding.rule)
    category = _category(finding, weights)
    if weights.phase_scope.get(weights.categories[category].phase) == "rule":
        return ("rule", finding.rule)
    return ("file", finding.path, category)


def _damped(single: dict[Finding, Effort], exponent: float, floor: float) -> dict[Finding, Effort]:
    """The k-th costliest of a group counts max((k+1)**e - k**e, floor) times; the total is shared pro rata."""
    ratios = []
    for values in ([e.low for e in single.values()], [e.high for e in single.values()]):
        values.sort(reverse=True)
        plain = sum(values)
        damped = sum(v * max((k + 1) ** exponent - k**exponent, floor) for k, v in enumerate(values))
        ratios.append(damped / plain if plain else 0.0)
    return {f: Effort(e.low * ratios[0], e.high * ratios[1]) for f, e in single.items()}


def _once(single: dict[Finding, Effort]) -> dict[Finding, Effort]:
    """A group that costs what its costliest finding costs (a vendored library is replaced once, not
    ported line by line), shared pro rata."""
    ratios = []
    for values in ([e.low for e in single.values()], [e.high for e in single.values()]):
        plain = sum(values)
        ratios.append(max(values) / plain if plain else 0.0)
    return {f: Effort(e.low * ratios[0], e.high * ratios[1]) for f, e in single.items()}


def verdict(score: int, weights: Weights) -> str:
    """The verdict whose lowest score SCORE reaches."""
    return [name for name, lowest in weights.verdicts if score >= lowest][-1]


def directory(finding: Finding) -> str:
    """The directory of a finding's file, '.' for the repository root."""
    parent = finding.path.rpartition("/")[0]
    return parent or "."


def checklist(
    findings: Iterable[Finding], weights: Weights, *, gfx_targets: tuple[str, ...] = (), guarded: int = 0
) -> tuple[ChecklistItem, ...]:
    """The phases of the port these findings need, in order; blockers apart; validation always last."""
    everything = _ordered(findings)
    costs = finding_efforts(everything, weights, guarded=guarded)
    items = [f for f in everything if f.severity > Severity.INFO]  # info needs no action
    by_phase: dict[str, list[Finding]] = defaultdict(list)
    for finding in items:
        by_phase[phase_of(finding, weights)].append(finding)
    result = []
    for phase in weights.phases:
        found = by_phase.get(phase.id, [])
        if phase.id == "validate" and items:
            hint = f"{phase.hint.rstrip('.')} ({', '.join(gfx_targets)})." if gfx_targets else phase.hint
            result.append(ChecklistItem(replace(phase, hint=hint), 0, (), Effort()))
        elif found:
            paths = tuple(sorted({f.path for f in found}))
            result.append(ChecklistItem(phase, len(found), paths, sum((costs[f] for f in found), Effort())))
    return tuple(result)


def phase_of(finding: Finding, weights: Weights) -> str:
    """The checklist phase of a finding: blockers apart, the rest by category."""
    if finding.severity == Severity.BLOCKER:
        return "blockers"
    return weights.categories[_category(finding, weights)].phase


def label(category: str, weights: Weights) -> str:
    """The words for a category in prose."""
    return weights.categories[category].label if category in weights.categories else category


def severity_for_target(finding: Finding, rule: Rule | None, gfx_targets: tuple[str, ...], gfx: str) -> Severity:
    """A warp-size finding's severity on one target; the scan resolved it for the worst of GFX_TARGETS."""
    if rule is None or not rule.by_wavefront or not gfx_targets:
        return finding.severity
    table = dict(rule.by_wavefront)
    worst = max(table.get(targets.wavefront_size(t), rule.severity) for t in gfx_targets)
    if finding.severity != worst:  # set by the matcher or a user override: not ours to re-resolve
        return finding.severity
    return table.get(targets.wavefront_size(gfx), rule.severity)


def per_target(
    result: ScanResult, rules: Mapping[str, Rule] | None = None, weights: Weights | None = None
) -> tuple[tuple[str, Risk], ...]:
    """The assessment on each target GPU (RULES by id give the wavefront tables; default built-in)."""
    weights = weights or load_weights()
    if rules is None:
        from migrate.ruleset import load_builtin

        rules = {r.id: r for r in load_builtin().rules}
    entries = []
    for gfx in result.targets:
        findings = [
            replace(f, severity=severity_for_target(f, rules.get(f.rule), result.targets, gfx)) for f in result.findings
        ]
        entries.append((gfx, assess(findings, weights, guarded=result.guarded)))
    return tuple(entries)


def format_days(effort: Effort, *, short: bool = False) -> str:
    """An effort range for people: '0.5-2 engineer-days' (or '0.5-2 d')."""
    low, high = (_short(v) for v in (effort.low, effort.high))
    span = low if low == high else f"{low}-{high}"
    if short:
        return f"{span} d"
    return f"{span} engineer-day" + ("" if high == "1" else "s")


def _short(days: float) -> str:
    if days >= 10:
        return str(round(days))
    return f"{days:.1f}".rstrip("0").rstrip(".") if days >= 0.95 else f"{days:.2f}".rstrip("0").rstrip(".")


def _category(finding: Finding, weights: Weights) -> str:
    return finding.category if finding.category in weights.categories else "other"


def _score(total: Effort, worst: Severity, weights: Weights) -> int:
    raw = 100 * (1 - math.exp(-total.mid / weights.scale_days))
    floor = max((v for s, v in weights.floors.items() if s <= worst), default=0)
    return max(floor, min(100, round(raw)))


def _rollup(items: list[Finding], costs: Mapping[Finding, Effort], total: Effort, key: Any) -> tuple[Rollup, ...]:
    groups: dict[str, list[Finding]] = defaultdict(list)
    for finding in items:
        groups[key(finding)].append(finding)
    rollups = []
    for name, group in groups.items():
        effort = sum((costs[f] for f in group), Effort())
        share = effort.mid / total.mid if total.mid else 0.0
        worst = max(f.severity for f in group)
        rollups.append(Rollup(name, len(group), len({f.path for f in group}), worst, effort, share))
    return tuple(sorted(rollups, key=lambda r: (-r.effort.mid, -r.worst, -r.findings, r.key)))


def _drivers(by_category: tuple[Rollup, ...], weights: Weights) -> tuple[Driver, ...]:
    drivers = []
    for rollup in by_category[: weights.drivers]:
        if rollup.effort.mid <= 0:
            break
        drivers.append(Driver(rollup.key, rollup.files, rollup.findings, rollup.share, _driver_text(rollup, weights)))
    return tuple(drivers)


def _driver_text(rollup: Rollup, weights: Weights) -> str:
    files = f"{rollup.files} file" + ("s" if rollup.files != 1 else "")
    verb = "carries" if rollup.files == 1 else "carry"
    findings = f"{rollup.findings} finding" + ("s" if rollup.findings != 1 else "")
    return f"{files} with {label(rollup.key, weights)} {verb} {round(rollup.share * 100)}% of the effort ({findings})"
