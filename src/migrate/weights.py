"""The risk model's parameters, read from rules/data/risk.yaml and validated, and what they say of one path or
finding: apart from the model (risk.py), so that a scan that only gives findings their status makes few classes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from migrate.data import data_path, load_yaml, read_yaml
from migrate.errors import RuleFileError
from migrate.model import CATEGORIES, Finding, Severity

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
class Rewrite:
    """When a component's kernel code is a rewrite (rewrite.py): its blockers' effort and share of its files."""

    blocker_days: float = 0.0
    blockers: int = 1
    file_share: float = 1.0
    floor: int = 0  # 0: never


@dataclass(frozen=True)
class Weights:
    """The model's parameters, as read from rules/data/risk.yaml."""

    severity_days: Mapping[Severity, tuple[float, float]]
    categories: Mapping[str, Category]
    mechanical_max: Severity
    not_renamed: frozenset[str]  # rules whose findings hipify leaves as they are, however low (a value to restate)
    unit_exponent: float
    unit_cap: float
    generated: re.Pattern[str]
    roles: tuple[Role, ...]
    component_fixed: tuple[float, float]
    others_share: float
    off_path_share: float
    collection_min: int
    collection_percentile: float
    kernel_floor: int
    rocm_handling_rules: frozenset[str]  # notes on the project's own ROCm handling: no GPU code, no work site
    install_floor: int
    install_files: re.Pattern[str]
    unfloored_categories: frozenset[str]  # findings of these categories in `unfloored_paths` do not floor the verdict
    unfloored_paths: re.Pattern[str]
    training_uses: re.Pattern[str]
    required_floor: int
    unported_floor: int  # a module-level main-path import of a package with no ROCm build (unported_rules' findings)
    unported_rules: frozenset[str]
    unported_loads: re.Pattern[str]  # ... whose import itself loads the compiled extension
    unported_includes: Mapping[str, int]  # C/C++ libraries with no ROCm build: their include rules, each's floor
    unported_include_files: int  # ... in this many main-path files of the project's own code
    module_import: re.Pattern[str]
    loads_without_cuda: frozenset[str]  # rules of packages whose import succeeds without CUDA: no required floor
    environment_floor: int
    build_rework_rules: frozenset[str]  # their high findings in a Python build file floor as rework, not a replacement
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
    rewrite: Rewrite = Rewrite()

    @cached_property
    def path_roles(self) -> dict[str, Role | None]:
        """role_of's answers so far, by path: asked once per finding of a tree (many per file), found once."""
        return {}


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
        not_renamed=frozenset(str(r) for r in raw["mechanical"].get("not_renamed", ())),
        unit_exponent=float(raw["units"]["exponent"]),
        unit_cap=float(raw["units"]["cap"]),
        generated=re.compile(raw["units"]["generated"]),
        roles=tuple(Role(str(name), re.compile(role["paths"]), float(role["factor"]))
                    for name, role in raw["units"]["roles"].items()),
        component_fixed=(float(raw["units"]["component_fixed"][0]), float(raw["units"]["component_fixed"][1])),
        others_share=float(raw["units"]["others_share"]),
        off_path_share=float(raw["units"]["off_path_share"]),
        collection_min=int(raw["units"]["collection_min_programs"]),
        collection_percentile=float(raw["units"]["collection_percentile"]),
        kernel_floor=int(raw["score"]["kernel_floor"]),
        rocm_handling_rules=frozenset(str(r) for r in raw["score"].get("rocm_handling_rules", ())),
        install_floor=int(raw["score"]["install_floor"]),
        install_files=re.compile(raw["score"]["install_files"]),
        unfloored_categories=frozenset(str(c) for c in raw["score"]["unfloored"]["categories"]),
        unfloored_paths=re.compile(raw["score"]["unfloored"]["paths"]),
        training_uses=re.compile(raw["score"]["training_uses"]),
        required_floor=int(raw["score"]["required_floor"]),
        unported_floor=int(raw["score"]["unported"]["floor"]),
        unported_rules=frozenset(str(r) for r in raw["score"]["unported"]["rules"]),
        unported_loads=re.compile(raw["score"]["unported"]["loads"]),
        unported_includes={str(r): int(v) for r, v in raw["score"]["unported"]["includes"].items()},
        unported_include_files=int(raw["score"]["unported"]["include_files"]),
        module_import=re.compile(raw["score"]["module_import"]),
        loads_without_cuda=frozenset(str(r) for r in raw["score"].get("loads_without_cuda", ())),
        environment_floor=int(raw["score"]["environment_floor"]),
        build_rework_rules=frozenset(str(r) for r in raw["score"].get("build_rework", ())),
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
        rewrite=_rewrite(raw["score"].get("rewrite") or {}),
        verdicts=verdicts,
        drivers=int(raw["drivers"]),
        phases=phases,
    )


def _status_params(raw: dict[str, Any]) -> dict[str, Any]:
    params = {"weights": {str(k): int(v) for k, v in raw["weights"].items()}, "per_kind": int(raw["per_kind"]),
              "partial": int(raw["partial"]), "supported": int(raw["supported"])}
    re.compile(raw["other_backends"])
    re.compile(raw["other_backends_python"])
    return {**params, "other_backends": str(raw["other_backends"]),
            "other_backends_python": str(raw["other_backends_python"])}


def _category_weights(name: str, raw: dict[str, Any]) -> Category:
    if set(raw) != {"factor", "label", "phase"}:
        raise ValueError(f"category {name}: expected keys factor, label, phase (got {', '.join(map(str, raw))})")
    return Category(float(raw["factor"]), str(raw["label"]), str(raw["phase"]))


def role_of(path: str, weights: Weights) -> Role | None:
    """The role of the folder PATH sits in off the main path (tests, docs, examples, development, CI); None on it."""
    known = weights.path_roles
    if path not in known:
        if len(known) >= _PATH_ROLES_KEPT:  # a long-lived process (a fleet worker) scans many trees: stay bounded
            known.clear()
        known[path] = next((role for role in weights.roles if role.paths.search(path)), None)
    return known[path]


# Findings come in path order, so a file's are answered from a few entries: 100,000 kept every path of a large tree
# (a key and an entry each, ~8 MB at 60,000 files) until the scan ended.
_PATH_ROLES_KEPT = 4_096


def on_main_path(path: str, weights: Weights) -> bool:
    """PATH is on the main path: in no folder of a role off it."""
    return role_of(path, weights) is None


def category_of(finding: Finding, weights: Weights) -> str:
    """The category FINDING weighs as: its own, or "other" when the weights do not list it."""
    return finding.category if finding.category in weights.categories else "other"


def _rewrite(raw: Mapping[str, Any]) -> Rewrite:
    return Rewrite(float(raw.get("blocker_days", 0)), int(raw.get("blockers", 1)), float(raw.get("file_share", 1)),
                   int(raw.get("floor", 0)))

