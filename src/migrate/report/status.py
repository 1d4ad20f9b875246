"""The ROCm status statement every report leads with, as (label, text) lines of plain text."""

from __future__ import annotations

from collections import Counter, defaultdict

from migrate import risk, rocm_status
from migrate.assessment import Assessment
from migrate.model import Evidence, ScanResult
from migrate.report import components
from migrate.weights import Weights

_KIND_WORDS = (
    ("build", "build"), ("hip-source", "HIP sources"), ("ci", "CI"), ("runtime", "runtime dispatch"),
    ("packaging", "ROCm packaging"), ("docs", "install docs"),
)
_SHOWN = 3


def headline(record: Assessment) -> list[tuple[str, str]]:
    """The ROCm status and what already ports: the first lines of the first screen."""
    status = record.result.rocm
    if status is None:
        return []
    return [("ROCm status", f"{status.level} (evidence score {status.score})"), ("Already ports", _already(record.result))]


def details(record: Assessment) -> list[tuple[str, str]]:
    """After the first screen: the independent programs, every remaining gap and the CUDA-only add-ons."""
    assessed, weights = record.risk, record.weights
    if record.result.rocm is None:
        return []
    found = []
    if assessed.collection is not None:
        found.append(("Independent programs", _collection(assessed.collection)))
    gaps = [c for c in assessed.components if not c.optional]
    found.append(("Remaining gaps", "; ".join(_component(c, weights) for c in gaps[:_SHOWN]) or "none"))
    if len(gaps) > _SHOWN:
        found[-1] = (found[-1][0], found[-1][1] + f"; and {len(gaps) - _SHOWN} more")
    addons = [c for c in assessed.components if c.optional]
    if addons:
        text = "; ".join(_component(c, weights) for c in addons[:_SHOWN])
        more = f"; and {len(addons) - _SHOWN} more" if len(addons) > _SHOWN else ""
        found.append(("CUDA-only add-ons (not in the verdict)", text + more))
    return found


def per_program(assessed: risk.Risk) -> str:
    """' per program (N in 10 of M programs take at most this)' when a collection is priced per program, else ''."""
    collection = assessed.collection
    if collection is None:
        return ""
    return f" per program ({round(collection.percentile * 10)} in 10 of {collection.programs} programs take at most this)"


def _already(result: ScanResult) -> str:
    status = result.rocm
    assert status is not None
    parts = []
    for kind, words in _KIND_WORDS:
        cited = rocm_status.cited(status, kind, 2)
        if cited:
            parts.append(f"{words} ({', '.join(_where(e) for e in cited)})")
    guards = dict(status.counts).get("guard", 0)
    if result.guarded or guards:
        within = f" in {guards}+ HIP conditionals" if guards else ""
        parts.insert(1 if parts else 0, f"{result.guarded} guarded sites{within}")
    return ", ".join(parts) or "nothing found (no HIP build path, guards, ROCm CI or packaging)"


def _where(evidence: Evidence) -> str:
    return f"{evidence.path}:{evidence.line}"


def never(record: Assessment) -> str:
    """What the code a HIP build never compiles holds, by kind: '4 inline PTX in 3 files, ...'."""
    result, weights = record.result, record.weights
    by_category: Counter[str] = Counter(f.category for f in result.guarded_findings)
    files: dict[str, set[str]] = defaultdict(set)
    for finding in result.guarded_findings:
        files[finding.category].add(finding.path)
    parts = [
        f"{n} {risk.label(category, weights)} in {_plural(len(files[category]), 'file')}"
        for category, n in by_category.most_common(_SHOWN)
    ]
    more = len(by_category) - _SHOWN
    return ", ".join(parts) + (f" and {more} more kinds" if more > 0 else "")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("s" if count != 1 else "")


def _component(component: risk.Component, weights: Weights) -> str:
    kinds = ", ".join(risk.label(c, weights) for c in component.categories[:2])
    days = risk.format_days(component.effort, short=True)
    return f"{components.title(component)} → {kinds} ({_plural(component.findings, 'finding')}) → {days}"


def _collection(collection: risk.Collection) -> str:
    blocked = f"; blocked: {', '.join(collection.blocked[:5])}" if collection.blocked else ""
    more = f" and {len(collection.blocked) - 5} more" if len(collection.blocked) > 5 else ""
    typical = risk.format_days(collection.typical)
    return (f"{collection.programs} programs, {round(collection.percentile * 10)} in 10 take at most {typical} each "
            f"(median {risk.format_days(collection.median)}){blocked}{more}")
