"""Findings + weights (rules/data/risk.yaml) -> risk score, effort range, verdict, drivers; pure."""

from __future__ import annotations

import math
import re
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, overload

from migrate import rewrite, targets
from migrate.discover import FORTRAN_SUFFIXES
from migrate.finding_status import Context, is_c, is_kernel_work, status_of
from migrate.model import Finding, InReportOrder, Rule, ScanResult, Severity, ordered
from migrate.ruleset import load_builtin
from migrate.weights import Phase, Weights, category_of, load_weights, on_main_path, role_of

_MNEMONIC = re.compile(r"\b([a-z][a-z0-9]*(?:\.[a-z0-9_]+)+)")
_PROPER = frozenset({"remaining", "optional-gap"})  # statuses that cost effort


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
    component: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component, "category": self.category, "files": self.files, "findings": self.findings,
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
    by_directory: tuple[Rollup, ...]
    components: tuple[Component, ...] = ()
    optional: Effort = Effort()  # CUDA-only add-ons of a supported repository: not part of the verdict
    collection: Collection | None = None
    total: Effort = Effort()  # every remaining finding, also when a collection reports one program's
    basis: str = ""  # what decided the score: the effort, or the floor that raised it, in words


@dataclass(frozen=True)
class ChecklistItem:
    """One phase of the port that this repository needs, with the files it touches."""

    phase: Phase
    findings: int
    paths: tuple[str, ...]
    effort: Effort


@dataclass(frozen=True)
class Component:
    """One build unit's remaining work: its findings, rules and effort."""

    name: str
    findings: int
    files: int
    rules: tuple[str, ...]
    categories: tuple[str, ...]
    effort: Effort
    blocked: bool
    optional: bool
    main: Effort = Effort()  # the part of its effort on the main path (not in examples/, tests/ or other roles)

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.name, "findings": self.findings, "files": self.files, "rules": list(self.rules),
            "categories": list(self.categories), "effort_days": self.effort.to_dict(), "blocked": self.blocked,
            "optional": self.optional,
        }


@dataclass(frozen=True)
class Collection:
    """A repository of independent programs: how many, the median program's effort, the effort most programs stay
    within (the `collection_percentile` program, which prices the collection), the blocked ones."""

    programs: int
    median: Effort
    blocked: tuple[str, ...]
    typical: Effort = Effort()
    percentile: float = 0.5

    def to_dict(self) -> dict[str, Any]:
        return {"programs": self.programs, "median_effort_days": self.median.to_dict(),
                "percentile": self.percentile, "percentile_effort_days": self.typical.to_dict(),
                "blocked": list(self.blocked)}


@dataclass(frozen=True)
class Priced:
    """Findings ordered, with what prices them: what assess and checklist read (a scan's assessment asks both, and
    each finding's effort, of the same findings). The prices are kept per (component, rule) group, not per finding:
    each finding's status and effort are worked out again as it is read (a large scan's findings come back from
    disk, and state by index grew with them)."""

    every: Sequence[Finding]  # distinct, in report order
    prices: Prices
    context: Context  # the context that has seen them
    guarded: int
    _read: _Answers = field(default_factory=lambda: _Answers(), compare=False, repr=False)

    def each(self) -> Iterator[tuple[Finding, str, float, float]]:
        """Each finding with its status and effort (low, high), in report order: one read of the findings. The
        first read that goes to the end keeps the answers by index (17 bytes a finding): the assessment reads them
        four times."""
        answers, price = self._read, self.prices.of
        if answers.complete:
            names = answers.names
            yield from zip(self.every, (names[code] for code in answers.statuses), answers.lows, answers.highs)
            return
        if answers.filling:  # a read inside another that has not ended: worked out again
            for finding in self.every:
                yield finding, *price(finding)
            return
        answers.clear()
        answers.filling, keep = True, answers.add
        try:
            for finding in self.every:
                status, low, high = price(finding)
                keep(status, low, high)
                yield finding, status, low, high
            answers.complete = True
        finally:
            answers.filling = False


class _Answers:
    """Priced.each's answers, by index: a status code each and the efforts in arrays (no object per finding)."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.complete = self.filling = False
        self.names: list[str] = []
        self.codes: dict[str, int] = {}
        self.statuses = bytearray()
        self.lows = array("d")
        self.highs = array("d")

    def add(self, status: str, low: float, high: float) -> None:
        code = self.codes.get(status)
        if code is None:
            code = self.codes[status] = len(self.names)
            self.names.append(status)
        self.statuses.append(code)
        self.lows.append(low)
        self.highs.append(high)


def pricing(
    findings: Iterable[Finding] | Priced, weights: Weights, *, guarded: int = 0, context: Context | None = None
) -> Priced:
    """FINDINGS (GUARDED more already sit behind HIP guards) ordered and priced with WEIGHTS in CONTEXT (the
    project's build units and ROCm status; default: none known)."""
    if isinstance(findings, Priced):
        return findings
    every = ordered(findings)
    context = (context or Context()).seeing(every, weights)
    return Priced(every, _efforts(every, weights, guarded, context), context, guarded)


def assess(
    findings: Iterable[Finding] | Priced, weights: Weights, *, guarded: int = 0, context: Context | None = None
) -> Risk:
    """Score FINDINGS (GUARDED more already sit behind HIP guards) with WEIGHTS in CONTEXT (the project's
    build units and ROCm status; default: none known); findings already priced are read as they are."""
    scored = pricing(findings, weights, guarded=guarded, context=context)
    every, context, guarded = scored.every, scored.context, scored.guarded
    work = _Work(weights)
    kernels = rewrite.Kernels(context)
    for finding, status, low, high in scored.each():  # one read for the components, the sums and the rollups
        work.add(finding, status, low, high, context)
        kernels.add(finding, status, low, high)
    items: Iterable[Finding] = (
        _Remaining(scored) if scored.prices.weights is weights  # the statuses each() keeps: none worked out again
        else _Kept(every, lambda f: status_of(f, context, weights) == "remaining")
    )
    components = work.components()
    total = work.total.effort
    collection = _collection(components, context, weights)
    if collection is not None:
        # a few blocked programs do not make the collection hard: the floors read the program that prices it
        program = _at_percentile(_programs(components, context), weights.collection_percentile)
        name = program.name
        floored: Iterable[Finding] = _Kept(items, lambda f: context.component(f.path) == name)
        effort, priced = collection.typical, f"the program 9 in 10 stay within ({program.name})"
        program_name: str | None = name
    else:
        floored, program_name = items, None
        effort, priced = _led(components, weights)
    reasons = [(_effort_score(effort, weights), f"{priced}: {format_days(effort)}")]
    reasons += _severity_floor(floored, context, weights)
    reasons += _project_floors(every, items, context, weights, program_name)
    reasons += kernels.floor(rewrite.candidates(components, program_name), weights)
    score, basis = max(reasons, key=lambda r: r[0])  # the first of equals: effort before any floor
    by_category, by_directory = (_rolled_up(by_key, total) for by_key in work.rollups)
    return Risk(
        score=score,
        basis=basis,
        verdict=verdict(score, weights),
        effort=collection.typical if collection is not None else total,
        blockers=work.blockers.count,
        blocker_effort=work.blockers.effort,
        guarded=guarded,
        drivers=_drivers(components, weights),
        by_category=by_category,
        by_directory=by_directory,
        components=components,
        optional=work.optional.effort,
        collection=collection,
        total=total,
    )


def _led(components: tuple[Component, ...], weights: Weights) -> tuple[Effort, str]:
    """The effort the score reads, in words: the hardest required component's, plus `others_share` of the rest. Work
    off the main path by role (examples/, tests/, benchmarks/, a convert-to-TensorRT script) only adds its share,
    never leads: an expert judges the project by what its users run."""
    required = [c for c in components if not c.optional]
    total = sum((c.effort for c in required), Effort())
    lead = max(required, key=lambda c: c.main.mid, default=None)
    main = sum((c.main for c in required), Effort())
    off = Effort(total.low - main.low, total.high - main.high).scaled(weights.off_path_share)
    if lead is None or lead.main.mid <= 0:
        if total.mid <= 0:
            return total, "the remaining work"
        return off, f"{round(weights.off_path_share * 100)}% of the work, all off the main path"
    rest = Effort(main.low - lead.main.low, main.high - lead.main.high)
    if rest.mid <= 1e-9 and off.mid <= 1e-9:
        return total, "the remaining work"
    hardest = "the repository root" if lead.name == "." else lead.name
    parts = [f"{round(weights.others_share * 100)}% of the others"] if rest.mid > 1e-9 else []
    if off.mid > 1e-9:
        parts.append(f"{round(weights.off_path_share * 100)}% of the work off the main path")
    words = f"the hardest component ({hardest}) and {', '.join(parts)}"
    return lead.main + rest.scaled(weights.others_share) + off, words


def _efforts(items: Sequence[Finding], weights: Weights, guarded: int, context: Context) -> Prices:
    """The prices of ITEMS (ordered, distinct): one decision per (component, rule) that grows slowly with its distinct
    APIs and files, plus a fixed cost per component with kernel work, each shared among its findings by their own
    cost; covered and guarded cost 0. One read of the findings (a large scan's come back from disk)."""
    prices = Prices(context, weights)
    sites = 0  # the findings that are sites of work or of CUDA code (not notes on the ROCm handling itself)
    for finding in items:
        prices.add(finding)
        sites += finding.rule not in weights.rocm_handling_rules
    credit = 1 - weights.guarded_credit * guarded / (guarded + sites) if sites else 1.0
    prices.settle(credit)
    return prices


class _Pool:
    """A cost shared among findings in proportion to their own (equally when all are free): their own costs summed
    in report order, how many, and once settled, the cost shared."""

    def __init__(self) -> None:
        self.count = 0
        self.low = self.high = 0.0  # their own costs, summed
        self.top_low = self.top_high = 0.0  # the costliest's
        self.runs = False  # a member's component already runs on ROCm
        self.total_low = self.total_high = 0.0

    def add(self, own: tuple[float, float]) -> None:
        self.low += own[0]
        self.high += own[1]
        self.top_low = own[0] if not self.count else max(self.top_low, own[0])
        self.top_high = own[1] if not self.count else max(self.top_high, own[1])
        self.count += 1

    def share(self, own: tuple[float, float]) -> tuple[float, float]:
        """A member's share of the total, by its own cost OWN."""
        even = 1 / self.count
        return (self.total_low * (own[0] / self.low if self.low else even),
                self.total_high * (own[1] / self.high if self.high else even))


class Prices:
    """Each finding's status and share of the effort, from what _efforts gathered a finding at a time: per
    (component, rule) group its findings' own costs and what its cost reads, per component with kernel work its
    heaviest path (state per group and component, none per finding)."""

    def __init__(self, context: Context, weights: Weights) -> None:
        self.context, self.weights = context, weights
        self.priced: dict[tuple[Severity, str, tuple[float, float] | None, bool], tuple[float, float]] = {}
        self.groups: dict[tuple[str, str, bool], _Pool] = {}
        self.shapes: dict[tuple[str, str, bool], _Shape] = {}
        self.kernels: dict[str, _Pool] = {}
        self.heaviest: dict[str, float] = {}  # a dev folder's build weighs less

    def add(self, finding: Finding) -> None:
        """Gather FINDING (each once, in report order, before settle)."""
        context, weights = self.context, self.weights
        if status_of(finding, context, weights) not in _PROPER:
            return
        own = self._single(finding)
        component = context.component(finding.path)
        key = _group_key(finding, component)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Pool()
        group.add(own)
        group.runs = group.runs or context.runs(component, weights)
        if finding.vendored:
            return
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes[key] = _Shape()
        shape.add(finding, weights)
        if self._kernel_work(finding, component):
            kernels = self.kernels.get(component)
            if kernels is None:
                kernels = self.kernels[component] = _Pool()
            kernels.add(own)
            path_weight = _path_weight(finding.path, weights)
            self.heaviest[component] = max(self.heaviest.get(component, path_weight), path_weight)

    def settle(self, credit: float) -> None:
        """Each group's and kernel component's cost, CREDIT (for the guarded sites) applied."""
        weights = self.weights
        for key, group in self.groups.items():
            low, high = _group_cost(self.shapes.get(key), (group.top_low, group.top_high), weights)
            factor = weights.supported_factor if group.runs else 1.0
            group.total_low, group.total_high = low * credit * factor, high * credit * factor
        fixed_low, fixed_high = weights.component_fixed
        for name, kernels in self.kernels.items():
            weight = self.heaviest[name] * credit
            kernels.total_low, kernels.total_high = fixed_low * weight, fixed_high * weight

    def of(self, finding: Finding) -> tuple[str, float, float]:
        """FINDING's status and its effort (low, high), as gathered."""
        context = self.context
        status = status_of(finding, context, self.weights)
        if status not in _PROPER:
            return status, 0.0, 0.0
        own = self._single(finding)
        component = context.component(finding.path)
        low, high = self.groups[_group_key(finding, component)].share(own)
        if not finding.vendored and self._kernel_work(finding, component):
            kernel_low, kernel_high = self.kernels[component].share(own)
            low += kernel_low
            high += kernel_high
        return status, low, high

    def _single(self, finding: Finding) -> tuple[float, float]:
        kind = (finding.severity, finding.category, finding.effort, finding.vendored)  # all that _single reads
        own = self.priced.get(kind)
        if own is None:
            own = self.priced[kind] = _single(finding, self.weights)
        return own

    def _kernel_work(self, finding: Finding, component: str) -> bool:
        return not self.context.runs(component, self.weights) and is_kernel_work(finding, self.weights)


def _group_key(finding: Finding, component: str) -> tuple[str, str, bool]:
    """The (component, rule) group of FINDING: a vendored tree (third_party/cutlass with its hundred example builds)
    is one decision per rule."""
    where = "/".join(finding.path.split("/")[:2]) if finding.vendored else component
    return where, finding.rule, finding.vendored


class _Sum:
    """Findings counted and their efforts added as they come, in report order."""

    def __init__(self) -> None:
        self.count = 0
        self.low = self.high = 0.0

    def add(self, low: float, high: float) -> None:
        self.count += 1
        self.low += low
        self.high += high

    @property
    def effort(self) -> Effort:
        return Effort(self.low, self.high)


class _Shape:
    """What a (component, rule) group's cost reads of its findings: their distinct files and APIs, the heaviest path."""

    def __init__(self) -> None:
        self.paths = _Distinct()  # its files, each its own unit
        self.units: set[str] = set()  # its directories' generated files, one unit each (a set: they interleave)
        self.apis: set[str] = set()
        self.weight: float | None = None

    def add(self, finding: Finding, weights: Weights) -> None:
        unit = _file_unit(finding.path, weights)
        if unit.endswith(_GENERATED):
            self.units.add(unit)
        else:
            self.paths.add(unit)
        self.apis.add(_api(finding))
        path_weight = _path_weight(finding.path, weights)
        self.weight = path_weight if self.weight is None else max(self.weight, path_weight)

    @property
    def files(self) -> int:
        """How many distinct file units."""
        return self.paths.count + len(self.units)


class _Distinct:
    """How many distinct paths were added, without a set of them: a group's findings come in report order, path
    first, so each path's come together (a set of them held every file of a large tree's groups until the end)."""

    __slots__ = ("count", "last")

    def __init__(self) -> None:
        self.count = 0
        self.last: str | None = None

    def add(self, path: str) -> None:
        if path != self.last:
            self.count += 1
            self.last = path


def _group_cost(shape: _Shape | None, top: tuple[float, float], weights: Weights) -> tuple[float, float]:
    """The costliest finding of a (component, rule) group (its own cost TOP) times min(cap, distinct ** exponent); a
    vendored group's (no SHAPE) is its costliest finding's."""
    top_low, top_high = top
    if shape is None:
        return top_low, top_high
    units = min(weights.unit_cap, max(shape.files, len(shape.apis)) ** weights.unit_exponent)
    factor = units * (shape.weight or 0.0)
    return top_low * factor, top_high * factor


def _path_weight(path: str, weights: Weights) -> float:
    role = role_of(path, weights)
    return 1.0 if role is None else role.factor


def _file_unit(path: str, weights: Weights) -> str:
    """A file, or one unit for all generated files of a directory (flash-attn's hundreds of instantiation stubs)."""
    folder, _, name = path.rpartition("/")
    return f"{folder}/{_GENERATED}" if weights.generated.search(name) else path


_GENERATED = "<generated>"  # a directory's generated files' unit (a file of that name too, to be counted the same)


def _api(finding: Finding) -> str:
    """What a finding uses: its symbol, else a PTX mnemonic in its line, else its rule."""
    if finding.symbol:
        return finding.symbol
    mnemonic = _MNEMONIC.search(finding.evidence) if finding.category == "inline-ptx" else None
    return mnemonic.group(1).split(".")[0] if mnemonic else finding.rule


def _single(finding: Finding, weights: Weights) -> tuple[float, float]:
    """A rule's own effort range if it sets one, else severity range x category factor."""
    vendored = weights.vendored_factor if finding.vendored else 1.0
    if finding.effort is not None:
        return finding.effort[0] * vendored, finding.effort[1] * vendored
    low, high = weights.severity_days[finding.severity]
    factor = weights.categories[category_of(finding, weights)].factor * vendored
    return low * factor, high * factor


class _Work:
    """What assess reads of the priced findings, gathered in one read of them: per component its remaining and its
    optional work, the sums (remaining, blockers, optional) and the rollups of the remaining work (each sum added
    in report order)."""

    def __init__(self, weights: Weights) -> None:
        self.weights = weights
        self.parts: dict[tuple[str, bool], _Parts] = {}
        self.total, self.blockers, self.optional = _Sum(), _Sum(), _Sum()
        self.rollups: tuple[dict[str, _Rolled], ...] = ({}, {})  # by category, by directory (by file: none read it)

    def add(self, finding: Finding, status: str, low: float, high: float, context: Context) -> None:
        if status not in _PROPER:
            return
        key = (context.component(finding.path), status == "optional-gap")
        part = self.parts.get(key)
        if part is None:
            part = self.parts[key] = _Parts()
        part.add(finding, low, high, self.weights)
        if status == "optional-gap":
            self.optional.add(low, high)
            return
        self.total.add(low, high)
        if finding.severity == Severity.BLOCKER:
            self.blockers.add(low, high)
        for name, by_key in zip(_KEYS, self.rollups):
            key_name = name(finding)
            rolled = by_key.get(key_name)
            if rolled is None:
                rolled = by_key[key_name] = _Rolled()
            rolled.add(finding, low, high)

    def components(self) -> tuple[Component, ...]:
        """Per component, its remaining and its optional work (an extra's packages apart from the main install),
        costliest first."""
        found = [
            Component(
                name=name, findings=part.effort.count, files=part.paths.count, rules=tuple(sorted(part.rules)),
                categories=tuple(c for c, _ in sorted(part.by_category.items(), key=lambda kv: (-kv[1], kv[0]))),
                effort=part.effort.effort, blocked=part.blocked, optional=optional, main=part.main.effort,
            )
            for (name, optional), part in self.parts.items()
        ]
        return tuple(sorted(found, key=lambda c: (c.optional, -c.effort.mid, c.name)))


class _Parts:
    """A component's findings as _Work reads them: effort in all and by category, files, rules, whether one blocks."""

    def __init__(self) -> None:
        self.effort = _Sum()
        self.by_category: dict[str, float] = defaultdict(float)
        self.paths = _Distinct()
        self.rules: set[str] = set()
        self.blocked = False
        self.main = _Sum()

    def add(self, finding: Finding, low: float, high: float, weights: Weights) -> None:
        self.effort.add(low, high)
        if on_main_path(finding.path, weights) and not _unfloored(finding, weights):
            self.main.add(low, high)
        self.by_category[finding.category] += (low + high) / 2 + 1e-9  # by effort; a free category still shows
        self.paths.add(finding.path)
        self.rules.add(finding.rule)
        self.blocked = self.blocked or finding.severity == Severity.BLOCKER


def _programs(components: tuple[Component, ...], context: Context) -> list[Component]:
    """The build units that are programs of their own: a unit that builds libraries only is part of a project."""
    return [c for c in components
            if not c.optional and c.name in context.build_dirs and c.name not in context.library_dirs]


def _collection(components: tuple[Component, ...], context: Context, weights: Weights) -> Collection | None:
    """Independent programs (each its own build unit) carrying most of the work: priced per program, by the
    program at `collection_percentile` (most programs take at most that; the hardest few are listed as blocked)."""
    programs = _programs(components, context)
    required = [c for c in components if not c.optional]
    if len(programs) < weights.collection_min or not required:
        return None
    if sum(c.effort.mid for c in programs) < 0.6 * sum(c.effort.mid for c in required):
        return None
    import statistics  # here: it costs `migrate check`, which never rolls up programs, 5 ms to import

    lows = statistics.median(c.effort.low for c in programs)
    highs = statistics.median(c.effort.high for c in programs)
    typical = _at_percentile(programs, weights.collection_percentile).effort
    blocked = tuple(sorted(c.name for c in programs if c.blocked))
    return Collection(len(programs), Effort(lows, highs), blocked, typical, weights.collection_percentile)


def _at_percentile(programs: list[Component], percentile: float) -> Component:
    """The program at PERCENTILE of effort, the hardest left out (the lower of two neighbours)."""
    ranked = sorted(programs, key=lambda c: (c.effort.mid, c.name))
    return ranked[int(percentile * (len(ranked) - 1))]


def _floor_severity(finding: Finding, weights: Weights) -> Severity:
    """The severity the floors read. A high finding is rework in code the project compiles (C/C++/CUDA) or in its
    build; in the environment (a CUDA-only package, a wheel index, an image) or in Python (one CUDA-only call or
    mode) it is one thing to replace, and floors as a medium one: the environment floors judge it. A build step in
    Python that compiles CUDA sources with nvcc itself (score.build_rework: a distutils compiler swap) is the build,
    rewritten for ROCm: its high finding floors as one."""
    if finding.severity == Severity.HIGH and finding.rule not in weights.build_rework_rules and (
            phase_of(finding, weights) == "environment" or _python(finding.path)):
        return Severity.MEDIUM
    return finding.severity


def _python(path: str) -> bool:
    return path.endswith((".py", ".pyi", ".ipynb"))


def _fortran(path: str) -> bool:
    """A Fortran source, by suffix (CUDA Fortran and OpenACC code of the project's own)."""
    return path.lower().endswith(FORTRAN_SUFFIXES)


Reason = tuple[int, str]  # a score the project reads at least, and why, in words for the report


def _severity_floor(items: Iterable[Finding], context: Context, weights: Weights) -> list[Reason]:
    """The highest floor a main-path finding's severity (as the floors read it) sets, citing the first that sets it.
    A finding in a component that already runs on ROCm (or anywhere in a supported repository, but in the kernels a
    separate ROCm backend replaces) reads the supported floors."""
    best, cited = 0, ""
    for finding in items:
        if not on_main_path(finding.path, weights) or _unfloored(finding, weights):
            continue
        severity = _floor_severity(finding, weights)
        floor = max((v for s, v in _floors(finding, context, weights).items() if s <= severity), default=0)
        if floor > best:
            best, cited = floor, f"a {severity.label} finding: {finding.rule} at {finding.path}:{finding.line}"
    return [(best, cited)] if best else []


def _unfloored(finding: Finding, weights: Weights) -> bool:
    """FINDING documents an opt-in deployment (a trtexec step in a README): its work counts as work off the main path,
    and its severity floors nothing."""
    return finding.category in weights.unfloored_categories and weights.unfloored_paths.search(finding.path) is not None


def _floors(finding: Finding, context: Context, weights: Weights) -> Mapping[Severity, int]:
    component = context.component(finding.path)
    if component in context.replaced:
        return weights.floors
    runs = context.level == "supported" or context.runs(component, weights)
    return weights.supported_floors if runs else weights.floors


def _project_floors(
    every: Sequence[Finding], items: Iterable[Finding], context: Context, weights: Weights, program: str | None = None
) -> list[Reason]:
    """The lowest scores the project as a whole reads, whatever its effort: GPU code of its own that a ROCm build
    compiles needs a build and a run (kernel_floor; not code only a CUDA build compiles, such as a source with a HIP
    twin); code with a CUDA-specific call to check is not a plain wheel swap (code_floor); one
    CUDA-only package or index to replace is easy, and so are two on the main path, three moderate (unless the
    repository already installs on ROCm); a CUDA-only install dependency keeps a supported repository moderate. In a
    collection (PROGRAM: the program that prices it) a library with no ROCm build counts only that program's files: four
    sample programs of a blog's CUDA Fortran series are not one code base built on it."""
    found: list[Reason] = []
    if any(_own_gpu_code(f, context, weights) for f in every):
        found.append((weights.kernel_floor, "GPU code of its own: a ROCm build and a validation run on the target"))
    includes: dict[str, set[str]] = defaultdict(set)  # filled in the same read of the findings
    replace, check, install, decisions, required, unported = _floor_findings(items, weights, context, includes)
    if replace is not None:
        found.append((weights.environment_floor, f"a CUDA-only package or call to replace: {replace.rule} at "
                                                 f"{replace.path}:{replace.line}"))
    if check is not None:
        found.append((weights.code_floor, f"CUDA-specific code to check: {check.rule} at {check.path}:{check.line}"))
    replaced = sorted(decisions - (_IMAGE_DECISIONS if context.rocm_image else set()))
    if context.level != "supported":
        steps = [floor for count, floor in weights.substitution_steps if len(replaced) >= count]
        if steps:
            found.append((max(steps), f"{len(replaced)} things to replace on the main path: {', '.join(replaced)}"))
    if context.level != "supported" and required is not None:
        pin, use = required
        pinned = "" if pin is use else f" at {pin.path}:{pin.line}"
        found.append((weights.required_floor, f"a CUDA-only package the main path cannot load without: {pin.rule}"
                                              f"{pinned}, imported at module level at {use.path}:{use.line}"))
    if program is not None:
        includes = defaultdict(set, {rule: {path for path in paths if context.component(path) == program}
                                     for rule, paths in includes.items()})
    included = _unported_includes(includes, weights)
    if context.level != "supported" and included is not None:
        rule, files = included
        what = _NO_ROCM_COMPILER.get(rule, "a library with no ROCm build the main path is built on")
        found.append((weights.unported_includes[rule], f"{what}: {rule} in {files} files"))
    if context.level != "supported" and unported is not None:
        found.append((weights.unported_floor, f"a package with no ROCm build the main path imports at module level: "
                                              f"{unported.rule} at {unported.path}:{unported.line}"))
    if context.level == "supported" and install is not None:
        found.append((weights.install_floor, f"a CUDA-only package among the install dependencies: {install.rule} at "
                                             f"{install.path}:{install.line}"))
    return found


# score.unported.includes rules that are a language rather than a library: what the reason says instead
_NO_ROCM_COMPILER = {"fortran-cuda-kernel": "GPU code in CUDA Fortran, which no ROCm compiler reads, on the main path"}


def _unported_includes(includes: Mapping[str, set[str]], weights: Weights) -> tuple[str, int] | None:
    """The rule of a library with no ROCm build (score.unported.includes: a C/C++ include, or a Python import of a
    simulator) whose findings sit in `include_files` main-path, non-vendored C/C++/CUDA or Python files and more
    (INCLUDES: its files by rule), with that count: of several, the one with the highest floor; None where none does."""
    held = [(rule, len(paths)) for rule, paths in sorted(includes.items()) if len(paths) >= weights.unported_include_files]
    return max(held, key=lambda found: weights.unported_includes[found[0]], default=None)


# What a ROCm container image the repository ships already decides: the image, and the PyTorch build inside it (a ROCm
# base image carries ROCm wheels), so a README's CUDA image and cu12x index are the CUDA variant of a choice made.
_IMAGE_DECISIONS = frozenset({"the container image", "torch-cuda-wheels"})


def _own_gpu_code(finding: Finding, context: Context, weights: Weights) -> bool:
    """FINDING is in GPU code of the project's own that a ROCm build compiles: C/C++/CUDA outside vendored trees, not
    guarded (a source only the CUDA build compiles: its HIP twin is what the ROCm build compiles), or a Triton kernel on
    the main path. Also where the repository already builds for ROCm: the expert rates each such repository of the
    development set easy, for the build and the run on the target a finished port still needs."""
    if finding.vendored or finding.status == "guarded" or finding.rule in weights.rocm_handling_rules:
        return False
    return (is_c(finding.path) or _fortran(finding.path)
            or (finding.category == "triton-kernel" and on_main_path(finding.path, weights)))


def _floor_findings(
    items: Iterable[Finding], weights: Weights, context: Context, includes: dict[str, set[str]]
) -> tuple[Finding | None, Finding | None, Finding | None, set[str], tuple[Finding, Finding] | None, Finding | None]:
    """In one read of ITEMS (a large scan's come back from disk each time): the first finding on the main path that
    is a CUDA-only package or call to replace, the first with CUDA-specific code to check, the first that blocks the
    install, the substitution decisions on the main path, a package the environment pins to a CUDA-only build
    (or that is CUDA-only itself) with a module-level import of it: (the pin, the import), and the first module-level
    import of a package with no ROCm build at all; the files of each library with no ROCm build go to INCLUDES."""
    replace = check = install = unported = None
    decisions: set[str] = set()
    pinned: dict[str, Finding] = {}  # substitute -> the first CUDA-only build of its package the environment installs
    imported: dict[str, Finding] = {}  # substitute -> the first module-level import of its package
    for f in items:
        if install is None and _blocks_install(f, weights):
            install = f
        if not on_main_path(f.path, weights):
            continue
        if f.rule in weights.unported_includes and not f.vendored and (is_c(f.path) or _python(f.path)
                                                                        or _fortran(f.path)):
            includes[f.rule].add(f.path)
        environment = phase_of(f, weights) == "environment"
        if replace is None and f.severity >= Severity.HIGH and (environment or _python(f.path)):
            replace = f
        if check is None and f.severity >= Severity.MEDIUM and not environment and not _dual_build(f, context, weights):
            check = f
        if f.substitutions and ((environment and f.severity >= Severity.MEDIUM and not _switched(f, context))
                                or _trains_with(f, weights, context)):
            decisions.add(_decision(f))
        if f.severity >= Severity.HIGH and (environment or _python(f.path)):
            for name in f.substitutions or (f.rule,):
                pinned.setdefault(name, f)
        if _imports_at_module_level(f, weights):
            if f.rule not in weights.loads_without_cuda:  # the module loads: its package is one to substitute
                for name in f.substitutions or (f.rule,):
                    imported.setdefault(name, f)
            if unported is None and _loads_unported(f, weights) and f.path not in context.chosen:
                unported = f
    required = next(((pinned[name], imported[name]) for name in sorted(imported) if name in pinned), None)
    return replace, check, install, decisions, required, unported


def _loads_unported(finding: Finding, weights: Weights) -> bool:
    """FINDING imports a package with no ROCm build whose import loads its compiled CUDA extension (score.unported)."""
    if finding.rule not in weights.unported_rules or finding.severity <= Severity.LOW:  # low: behind a try or a flag
        return False
    places = (finding.evidence, *(o.evidence for o in finding.occurrences))
    return any(weights.unported_loads.search(text) for text in places)


def _dual_build(finding: Finding, context: Context, weights: Weights) -> bool:
    """FINDING is CUDA build configuration of a repository that builds for ROCm, in a build whose file (or one above
    it) has a ROCm branch already: the CUDA side of a build that has both (`enable_language(CUDA)` under the project's
    CUDA switch beside its HIP one), not code to check."""
    return (context.level == "supported" and category_of(finding, weights) == "cuda-build-config"
            and context.built_for_rocm(finding.path))


def _imports_at_module_level(finding: Finding, weights: Weights) -> bool:
    """FINDING (or a place it stands for) is a Python import at module level: column 1, outside any function, `if` or
    `try`, so the module cannot load without its package."""
    if not _python(finding.path):
        return False
    places = ((finding.column, finding.evidence), *((o.column, o.evidence) for o in finding.occurrences))
    return any(column == 1 and weights.module_import.match(text) is not None for column, text in places)


class _Kept:
    """The findings of SOURCE that KEEP keeps, read each time they are iterated: a list of them would hold a large
    scan's findings, which it reads back from disk (scan/spill.py)."""

    def __init__(self, source: Iterable[Finding], keep: Callable[[Finding], bool]) -> None:
        self.source, self.keep = source, keep

    def __iter__(self) -> Iterator[Finding]:
        return filter(self.keep, self.source)


class _Remaining:
    """The findings of SCORED whose status is remaining, read each time they are iterated, their statuses as
    Priced.each gives them (kept by index after its first whole read)."""

    def __init__(self, scored: Priced) -> None:
        self.scored = scored

    def __iter__(self) -> Iterator[Finding]:
        return (finding for finding, status, _, _ in self.scored.each() if status == "remaining")


def _trains_with(finding: Finding, weights: Weights, context: Context) -> bool:
    """FINDING (or a place it stands for) is Python that trains with its package (k-bit training, its optimizers); not
    the test of an `if` that names it among the values a setting may take (`elif args.optim in ["adamw_bnb_8bit",
    ...]:`) nor a place in the body of an `if` branch (`if lora_args.q_lora:`, context.switched): one option of
    several, chosen by configuration."""
    places = ((finding.line, finding.evidence), *((o.line, o.evidence) for o in finding.occurrences))
    return _python(finding.path) and any(weights.training_uses.search(text) and not _CHOICE.match(text)
                                         and (finding.path, line) not in context.switched for line, text in places)


_CHOICE = re.compile(r"\s*(?:el)?if\b")


def _switched(finding: Finding, context: Context) -> bool:
    """FINDING is Python whose every place sits in an `if` branch or a conditional expression's value (context.switched):
    a CUDA-only package a setting switches on (`if args.xformers: pipe.enable_xformers_...()`, an ONNX session's CUDA
    provider chosen against the CPU one), not a thing every run needs replaced."""
    places = (finding.line, *(o.line for o in finding.occurrences))
    return _python(finding.path) and all((finding.path, line) in context.switched for line in places)


def _decision(finding: Finding) -> str:
    """What one finding's substitution decides: a CUDA image, its GPU flags and its compose reservation are one
    choice of container (category nvidia-docker), and so is what a variant image installs on its base (a cu12x index,
    an auto-gptq or xformers wheel in `Dockerfile.int4-api` or `docker/<name>-xformers-cuda/Dockerfile`: a
    deployment or CI image rebased on a ROCm image as one recipe). Every other package, index or tool is its own,
    the project's own Dockerfile's included."""
    if finding.category == "nvidia-docker" or _VARIANT_IMAGE.search(finding.path):
        return "the container image"
    return finding.substitutions[0]


# A Dockerfile named for a variant (Dockerfile.int4, Dockerfile-serve, api.Dockerfile) or one of a folder of images
# (docker/<variant>/Dockerfile); not the project's own `Dockerfile` or `docker/Dockerfile`.
_VARIANT_IMAGE = re.compile(r"(?:^|/)(?:Dockerfile[._-][^/]+|[^/]+[._-]Dockerfile)$|/[^/]+/Dockerfile$", re.IGNORECASE)


def _blocks_install(finding: Finding, weights: Weights) -> bool:
    """A CUDA-only package at high or above among the dependencies a package manager installs: on ROCm the install
    fails or pulls a CUDA build, however well the code itself supports ROCm."""
    return (finding.severity >= Severity.HIGH and finding.category == "cuda-only-dependency"
            and weights.install_files.search(finding.path) is not None
            and on_main_path(finding.path, weights))


def verdict(score: int, weights: Weights) -> str:
    """The verdict whose lowest score SCORE reaches."""
    return [name for name, lowest in weights.verdicts if score >= lowest][-1]


def directory(finding: Finding) -> str:
    """The directory of a finding's file, '.' for the repository root."""
    parent = finding.path.rpartition("/")[0]
    return parent or "."


def checklist(
    findings: Iterable[Finding] | Priced, weights: Weights, *, gfx_targets: tuple[str, ...] = (), guarded: int = 0,
    context: Context | None = None,
) -> tuple[ChecklistItem, ...]:
    """The phases of the port these findings need, in order; blockers apart; validation always last."""
    scored = pricing(findings, weights, guarded=guarded, context=context)
    by_phase: dict[str, _Sum] = defaultdict(_Sum)
    phase_paths: dict[str, set[str]] = defaultdict(set)
    remaining = False
    for finding, status, low, high in scored.each():
        if status == "remaining":  # the rest needs no action
            remaining = True
            named = phase_of(finding, weights)
            by_phase[named].add(low, high)
            phase_paths[named].add(finding.path)
    result = []
    for phase in weights.phases:
        found = by_phase.get(phase.id)
        if phase.id == "validate" and remaining:
            hint = f"{phase.hint.rstrip('.')} ({', '.join(gfx_targets)})." if gfx_targets else phase.hint
            result.append(ChecklistItem(replace(phase, hint=hint), 0, (), Effort()))
        elif found:
            paths = tuple(sorted(phase_paths[phase.id]))
            result.append(ChecklistItem(phase, found.count, paths, found.effort))
    return tuple(result)


def phase_of(finding: Finding, weights: Weights) -> str:
    """The checklist phase of a finding: blockers apart, the rest by category; what a rename cannot do is kernel
    work, whatever its category."""
    if finding.severity == Severity.BLOCKER:
        return "blockers"
    phase = weights.categories[category_of(finding, weights)].phase
    return "kernels" if phase == "mechanical" and finding.severity > weights.mechanical_max else phase


def label(category: str, weights: Weights) -> str:
    """The words for a category in prose."""
    return weights.categories[category].label if category in weights.categories else category


def severity_for_target(finding: Finding, rule: Rule | None, gfx_targets: tuple[str, ...], gfx: str) -> Severity:
    """A warp-size finding's severity on one target; the scan resolved it for the worst of GFX_TARGETS. A build's
    GPU target list that names GFX is info on it: it left out another of the targets, not this one."""
    if rule is not None and rule.match.get("matcher") == targets.TARGET_LIST_MATCHER and finding.symbol:
        return Severity.INFO if gfx in finding.symbol.split(";") else finding.severity
    if rule is None or not rule.by_wavefront or not gfx_targets:
        return finding.severity
    table = dict(rule.by_wavefront)
    worst = max(table.get(targets.wavefront_size(t), rule.severity) for t in gfx_targets)
    if finding.severity != worst:  # set by the matcher or a user override: not ours to re-resolve
        return finding.severity
    return table.get(targets.wavefront_size(gfx), rule.severity)


def per_target(
    result: ScanResult, rules: Mapping[str, Rule] | None = None, weights: Weights | None = None,
    context: Context | None = None,
) -> tuple[tuple[str, Risk], ...]:
    """The assessment on each target GPU (RULES by id give the wavefront tables; default built-in), in CONTEXT
    (default: the scan's, made once: it reads the tree's Python files for flag-chosen parts)."""
    weights = weights or load_weights()
    if rules is None:
        rules = {r.id: r for r in load_builtin().rules}
    context = context or Context.of(result, weights)
    entries = []
    for gfx in result.targets:
        findings: Sequence[Finding] = _OnTarget(result.findings, rules, result.targets, gfx)
        if not isinstance(result.findings, InReportOrder):  # made by hand: ordered (sorted, distinct) as a list
            findings = list(findings)
        entries.append((gfx, assess(findings, weights, guarded=result.guarded, context=context)))
    return tuple(entries)


class _OnTarget(InReportOrder):
    """A scan's FINDINGS with each warp-size severity on GFX, made as each is read (a list per target held every
    finding of a large scan again); the same keys, so in report order when the scan's are."""

    def __init__(self, findings: Sequence[Finding], rules: Mapping[str, Rule], gfx_targets: tuple[str, ...],
                 gfx: str) -> None:
        self.findings, self.rules, self.gfx_targets, self.gfx = findings, rules, gfx_targets, gfx

    def _on_target(self, finding: Finding) -> Finding:
        severity = severity_for_target(finding, self.rules.get(finding.rule), self.gfx_targets, self.gfx)
        return replace(finding, severity=severity)

    def __len__(self) -> int:
        return len(self.findings)

    def __iter__(self) -> Iterator[Finding]:
        return map(self._on_target, self.findings)

    @overload
    def __getitem__(self, index: int) -> Finding: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Finding]: ...

    def __getitem__(self, index: int | slice) -> Finding | Sequence[Finding]:
        if isinstance(index, slice):
            return [self._on_target(f) for f in self.findings[index]]
        return self._on_target(self.findings[index])


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


def _effort_score(total: Effort, weights: Weights) -> int:
    return min(100, round(100 * (1 - math.exp(-total.mid / weights.scale_days))))


class _Rolled:
    """One rollup group as its findings come: count, effort sums, files, worst severity."""

    def __init__(self) -> None:
        self.count = 0
        self.low = self.high = 0.0
        self.paths = _Distinct()
        self.worst = Severity.INFO

    def add(self, finding: Finding, low: float, high: float) -> None:
        self.count += 1
        self.low += low
        self.high += high
        self.paths.add(finding.path)
        if finding.severity > self.worst:
            self.worst = finding.severity


# the rollups' keys: by category, by directory (a rollup by file, a record per file of a large tree, no report read)
_KEYS: tuple[Callable[[Finding], str], ...] = (attrgetter("category"), directory)


def _rolled_up(groups: dict[str, _Rolled], total: Effort) -> tuple[Rollup, ...]:
    rollups = []
    for name, rolled in groups.items():
        effort = Effort(rolled.low, rolled.high)
        share = effort.mid / total.mid if total.mid else 0.0
        rollups.append(Rollup(name, rolled.count, rolled.paths.count, rolled.worst, effort, share))
    return tuple(sorted(rollups, key=lambda r: (-r.effort.mid, -r.worst, -r.findings, r.key)))


def _drivers(components: tuple[Component, ...], weights: Weights) -> tuple[Driver, ...]:
    """The costliest components, each in a sentence: what work, how many findings and files, how many days."""
    total = sum(c.effort.mid for c in components if not c.optional)
    drivers = []
    for component in [c for c in components if not c.optional][: weights.drivers]:
        if component.effort.mid <= 0:
            break
        share = component.effort.mid / total if total else 0.0
        drivers.append(Driver(component.categories[0], component.files, component.findings, share,
                              _driver_text(component, share, weights), component.name))
    return tuple(drivers)


def _driver_text(component: Component, share: float, weights: Weights) -> str:
    kinds = " and ".join(label(c, weights) for c in component.categories[:2])
    files = f"{component.files} file" + ("s" if component.files != 1 else "")
    rules = f"{len(component.rules)} rule" + ("s" if len(component.rules) != 1 else "")
    findings = f"{component.findings} finding" + ("s" if component.findings != 1 else "")
    return (f"{component.name}: {kinds} ({rules}, {findings} in {files}) "
            f"{format_days(component.effort)}, {round(share * 100)}% of the effort")
