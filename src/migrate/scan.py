"""Orchestrate a scan: discover -> prefilter -> parse -> match -> findings. Pure: returns a ScanResult."""

from __future__ import annotations

import multiprocessing
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path

from migrate import matchers, preproc, rocm_status, targets
from migrate.baseline import load as load_baseline
from migrate.baseline import new_findings
from migrate.cache import Cache, load_ruleset, open_cache
from migrate.config import Settings, check_rule_ids
from migrate.discover import discover
from migrate.gitdiff import Changes, changed_lines, keep_changed
from migrate.matchers import Hit
from migrate.model import (
    Evidence, FileKind, FileResult, Finding, Occurrence, RocmStatus, Rule, ScanResult, Severity, Skipped, SourceFile,
)
from migrate.parse import Document, ParseError, parse, read_text
from migrate.ruleset import Ruleset, load, load_builtin, rules_dir
from migrate.substitutions import propose

Progress = Callable[[int, int], None]
_PARALLEL_FROM = 64  # below this many files a process pool costs more than it saves
_OCCURRENCE_EVIDENCE = 200  # characters per occurrence: a minified line must not blow up the report


def scan(
    root: Path,
    settings: Settings,
    *,
    files: Iterable[Path] = (),
    progress: Progress | None = None,
) -> ScanResult:
    """Scan ROOT (or only FILES inside it) and return every finding and skip, sorted."""
    ruleset = ruleset_for(settings)
    sources: list[SourceFile] = []
    skipped: list[Skipped] = []
    for item in discover(
        root, files=files, exclude=settings.exclude, include=settings.include, max_file_size=settings.max_file_size
    ):
        if isinstance(item, Skipped):
            skipped.append(item)
        else:
            sources.append(item)
    changes = changed_lines(root, settings.diff_base) if settings.diff_base else None
    if changes is not None:
        sources = [s for s in sources if s.relpath in changes]
    store = open_cache(root, ruleset, settings)
    findings: list[Finding] = []
    guarded = unreadable = 0
    held: list[Finding] = []
    evidence: list[Evidence] = []
    conditionals: dict[str, tuple[preproc.Directive, ...]] = {}
    for result in _results(sources, ruleset, settings, progress, store):
        findings.extend(result.findings)
        guarded += result.guarded
        held.extend(result.guarded_findings)
        evidence.extend(result.evidence)
        if result.directives:
            conditionals[result.relpath] = tuple(preproc.Directive(*d) for d in result.directives)
        if result.skipped:
            skipped.append(result.skipped)
            unreadable += 1
    store.save(complete=not files and changes is None)
    findings, moved = _never_compiled(_without_first_party(findings, root, ruleset), conditionals, evidence)
    held.extend(moved)
    guarded += len(moved)
    status = _status([e for e in evidence if e.kind not in rocm_status.SOURCE_LISTS], guarded, sources)
    findings = _with_status(rocm_status.variants(findings, (s.relpath for s in sources)), status)
    kept, baselined = _narrow(tuple(sorted(set(findings), key=Finding.key)), settings, changes)
    return ScanResult(
        root=str(root),
        targets=settings.targets,
        files_scanned=len(sources) - unreadable,
        findings=kept,
        skipped=tuple(sorted(set(skipped))),
        guarded=guarded,
        vendored_paths=tuple(sorted(s.relpath for s in sources if s.vendored)),
        baselined=baselined,
        substitutions=propose(kept, settings.targets),
        guarded_findings=tuple(sorted(held, key=Finding.key)),
        rocm=status,
    )


def _never_compiled(
    findings: list[Finding], conditionals: dict[str, tuple[preproc.Directive, ...]], evidence: list[Evidence]
) -> tuple[list[Finding], list[Finding]]:
    """(findings a HIP build compiles, the rest): #if branches HIP rules out, other vendors' backends, and
    sources the CMake build lists only for CUDA."""
    findings, moved = rocm_status.never_compiled(findings, conditionals, _other_backends())
    lists = [e for e in evidence if e.kind in rocm_status.SOURCE_LISTS]
    findings, listed = rocm_status.cuda_only(findings, lists)
    return findings, moved + listed


def _with_status(findings: list[Finding], status: RocmStatus) -> list[Finding]:
    """Each finding's status (covered, optional-gap, remaining) in the light of the repository's ROCm status."""
    from migrate import risk

    return list(risk.with_status(findings, risk.Context.from_status(status), risk.load_weights()))


@cache
def _other_backends() -> re.Pattern[str]:
    from migrate.risk import load_weights

    return re.compile(load_weights().status["other_backends"])


def _status(evidence: list[Evidence], guarded: int, sources: list[SourceFile]) -> RocmStatus:
    """The repository's ROCm status from the evidence its files gave."""
    from migrate.risk import load_weights

    builds = [s.relpath for s in sources if rocm_status.is_build_file(s.relpath)]
    extensions = [e.path.rpartition("/")[0] for e in evidence if e.kind == "torch-extension"]
    return rocm_status.assess(evidence, load_weights().status, guarded=guarded, build_files=builds,
                              extension_dirs=extensions)


def _without_first_party(findings: list[Finding], root: Path, ruleset: Ruleset) -> list[Finding]:
    """Drop import findings of packages the repository defines itself: scanning flash-attn, its own
    `from flash_attn import ...` lines are not a dependency on flash-attn."""
    import_rules = {r.id for r in ruleset.rules if r.match.get("imports")}
    own: dict[str, bool] = {}

    def first_party(module: str) -> bool:
        top = module.split(".")[0]
        if top not in own:
            own[top] = any((root / base / top / "__init__.py").is_file() for base in ("", "src", "python"))
        return own[top]

    return [f for f in findings if not (f.rule in import_rules and f.symbol and first_party(f.symbol))]


def _narrow(
    findings: tuple[Finding, ...], settings: Settings, changes: Changes | None
) -> tuple[tuple[Finding, ...], int]:
    """Leave out the baseline's findings (counted), then those off the lines changed since --diff-base."""
    baselined = 0
    if settings.baseline:
        new = new_findings(findings, load_baseline(Path(settings.baseline)))
        baselined, findings = len(findings) - len(new), new
    if changes is not None:
        findings = keep_changed(findings, changes)
    return findings, baselined


def ruleset_for(settings: Settings) -> Ruleset:
    """The built-in rules plus the user's extra rule directories, less the disabled ones (cached when allowed)."""
    return load_ruleset(settings, lambda: _load_rules(settings))


def _load_rules(settings: Settings) -> Ruleset:
    if settings.extra_rule_dirs:
        every = load([rules_dir(), *(Path(d) for d in settings.extra_rule_dirs)])
    else:
        every = load_builtin()
    check_rule_ids(settings, {rule.id for rule in every.rules})
    if not settings.disabled_rules:
        return every
    return Ruleset(tuple(r for r in every.rules if r.id not in settings.disabled_rules))


def _results(
    sources: list[SourceFile], ruleset: Ruleset, settings: Settings, progress: Progress | None, store: Cache
) -> Iterator[FileResult]:
    """Stored results for unchanged files; the others scanned (in a process pool when many) and stored."""
    misses = []
    for source in sources:
        hit = store.get(source)
        if hit is None:
            misses.append(source)
        else:
            yield hit
    by_path = {s.relpath: s for s in misses}
    for result in _computed(misses, ruleset, settings, progress):
        yield store.put(by_path[result.relpath], result)


def _computed(
    sources: list[SourceFile], ruleset: Ruleset, settings: Settings, progress: Progress | None
) -> Iterator[FileResult]:
    total = len(sources)
    jobs = settings.jobs or os.cpu_count() or 1
    if jobs <= 1 or total < _PARALLEL_FROM:
        for done, source in enumerate(sources, start=1):
            yield scan_file(source, ruleset, settings)
            if progress:
                progress(done, total)
        return
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    with context.Pool(jobs, initializer=_init_worker, initargs=(ruleset, settings)) as pool:
        chunk = max(1, min(64, total // (jobs * 8)))
        for done, result in enumerate(pool.imap_unordered(_worker_scan, sources, chunksize=chunk), start=1):
            yield result
            if progress:
                progress(done, total)


_worker_state: tuple[Ruleset, Settings] | None = None


def _init_worker(ruleset: Ruleset, settings: Settings) -> None:
    global _worker_state
    _worker_state = (ruleset, settings)


def _worker_scan(source: SourceFile) -> FileResult:
    assert _worker_state is not None
    return scan_file(source, *_worker_state)


def scan_file(source: SourceFile, ruleset: Ruleset, settings: Settings) -> FileResult:
    """Findings for one file, or the reason it was skipped."""
    rules = ruleset.for_kind(source.kind)
    if not rules:
        return FileResult(source.relpath)
    try:
        text = read_text(source)
    except ParseError as exc:
        return FileResult(source.relpath, skipped=Skipped(source.relpath, str(exc)))
    evidence, directives = _facts(source, text)
    if not _might_match(source.kind, rules, text):
        return FileResult(source.relpath, evidence=evidence, directives=directives)
    doc = parse(source, text)
    if isinstance(doc, Skipped):
        return FileResult(source.relpath, skipped=doc, evidence=evidence, directives=directives)
    return replace(_match(doc, rules, settings), evidence=evidence, directives=directives)


def _facts(source: SourceFile, text: str) -> tuple[tuple[Evidence, ...], tuple[tuple[int, str, str], ...]]:
    """What a file tells about the project as a whole: its ROCm evidence and its preprocessor lines."""
    evidence = rocm_status.evidence(source.kind, source.relpath, text)
    if source.kind not in (FileKind.CUDA, FileKind.CPP, FileKind.C):
        return evidence, ()
    found = preproc.directives(text)
    guards = rocm_status.guard_evidence(source.relpath, found) if "#if" in text else ()
    return evidence + guards, tuple((d.line, d.keyword, d.argument) for d in found)


def _match(doc: Document, rules: tuple[Rule, ...], settings: Settings) -> FileResult:
    findings: list[Finding] = []
    held: list[Finding] = []
    for rule in rules:
        needles = _rule_prefilter(rule)
        if needles is not None and needles.search(doc.text) is None:
            continue  # skipping also spares compiling its tree-sitter query: most of a small check's time
        matcher = matchers.get(rule.match["matcher"])
        assert matcher is not None  # the ruleset validated every matcher name
        hits = []
        for hit in matcher.function(doc, rule.match):
            if doc.is_suppressed(hit.line, rule.id):
                continue
            if doc.is_guarded(hit.line):
                held.append(replace(_finding(doc, rule, hit, settings), status="guarded"))
                continue
            hits.append(hit)
        if rule.per_file and len(hits) > 1:
            findings.append(_folded(doc, rule, hits, settings))
            continue
        findings.extend(_finding(doc, rule, hit, settings) for hit in hits)
    return FileResult(doc.source.relpath, tuple(findings), guarded=len(held), guarded_findings=tuple(held))


def _finding(doc: Document, rule: Rule, hit: Hit, settings: Settings) -> Finding:
    severity = hit.severity if hit.severity is not None else _target_severity(rule, settings.targets)
    message = hit.message or rule.message
    if hit.note:
        message = f"{message} {hit.note}"
    if rule.by_wavefront and hit.severity is None:
        message = f"{message} {targets.wavefront_note(settings.targets)}"
    finding = Finding(
        path=doc.source.relpath,
        line=hit.line,
        column=hit.column,
        rule=rule.id,
        category=rule.category,
        severity=severity,
        end_line=hit.end_line or hit.line,
        message=message,
        evidence=doc.line_text(hit.line),
        hip=hit.hip if hit.hip is not None else rule.hip,
        substitutions=rule.substitutions,
        vendored=doc.source.vendored,
        symbol=hit.symbol,
        effort=rule.effort,
    )
    override = dict(settings.severity_overrides).get(rule.id)
    return replace(finding, severity=override) if override is not None else finding


def _folded(doc: Document, rule: Rule, hits: list[Hit], settings: Settings) -> Finding:
    """A once-per-file rule's hits as one finding at the first place, carrying every place as an occurrence."""
    first = min(hits, key=lambda h: (h.line, h.column))
    places = sorted({(h.line, h.column, h.end_line or h.line) for h in hits})
    occurrences = tuple(Occurrence(ln, col, end, doc.line_text(ln)[:_OCCURRENCE_EVIDENCE]) for ln, col, end in places)
    finding = _finding(doc, rule, replace(first, note=f"({len(places)} places in this file.)"), settings)
    return replace(finding, occurrences=occurrences)


def _target_severity(rule: Rule, gfx_targets: tuple[str, ...]) -> Severity:
    """For wavefront-dependent rules, the worst severity over the targets."""
    if not rule.by_wavefront:
        return rule.severity
    table = dict(rule.by_wavefront)
    return max(table.get(targets.wavefront_size(t), rule.severity) for t in gfx_targets)


def _might_match(kind: FileKind, rules: tuple[Rule, ...], text: str) -> bool:
    prefilter = _prefilter(kind, rules)
    return prefilter is None or prefilter.search(text) is not None


@cache
def _rule_prefilter(rule: Rule) -> re.Pattern[str] | None:
    """One rule's needles as a regex; None when the rule must always run."""
    return _prefilter(None, (rule,))


@cache
def _prefilter(kind: FileKind | None, rules: tuple[Rule, ...]) -> re.Pattern[str] | None:
    """One regex of every rule's needles for this kind; None when some rule must always run."""
    words: set[str] = set()
    for rule in rules:
        matcher = matchers.get(rule.match["matcher"])
        found = matcher.needles(rule.match) if matcher and matcher.needles else None
        if found is None:
            return None
        words.update(found)
    return re.compile(_trie_pattern(words) if words else r"(?!)")


def _trie_pattern(words: set[str]) -> str:
    """An alternation factored by common prefixes: the regex engine then rejects most positions
    on the first character instead of trying every word (10x faster on a few hundred needles)."""
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _pattern(trie)


def _pattern(node: dict) -> str:  # type: ignore[type-arg]
    if "" in node:
        return ""  # a shorter needle already matches: longer ones add nothing to a yes/no search
    branches = [re.escape(char) + _pattern(child) for char, child in sorted(node.items())]
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
