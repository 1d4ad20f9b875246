"""Findings as compact bytes and back: what a worker sends the parent, what a scan keeps on disk (scan/spill.py)
and what the cache holds until it writes: ~83 bytes a finding, decoded in less time than its dataclass unpickles."""

from __future__ import annotations

import marshal
from collections.abc import Iterable
from sys import intern

from migrate.model import Finding, Occurrence, Severity

_FIELDS = ("path", "line", "column", "rule", "category", "severity", "end_line", "message", "evidence", "hip",
           "substitutions", "vendored", "symbol", "effort", "status", "occurrences")
_SEVERITY = _FIELDS.index("severity")
_OCCURRENCES = _FIELDS.index("occurrences")
_SEVERITIES = tuple(Severity)


def encode(findings: Iterable[Finding]) -> bytes:
    """FINDINGS as bytes decode reads back: plain tuples in marshal's format (a worker's objects, shared within the
    block: a file's findings repeat their path and a rule's message)."""
    rows = []
    for finding in findings:
        fields = finding.__dict__
        row = [fields[name] for name in _FIELDS]
        row[_SEVERITY] = int(row[_SEVERITY])
        if row[_OCCURRENCES]:
            row[_OCCURRENCES] = tuple(map(tuple, row[_OCCURRENCES]))
        rows.append(tuple(row))
    return marshal.dumps(tuple(rows))


def decode(blob: bytes) -> list[Finding]:
    """The findings encode wrote into BLOB, equal to those it was given."""
    found = []
    new, names, severities, occurrence = object.__new__, _FIELDS, _SEVERITIES, tuple.__new__
    for row in marshal.loads(blob):
        finding = new(Finding)
        fields = finding.__dict__
        for name, value in zip(names, row):  # one key at a time: the dict stays one of shared keys (200 bytes, not 464)
            fields[name] = value
        # the one copy of the path (discovery's, interned): what keeps a path (a set of files, a memo) keeps no copy
        # of its own for each time a large scan's findings are read back from disk
        fields["path"] = intern(row[0])
        fields["severity"] = severities[row[_SEVERITY]]
        if row[_OCCURRENCES]:
            fields["occurrences"] = tuple([occurrence(Occurrence, place) for place in row[_OCCURRENCES]])
        found.append(finding)
    return found
