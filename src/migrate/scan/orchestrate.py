"""Orchestrate a scan: its inputs (inputs.py) -> each file's result (stored, or scanned) -> the project's findings.
Pure: returns a ScanResult."""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

from migrate import finding_status, preproc
from migrate.cache import Cache, open_cache
from migrate.config import Settings
from migrate.discover import Found, Records, source_file
from migrate.gcpause import paused
from migrate.inputs import Inputs, inputs, ruleset_for
from migrate.model import Evidence, FileResult, Finding, ScanResult, Skipped, SourceFile, Substitution, ordered
from migrate.packed import decode, encode
from migrate.ruleset import Ruleset
from migrate.scan import pool, project
from migrate.scan.file import Shortcuts
from migrate.scan.pool import Progress
from migrate.scan.spill import RESIDENT, Spill, SpilledFindings
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
    shortcuts: Shortcuts = Shortcuts(), substitutions: bool = True, assessed: bool = False,
) -> ScanResult:
    """Scan the files FOUND names: every finding and skip, sorted. The findings are read back from a spill
    (scan/spill.py) that the result owns: they are kept on disk as they come, a file's at a time. ASSESSED: the
    result is assessed next, so what the assessment reads of the tree whatever the findings is read while the
    workers run (finding_status.read_ahead)."""
    spill = Spill()
    try:
        return _scan(root, settings, found, spill, progress=progress, shortcuts=shortcuts, substitutions=substitutions,
                     assessed=assessed)
    except BaseException:  # an error, Ctrl-C: the findings' temp file goes now, not when the process ends
        spill.close()
        raise


def _scan(
    root: Path, settings: Settings, found: Inputs, spill: Spill, *, progress: Progress | None,
    shortcuts: Shortcuts, substitutions: bool, assessed: bool,
) -> ScanResult:
    ruleset = ruleset_for(settings)
    records, skipped, changes = found.found, list(found.skipped), found.changes
    store = open_cache(root, ruleset, settings)
    deadline = time.monotonic() + settings.time_budget
    raw = _Raw(records)  # each file's findings as the scan gave them: where in the spill
    guarded = unreadable = unscanned = 0
    held: list[Finding] = []
    evidence: list[Evidence] = []
    conditionals: dict[str, tuple[preproc.Directive, ...]] = {}
    with paused():  # the results the workers send (evidence, directives): many objects, no cycles
        meanwhile = _read_ahead(root, records) if assessed else None
        for index, result in _results(records, ruleset, settings, progress, store, deadline, shortcuts, meanwhile):
            unscanned += result.unscanned
            blob = result.packed or (encode(result.findings) if result.findings else b"")
            if blob:
                raw.add(index, spill.append(blob))
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
        facts = project.tree(found.packages, ruleset, conditionals, evidence, settings.targets,
                             map(_relpath_of(records), range(len(records))))
        moved, sites, again = _compiled(facts, spill, raw, seeing=_has_rocm_code(evidence))
        held.extend(moved)
        guarded += len(moved)
        paths = list(map(_relpath_of(records), range(len(records))))  # discovery's strings: a pointer each, for now
        status = project.status_of(evidence, guarded, paths)
        kept, built, baselined = _settled(facts, project.settling(status, sites, paths),
                                          project.narrowing(settings, changes), spill, raw, again)
        del again
        del paths
        held.extend(built)
        guarded += len(built)
        return ScanResult(
            root=str(root),
            targets=settings.targets,
            files_scanned=len(records) - unreadable,
            findings=kept,
            skipped=tuple(sorted(set(skipped))),
            guarded=guarded,
            vendored_paths=tuple(sorted(r.relpath for r in records if r.vendored)),
            baselined=baselined,
            substitutions=_substitutions(kept, settings) if substitutions else (),
            guarded_findings=tuple(sorted(held, key=Finding.key)),
            rocm=status,
            unscanned=unscanned,
        )


class _Raw:
    """Where each file's findings, as the scan gave them, lie in the spill: by the index of its record, in arrays (a
    dict by path held a key, a tuple and two numbers per file of a large tree), read back in path order."""

    def __init__(self, records: Sequence[Found]) -> None:
        self.records = records
        self.offsets = array("q", bytes(8 * len(records)))
        self.lengths = array("q", bytes(8 * len(records)))  # 0: no findings

    def add(self, index: int, where: tuple[int, int]) -> None:
        self.offsets[index], self.lengths[index] = where

    def in_path_order(self) -> Iterator[tuple[int, int]]:
        """(offset, length) of each file with findings, in path order (a file named twice: once)."""
        relpath, lengths = _relpath_of(self.records), self.lengths
        order = array("q", sorted(range(len(self.records)), key=relpath))
        for place, index in enumerate(order):
            later = order[place + 1] if place + 1 < len(order) else None
            if lengths[index] and (later is None or relpath(later) != relpath(index)):
                yield self.offsets[index], lengths[index]


def _relpath_of(records: Sequence[Found]) -> Callable[[int], str]:
    """The relpath of the record at an index (discovery's Records give it without making the record)."""
    if isinstance(records, Records):
        return records.relpath
    return lambda index: records[index].relpath


def _read_ahead(root: Path, records: Sequence[Found]) -> Callable[[], None]:
    """finding_status.read_ahead of the tree at ROOT whose files RECORDS lists."""

    def read() -> None:
        paths = list(map(_relpath_of(records), range(len(records))))
        finding_status.read_ahead(str(root), project.build_files(paths), paths, load_weights())

    return read


def _has_rocm_code(evidence: list[Evidence]) -> bool:
    """The tree has ROCm code (guards, HIP sources): only then does a finding's status read its kernel work."""
    return any(e.kind in ("guard", "hip-source") for e in evidence)


def _compiled(
    facts: project.Tree, spill: Spill, raw: _Raw, *, seeing: bool
) -> tuple[list[Finding], dict[str, bool], list[list[Finding] | None]]:
    """The first pass over the files' findings, in path order: (those a HIP build never compiles, and when SEEING,
    the kernel work the rest holds: finding_status.kernel_sites; the rest, each file's, for the second pass). The
    ROCm status needs the count of the first. The rest is kept while they are few (up to spill.RESIDENT findings, as
    many as the report keeps decoded); past them the second pass reads them again."""
    moved: list[Finding] = []
    sites: dict[str, bool] = {}
    again: list[list[Finding] | None] = []
    room = RESIDENT
    weights = load_weights()
    for where in raw.in_path_order():
        kept, out = project.compiled(facts, _read(spill, where))
        moved.extend(out)
        if seeing:
            sites.update(finding_status.kernel_sites(kept, weights))
        room -= len(kept)
        again.append(kept if room >= 0 else None)
    return moved, sites, again


def _settled(
    facts: project.Tree, how: project.Settling, narrowing: project.Narrowing, spill: Spill, raw: _Raw,
    again: list[list[Finding] | None],
) -> tuple[SpilledFindings, list[Finding], int]:
    """The second pass, in path order (from what the first kept of each file, AGAIN, or read again): (the findings
    of the report, in order and spilled again; the macro tests whose build already sets the macro; how many the
    baseline accepts)."""
    kept = SpilledFindings(spill)
    built: list[Finding] = []
    baselined = 0
    for place, where in enumerate(raw.in_path_order()):
        findings = again[place]
        again[place] = None  # let the first pass's copy go as the report's is made
        if findings is None:
            findings, _ = project.compiled(facts, _read(spill, where))
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
    records: Sequence[Found], ruleset: Ruleset, settings: Settings, progress: Progress | None, store: Cache,
    deadline: float, shortcuts: Shortcuts, meanwhile: Callable[[], None] | None,
) -> Iterator[tuple[int, FileResult]]:
    """(index in RECORDS, result): stored results for unchanged files; the others scanned (in a process pool when
    many) and stored, until DEADLINE: the files not scanned by then are skipped, with the reason (and not stored).
    Each file's SourceFile is made when it is needed, not kept (a Path each: ~0.5 KB a file of a large tree).
    MEANWHILE runs while a pool's workers scan (pool.computed)."""
    misses = array("q", range(len(records)) if not store.enabled else ())
    for index, record in enumerate(records if store.enabled else ()):
        hit = store.get(source_file(record))
        if hit is None:
            misses.append(index)
        else:
            yield index, hit
    pending = _Sources(records, misses)
    done = bytearray(len(misses))
    for position, result in pool.computed(pending, ruleset, settings, progress, deadline, shortcuts, meanwhile):
        done[position] = 1
        yield misses[position], store.put(pending[position], result) if store.enabled else result
    reason = f"not scanned: the scan ran out of its time budget ({settings.time_budget:g} s; see --time-budget)"
    for position, index in enumerate(misses):
        if not done[position]:
            relpath = _relpath_of(records)(index)
            yield index, FileResult(relpath, skipped=Skipped(relpath, reason), unscanned=True)


class _Sources(Sequence[SourceFile]):
    """The SourceFiles of RECORDS at INDICES, each made as it is asked for."""

    def __init__(self, records: Sequence[Found], indices: Sequence[int]) -> None:
        self.records, self.indices = records, indices

    def __len__(self) -> int:
        return len(self.indices)

    @overload
    def __getitem__(self, index: int) -> SourceFile: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[SourceFile]: ...

    def __getitem__(self, index: int | slice) -> SourceFile | Sequence[SourceFile]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return source_file(self.records[self.indices[index]])

    def __iter__(self) -> Iterator[SourceFile]:
        records = self.records
        return (source_file(records[i]) for i in self.indices)
