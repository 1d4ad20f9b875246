"""Orchestrate a scan: its inputs (inputs.py) -> each file's result (stored, or scanned) -> the project's findings.
Pure: returns a ScanResult."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from migrate import preproc, rocm_status
from migrate.cache import Cache, open_cache
from migrate.config import Settings
from migrate.gcpause import paused
from migrate.inputs import Inputs, inputs, ruleset_for
from migrate.model import (
    Evidence, FileResult, Finding, Occurrence, ScanResult, Skipped, SourceFile, Substitution, ordered,
)
from migrate.ruleset import Ruleset
from migrate.scan import pool, project
from migrate.scan.file import Shortcuts
from migrate.scan.pool import Progress


def scan(
    root: Path,
    settings: Settings,
    *,
    files: Iterable[Path] = (),
    progress: Progress | None = None,
    shortcuts: Shortcuts = Shortcuts(),
    substitutions: bool = True,
) -> ScanResult:
    """Scan ROOT (or only FILES inside it) and return every finding and skip, sorted (without the substitutions
    that answer them when SUBSTITUTIONS is False: `check` reads only the findings)."""
    found = inputs(root, settings, files)
    return scan_inputs(root, settings, found, progress=progress, shortcuts=shortcuts, substitutions=substitutions)


def scan_inputs(
    root: Path, settings: Settings, found: Inputs, *, progress: Progress | None = None,
    shortcuts: Shortcuts = Shortcuts(), substitutions: bool = True,
) -> ScanResult:
    """Scan the files FOUND names: every finding and skip, sorted."""
    ruleset = ruleset_for(settings)
    sources, skipped, changes = list(found.sources), list(found.skipped), found.changes
    store = open_cache(root, ruleset, settings)
    deadline = time.monotonic() + settings.time_budget
    by_path: dict[str, tuple[Finding, ...]] = {}
    guarded = unreadable = unscanned = 0
    held: list[Finding] = []
    evidence: list[Evidence] = []
    conditionals: dict[str, tuple[preproc.Directive, ...]] = {}
    strings: dict[Any, Any] = {}  # str -> str, int -> int, tuple -> tuple
    with paused():  # the results the workers send (findings, evidence): many objects, no cycles
        for result in _results(sources, ruleset, settings, progress, store, deadline, shortcuts):
            unscanned += result.unscanned
            if result.findings:
                by_path[result.relpath] = _shared(result.findings, strings)
            guarded += result.guarded
            held.extend(_shared(result.guarded_findings, strings))
            evidence.extend(result.evidence)
            if result.directives:
                conditionals[result.relpath] = tuple(preproc.Directive(*d) for d in result.directives)
            if result.skipped:
                skipped.append(result.skipped)
                unreadable += not result.partial
    del strings
    store.save(complete=found.complete and not unscanned)
    findings = _in_path_order(by_path)
    del by_path
    with paused():  # the findings of a whole tree, restatused and sorted: no cycles to collect
        own = project.warp_constants(project.without_first_party(findings, found.packages, ruleset), conditionals,
                                     settings.targets)
        findings, moved = project.never_compiled(own, conditionals, evidence)
        held.extend(moved)
        guarded += len(moved)
        status = project.status_of([e for e in evidence if e.kind not in rocm_status.SOURCE_LISTS], guarded, sources)
        findings = project.build_switches(findings, status)
        findings = project.with_status(rocm_status.variants(findings, (s.relpath for s in sources)), status)
        built = [f for f in findings if f.status == "guarded"]  # macro tests whose build already sets the macro
        if built:
            findings = [f for f in findings if f.status != "guarded"]
            held.extend(built)
            guarded += len(built)
        kept, baselined = project.narrow(tuple(ordered(findings)), settings, changes)
        return ScanResult(
            root=str(root),
            targets=settings.targets,
            files_scanned=len(sources) - unreadable,
            findings=kept,
            skipped=tuple(sorted(set(skipped))),
            guarded=guarded,
            vendored_paths=tuple(sorted(s.relpath for s in sources if s.vendored)),
            baselined=baselined,
            substitutions=_substitutions(kept, settings) if substitutions else (),
            guarded_findings=tuple(sorted(held, key=Finding.key)),
            rocm=status,
            unscanned=unscanned,
        )


# the strings, and the line numbers and substitution tuples (each unpickled as its own object, 28-60 bytes a finding)
_SHARED = ("path", "rule", "category", "message", "evidence", "hip", "symbol", "status", "line", "column", "end_line",
           "substitutions")


def _shared(findings: tuple[Finding, ...], strings: dict[Any, Any]) -> tuple[Finding, ...]:
    """FINDINGS with each of their values the one copy STRINGS keeps. Each result comes unpickled from a worker
    (or read from the cache) with copies of its own, and a large tree's findings repeat a few messages, rules and
    lines of code thousands of times: kept once, the findings of a whole tree take 30-40% less memory."""
    for finding in findings:
        fields = finding.__dict__  # a result just received: no one else holds it yet, and its values stay equal
        for name in _SHARED:
            value = fields[name]
            if value is not None:
                fields[name] = strings.setdefault(value, value)
        if finding.occurrences:
            fields["occurrences"] = _shared_places(finding.occurrences, strings)
    return findings


def _shared_places(places: tuple[Occurrence, ...], strings: dict[Any, Any]) -> tuple[Occurrence, ...]:
    """PLACES with each evidence the one copy STRINGS keeps (a folded finding of a large header has a thousand)."""
    new, shared = tuple.__new__, strings.setdefault
    return tuple([new(Occurrence, (line, column, end, shared(text, text))) for line, column, end, text in places])


def _in_path_order(by_path: dict[str, tuple[Finding, ...]]) -> list[Finding]:
    """The findings of every file, the files in path order and each one's findings in report order: the whole
    tree's findings then come in report order without a sort of them all (its keys: 30 MB for 177,000 findings)."""
    return [finding for path in sorted(by_path) for finding in ordered(by_path[path])]


def _substitutions(findings: tuple[Finding, ...], settings: Settings) -> tuple[Substitution, ...]:
    from migrate.substitutions import propose  # here: `check` and `baseline` never ask for substitutions

    return propose(findings, settings.targets)


def _results(
    sources: list[SourceFile], ruleset: Ruleset, settings: Settings, progress: Progress | None, store: Cache,
    deadline: float, shortcuts: Shortcuts,
) -> Iterator[FileResult]:
    """Stored results for unchanged files; the others scanned (in a process pool when many) and stored, until
    DEADLINE: the files not scanned by then are skipped, with the reason (and not stored)."""
    misses = []
    for source in sources:
        hit = store.get(source)
        if hit is None:
            misses.append(source)
        else:
            yield hit
    by_path = {s.relpath: s for s in misses}
    for result in pool.computed(misses, ruleset, settings, progress, deadline, shortcuts):
        yield store.put(by_path.pop(result.relpath), result)
    reason = f"not scanned: the scan ran out of its time budget ({settings.time_budget:g} s; see --time-budget)"
    for relpath in by_path:
        yield FileResult(relpath, skipped=Skipped(relpath, reason), unscanned=True)
