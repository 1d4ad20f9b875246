"""Scan a tree: discover -> prefilter -> lex or parse -> match -> findings, each step in its own module here."""

from __future__ import annotations

from migrate.scan.file import Shortcuts, scan_file
from migrate.scan.findings import MAX_FINDINGS_PER_FILE, MAX_FINDINGS_PER_RULE, MAX_OCCURRENCES
from migrate.inputs import Inputs, inputs, own_packages, ruleset_for
from migrate.scan.orchestrate import scan, scan_inputs
from migrate.scan.pool import Progress, worker_count

__all__ = [
    "MAX_FINDINGS_PER_FILE", "MAX_FINDINGS_PER_RULE", "MAX_OCCURRENCES", "Inputs", "Progress", "Shortcuts", "inputs",
    "own_packages", "ruleset_for", "scan", "scan_file", "scan_inputs", "worker_count",
]
