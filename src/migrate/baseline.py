"""Accepted findings (.migrate-baseline.json): fingerprints that survive edits that only shift lines."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from migrate import __version__
from migrate.bounded import Refused, read_bytes
from migrate.errors import InputError
from migrate.model import Finding, InReportOrder, in_order
from migrate.escape import in_json

SCHEMA = "rocm-migrate/baseline/1"
MAX_BASELINE = 64 * 1024 * 1024  # ~250,000 accepted findings


def fingerprints(findings: Iterable[Finding]) -> Iterator[tuple[Finding, str]]:
    """Each finding with its fingerprint: rule, path, whitespace-normalised evidence, and the
    occurrence index among findings identical in those three (in line order)."""
    seen: Counter[tuple[str, str, str]] = Counter()
    path: str | None = None
    items = findings if isinstance(findings, InReportOrder) else list(findings)  # a scan's: read, never listed
    for finding in items if isinstance(items, InReportOrder) or in_order(items) else sorted(items, key=Finding.key):
        if finding.path != path:  # the findings of a path come together: only its own can share an identity
            seen.clear()
            path = finding.path
        identity = (finding.rule, finding.path, " ".join(finding.evidence.split()))
        index = seen[identity]
        seen[identity] += 1
        text = "\0".join((*identity, str(index)))
        yield finding, hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def render(findings: Iterable[Finding]) -> str:
    """The baseline file for FINDINGS: deterministic JSON, one entry per finding."""
    entries = [
        {"fingerprint": print_, "rule": f.rule, "path": f.path, "line": f.line, "evidence": f.evidence}
        for f, print_ in fingerprints(findings)
    ]
    document = {"schema": SCHEMA, "tool": {"name": "rocm-migrate", "version": __version__}, "findings": entries}

    return in_json(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"


def load(path: Path) -> frozenset[str]:
    """The fingerprints recorded in the baseline file at PATH."""
    try:
        data = json.loads(read_bytes(path, limit=MAX_BASELINE).decode("utf-8"))
    except FileNotFoundError:
        raise InputError(f"baseline file not found: {path}") from None
    except Refused as exc:
        raise InputError(f"cannot read baseline {path}: {exc} (a baseline is a regular file)") from None
    except OSError as exc:
        raise InputError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"cannot read baseline {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("findings"), list):
        raise InputError(f"{path} is not a migrate baseline (expected schema {SCHEMA})")
    return frozenset(e["fingerprint"] for e in data["findings"] if isinstance(e, dict) and "fingerprint" in e)


def new_findings(findings: Iterable[Finding], known: frozenset[str]) -> tuple[Finding, ...]:
    """The findings whose fingerprints are not in KNOWN, sorted."""
    return tuple(f for f, print_ in fingerprints(findings) if print_ not in known)
