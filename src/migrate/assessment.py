"""The assess step: a scan result -> the report record every renderer reads (risk, per target, checklist); pure."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from migrate import risk, substitutions
from migrate.model import Finding, Rule, ScanResult, Severity, Substitution
from migrate.finding_status import Context
from migrate.risk import ChecklistItem, Effort, Risk
from migrate.weights import Weights, load_weights
from migrate.ruleset import load_builtin


@dataclass(frozen=True)
class Stack:
    """An NVIDIA stack a project can be built around, the substitutes that answer it, and its ROCm counterpart."""

    name: str
    answered_by: tuple[str, ...]  # substitution ids whose findings are this stack
    counterpart: tuple[str, ...]  # knowledge-base entries that name the ROCm counterpart project
    categories: tuple[str, ...] = ()  # categories whose findings are this stack, substitutes named or not
    binary_only: bool = False  # NVIDIA ships it without source: nothing to port, only to replace or run as is

    def holds(self, finding: Finding) -> bool:
        """FINDING is this stack's use."""
        return finding.category in self.categories or any(s in self.answered_by for s in finding.substitutions)


STACKS = (
    Stack("TensorRT", ("tensorrt", "torch-tensorrt", "tensorrt-llm", "trtexec"), ("tensorrt", "torch-tensorrt"),
          ("tensorrt",), binary_only=True),
    Stack("CUTLASS/CuTe", ("cutlass",), ("cutlass",)),
    Stack("flash-attention", ("flash-attn",), ("flash-attn",)),
)
# Ways to run CUDA code unchanged, named only where a port cannot handle the code (see report/firstscreen.py).
UNCHANGED = ("scale-cuda-compiler", "zluda")


@dataclass(frozen=True)
class Removal:
    """What one substitute takes off the port: the effort of the remaining findings it answers."""

    substitution: Substitution
    effort: Effort
    findings: int  # the findings it answers that cost effort
    paths: frozenset[str] = frozenset()  # their files
    counterpart: str = ""  # the knowledge base's first ROCm substitute, whole


@dataclass(frozen=True)
class Assessment:
    """One scan, assessed once: what every report format renders, and nothing a renderer must compute again."""

    result: ScanResult
    weights: Weights
    risk: Risk
    per_target: tuple[tuple[str, Risk], ...]  # (gfx, its assessment) when the scan names several targets
    checklist: tuple[ChecklistItem, ...]
    rules: Mapping[str, Rule] = field(default_factory=dict)  # the built-in rules the findings cite, by id
    context: Context = field(default_factory=Context)  # build units and ROCm level: each finding's component
    removals: tuple[Removal, ...] = ()  # every substitute, the one that removes most effort first
    blocking: Effort = Effort()  # the effort of every remaining finding at high and blocker severity
    blocking_by_category: Mapping[str, Effort] = field(default_factory=dict)
    blocking_by_stack: Mapping[str, Effort] = field(default_factory=dict)  # by STACKS' name
    knowledge: Mapping[str, Substitution] = field(default_factory=dict)  # STACKS' counterparts and UNCHANGED

    def rule(self, rule_id: str) -> Rule | None:
        """The built-in rule RULE_ID, None for a rule the built-in set lacks (a user's own rules)."""
        return self.rules.get(rule_id)


def assess(result: ScanResult, *, weights: Weights | None = None) -> Assessment:
    """RESULT assessed with WEIGHTS (default: the built-in rules/data/risk.yaml)."""
    weights = weights or load_weights()
    context = Context.of(result, weights)
    cited = {f.rule for f in result.findings}
    rules = {r.id: r for r in load_builtin().rules if r.id in cited}
    per_target = risk.per_target(result, rules, weights, context) if len(result.targets) > 1 else ()
    scored = risk.pricing(result.findings, weights, guarded=result.guarded, context=context)  # once, for all three
    blocking, by_category, by_stack = _blocking(scored)
    return Assessment(
        result=result,
        weights=weights,
        risk=risk.assess(scored, weights),
        per_target=per_target,
        checklist=risk.checklist(scored, weights, gfx_targets=result.targets),
        rules=rules,
        context=context,
        removals=_removals(result, scored),
        blocking=blocking,
        blocking_by_category=by_category,
        blocking_by_stack=by_stack,
        knowledge=_knowledge(result.targets),
    )


def _blocking(scored: risk.Priced) -> tuple[Effort, dict[str, Effort], dict[str, Effort]]:
    """The effort of the remaining findings at high and blocker severity: in all, by category and by stack, added a
    finding at a time in report order (no list of them: a large tree has a hundred thousand)."""
    total = Effort()
    by_category: dict[str, Effort] = defaultdict(Effort)
    by_stack: dict[str, Effort] = defaultdict(Effort)
    for finding, status, low, high in scored.each():
        if status == "remaining" and finding.severity >= Severity.HIGH and high > 0:
            cost = Effort(low, high)
            total += cost
            by_category[finding.category] += cost
            for stack in (s for s in STACKS if s.holds(finding)):
                by_stack[stack.name] += cost
    return total, dict(by_category), dict(by_stack)


def _removals(result: ScanResult, scored: risk.Priced) -> tuple[Removal, ...]:
    """Each substitute with the effort of the remaining findings it answers (a stack's finding that names no
    substitute counts for the stack's counterpart), the most effort first, then the most findings. Summed as plain
    numbers in report order, as Effort's own sum would: no object per finding of a large tree."""
    proposed = {s.id for s in result.substitutions}
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    count: dict[str, int] = defaultdict(int)
    paths: dict[str, set[str]] = defaultdict(set)
    for finding, status, low, high in scored.each():
        if status != "remaining":
            continue
        for sub_id in _answers(finding, proposed):
            total = sums[sub_id]
            total[0] += low
            total[1] += high
            if high > 0:
                count[sub_id] += 1
                paths[sub_id].add(finding.path)
    found = [Removal(s, Effort(*sums[s.id]), count[s.id], frozenset(paths[s.id]), _first_substitute(s))
             for s in result.substitutions]
    return tuple(sorted(found, key=lambda r: (-r.effort.mid, -r.findings, r.substitution.id)))


def _first_substitute(sub: Substitution) -> str:
    """The first of SUB's ROCm substitutes, whole (one may hold a '; ' of its own)."""
    entry = substitutions.knowledge_base().get(sub.id)
    if entry is not None and entry.rocm and "; ".join(entry.rocm) == sub.rocm:
        return entry.rocm[0]
    return sub.rocm.split("; ")[0]


def _answers(finding: Finding, proposed: set[str]) -> tuple[str, ...]:
    if finding.substitutions:
        return finding.substitutions
    stack = next((s for s in STACKS if finding.category in s.categories), None)
    return (stack.counterpart[0],) if stack is not None and stack.counterpart[0] in proposed else ()


def _knowledge(gfx_targets: tuple[str, ...]) -> dict[str, Substitution]:
    """The knowledge-base entries the first screen may cite, as shown for GFX_TARGETS."""
    base = substitutions.knowledge_base()
    wanted = [*(i for s in STACKS for i in s.counterpart), *UNCHANGED]
    return {i: substitutions.for_targets(base[i], gfx_targets) for i in wanted if i in base}
