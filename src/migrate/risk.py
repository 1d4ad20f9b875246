"""Findings + weights (rules/data/risk.yaml) -> risk score, effort range, verdict, drivers; pure."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from migrate import targets
from migrate.data import data_path, load_yaml, read_yaml
from migrate.errors import RuleFileError
from migrate.model import CATEGORIES, Finding, RocmStatus, Rule, ScanResult, Severity, ordered
from migrate.ruleset import load_builtin

VERDICTS = ("trivial", "easy", "moderate", "hard", "very-hard")


@dataclass(frozen=True)
class Category:
    """How one category weighs, reads and where it falls in the checklist."""

    factor: float
    label: str
    phase: str


@dataclass(frozen=True)
class Role:
    """A kind of folder off the main path (tests, docs, examples, development, CI) and what its work weighs."""

    name: str
    paths: re.Pattern[str]
    factor: float


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
    unit_exponent: float
    unit_cap: float
    generated: re.Pattern[str]
    roles: tuple[Role, ...]
    component_fixed: tuple[float, float]
    others_share: float
    collection_min: int
    collection_percentile: float
    kernel_floor: int
    install_floor: int
    install_files: re.Pattern[str]
    training_uses: re.Pattern[str]
    environment_floor: int
    code_floor: int
    substitution_steps: tuple[tuple[int, int], ...]  # (things to replace on the main path, the score they floor at)
    supported_factor: float
    own_rocm_files: int
    status: Mapping[str, Any]
    vendored_factor: float
    guarded_credit: float
    scale_days: float
    floors: Mapping[Severity, int]
    supported_floors: Mapping[Severity, int]
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


@cache
def load_weights(path: Path | None = None) -> Weights:
    """The weights from PATH (default: the built-in rules/data/risk.yaml), validated."""
    source = path or data_path("risk.yaml")
    try:
        return _weights(read_yaml(source) if path else load_yaml("risk.yaml"))
    except (OSError, KeyError, TypeError, ValueError) as exc:
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
        unit_exponent=float(raw["units"]["exponent"]),
        unit_cap=float(raw["units"]["cap"]),
        generated=re.compile(raw["units"]["generated"]),
        roles=tuple(Role(str(name), re.compile(role["paths"]), float(role["factor"]))
                    for name, role in raw["units"]["roles"].items()),
        component_fixed=(float(raw["units"]["component_fixed"][0]), float(raw["units"]["component_fixed"][1])),
        others_share=float(raw["units"]["others_share"]),
        collection_min=int(raw["units"]["collection_min_programs"]),
        collection_percentile=float(raw["units"]["collection_percentile"]),
        kernel_floor=int(raw["score"]["kernel_floor"]),
        install_floor=int(raw["score"]["install_floor"]),
        install_files=re.compile(raw["score"]["install_files"]),
        training_uses=re.compile(raw["score"]["training_uses"]),
        environment_floor=int(raw["score"]["environment_floor"]),
        code_floor=int(raw["score"]["code_floor"]),
        substitution_steps=tuple((int(s["count"]), int(s["floor"])) for s in raw["score"]["substitutions"]),
        supported_factor=float(raw["units"]["supported_factor"]),
        own_rocm_files=int(raw["units"]["own_rocm_files"]),
        status=_status_params(raw["rocm_status"]),
        vendored_factor=float(raw["vendored_factor"]),
        guarded_credit=float(raw["guarded_credit"]),
        scale_days=float(raw["score"]["scale_days"]),
        floors={Severity.parse(k): int(v) for k, v in raw["score"]["floors"].items()},
        supported_floors={Severity.parse(k): int(v) for k, v in raw["score"]["supported_floors"].items()},
        verdicts=verdicts,
        drivers=int(raw["drivers"]),
        phases=phases,
    )


def _status_params(raw: dict[str, Any]) -> dict[str, Any]:
    params = {"weights": {str(k): int(v) for k, v in raw["weights"].items()}, "per_kind": int(raw["per_kind"]),
              "partial": int(raw["partial"]), "supported": int(raw["supported"])}
    re.compile(raw["other_backends"])
    return {**params, "other_backends": str(raw["other_backends"])}


def _category_weights(name: str, raw: dict[str, Any]) -> Category:
    if set(raw) != {"factor", "label", "phase"}:
        raise ValueError(f"category {name}: expected keys factor, label, phase (got {', '.join(map(str, raw))})")
    return Category(float(raw["factor"]), str(raw["label"]), str(raw["phase"]))


_C_SUFFIXES = frozenset({"cu", "cuh", "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "inl", "ipp", "tpp", "hip"})
_MNEMONIC = re.compile(r"\b([a-z][a-z0-9]*(?:\.[a-z0-9_]+)+)")
_KERNEL_ROOTS = frozenset({"csrc", "src", "kernels", "cuda", "native", "lib"})
_PROPER = frozenset({"remaining", "optional-gap"})  # statuses that cost effort


@dataclass(frozen=True)
class Context:
    """What the scan knows of the project: its build units, where the build hipifies, the ROCm level."""

    build_dirs: tuple[str, ...] = ()
    hipify_dirs: tuple[str, ...] = ()
    ported: frozenset[str] = frozenset()  # components with ROCm evidence of their own
    rocm_builds: tuple[str, ...] = ()  # directories whose build file already has a ROCm branch ("" the root)
    level: str = "none"
    rocm_code: frozenset[str] = frozenset()  # components whose own code has ROCm branches (guards, HIP sources)
    rocm_files: Mapping[str, int] = field(default_factory=dict)  # rocm_code's components: how many files have them
    replaced: frozenset[str] = frozenset()  # CUDA kernel components a separate ROCm backend stands in for
    _components: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # path -> component

    @classmethod
    def of(cls, result: ScanResult, weights: Weights | None = None) -> Context:
        """The context of a scan (the default context when it carries no ROCm status)."""
        if result.rocm is None:
            return cls()
        return cls.from_status(result.rocm).seeing(result.findings, weights or load_weights())

    @classmethod
    def from_status(cls, status: RocmStatus) -> Context:
        """The context a repository's ROCm status gives: its build units, hipified directories and ported parts."""
        dirs = tuple(sorted({p.rpartition("/")[0] for p in status.build_files} - {""}, key=len, reverse=True))
        bare = cls(build_dirs=dirs, hipify_dirs=status.hipify_dirs, level=status.level)
        kinds = {"build", "guard", "hip-source", "runtime"}
        ported = frozenset(bare.component(e.path) for e in status.evidence if e.kind in kinds)
        rocm_builds = tuple(sorted({e.path.rpartition("/")[0] for e in status.evidence if e.kind == "build"}))
        files: dict[str, set[str]] = defaultdict(set)
        for e in status.evidence:
            if e.kind in {"guard", "hip-source"}:
                files[bare.component(e.path)].add(e.path)
        return replace(bare, ported=ported, rocm_builds=rocm_builds, rocm_code=frozenset(files),
                       rocm_files={c: len(paths) for c, paths in files.items()})

    def seeing(self, findings: Iterable[Finding], weights: Weights) -> Context:
        """This context with the CUDA kernel components a separate ROCm backend stands in for: where the repository
        has ROCm code, but none in a component with CUDA kernel work on the main path, the kernels a build with a
        ROCm branch compiles for CUDA are replaced on ROCm (flash-attention's CK sources), not ported."""
        if self.level == "none" or not self.rocm_code:
            return self
        kernels = [f for f in findings if f.status != "guarded" and not f.vendored and _kernel(f, weights)
                   and on_main_path(f.path, weights)]
        if {self.component(f.path) for f in kernels} & self.rocm_code:
            return self
        blocked = {self.component(f.path) for f in kernels if f.severity == Severity.BLOCKER}
        return replace(self, replaced=frozenset(k for k in blocked if self._build_of(k) in self.rocm_builds))

    def _build_of(self, component: str) -> str:
        """The directory of COMPONENT's build file ("" the root's)."""
        return "" if component == "." else (_nearest(component + "/", self._build_set) or "")

    def runs(self, component: str, weights: Weights) -> bool:
        """COMPONENT already builds and runs on ROCm: in a supported repository, one with ROCm evidence of its own
        (unless a separate backend replaces it); in a partly ported one, one with ROCm branches in `own_rocm_files`
        of its own files and a build that hipifies it. What is left there is review, not porting, and it needs no
        new build."""
        if component in self.replaced:
            return False
        if self.level == "supported":
            return component in self.ported
        hipified = "" in self._hipify_set or _nearest(component + "/", self._hipify_set) is not None
        own = self.rocm_files.get(component, 0) >= weights.own_rocm_files
        return self.level == "partial" and own and hipified

    def component(self, path: str) -> str:
        """The build unit of PATH: its nearest directory with a build file, else its kernel directory
        (csrc/<name>, src/<name>: a packaged copy such as deepspeed/ops/csrc/<name> is the same unit), else
        its top-level package."""
        found = self._components.get(path)
        if found is None:
            found = self._components[path] = self._component(path)  # asked once per finding: memoised by path
        return found

    def _component(self, path: str) -> str:
        nearest = _nearest(path, self._build_set)
        if nearest:
            return nearest
        parts = path.split("/")[:-1]
        if not parts:
            return "."
        if is_c(path):
            for index, part in enumerate(parts):
                if part in _KERNEL_ROOTS:
                    return "/".join(parts[index : index + 2])
            return "/".join(parts[:2])
        return parts[0]

    def built_for_rocm(self, path: str) -> bool:
        """A build file in PATH's directory or above already has a ROCm branch."""
        return any(not d or path.startswith(d + "/") for d in self.rocm_builds)

    def hipifies(self, path: str) -> bool:
        """The build turns PATH's CUDA names into HIP ones (a torch extension, a HIP CMake build)."""
        if not is_c(path):
            return False
        return "" in self._hipify_set or _nearest(path, self._hipify_set) is not None

    @cached_property
    def _build_set(self) -> frozenset[str]:
        return frozenset(self.build_dirs)

    @cached_property
    def _hipify_set(self) -> frozenset[str]:
        return frozenset(self.hipify_dirs)


def _nearest(path: str, directories: frozenset[str]) -> str | None:
    """The deepest of DIRECTORIES that holds PATH (a walk up its parents: a repository of many build units
    must not cost a loop over all of them per finding)."""
    directory = path.rpartition("/")[0]
    while directory:
        if directory in directories:
            return directory
        directory = directory.rpartition("/")[0]
    return None


def is_c(path: str) -> bool:
    """C, C++ or CUDA source or header, by suffix."""
    return path.rpartition(".")[2].lower() in _C_SUFFIXES


# Tests of a macro that the project's own build sets (WITH_CUDA): its ROCm branch sets it too. Not __CUDA_ARCH__ or
# CUDA_VERSION, which hipcc leaves undefined.
_BUILD_MACRO_RULES = frozenset({"cuda-macro-cpu-fallback"})


def status_of(finding: Finding, context: Context, weights: Weights) -> str:
    """guarded (never compiled for HIP, or a build macro test whose build already has a ROCm branch), covered
    (nothing to do on ROCm), optional-gap (a CUDA-only add-on of a supported repository, or a package of an
    optional extra) or remaining."""
    if finding.status != "remaining":
        return finding.status
    if finding.severity == Severity.INFO:
        return "covered"
    if finding.severity <= weights.mechanical_max and context.hipifies(finding.path):
        return "covered"
    if finding.rule in _BUILD_MACRO_RULES and is_c(finding.path) and context.built_for_rocm(finding.path):
        return "guarded"  # a build macro test in code whose build already has a ROCm branch (it sets the macro)
    component = context.component(finding.path)
    if component in context.replaced:
        return "remaining"  # the CUDA kernels a separate ROCm backend replaces: the product, not an add-on
    if context.level == "supported" and context.ported and component != "." and component not in context.ported:
        return "optional-gap"
    return "remaining"


def with_status(findings: Iterable[Finding], context: Context, weights: Weights) -> tuple[Finding, ...]:
    """FINDINGS, each with its status in CONTEXT (which learns from them what a separate ROCm backend replaces)."""
    every = tuple(findings)
    context = context.seeing(every, weights)
    return tuple(_in_status(f, status_of(f, context, weights)) for f in every)


def _in_status(finding: Finding, status: str) -> Finding:
    """FINDING in STATUS: a guarded one also reads info, as every guarded finding does."""
    if status == finding.status:
        return finding
    return finding.guarded() if status == "guarded" else finding.with_status(status)


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


def assess(
    findings: Iterable[Finding], weights: Weights, *, guarded: int = 0, context: Context | None = None
) -> Risk:
    """Score FINDINGS (GUARDED more already sit behind HIP guards) with WEIGHTS in CONTEXT (the project's
    build units and ROCm status; default: none known)."""
    every = ordered(findings)
    context = (context or Context()).seeing(every, weights)
    status = [status_of(f, context, weights) for f in every]
    costs = _efforts(every, status, weights, guarded, context)
    remaining = [i for i, s in enumerate(status) if s == "remaining"]
    items = [every[i] for i in remaining]
    components = _components(every, status, costs, context)
    total = _sum(costs, remaining)
    collection = _collection(components, context, weights)
    if collection is not None:
        # a few blocked programs do not make the collection hard: the floors read the program that prices it
        program = _at_percentile(_programs(components, context), weights.collection_percentile)
        floored = [f for f in items if context.component(f.path) == program.name]
        effort, priced = collection.typical, f"the program 9 in 10 stay within ({program.name})"
    else:
        floored = items
        effort, priced = _led(components, weights)
    reasons = [(_effort_score(effort, weights), f"{priced}: {format_days(effort)}")]
    reasons += _severity_floor(floored, context, weights)
    reasons += _project_floors(every, items, context, weights)
    score, basis = max(reasons, key=lambda r: r[0])  # the first of equals: effort before any floor
    blockers = [i for i in remaining if every[i].severity == Severity.BLOCKER]
    return Risk(
        score=score,
        basis=basis,
        verdict=verdict(score, weights),
        effort=collection.typical if collection is not None else total,
        blockers=len(blockers),
        blocker_effort=_sum(costs, blockers),
        guarded=guarded,
        drivers=_drivers(components, weights),
        by_category=_rollup(every, remaining, costs, total, lambda f: f.category),
        by_file=_rollup(every, remaining, costs, total, lambda f: f.path),
        by_directory=_rollup(every, remaining, costs, total, directory),
        components=components,
        optional=_sum(costs, [i for i, s in enumerate(status) if s == "optional-gap"]),
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


Costs = tuple[list[float], list[float]]  # low and high effort per finding, by index into the ordered findings


def finding_efforts(
    findings: Iterable[Finding], weights: Weights, *, guarded: int = 0, context: Context | None = None
) -> dict[Finding, Effort]:
    """Each finding's share of the effort: one decision per (component, rule) that grows slowly with its
    distinct APIs and files, plus a fixed cost per component with kernel work; covered and guarded cost 0."""
    items = ordered(findings)
    context = (context or Context()).seeing(items, weights)
    lows, highs = _efforts(items, [status_of(f, context, weights) for f in items], weights, guarded, context)
    return {f: Effort(low, high) for f, low, high in zip(items, lows, highs)}


def _efforts(items: list[Finding], status: list[str], weights: Weights, guarded: int, context: Context) -> Costs:
    """finding_efforts for ITEMS (ordered, distinct) with their STATUS, as per-index lows and highs."""
    lows, highs = [0.0] * len(items), [0.0] * len(items)
    proper = [i for i, s in enumerate(status) if s in _PROPER]
    singles = {i: _single(items[i], weights) for i in proper}
    credit = 1 - weights.guarded_credit * guarded / (guarded + len(items)) if items else 1.0
    component = {i: context.component(items[i].path) for i in proper}
    groups: dict[tuple[str, str, bool], list[int]] = defaultdict(list)
    for i in proper:
        finding = items[i]
        # a vendored tree (third_party/cutlass with its hundred example builds) is one decision per rule
        where = "/".join(finding.path.split("/")[:2]) if finding.vendored else component[i]
        groups[(where, finding.rule, finding.vendored)].append(i)
    for (_, _, vendored), group in groups.items():
        low, high = _group_cost([items[i] for i in group], [singles[i] for i in group], weights, vendored=vendored)
        runs = any(context.runs(component[i], weights) for i in group)
        factor = weights.supported_factor if runs else 1.0
        for i, (share_low, share_high) in _shared(group, singles, low * credit * factor, high * credit * factor):
            lows[i], highs[i] = share_low, share_high
    kernels: dict[str, list[int]] = defaultdict(list)
    for i in proper:
        finding = items[i]
        if not finding.vendored and not context.runs(component[i], weights) and _kernel(finding, weights):
            kernels[component[i]].append(i)
    fixed_low, fixed_high = weights.component_fixed
    for group in kernels.values():
        weight = max(_path_weight(items[i].path, weights) for i in group) * credit  # a dev folder's build weighs less
        for i, (share_low, share_high) in _shared(group, singles, fixed_low * weight, fixed_high * weight):
            lows[i] += share_low
            highs[i] += share_high
    return lows, highs


def _sum(costs: Costs, indices: Iterable[int]) -> Effort:
    """The effort of the findings at INDICES, added in order."""
    low = high = 0.0
    for i in indices:
        low += costs[0][i]
        high += costs[1][i]
    return Effort(low, high)


def _kernel(finding: Finding, weights: Weights) -> bool:
    """Kernel work beyond a rename, in C/C++/CUDA: its component needs a HIP build and a validation run."""
    kernels = weights.categories[_category(finding, weights)].phase == "kernels"
    return kernels and finding.severity > weights.mechanical_max and is_c(finding.path)


def _group_cost(
    group: list[Finding], singles: list[tuple[float, float]], weights: Weights, *, vendored: bool
) -> tuple[float, float]:
    """The costliest finding of a (component, rule) group times min(cap, distinct ** exponent)."""
    top_low, top_high = max(e[0] for e in singles), max(e[1] for e in singles)
    if vendored:
        return top_low, top_high
    files = {_file_unit(f.path, weights) for f in group}
    apis = {_api(f) for f in group}
    units = min(weights.unit_cap, max(len(files), len(apis)) ** weights.unit_exponent)
    factor = units * max(_path_weight(f.path, weights) for f in group)
    return top_low * factor, top_high * factor


def role_of(path: str, weights: Weights) -> Role | None:
    """The role of the folder PATH sits in off the main path (tests, docs, examples, development, CI); None on it."""
    return next((role for role in weights.roles if role.paths.search(path)), None)


def on_main_path(path: str, weights: Weights) -> bool:
    """PATH is on the main path: in no folder of a role off it."""
    return role_of(path, weights) is None


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
    group: list[int], singles: Mapping[int, tuple[float, float]], total_low: float, total_high: float
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
    factor = weights.categories[_category(finding, weights)].factor * vendored
    return low * factor, high * factor


def _components(every: list[Finding], status: list[str], costs: Costs, context: Context) -> tuple[Component, ...]:
    """Per component, its remaining and its optional work (an extra's packages apart from the main install),
    costliest first."""
    groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for i, finding in enumerate(every):
        if status[i] in _PROPER:
            groups[context.component(finding.path), status[i] == "optional-gap"].append(i)
    lows, highs = costs
    found = []
    for (name, optional), group in groups.items():
        by_category: dict[str, float] = defaultdict(float)
        for i in group:
            by_category[every[i].category] += (lows[i] + highs[i]) / 2 + 1e-9  # by effort; a free category still shows
        found.append(Component(
            name=name, findings=len(group), files=len({every[i].path for i in group}),
            rules=tuple(sorted({every[i].rule for i in group})),
            categories=tuple(c for c, _ in sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0]))),
            effort=_sum(costs, group), blocked=any(every[i].severity == Severity.BLOCKER for i in group),
            optional=optional,
        ))
    return tuple(sorted(found, key=lambda c: (c.optional, -c.effort.mid, c.name)))


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


def _severity_floor(items: list[Finding], context: Context, weights: Weights) -> list[Reason]:
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


def _project_floors(every: list[Finding], items: list[Finding], context: Context, weights: Weights) -> list[Reason]:
    """The lowest scores the project as a whole reads, whatever its effort: GPU code of its own needs a build and
    a run (kernel_floor); code with a CUDA-specific call to check is not a plain wheel swap (code_floor); one
    CUDA-only package or index to replace is easy, and so are two on the main path, three moderate (unless the
    repository already installs on ROCm); a CUDA-only install dependency keeps a supported repository moderate."""
    found: list[Reason] = []
    if any(is_c(f.path) and not f.vendored for f in every):
        found.append((weights.kernel_floor, "GPU code of its own: a ROCm build and a validation run on the target"))
    main = [f for f in items if on_main_path(f.path, weights)]
    environment = [f for f in main if phase_of(f, weights) == "environment"]
    replace = next((f for f in main if f.severity >= Severity.HIGH
                    and (phase_of(f, weights) == "environment" or _python(f.path))), None)
    if replace is not None:
        found.append((weights.environment_floor, f"a CUDA-only package or call to replace: {replace.rule} at "
                                                 f"{replace.path}:{replace.line}"))
    check = next((f for f in main if f.severity >= Severity.MEDIUM and phase_of(f, weights) != "environment"), None)
    if check is not None:
        found.append((weights.code_floor, f"CUDA-specific code to check: {check.rule} at {check.path}:{check.line}"))
    replaced = sorted({_decision(f) for f in environment if f.severity >= Severity.MEDIUM and f.substitutions}
                      | {_decision(f) for f in main if f.substitutions and _trains_with(f, weights)})
    if context.level != "supported":
        steps = [floor for count, floor in weights.substitution_steps if len(replaced) >= count]
        if steps:
            found.append((max(steps), f"{len(replaced)} things to replace on the main path: {', '.join(replaced)}"))
    install = next((f for f in items if _blocks_install(f, weights)), None)
    if context.level == "supported" and install is not None:
        found.append((weights.install_floor, f"a CUDA-only package among the install dependencies: {install.rule} at "
                                             f"{install.path}:{install.line}"))
    return found


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
    findings: Iterable[Finding], weights: Weights, *, gfx_targets: tuple[str, ...] = (), guarded: int = 0,
    context: Context | None = None,
) -> tuple[ChecklistItem, ...]:
    """The phases of the port these findings need, in order; blockers apart; validation always last."""
    everything = ordered(findings)
    context = (context or Context()).seeing(everything, weights)
    status = [status_of(f, context, weights) for f in everything]
    costs = _efforts(everything, status, weights, guarded, context)
    by_phase: dict[str, list[int]] = defaultdict(list)
    for i, finding in enumerate(everything):
        if status[i] == "remaining":  # the rest needs no action
            by_phase[phase_of(finding, weights)].append(i)
    result = []
    for phase in weights.phases:
        found = by_phase.get(phase.id, [])
        if phase.id == "validate" and "remaining" in status:
            hint = f"{phase.hint.rstrip('.')} ({', '.join(gfx_targets)})." if gfx_targets else phase.hint
            result.append(ChecklistItem(replace(phase, hint=hint), 0, (), Effort()))
        elif found:
            paths = tuple(sorted({everything[i].path for i in found}))
            result.append(ChecklistItem(phase, len(found), paths, _sum(costs, found)))
    return tuple(result)


def phase_of(finding: Finding, weights: Weights) -> str:
    """The checklist phase of a finding: blockers apart, the rest by category; what a rename cannot do is kernel
    work, whatever its category."""
    if finding.severity == Severity.BLOCKER:
        return "blockers"
    phase = weights.categories[_category(finding, weights)].phase
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


def _category(finding: Finding, weights: Weights) -> str:
    return finding.category if finding.category in weights.categories else "other"


def _effort_score(total: Effort, weights: Weights) -> int:
    return min(100, round(100 * (1 - math.exp(-total.mid / weights.scale_days))))


def _rollup(
    every: list[Finding], indices: list[int], costs: Costs, total: Effort, key: Any
) -> tuple[Rollup, ...]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i in indices:
        groups[key(every[i])].append(i)
    rollups = []
    for name, group in groups.items():
        effort = _sum(costs, group)
        share = effort.mid / total.mid if total.mid else 0.0
        worst = max(every[i].severity for i in group)
        rollups.append(Rollup(name, len(group), len({every[i].path for i in group}), worst, effort, share))
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
