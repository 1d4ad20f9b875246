"""One repository's scan report (the JSON of `migrate scan`) -> the fleet's view of it: verdict, ROCm status,
effort per target, its worst remaining work, the families of work it has and the ROCm substitutes it needs."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from migrate.fleet.model import DONE, Blocker, Job, Outcome, TargetEffort
from migrate.model import Severity

TOP_BLOCKERS = 3
MAX_BLOCKING = 2000  # (rule, path) pairs kept per repository for --since; a report has them all
_WORK = ("remaining", "optional-gap")  # statuses that are work to do (covered and guarded are not)
_SERIOUS = frozenset({Severity.HIGH.label, Severity.BLOCKER.label})
_ENGINEER = frozenset({Severity.MEDIUM.label}) | _SERIOUS  # below medium: renames a tool does


def summarize(job: Job, report: Mapping[str, Any], titles: Mapping[str, str], commit: str = "") -> Outcome:
    """The Outcome of JOB from its scan REPORT; TITLES names the rules."""
    summary = report["summary"]
    work = [f for f in report["findings"] if f["status"] in _WORK and f["severity"] in _ENGINEER]
    serious = [f for f in work if f["severity"] in _SERIOUS and f["status"] == "remaining"]
    answered = {(f["rule"], f["path"]) for f in work}
    return Outcome(
        key=job.key, identity=job.identity, name=job.name, slug=job.slug, status=DONE,
        verdict=summary["verdict"], rocm_status=(summary.get("rocm_status") or {}).get("level", "none"),
        score=summary["risk_score"], low=summary["effort_days"]["low"], high=summary["effort_days"]["high"],
        targets=_targets(report),
        top_blockers=_top(serious, titles),
        blocking=tuple(sorted({(f["rule"], f["path"]) for f in serious}))[:MAX_BLOCKING],
        families=tuple(sorted(Counter(f["category"] for f in work).items())),
        libraries=tuple(sorted({s["id"] for s in report.get("substitutions", ())
                                if any((a["rule"], a["path"]) in answered for a in s["answers"])})),
        findings=summary["findings"], by_severity=tuple(summary["by_severity"].items()),
        files_scanned=summary["files_scanned"], commit=commit,
    )


def _targets(report: Mapping[str, Any]) -> tuple[TargetEffort, ...]:
    """The verdict and effort for each target (a report of one target gives them once, in its summary)."""
    summary = report["summary"]
    rows = summary.get("per_target") or [{"target": report["targets"][0], **summary}]
    return tuple(TargetEffort(r["target"], r["verdict"], r["risk_score"], r["effort_days"]["low"],
                              r["effort_days"]["high"], r["blockers"]) for r in rows)


def _top(serious: list[dict[str, Any]], titles: Mapping[str, str]) -> tuple[Blocker, ...]:
    """The rules with the most serious remaining findings: blockers before highs, then by count."""
    by_rule: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for finding in serious:
        by_rule[finding["rule"]].append(finding)
    worst = {rule: max(Severity.parse(f["severity"]) for f in found) for rule, found in by_rule.items()}
    ranked = sorted(by_rule, key=lambda rule: (-worst[rule], -len(by_rule[rule]), rule))
    return tuple(
        Blocker(rule, titles.get(rule, rule), worst[rule].label, found[0]["category"], len(found),
                len({f["path"] for f in found}), f"{found[0]['path']}:{found[0]['line']}")
        for rule, found in ((rule, by_rule[rule]) for rule in ranked[:TOP_BLOCKERS])
    )
