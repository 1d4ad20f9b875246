"""SARIF 2.1.0 for code-scanning services: one rule per rule id, fingerprints that survive line shifts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from migrate import __version__, risk
from migrate.assessment import Assessment
from migrate.baseline import fingerprints
from migrate.model import Finding, Rule, Severity
from migrate.escape import in_json
from migrate.report.json import indented
from migrate.weights import Weights

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
ROOT_ID = "SRCROOT"
FINGERPRINT = "rocmMigrate/v1"
LEVELS = {
    Severity.BLOCKER: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}


def render(record: Assessment) -> str:
    """The scan as one SARIF run."""
    return "".join(chunks(record))


_RESULTS = "\0results\0"
_RESULT_INDENT = "\n" + " " * 8  # a result's place in the log: $.runs[0].results[i]


def chunks(record: Assessment) -> Iterator[str]:
    """The text of render(RECORD) in pieces, a result a piece, for a writer that never holds the whole log (the
    log of a large tree, as data and as text, took ten times the memory of its findings)."""
    head, _, tail = indented(as_dict(record, results=False)).partition(indented(_RESULTS))
    yield in_json(head)
    index = _rule_index(record)
    lead = "[" + _RESULT_INDENT
    for finding, fingerprint in fingerprints(record.result.findings):
        yield lead + in_json(indented(_result(finding, index[finding.rule], fingerprint), _RESULT_INDENT))
        lead = "," + _RESULT_INDENT
    yield "[]" if lead.startswith("[") else _RESULT_INDENT[:-2] + "]"
    yield in_json(tail) + "\n"


def as_dict(record: Assessment, *, results: bool = True) -> dict[str, Any]:
    """The SARIF log as data (RESULTS False: without its results, for chunks to write them one by one)."""
    result = record.result
    index = _rule_index(record)
    rule_ids = list(index)
    firsts = {rule_id: next(f for f in result.findings if f.rule == rule_id) for rule_id in rule_ids}
    run = {
        "tool": {
            "driver": {
                "name": "rocm-migrate",
                "version": __version__,
                "rules": [_rule(firsts[r], record.rule(r), record.weights) for r in rule_ids],
            }
        },
        "originalUriBaseIds": {ROOT_ID: {"description": {"text": "The root of the scanned repository."}}},
        "results": ([_result(f, index[f.rule], print_) for f, print_ in fingerprints(result.findings)]
                    if results else _RESULTS),
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [_skip_notification(s.path, s.reason) for s in result.skipped],
            }
        ],
        "properties": _properties(record),
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rule_index(record: Assessment) -> dict[str, int]:
    """Each rule id the findings cite, with its place among the log's rules (in id order)."""
    return {rule_id: i for i, rule_id in enumerate(sorted({f.rule for f in record.result.findings}))}


def _rule(finding: Finding, rule: Rule | None, weights: Weights) -> dict[str, Any]:
    """A reportingDescriptor from the rule (or, for a rule we cannot load, its first finding)."""
    label = risk.label(finding.category, weights)
    title = rule.title if rule else f"{label}: {finding.rule}"
    message = rule.message if rule else finding.message
    hip = (rule.hip if rule else finding.hip) or "none known"
    severity = rule.severity if rule else finding.severity
    help_text = f"{message}\n\nCategory: {label}. ROCm equivalent: {hip}."
    return {
        "id": finding.rule,
        "name": "".join(part.capitalize() for part in finding.rule.split("-")),
        "shortDescription": {"text": title},
        "fullDescription": {"text": message},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": LEVELS[severity]},
        "properties": {"category": finding.category, "tags": ["rocm", "portability", finding.category]},
    }


def _result(finding: Finding, rule_index: int, fingerprint: str) -> dict[str, Any]:
    message = finding.message + (f" ROCm: {finding.hip}." if finding.hip else "")
    region = _region(finding.line, finding.column, finding.end_line, finding.evidence)
    result = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(finding.path), "region": region}}],
        "partialFingerprints": {FINGERPRINT: fingerprint},
        "properties": {"severity": finding.severity.label, "category": finding.category},
    }
    if finding.occurrences:
        result["relatedLocations"] = _related(finding)
    return result


def _region(line: int, column: int, end_line: int, evidence: str) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": line, "endLine": max(line, end_line)}
    if column >= 1:
        region["startColumn"] = column
    if evidence:
        region["snippet"] = {"text": evidence}
    return region


def _related(finding: Finding) -> list[dict[str, Any]]:
    """The other places a once-per-file finding stands for (the first is the result's own location)."""
    total = len(finding.occurrences)
    return [
        {
            "id": number,
            "physicalLocation": {
                "artifactLocation": _artifact(finding.path),
                "region": _region(o.line, o.column, o.end_line, o.evidence),
            },
            "message": {"text": f"{finding.rule}: place {number} of {total} in this file"},
        }
        for number, o in enumerate(finding.occurrences, start=1)
        if (o.line, o.column) != (finding.line, finding.column)
    ]


def _artifact(path: str) -> dict[str, str]:
    """A location relative to the repository root, percent-encoded (the file name's own bytes, UTF-8 or not)."""
    return {"uri": quote(path.encode("utf-8", "surrogateescape")), "uriBaseId": ROOT_ID}


def _skip_notification(path: str, reason: str) -> dict[str, Any]:
    return {
        "level": "note",
        "message": {"text": f"skipped: {reason}"},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(path)}}],
    }


def _properties(record: Assessment) -> dict[str, Any]:
    assessed = record.risk
    return {
        "targets": list(record.result.targets),
        "verdict": assessed.verdict,
        "riskScore": assessed.score,
        "effortDays": assessed.effort.to_dict(),
    }
