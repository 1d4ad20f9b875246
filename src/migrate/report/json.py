"""The machine-readable scan result (schema rocm-migrate/scan/1, documented in docs/json-schema.md)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from migrate import __version__
from migrate.model import SCHEMA, ScanResult, Severity


def summary(result: ScanResult) -> dict[str, Any]:
    """Counts by severity (every level) and by category (those present)."""
    by_severity = Counter(f.severity.label for f in result.findings)
    by_category = Counter(f.category for f in result.findings)
    return {
        "files_scanned": result.files_scanned,
        "files_skipped": len(result.skipped),
        "findings": len(result.findings),
        "by_severity": {s.label: by_severity.get(s.label, 0) for s in Severity},
        "by_category": dict(sorted(by_category.items())),
        "guarded_findings": result.guarded,
    }


def as_dict(result: ScanResult) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "tool": {"name": "rocm-migrate", "version": __version__},
        "root": result.root,
        "targets": list(result.targets),
        "summary": summary(result),
        "findings": [f.to_dict() for f in result.findings],
        "skipped": [s.to_dict() for s in result.skipped],
    }


def render(result: ScanResult) -> str:
    return json.dumps(as_dict(result), indent=2, ensure_ascii=False) + "\n"
