"""Findings + weights (rules/data/risk.yaml) -> risk score, effort range, verdict, drivers; pure."""

from __future__ import annotations

import math
import re
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, TypeAlias

from migrate import targets
from migrate.finding_status import Context, is_c, is_kernel_work, status_of
from migrate.model import Finding, Rule, ScanResult, Severity, ordered
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
    by_file: tuple[Rollup, ...]
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


# low and high effort per finding, by index into the ordered findings: arrays of doubles, 16 bytes a finding where
# lists of floats took 64
Costs = tuple["array[float]", "array[float]"]
# findings by index into the ordered findings: 8 bytes each, where a list's ints took 36
Indices: TypeAlias = "array[int]"


def _indices(found: Iterable[int] = ()) -> Indices:
    """FOUND (none by default) as Indices."""
    return array("q", found)


@dataclass(frozen=True)
class Priced:
    """Findings ordered, given their status and priced once: what assess and checklist read (a scan's assessment
    asks both, and each finding's effort, of the same findings)."""

    every: Sequence[Finding]  # distinct, in report order
    status: list[str]  # status_of each, by index
    costs: Costs
    context: Context  # the context that has seen them
    guarded: int


def pricing(
    findings: Iterable[Finding] | Priced, weights: Weights, *, guarded: int = 0, context: Context | None = None
) -> Priced:
    """FINDINGS (GUARDED more already sit behind HIP guards) ordered and priced with WEIGHTS in CONTEXT (the
    project's build units and ROCm status; default: none known)."""
    if isinstance(findings, Priced):
        return findings
    every = ordered(findings)
    context = (context or Context()).seeing(every, weights)
    status = [status_of(f, context, weights) for f in every]
    return Priced(every, status, _efforts(every, status, weights, guarded, context), context, guarded)


def assess(
    findings: Iterable[Finding] | Priced, weights: Weights, *, guarded: int = 0, context: Context | None = None
) -> Risk:
    """Score FINDINGS (GUARDED more already sit behind HIP guards) with WEIGHTS in CONTEXT (the project's
    build units and ROCm status; default: none known); findings already priced are read as they are."""
    scored = pricing(findings, weights, guarded=guarded, context=context)
    every, status, costs, context, guarded = scored.every, scored.status, scored.costs, scored.context, scored.guarded
    remaining = _indices(i for i, s in enumerate(status) if s == "remaining")
    items = _Chosen(every, remaining)
    components = _components(every, status, costs, context)
    total = _sum(costs, remaining)
    collection = _collection(components, context, weights)
    if collection is not None:
        # a few blocked programs do not make the collection hard: the floors read the program that prices it
        program = _at_percentile(_programs(components, context), weights.collection_percentile)
        name = program.name
        floored: Iterable[Finding] = _Kept(items, lambda f: context.component(f.path) == name)
        effort, priced = collection.typical, f"the program 9 in 10 stay within ({program.name})"
    else:
        floored = items
        effort, priced = _led(components, weights)
    reasons = [(_effort_score(effort, weights), f"{priced}: {format_days(effort)}")]
    reasons += _severity_floor(floored, context, weights)
    reasons += _project_floors(every, items, context, weights)
    score, basis = max(reasons, key=lambda r: r[0])  # the first of equals: effort before any floor
    blockers = [i for i in remaining if every[i].severity == Severity.BLOCKER]
    by_category, by_file, by_directory = _rollups(every, remaining, costs, total)
    return Risk(
        score=score,
        basis=basis,
        verdict=verdict(score, weights),
        effort=collection.typical if collection is not None else total,
        blockers=len(blockers),
        blocker_effort=_sum(costs, blockers),
        guarded=guarded,
        drivers=_drivers(components, weights),
        by_category=by_category,
        by_file=by_file,
        by_directory=by_directory,
        components=components,
        optional=_sum(costs, (i for i, s in enumerate(status) if s == "optional-gap")),
        collection=collection,
        total=total,
    )


def _led(components: tuple[Component, ...], weights: Weights) -> tuple[Effort, str]:
    """The effort the score reads, in words: the hardest required component's, plus `others_share` of each other's."""
    required = sorted((c for c in components if not c.optional), key=lambda c: -c.effort.mid)
    if len(required) < 2 or required[1].effort.mid <= 0:
        return sum((c.effort for c in required), Effort()), "the remaining work"
    rest = sum((c.effort for c in required[1:]), Effort())
    hardest = "the repository root" if required[0].name == "." else required[0].name
    words = f"the hardest component ({hardest}) and {round(weights.others_share * 100)}% of the others"
    return required[0].effort + rest.scaled(weights.others_share), words


def _efforts(items: Sequence[Finding], status: list[str], weights: Weights, guarded: int, context: Context) -> Costs:
    """Each finding's share of the effort, for ITEMS (ordered, distinct) with their STATUS, as per-index lows and
    highs: one decision per (component, rule) that grows slowly with its distinct APIs and files, plus a fixed cost per
    component with kernel work; covered and guarded cost 0."""
    lows, highs = array("d", bytes(8 * len(items))), array("d", bytes(8 * len(items)))
    proper = _indices(i for i, s in enumerate(status) if s in _PROPER)
    seen = _Seen(len(items))
    for i in proper:  # one read of the findings: a large scan's come back from disk (scan/spill.py)
        seen.add(i, items[i], weights, context)
    singles, component = seen.singles, seen.component
    credit = 1 - weights.guarded_credit * guarded / (guarded + len(items)) if items else 1.0
    for key, group in seen.groups.items():
        low, high = _group_cost(seen.shapes.get(key), [singles[i] for i in group], weights)
        runs = any(context.runs(component[i], weights) for i in group)
        factor = weights.supported_factor if runs else 1.0
        for i, (share_low, share_high) in _shared(group, singles, low * credit * factor, high * credit * factor):
            lows[i], highs[i] = share_low, share_high
    fixed_low, fixed_high = weights.component_fixed
    for name, group in seen.kernels.items():
        weight = seen.heaviest[name] * credit
        for i, (share_low, share_high) in _shared(group, singles, fixed_low * weight, fixed_high * weight):
            lows[i] += share_low
            highs[i] += share_high
    return lows, highs


class _Seen:
    """What _efforts reads of the findings, gathered a finding at a time: each one's own cost and component (lists by
    index, not dicts: a large tree's findings number in the hundreds of thousands), the (component, rule) groups
    with what their cost reads, and the components with kernel work with their heaviest path."""

    def __init__(self, count: int) -> None:
        self.singles: list[tuple[float, float]] = [(0.0, 0.0)] * count
        self.component = [""] * count
        self.priced: dict[tuple[Severity, str, tuple[float, float] | None, bool], tuple[float, float]] = {}
        self.groups: dict[tuple[str, str, bool], Indices] = defaultdict(_indices)
        self.shapes: dict[tuple[str, str, bool], _Shape] = {}
        self.kernels: dict[str, Indices] = defaultdict(_indices)
        self.heaviest: dict[str, float] = {}  # a dev folder's build weighs less

    def add(self, i: int, finding: Finding, weights: Weights, context: Context) -> None:
        kind = (finding.severity, finding.category, finding.effort, finding.vendored)  # all that _single reads
        if kind not in self.priced:
            self.priced[kind] = _single(finding, weights)
        self.singles[i] = self.priced[kind]
        component = self.component[i] = context.component(finding.path)
        # a vendored tree (third_party/cutlass with its hundred example builds) is one decision per rule
        where = "/".join(finding.path.split("/")[:2]) if finding.vendored else component
        key = (where, finding.rule, finding.vendored)
        self.groups[key].append(i)
        if finding.vendored:
            return
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes[key] = _Shape()
        shape.add(finding, weights)
        if not context.runs(component, weights) and is_kernel_work(finding, weights):
            self.kernels[component].append(i)
            path_weight = _path_weight(finding.path, weights)
            self.heaviest[component] = max(self.heaviest.get(component, path_weight), path_weight)


def _sum(costs: Costs, indices: Iterable[int]) -> Effort:
    """The effort of the findings at INDICES, added in order."""
    low = high = 0.0
    for i in indices:
        low += costs[0][i]
        high += costs[1][i]
    return Effort(low, high)


class _Shape:
    """What a (component, rule) group's cost reads of its findings: their distinct files and APIs, the heaviest path."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.apis: set[str] = set()
        self.weight: float | None = None

    def add(self, finding: Finding, weights: Weights) -> None:
        self.files.add(_file_unit(finding.path, weights))
        self.apis.add(_api(finding))
        path_weight = _path_weight(finding.path, weights)
        self.weight = path_weight if self.weight is None else max(self.weight, path_weight)


def _group_cost(shape: _Shape | None, singles: list[tuple[float, float]], weights: Weights) -> tuple[float, float]:
    """The costliest finding of a (component, rule) group times min(cap, distinct ** exponent); a vendored group's
    (no SHAPE) is its costliest finding's."""
    top_low, top_high = max(e[0] for e in singles), max(e[1] for e in singles)
    if shape is None:
        return top_low, top_high
    units = min(weights.unit_cap, max(len(shape.files), len(shape.apis)) ** weights.unit_exponent)
    factor = units * (shape.weight or 0.0)
    return top_low * factor, top_high * factor


def _path_weight(path: str, weights: Weights) -> float:
    role = role_of(path, weights)
    return 1.0 if role is None else role.factor


def _file_unit(path: str, weights: Weights) -> str:
    """A file, or one unit for all generated files of a directory (flash-attn's hundreds of instantiation stubs)."""
    folder, _, name = path.rpartition("/")
    return f"{folder}/<generated>" if weights.generated.search(name) else path


def _api(finding: Finding) -> str:
    """What a finding uses: its symbol, else a PTX mnemonic in its line, else its rule."""
    if finding.symbol:
        return finding.symbol
    mnemonic = _MNEMONIC.search(finding.evidence) if finding.category == "inline-ptx" else None
    return mnemonic.group(1).split(".")[0] if mnemonic else finding.rule


def _shared(
    group: Indices, singles: list[tuple[float, float]], total_low: float, total_high: float
) -> Iterable[tuple[int, tuple[float, float]]]:
    """The total shared among GROUP in proportion to each finding's own cost (equally when all are free)."""
    low, high = sum(singles[i][0] for i in group), sum(singles[i][1] for i in group)
    even = 1 / len(group)
    for i in group:
        own_low, own_high = singles[i]
        yield i, (total_low * (own_low / low if low else even), total_high * (own_high / high if high else even))


def _single(finding: Finding, weights: Weights) -> tuple[float, float]:
    """A rule's own effort range if it sets one, else severity range x category factor."""
    vendored = weights.vendored_factor if finding.vendored else 1.0
    if finding.effort is not None:
        return finding.effort[0] * vendored, finding.effort[1] * vendored
    low, high = weights.severity_days[finding.severity]
    factor = weights.categories[category_of(finding, weights)].factor * vendored
    return low * factor, high * factor


def _components(every: Sequence[Finding], status: list[str], costs: Costs, context: Context) -> tuple[Component, ...]:
    """Per component, its remaining and its optional work (an extra's packages apart from the main install),
    costliest first."""
    groups: dict[tuple[str, bool], Indices] = defaultdict(_indices)
    parts: dict[tuple[str, bool], _Parts] = {}  # what a component reads of its findings, gathered in one pass
    lows, highs = costs
    for i, finding in enumerate(every):
        if status[i] in _PROPER:
            key = (context.component(finding.path), status[i] == "optional-gap")
            groups[key].append(i)
            part = parts.get(key)
            if part is None:
                part = parts[key] = _Parts()
            # by effort, added in index order as before; a free category still shows
            part.by_category[finding.category] += (lows[i] + highs[i]) / 2 + 1e-9
            part.paths.add(finding.path)
            part.rules.add(finding.rule)
            part.blocked = part.blocked or finding.severity == Severity.BLOCKER
    found = []
    for (name, optional), group in groups.items():
        part = parts[(name, optional)]
        found.append(Component(
            name=name, findings=len(group), files=len(part.paths), rules=tuple(sorted(part.rules)),
            categories=tuple(c for c, _ in sorted(part.by_category.items(), key=lambda kv: (-kv[1], kv[0]))),
            effort=_sum(costs, group), blocked=part.blocked, optional=optional,
        ))
    return tuple(sorted(found, key=lambda c: (c.optional, -c.effort.mid, c.name)))


class _Parts:
    """A component's findings as _components reads them: effort by category, files, rules, whether one blocks."""

    def __init__(self) -> None:
        self.by_category: dict[str, float] = defaultdict(float)
        self.paths: set[str] = set()
        self.rules: set[str] = set()
        self.blocked = False


def _programs(components: tuple[Component, ...], context: Context) -> list[Component]:
    return [c for c in components if not c.optional and c.name in context.build_dirs]


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
    mode) it is one thing to replace, and floors as a medium one: the environment floors judge it."""
    if finding.severity == Severity.HIGH and (phase_of(finding, weights) == "environment" or _python(finding.path)):
        return Severity.MEDIUM
    return finding.severity


def _python(path: str) -> bool:
    return path.endswith((".py", ".pyi", ".ipynb"))


Reason = tuple[int, str]  # a score the project reads at least, and why, in words for the report


def _severity_floor(items: Iterable[Finding], context: Context, weights: Weights) -> list[Reason]:
    """The highest floor a main-path finding's severity (as the floors read it) sets, citing the first that sets it.
    A finding in a component that already runs on ROCm (or anywhere in a supported repository, but in the kernels a
    separate ROCm backend replaces) reads the supported floors."""
    best, cited = 0, ""
    for finding in items:
        if not on_main_path(finding.path, weights):
            continue
        severity = _floor_severity(finding, weights)
        floor = max((v for s, v in _floors(finding, context, weights).items() if s <= severity), default=0)
        if floor > best:
            best, cited = floor, f"a {severity.label} finding: {finding.rule} at {finding.path}:{finding.line}"
    return [(best, cited)] if best else []


def _floors(finding: Finding, context: Context, weights: Weights) -> Mapping[Severity, int]:
    component = context.component(finding.path)
    if component in context.replaced:
        return weights.floors
    runs = context.level == "supported" or context.runs(component, weights)
    return weights.supported_floors if runs else weights.floors


def _project_floors(every: Sequence[Finding], items: Iterable[Finding], context: Context, weights: Weights) -> list[Reason]:
    """The lowest scores the project as a whole reads, whatever its effort: GPU code of its own needs a build and
    a run (kernel_floor); code with a CUDA-specific call to check is not a plain wheel swap (code_floor); one
    CUDA-only package or index to replace is easy, and so are two on the main path, three moderate (unless the
    repository already installs on ROCm); a CUDA-only install dependency keeps a supported repository moderate."""
    found: list[Reason] = []
    if any(is_c(f.path) and not f.vendored for f in every):
        found.append((weights.kernel_floor, "GPU code of its own: a ROCm build and a validation run on the target"))
    replace, check, install, decisions, required = _floor_findings(items, weights)
    if replace is not None:
        found.append((weights.environment_floor, f"a CUDA-only package or call to replace: {replace.rule} at "
                                                 f"{replace.path}:{replace.line}"))
    if check is not None:
        found.append((weights.code_floor, f"CUDA-specific code to check: {check.rule} at {check.path}:{check.line}"))
    replaced = sorted(decisions)
    if context.level != "supported":
        steps = [floor for count, floor in weights.substitution_steps if len(replaced) >= count]
        if steps:
            found.append((max(steps), f"{len(replaced)} things to replace on the main path: {', '.join(replaced)}"))
    if context.level != "supported" and required is not None:
        pin, use = required
        pinned = "" if pin is use else f" at {pin.path}:{pin.line}"
        found.append((weights.required_floor, f"a CUDA-only package the main path cannot load without: {pin.rule}"
                                              f"{pinned}, imported at module level at {use.path}:{use.line}"))
    if context.level == "supported" and install is not None:
        found.append((weights.install_floor, f"a CUDA-only package among the install dependencies: {install.rule} at "
                                             f"{install.path}:{install.line}"))
    return found


def _floor_findings(
    items: Iterable[Finding], weights: Weights
) -> tuple[Finding | None, Finding | None, Finding | None, set[str], tuple[Finding, Finding] | None]:
    """In one read of ITEMS (a large scan's come back from disk each time): the first finding on the main path that
    is a CUDA-only package or call to replace, the first with CUDA-specific code to check, the first that blocks the
    install, the substitution decisions on the main path, and a package the environment pins to a CUDA-only build
    (or that is CUDA-only itself) with a module-level import of it: (the pin, the import)."""
    replace = check = install = None
    decisions: set[str] = set()
    pinned: dict[str, Finding] = {}  # substitute -> the first CUDA-only build of its package the environment installs
    imported: dict[str, Finding] = {}  # substitute -> the first module-level import of its package
    for f in items:
        if install is None and _blocks_install(f, weights):
            install = f
        if not on_main_path(f.path, weights):
            continue
        environment = phase_of(f, weights) == "environment"
        if replace is None and f.severity >= Severity.HIGH and (environment or _python(f.path)):
            replace = f
        if check is None and f.severity >= Severity.MEDIUM and not environment:
            check = f
        if f.substitutions and ((environment and f.severity >= Severity.MEDIUM) or _trains_with(f, weights)):
            decisions.add(_decision(f))
        if f.severity >= Severity.HIGH and (environment or _python(f.path)):
            for name in f.substitutions or (f.rule,):
                pinned.setdefault(name, f)
        if _imports_at_module_level(f, weights):
            for name in f.substitutions or (f.rule,):
                imported.setdefault(name, f)
    required = next(((pinned[name], imported[name]) for name in sorted(imported) if name in pinned), None)
    return replace, check, install, decisions, required


def _imports_at_module_level(finding: Finding, weights: Weights) -> bool:
    """FINDING (or a place it stands for) is a Python import at module level: column 1, outside any function, `if` or
    `try`, so the module cannot load without its package."""
    if not _python(finding.path):
        return False
    places = ((finding.column, finding.evidence), *((o.column, o.evidence) for o in finding.occurrences))
    return any(column == 1 and weights.module_import.match(text) is not None for column, text in places)


class _Chosen:
    """The findings of EVERY at INDICES, read each time they are iterated: a list of them would hold a large scan's
    findings, which it reads back from disk (scan/spill.py)."""

    def __init__(self, every: Sequence[Finding], indices: Iterable[int]) -> None:
        self.every, self.indices = every, indices

    def __iter__(self) -> Iterator[Finding]:
        every = self.every
        return (every[i] for i in self.indices)


class _Kept:
    """The findings of SOURCE that KEEP keeps, read each time they are iterated (as _Chosen)."""

    def __init__(self, source: Iterable[Finding], keep: Callable[[Finding], bool]) -> None:
        self.source, self.keep = source, keep

    def __iter__(self) -> Iterator[Finding]:
        return filter(self.keep, self.source)


def _trains_with(finding: Finding, weights: Weights) -> bool:
    """FINDING (or a place it stands for) is Python that trains with its package (k-bit training, its optimizers)."""
    places = (finding.evidence, *(o.evidence for o in finding.occurrences))
    return _python(finding.path) and any(weights.training_uses.search(text) for text in places)


def _decision(finding: Finding) -> str:
    """What one finding's substitution decides: a CUDA image, its GPU flags and its compose reservation are one
    choice of container (category nvidia-docker); every package, index or tool is its own."""
    return "the container image" if finding.category == "nvidia-docker" else finding.substitutions[0]


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
    everything, status, costs = scored.every, scored.status, scored.costs
    by_phase: dict[str, Indices] = defaultdict(_indices)
    phase_paths: dict[str, set[str]] = defaultdict(set)
    for i, finding in enumerate(everything):
        if status[i] == "remaining":  # the rest needs no action
            named = phase_of(finding, weights)
            by_phase[named].append(i)
            phase_paths[named].add(finding.path)
    result = []
    for phase in weights.phases:
        found = by_phase.get(phase.id, _indices())
        if phase.id == "validate" and "remaining" in status:
            hint = f"{phase.hint.rstrip('.')} ({', '.join(gfx_targets)})." if gfx_targets else phase.hint
            result.append(ChecklistItem(replace(phase, hint=hint), 0, (), Effort()))
        elif found:
            paths = tuple(sorted(phase_paths[phase.id]))
            result.append(ChecklistItem(phase, len(found), paths, _sum(costs, found)))
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
        rules = {r.id: r for r in load_builtin().rules}
    entries = []
    for gfx in result.targets:
        findings = [
            replace(f, severity=severity_for_target(f, rules.get(f.rule), result.targets, gfx)) for f in result.findings
        ]
        entries.append((gfx, assess(findings, weights, guarded=result.guarded, context=Context.of(result, weights))))
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


def _effort_score(total: Effort, weights: Weights) -> int:
    return min(100, round(100 * (1 - math.exp(-total.mid / weights.scale_days))))


class _Rolled:
    """One rollup group as its findings come: count, effort sums, files, worst severity."""

    def __init__(self) -> None:
        self.count = 0
        self.low = self.high = 0.0
        self.paths: set[str] = set()
        self.worst = Severity.INFO


_KEYS: tuple[Callable[[Finding], str], ...] = (attrgetter("category"), attrgetter("path"), directory)


def _rollups(
    every: Sequence[Finding], indices: Indices, costs: Costs, total: Effort
) -> tuple[tuple[Rollup, ...], tuple[Rollup, ...], tuple[Rollup, ...]]:
    """The remaining work at INDICES by category, by file and by directory, in one read of the findings (each group's
    sums added in index order)."""
    lows, highs = costs
    groups: tuple[dict[str, _Rolled], ...] = ({}, {}, {})
    for i in indices:
        finding = every[i]
        for key, by_key in zip(_KEYS, groups):
            name = key(finding)
            rolled = by_key.get(name)
            if rolled is None:
                rolled = by_key[name] = _Rolled()
            rolled.count += 1
            rolled.low += lows[i]
            rolled.high += highs[i]
            rolled.paths.add(finding.path)
            if finding.severity > rolled.worst:
                rolled.worst = finding.severity
    by_category, by_file, by_directory = (_rolled_up(by_key, total) for by_key in groups)
    return by_category, by_file, by_directory


def _rolled_up(groups: dict[str, _Rolled], total: Effort) -> tuple[Rollup, ...]:
    rollups = []
    for name, rolled in groups.items():
        effort = Effort(rolled.low, rolled.high)
        share = effort.mid / total.mid if total.mid else 0.0
        rollups.append(Rollup(name, rolled.count, len(rolled.paths), rolled.worst, effort, share))
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
