"""Orchestrate a scan: its inputs (inputs.py) -> each file's result (stored, or scanned) -> the project's findings.
Pure: returns a ScanResult."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from migrate import finding_status, preproc
from migrate.cache import Cache, open_cache
from migrate.config import Settings
from migrate.gcpause import paused
from migrate.inputs import Inputs, inputs, ruleset_for
from migrate.model import Evidence, FileResult, Finding, ScanResult, Skipped, SourceFile, Substitution, ordered
from migrate.packed import decode, encode
from migrate.ruleset import Ruleset
from migrate.scan import pool, project
from migrate.scan.file import Shortcuts
from migrate.scan.pool import Progress
from migrate.scan.spill import Spill, SpilledFindings
from migrate.weights import load_weights


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
    """Scan the files FOUND names: every finding and skip, sorted. The findings are read back from a spill
    (scan/spill.py) that the result owns: they are kept on disk as they come, a file's at a time."""
    spill = Spill()
    try:
        return _scan(root, settings, found, spill, progress=progress, shortcuts=shortcuts, substitutions=substitutions)
    except BaseException:  # an error, Ctrl-C: the findings' temp file goes now, not when the process ends
        spill.close()
        raise


def _scan(
    root: Path, settings: Settings, found: Inputs, spill: Spill, *, progress: Progress | None,
    shortcuts: Shortcuts, substitutions: bool,
) -> ScanResult:
    ruleset = ruleset_for(settings)
    sources, skipped, changes = list(found.sources), list(found.skipped), found.changes
    store = open_cache(root, ruleset, settings)
    deadline = time.monotonic() + settings.time_budget
    raw: dict[str, tuple[int, int]] = {}  # each file's findings as the scan gave them: where in the spill
    guarded = unreadable = unscanned = 0
    held: list[Finding] = []
    evidence: list[Evidence] = []
    conditionals: dict[str, tuple[preproc.Directive, ...]] = {}
    with paused():  # the results the workers send (evidence, directives): many objects, no cycles
        for result in _results(sources, ruleset, settings, progress, store, deadline, shortcuts):
            unscanned += result.unscanned
            blob = result.packed or (encode(result.findings) if result.findings else b"")
            if blob:
                raw[result.relpath] = spill.append(blob)
            guarded += result.guarded
            held.extend(result.guarded_findings)
            evidence.extend(result.evidence)
            if result.directives:
                conditionals[result.relpath] = tuple(preproc.Directive(*d) for d in result.directives)
            if result.skipped:
                skipped.append(result.skipped)
                unreadable += not result.partial
    store.save(complete=found.complete and not unscanned)
    with paused():  # each file's findings, made and let go in turn (those kept, frozen after): no cycles
        facts = project.tree(found.packages, ruleset, conditionals, evidence, settings.targets)
        moved, sites = _compiled(facts, spill, raw, seeing=_has_rocm_code(evidence))
        held.extend(moved)
        guarded += len(moved)
        status = project.status_of(evidence, guarded, sources)
        kept, built, baselined = _settled(facts, project.settling(status, sites, sources),
                                          project.narrowing(settings, changes), spill, raw)
        held.extend(built)
        guarded += len(built)
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


def _has_rocm_code(evidence: list[Evidence]) -> bool:
    """The tree has ROCm code (guards, HIP sources): only then does a finding's status read its kernel work."""
    return any(e.kind in ("guard", "hip-source") for e in evidence)


def _compiled(
    facts: project.Tree, spill: Spill, raw: dict[str, tuple[int, int]], *, seeing: bool
) -> tuple[list[Finding], dict[str, bool]]:
    """The first pass over the files' findings, in path order: (those a HIP build never compiles, and when SEEING,
    the kernel work the rest holds: finding_status.kernel_sites). The ROCm status needs the count of the first;
    the rest is made again in the second pass, cheaper than kept."""
    moved: list[Finding] = []
    sites: dict[str, bool] = {}
    weights = load_weights()
    for path in sorted(raw):
        kept, out = project.compiled(facts, _read(spill, raw[path]))
        moved.extend(out)
        if seeing:
            sites.update(finding_status.kernel_sites(kept, weights))
    return moved, sites


def _settled(
    facts: project.Tree, how: project.Settling, narrowing: project.Narrowing, spill: Spill,
    raw: dict[str, tuple[int, int]],
) -> tuple[SpilledFindings, list[Finding], int]:
    """The second pass, in path order: (the findings of the report, in order and spilled again; the macro tests
    whose build already sets the macro; how many the baseline accepts)."""
    kept = SpilledFindings(spill)
    built: list[Finding] = []
    baselined = 0
    for path in sorted(raw):
        findings, _ = project.compiled(facts, _read(spill, raw[path]))
        findings, out = project.settled(how, findings)
        built.extend(out)
        findings, accepted = project.narrow(narrowing, findings)
        baselined += accepted
        kept.add(findings)
    return kept, built, baselined


def _read(spill: Spill, where: tuple[int, int]) -> list[Finding]:
    """A file's findings from the spill, in report order (a worker gives them in rule order)."""
    return list(ordered(decode(spill.read(*where))))


def _substitutions(findings: Sequence[Finding], settings: Settings) -> tuple[Substitution, ...]:
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
