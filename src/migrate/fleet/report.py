"""The fleet report: fleet.json, fleet.csv and fleet.html (one offline file: a sortable, filterable table, the
families of work across the fleet with links to each repository's own report, and charts drawn as inline SVG)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

from migrate import __version__, risk
from migrate.fleet.model import DONE, FAILED, Outcome
from migrate.fleet.since import Changes
from migrate.escape import document, in_json, surrogates, visible
from migrate.report.html import page_script
from migrate.substitutions import knowledge_base
from migrate.weights import VERDICTS, load_weights

SCHEMA = "rocm-migrate/fleet/1"
ROCM_LEVELS = ("none", "partial", "supported")
_EFFORT_BARS = 30
_LABEL = 60
_CHIPS_SHOWN = 12  # repositories listed under a family before they fold into a <details>
_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a CSV cell starting so is a formula to a spreadsheet


@dataclass(frozen=True)
class Family:
    """One kind of work (a finding category) or one CUDA-only dependency, and the repositories that have it."""

    kind: str  # work / library
    id: str
    label: str
    repositories: tuple[Outcome, ...]


@dataclass(frozen=True)
class Bar:
    """One bar of an inline SVG chart: from START to END, in percent of the chart's width."""

    label: str
    text: str
    start: float
    end: float
    css: str = ""


def report_path(outcome: Outcome, fmt: str = "html") -> str:
    """Where a repository's own report sits, relative to the fleet report."""
    return f"repos/{outcome.slug}/report.{fmt}"


def targets_of(outcomes: Sequence[Outcome]) -> tuple[str, ...]:
    """Every target any repository was audited for, in the order first met."""
    return tuple(dict.fromkeys(t.target for o in outcomes for t in o.targets))


def families(outcomes: Sequence[Outcome]) -> tuple[Family, ...]:
    """The kinds of work, then the CUDA-only dependencies, across the fleet: each the most widespread first."""
    weights = load_weights()
    done = [o for o in outcomes if o.status == DONE]
    work = {category for o in done for category, _ in o.families}
    libraries = {library for o in done for library in o.libraries}
    found = [Family("work", c, risk.label(c, weights), tuple(o for o in done if c in dict(o.families))) for c in work]
    found += [Family("library", lib, _library_label(lib), tuple(o for o in done if lib in o.libraries))
              for lib in libraries]
    return tuple(sorted(found, key=lambda f: (f.kind != "work", -len(f.repositories), f.id)))


def _library_label(entry_id: str) -> str:
    """A dependency's short name, from the knowledge base ('flash-attn' from 'flash-attn (Dao-AILab/...), ...')."""
    entry = knowledge_base().get(entry_id)
    if entry is None or not entry.replaces:
        return entry_id
    short = re.split(r" \(|;|,| from ", entry.replaces[0])[0].strip()
    return short if 0 < len(short) <= _LABEL else entry_id


def summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Counts across the fleet: by status, verdict and ROCm status; ready repositories; the summed effort."""
    done = [o for o in outcomes if o.status == DONE]
    verdicts = Counter(o.verdict for o in done)
    levels = Counter(o.rocm_status for o in done)
    return {
        "repositories": len(outcomes), "done": len(done), "failed": len(outcomes) - len(done),
        "ready": sum(o.ready for o in done),
        "by_verdict": {v: verdicts.get(v, 0) for v in VERDICTS},
        "by_rocm_status": {level: levels.get(level, 0) for level in ROCM_LEVELS},
        "effort_days": {"low": round(sum(o.low for o in done), 2), "high": round(sum(o.high for o in done), 2)},
    }


def render_json(outcomes: Sequence[Outcome], changes: Changes | None = None) -> str:
    """fleet.json: the summary, the families, one entry per repository, and what changed (--since)."""
    data: dict[str, Any] = {
        "schema": SCHEMA,
        "tool": {"name": "rocm-migrate", "version": __version__},
        "targets": list(targets_of(outcomes)),
        "summary": summary(outcomes),
        "families": [{"kind": f.kind, "id": f.id, "label": f.label, "repositories": [o.name for o in f.repositories]}
                     for f in families(outcomes)],
        "repositories": [_entry(o) for o in outcomes],
    }
    if changes is not None:
        data["since"] = _changes(changes)
    return in_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def _entry(outcome: Outcome) -> dict[str, Any]:
    entry: dict[str, Any] = {"source": outcome.identity, "name": outcome.name, "status": outcome.status}
    if outcome.status == FAILED:
        return {**entry, "reason": outcome.reason, "seconds": outcome.seconds}
    return {
        **entry, "verdict": outcome.verdict, "rocm_status": outcome.rocm_status, "ready": outcome.ready,
        "risk_score": outcome.score, "effort_days": {"low": outcome.low, "high": outcome.high},
        "targets": [{"target": t.target, "verdict": t.verdict, "risk_score": t.score,
                     "effort_days": {"low": t.low, "high": t.high}, "blockers": t.blockers} for t in outcome.targets],
        "top_blockers": [asdict(b) for b in outcome.top_blockers],
        "families": dict(outcome.families), "libraries": list(outcome.libraries),
        "findings": outcome.findings, "by_severity": dict(outcome.by_severity), "files_scanned": outcome.files_scanned,
        "commit": outcome.commit, "seconds": outcome.seconds, "peak_mb": outcome.peak_mb,
        "report": report_path(outcome), "report_json": report_path(outcome, "json"),
    }


def _changes(changes: Changes) -> dict[str, Any]:
    return {
        "previous": changes.previous,
        "became_ready": [c.identity for c in changes.became_ready],
        "no_longer_ready": [c.identity for c in changes.changed if c.lost_ready],
        "new_blockers": [{"source": c.identity, "blockers": [{"rule": r, "path": p} for r, p in c.new_blockers]}
                         for c in changes.with_new_blockers],
        "verdicts": [{"source": c.identity, "before": c.before, "after": c.after} for c in changes.changed
                     if c.before != c.after],
        "fixed_blockers": {c.identity: c.fixed_blockers for c in changes.changed if c.fixed_blockers},
        "added": list(changes.added), "removed": list(changes.removed),
    }


def render_csv(outcomes: Sequence[Outcome]) -> str:
    """fleet.csv: one row per repository; effort per target in columns of its own."""
    gfx = targets_of(outcomes)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["repository", "source", "status", "reason", "rocm_status", "ready", "verdict", "risk_score",
                     "effort_low", "effort_high", *(f"{g}_{k}" for g in gfx for k in ("verdict", "low", "high")),
                     "findings", "top_blockers", "report"])
    for o in outcomes:
        per = {t.target: t for t in o.targets}
        cells = [(per[g].verdict, per[g].low, per[g].high) if g in per else ("", "", "") for g in gfx]
        blockers = "; ".join(f"{b.rule} x{b.findings} ({b.severity})" for b in o.top_blockers)
        done = o.status == DONE
        writer.writerow([_cell(o.name), _cell(o.identity), o.status, _cell(o.reason), o.rocm_status,
                         str(o.ready).lower() if done else "", o.verdict, o.score if done else "",
                         o.low if done else "", o.high if done else "", *(v for c in cells for v in c),
                         o.findings if done else "", blockers, report_path(o) if done else ""])
    return surrogates(out.getvalue())


def _cell(text: str) -> str:
    """TEXT for a CSV cell: controls as visible escapes, and never read as a spreadsheet formula."""
    shown = visible(text)
    return "'" + shown if shown.startswith(_FORMULA) else shown


def render_html(outcomes: Sequence[Outcome], changes: Changes | None = None) -> str:
    """fleet.html, self-contained."""
    gfx = targets_of(outcomes)
    script, script_hash = page_script("migrate.fleet", "fleet.js")
    page = _template().render(
        outcomes=outcomes, summary=summary(outcomes), targets=gfx, families=families(outcomes), changes=changes,
        verdicts=VERDICTS, levels=ROCM_LEVELS, verdict_rank={v: i for i, v in enumerate(VERDICTS)},
        verdict_bars=_count_bars(summary(outcomes)["by_verdict"], "verdict-"),
        rocm_bars=_count_bars(summary(outcomes)["by_rocm_status"], "rocm-"),
        effort_bars=_effort_bars(outcomes), chips_shown=_CHIPS_SHOWN, days=_days, report_path=report_path,
        per_target=_per_target, script=Markup(script), script_hash=Markup(script_hash),
    )
    return document(surrogates(page))


def _per_target(outcome: Outcome) -> dict[str, Any]:
    return {t.target: t for t in outcome.targets}


def _days(low: float, high: float) -> str:
    return risk.format_days(risk.Effort(low, high), short=True)


def _count_bars(counts: dict[str, int], css: str) -> list[Bar]:
    top = max(counts.values(), default=0) or 1
    return [Bar(name, str(n), 0.0, 100.0 * n / top, css + name) for name, n in counts.items()]


def _effort_bars(outcomes: Sequence[Outcome]) -> list[Bar]:
    """The repositories with the most effort: each a bar from its low to its high estimate."""
    done = sorted((o for o in outcomes if o.status == DONE and o.high > 0), key=lambda o: (-o.high, o.name))
    top = max((o.high for o in done), default=0.0) or 1.0
    return [Bar(o.name, _days(o.low, o.high), 100.0 * o.low / top, 100.0 * o.high / top, "verdict-" + o.verdict)
            for o in done[:_EFFORT_BARS]]


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.PackageLoader("migrate.fleet", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return env.get_template("fleet.html.j2")
