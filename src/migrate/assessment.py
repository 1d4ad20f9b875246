"""The assess step: a scan result -> the report record every renderer reads (risk, per target, checklist); pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from migrate import risk
from migrate.model import Rule, ScanResult
from migrate.risk import ChecklistItem, Risk, Weights
from migrate.ruleset import load_builtin


@dataclass(frozen=True)
class Assessment:
    """One scan, assessed once: what every report format renders, and nothing a renderer must compute again."""

    result: ScanResult
    weights: Weights
    risk: Risk
    per_target: tuple[tuple[str, Risk], ...]  # (gfx, its assessment) when the scan names several targets
    checklist: tuple[ChecklistItem, ...]
    rules: Mapping[str, Rule] = field(default_factory=dict)  # the built-in rules the findings cite, by id

    def rule(self, rule_id: str) -> Rule | None:
        """The built-in rule RULE_ID, None for a rule the built-in set lacks (a user's own rules)."""
        return self.rules.get(rule_id)


def assess(result: ScanResult, *, weights: Weights | None = None) -> Assessment:
    """RESULT assessed with WEIGHTS (default: the built-in rules/data/risk.yaml)."""
    weights = weights or risk.load_weights()
    context = risk.Context.of(result)
    cited = {f.rule for f in result.findings}
    rules = {r.id: r for r in load_builtin().rules if r.id in cited}
    per_target = risk.per_target(result, rules, weights) if len(result.targets) > 1 else ()
    return Assessment(
        result=result,
        weights=weights,
        risk=risk.assess(result.findings, weights, guarded=result.guarded, context=context),
        per_target=per_target,
        checklist=risk.checklist(
            result.findings, weights, gfx_targets=result.targets, guarded=result.guarded, context=context,
        ),
        rules=rules,
    )
