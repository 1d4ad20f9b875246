"""A self-contained HTML porting report: inline CSS, JS and SVG, nothing fetched, everything escaped."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, partial
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from migrate import risk, targets
from migrate.assessment import Assessment
from migrate.escape import document, surrogates
from migrate.report import firstscreen, grouping, status
from migrate.model import Finding, Severity
from migrate.weights import Weights

ROWS_SHOWN = 5000  # rows (a rule in a component each); beyond this a browser table stops being useful
PLACES_SHOWN = 200  # folded places under one row; JSON has them all
_BARS = 12


@dataclass(frozen=True)
class Bar:
    """One bar of an inline SVG chart."""

    label: str
    value: float
    text: str
    width: float  # 0..100, share of the longest bar


def render(record: Assessment) -> str:
    """The report as one HTML document: the first screen, the summary, then the rest."""
    return "".join(chunks(record))


_BLOCK = 1 << 16  # characters of the page escaped at a time


def chunks(record: Assessment) -> Iterator[str]:
    """The text of render(RECORD) in blocks of about _BLOCK characters, each escaped as the whole page would be
    (undecodable bytes, controls, invisible characters): a large tree's page was held whole three times over
    (46 MB for 7,500 generated files)."""
    block: list[str] = []
    size = 0
    for piece in _template().generate(**_context(record)):
        block.append(piece)
        size += len(piece)
        if size >= _BLOCK:
            yield document(surrogates("".join(block)))
            block, size = [], 0
    yield document(surrogates("".join(block)))


def _context(record: Assessment) -> dict[str, Any]:
    """What the template reads."""
    result, assessed, weights = record.result, record.risk, record.weights
    tallied = grouping.tally(record, places=PLACES_SHOWN)
    groups = tallied.groups
    return dict(
        result=result,
        risk=assessed,
        screen=firstscreen.build(record),
        sources_shown=firstscreen.SOURCES_SHOWN,
        effort=risk.format_days(assessed.effort),
        blocker_effort=risk.format_days(assessed.blocker_effort),
        severities=sorted(Severity, reverse=True),
        by_severity=tallied.by_severity,
        categories=sorted(tallied.by_category),
        components=[(name, tallied.titles[name]) for name in tallied.order],
        labels={c: risk.label(c, weights) for c in tallied.by_category},
        per_target=_per_target(record),
        effort_bars=_effort_bars(assessed, weights),
        directory_bars=_directory_bars(assessed),
        checklist=[(item, risk.format_days(item.effort)) for item in record.checklist],
        removals=[(r.substitution, risk.format_days(r.effort) if r.effort.high else "") for r in record.removals],
        rows=groups[:ROWS_SHOWN],
        hidden_rows=sum(g.count for g in groups[ROWS_SHOWN:]),
        placed=partial(grouping.placed, result.findings),
        places_shown=PLACES_SHOWN,
        files_with_findings=tallied.files,
        suggestion=_suggestion,
        details=status.details(record),
        script=Markup(page_script("migrate.report", "report.js")[0]),
        script_hash=Markup(page_script("migrate.report", "report.js")[1]),
    )


@cache
def page_script(package: str, name: str) -> tuple[str, str]:
    """A page's own script (PACKAGE's templates/NAME) and its hash for the Content-Security-Policy, which allows
    that script alone (no inline script a file name could smuggle in would run): a hash, not a nonce, so the page
    stays the same for the same data."""
    source = resources.files(package).joinpath("templates", name).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")
    return source, f"'sha256-{digest}'"


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("migrate.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("report.html.j2")


def _per_target(record: Assessment) -> list[tuple[str, int, risk.Risk, str]]:
    return [
        (gfx, targets.wavefront_size(gfx), assessed, risk.format_days(assessed.effort))
        for gfx, assessed in record.per_target
    ]


def _effort_bars(assessed: risk.Risk, weights: Weights) -> list[Bar]:
    rollups = [r for r in assessed.by_category if r.effort.mid > 0][:_BARS]
    return _bars([(risk.label(r.key, weights), r.effort.mid, risk.format_days(r.effort, short=True)) for r in rollups])


def _directory_bars(assessed: risk.Risk) -> list[Bar]:
    rollups = sorted(assessed.by_directory, key=lambda r: (-r.findings, r.key))[:_BARS]
    return _bars([(r.key, float(r.findings), str(r.findings)) for r in rollups])


def _bars(values: list[tuple[str, float, str]]) -> list[Bar]:
    top = max((v for _, v, _ in values), default=0.0) or 1.0
    return [Bar(label, value, text, round(100 * value / top, 1)) for label, value, text in values]


def _suggestion(finding: Finding) -> str:
    """What to do about a finding: its HIP equivalent or substitutes, else the rule's advice."""
    if finding.hip:
        return f"Use {finding.hip}"
    if finding.substitutions:
        return "See substitutes: " + ", ".join(finding.substitutions)
    return ""
