"""The machine-readable scan result (schema rocm-migrate/scan/1, documented in docs/json-schema.md)."""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from json.encoder import encode_basestring
from typing import Any

from migrate import __version__, risk, targets
from migrate.assessment import Assessment
from migrate.model import SCHEMA, Finding, ScanResult, Severity
from migrate.escape import in_json


def summary(record: Assessment) -> dict[str, Any]:
    """Counts by severity (every level) and by category (those present)."""
    result = record.result
    by_severity: Counter[str] = Counter()
    by_category: Counter[str] = Counter()
    for finding in result.findings:  # one read of them (a large scan's come back from disk)
        by_severity[finding.severity.label] += 1
        by_category[finding.category] += 1
    return {
        "files_scanned": result.files_scanned,
        "files_skipped": len(result.skipped),
        "findings": len(result.findings),
        "by_severity": {s.label: by_severity.get(s.label, 0) for s in Severity},
        "by_category": dict(sorted(by_category.items())),
        "guarded_findings": result.guarded,
        **_risk(record),
        "rocm_status": _rocm_status(record),
    }


def _rocm_status(record: Assessment) -> dict[str, Any] | None:
    """The repository's ROCm level with its evidence; the components' remaining and optional work."""
    result, assessed = record.result, record.risk
    status = result.rocm
    if status is None:
        return None
    return {
        "level": status.level,
        "score": status.score,
        "counts": dict(status.counts),
        "evidence": [e.to_dict() for e in status.evidence],
        "never_compiled": [
            {"rule": f.rule, "path": f.path, "line": f.line, "category": f.category} for f in result.guarded_findings
        ],
        "components": [c.to_dict() for c in assessed.components],
        "optional_effort_days": assessed.optional.to_dict(),
        "collection": assessed.collection.to_dict() if assessed.collection else None,
    }


def _risk(record: Assessment) -> dict[str, Any]:
    """Risk score, effort, verdict and drivers (migrate.risk); per target when several are given."""
    fields = risk_fields(record.risk)
    if record.per_target:
        fields["per_target"] = [
            {"target": gfx, "wavefront": targets.wavefront_size(gfx), **risk_fields(assessed)}
            for gfx, assessed in record.per_target
        ]
    return fields


def risk_fields(assessed: risk.Risk) -> dict[str, Any]:
    """The JSON keys of one assessment."""
    return {
        "risk_score": assessed.score,
        "effort_days": assessed.effort.to_dict(),
        "verdict": assessed.verdict,
        "verdict_basis": assessed.basis,
        "drivers": [d.to_dict() for d in assessed.drivers],
        "blockers": assessed.blockers,
    }


def as_dict(record: Assessment, *, findings: bool = True) -> dict[str, Any]:
    """The report as JSON data (FINDINGS False: without the findings nor the substitutions' answers, for render to
    write them itself)."""
    result = record.result
    return {
        "schema": SCHEMA,
        "tool": {"name": "rocm-migrate", "version": __version__},
        "root": result.root,
        "targets": list(result.targets),
        "summary": summary(record),
        "findings": [f.to_dict() for f in listed(result)] if findings else [],
        "substitutions": [(s if findings else replace(s, answers=())).to_dict() for s in result.substitutions],
        "target_support": [targets.describe(gfx) for gfx in result.targets],
        "skipped": [s.to_dict() for s in result.skipped],
    }


def listed(result: ScanResult) -> Iterator[Finding]:
    """Every finding in report order: the work, and (status guarded, info) the sites a ROCm build never compiles.
    Both come in report order: merged as they are read, never a list of them all (a scan's are read back from disk)."""
    if not result.guarded_findings:
        return iter(result.findings)
    return heapq.merge(result.findings, result.guarded_findings, key=Finding.key)


_FINDINGS = "\0findings\0"


def render(record: Assessment) -> str:
    """Indented JSON with one finding per line: readable, diffable, and fast for 100,000 findings."""
    return "".join(chunks(record))


def chunks(record: Assessment) -> Iterator[str]:
    """The text of render(RECORD) in pieces, a finding a piece, for a writer that never holds the whole report (a
    large tree's is 75 MB, and each whole-text copy of it as much again)."""
    data = as_dict(record, findings=False)
    data["findings"] = _FINDINGS
    for index, substitution in enumerate(data["substitutions"]):  # written as they are read, as the findings are
        substitution["answers"] = f"{_ANSWERS}{index}\0"
    head, _, tail = indented(data).partition(json.dumps(_FINDINGS))
    yield in_json(head)
    lead = "[\n    "
    for finding in listed(record.result):
        line = finding_json(finding)
        # only a line with a character beyond ASCII can hold one that in_json escapes: most lines skip its search
        yield lead + (line if line.isascii() else in_json(line))
        lead = ",\n    "
    yield "[]" if lead == "[\n    " else "\n  ]"
    for index, substitution in enumerate(record.result.substitutions):
        before, _, tail = tail.partition(json.dumps(f"{_ANSWERS}{index}\0"))
        yield in_json(before)
        yield from _answers(substitution.answers, "\n" + before[before.rfind("\n") + 1:].partition('"')[0])
    yield in_json(tail) + "\n"


_ANSWERS = "\0answers\0"


def _answers(pairs: tuple[tuple[str, str], ...], indent: str) -> Iterator[str]:
    """The text Substitution.to_dict's answers of PAIRS take at INDENT, a pair a piece: a substitution answers a
    (rule, path) pair per file, and a large tree's, as dicts and text all at once, took ~50 MB at 60,000 files."""
    if not pairs:
        yield "[]"
        return
    inner = indent + "  "
    lead = "[" + inner
    for rule, path in pairs:
        piece = indented({"rule": rule, "path": path}, inner)
        yield lead + (piece if piece.isascii() else in_json(piece))
        lead = "," + inner
    yield indent + "]"


_STRING = encode_basestring  # what json.dumps(..., ensure_ascii=False) writes for a str


def indented(value: Any, indent: str = "\n") -> str:
    """json.dumps(VALUE, indent=2, ensure_ascii=False), written directly: with an indent the standard library
    encodes in Python, a generator per list and dict, and a large tree's substitutions (6 MB of place lists) and
    ROCm status took 0.15 s of the parent's time, twice this."""
    if isinstance(value, str):
        return _STRING(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    inner = indent + "  "
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[" + inner + ("," + inner).join([indented(item, inner) for item in value]) + indent + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [_key(key) + ": " + indented(item, inner) for key, item in value.items()]
        return "{" + inner + ("," + inner).join(items) + indent + "}"
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _key(key: Any) -> str:
    """A dict key as json.dumps writes it: a string, or a number, boolean or null written as one."""
    if isinstance(key, str):
        return _STRING(key)
    if isinstance(key, float):
        return _STRING(_float(key))
    if key is True or key is False or key is None:
        return _STRING(indented(key))
    if isinstance(key, int):
        return _STRING(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (_INFINITY, -_INFINITY):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


_INFINITY = float("inf")


def finding_json(finding: Finding) -> str:
    """json.dumps(finding.to_dict(), ensure_ascii=False), written directly: no dict per finding (a third of the
    report's time on large scans). tests/report/test_reports.py holds the two equal."""
    hip = "null" if finding.hip is None else _STRING(finding.hip)
    text = (
        f'{{"rule": {_STRING(finding.rule)}, "category": {_STRING(finding.category)}, '
        f'"severity": {_STRING(finding.severity.label)}, "path": {_STRING(finding.path)}, "line": {int(finding.line)}, '
        f'"column": {int(finding.column)}, "end_line": {int(finding.end_line)}, '
        f'"message": {_STRING(finding.message)}, "evidence": {_STRING(finding.evidence)}, "hip": {hip}'
    )
    if finding.substitutions:
        text += ', "substitutions": [' + ", ".join(map(_STRING, finding.substitutions)) + "]"
    if finding.vendored:
        text += ', "vendored": true'
    if finding.symbol is not None:
        text += f', "symbol": {_STRING(finding.symbol)}'
    if finding.effort is not None:
        text += f', "effort": {json.dumps(list(finding.effort))}'
    text += f', "status": {_STRING(finding.status)}'
    if finding.occurrences:
        text += ', "occurrences": [' + ", ".join(
            f'{{"line": {int(o.line)}, "column": {int(o.column)}, "end_line": {int(o.end_line)}, '
            f'"evidence": {_STRING(o.evidence)}}}'
            for o in finding.occurrences
        ) + "]"
    return text + "}"
