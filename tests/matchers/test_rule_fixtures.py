"""Walk the annotated rule fixtures: `ruleid: ID` marks a line that must fire ID, `ok: ID` one that must not, and
`guarded: ID` one where ID must be reported as guarded (code that already handles ROCm: info, never work).

An annotation stands alone on the line(s) above its target, or trails the target line itself.
A finding on a line that carries no `ruleid:` for its rule fails the test too; so does a guarded finding without its
`guarded:` annotation, in a file that has any.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.model import Finding
from migrate.ruleset import load_builtin
from migrate.scan import scan

from conftest import FIXTURES

RULE_FIXTURES = FIXTURES / "rules"
_ANNOTATION = re.compile(r"(?:#|//|/\*|<!--|;|%|!)\s*(ruleid|ok|guarded):\s*([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)")
Lines = dict[int, set[str]]


def annotations(path: Path) -> tuple[Lines, Lines]:
    """(line -> rules that must fire there, line -> rules that must not)."""
    must, must_not, _guarded = all_annotations(path)
    return must, must_not


def all_annotations(path: Path) -> tuple[Lines, Lines, Lines]:
    """(line -> rules that must fire there, that must not, that must be reported as guarded)."""
    found_by_kind: dict[str, Lines] = {kind: defaultdict(set) for kind in ("ruleid", "ok", "guarded")}
    pending: list[tuple[str, list[str]]] = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, text in enumerate(lines, start=1):
        found = [(m.group(1), [i.strip() for i in m.group(2).split(",")]) for m in _ANNOTATION.finditer(text)]
        code = _ANNOTATION.split(text)[0].strip().rstrip("#/<!-;%!").strip()
        if found and not code:
            pending.extend(found)
            continue
        if not text.strip():
            continue
        for kind, ids in pending + found:
            found_by_kind[kind][number].update(ids)
        pending = []
    return found_by_kind["ruleid"], found_by_kind["ok"], found_by_kind["guarded"]


@cache
def fixture_findings() -> dict[str, list[Finding]]:
    """The fixtures' findings by path, guarded ones included (their status says which they are)."""
    result = scan(RULE_FIXTURES, Settings(jobs=1, max_file_size=10**7))
    assert not result.skipped, f"rule fixtures were skipped: {result.skipped}"
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for finding in (*result.findings, *result.guarded_findings):
        grouped[finding.path].append(finding)
    return grouped


def _fixture_files() -> list[Path]:
    return sorted(p for p in RULE_FIXTURES.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(RULE_FIXTURES)))
def test_fixture_annotations(path: Path) -> None:
    relpath = path.relative_to(RULE_FIXTURES).as_posix()
    must, must_not, guarded = all_annotations(path)
    fired: Lines = defaultdict(set)
    held: Lines = defaultdict(set)
    for finding in fixture_findings().get(relpath, []):
        (held if finding.status == "guarded" else fired)[finding.line].add(finding.rule)
    problems = [f"{relpath}:{line}: {rule} is not reported as guarded"
                for line, ids in sorted(guarded.items()) for rule in sorted(ids - held[line])]
    if guarded:
        problems += [f"{relpath}:{line}: unexpected guarded {rule} (no annotation)"
                     for line, ids in sorted(held.items()) for rule in sorted(ids - guarded[line])]
    for line, ids in sorted(must.items()):
        for rule in sorted(ids - fired[line]):
            problems.append(f"{relpath}:{line}: expected {rule}, got {sorted(fired[line]) or 'nothing'}")
    for line, ids in sorted(must_not.items()):
        for rule in sorted(ids & fired[line]):
            problems.append(f"{relpath}:{line}: {rule} fired on a line marked ok")
    for line, ids in sorted(fired.items()):
        for rule in sorted(ids - must[line] - must_not[line]):
            problems.append(f"{relpath}:{line}: unexpected {rule} (no annotation)")
    assert not problems, "\n".join(problems)


def test_every_rule_has_a_firing_and_a_quiet_fixture() -> None:
    fires: set[str] = set()
    quiet: set[str] = set()
    for path in _fixture_files():
        must, must_not = annotations(path)
        fires.update(*must.values()) if must else None
        quiet.update(*must_not.values()) if must_not else None
    rules = {r.id for r in load_builtin().rules}
    assert sorted(rules - fires) == [], "rules with no fixture that fires them"
    assert sorted(rules - quiet) == [], "rules with no look-alike fixture that must stay quiet"
