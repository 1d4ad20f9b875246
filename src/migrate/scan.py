"""Orchestrate a scan: discover -> prefilter -> parse -> match -> findings. Pure: returns a ScanResult."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from multiprocessing.pool import IMapIterator
from pathlib import Path

from packaging.utils import canonicalize_name

from migrate import matchers, preproc, rocm_status, targets, tokenscan
from migrate.baseline import load as load_baseline
from migrate.baseline import new_findings
from migrate.cache import Cache, load_ruleset, open_cache
from migrate.config import Settings, check_rule_ids
from migrate.discover import discover
from migrate.gcpause import paused
from migrate.gitdiff import Changes, changed_lines, keep_changed
from migrate.matchers import Code, CodeTest, Hit
from migrate.model import (
    Evidence, FileKind, FileResult, Finding, Occurrence, RocmStatus, Rule, ScanResult, Severity, Skipped, SourceFile,
    ordered,
)
from migrate.parse import Document, ParseError, parse, read_text
from migrate.parse.cuda import longest_match
from migrate.ruleset import Ruleset, load, load_builtin, rules_dir
from migrate.substitutions import propose

Progress = Callable[[int, int], None]
_PARALLEL_FROM = 64  # below this many files a process pool costs more than it saves
_STALE = 16  # matches that find no new rule before the needle regex is narrowed to the missing rules
_PATTERNS = 256  # narrowed needle regexes compiled per kind and process, at most
_TOKEN_KINDS = (FileKind.CUDA, FileKind.CPP, FileKind.C)
# Parsed even when no rule applies: other tools read them too, so an invalid one is reported (skipped), never
# counted as scanned.
_VALIDATED = frozenset({FileKind.PYPROJECT})
token_level = True  # C/C++/CUDA on tokens where no rule needs the tree; benchmarks and tests turn it off to compare
python_candidates = True  # Python parsed only where a rule has a candidate; tests turn it off to compare
_OCCURRENCE_EVIDENCE = 200  # characters per occurrence: a minified line must not blow up the report
FILE_TIME_BUDGET = 20.0  # seconds a file may take; past it the file is skipped (crafted input, not real code)
# Findings one file may give (the largest real counts are a few hundred): past them a rule's findings fold into one
# that carries the count and the first places as occurrences, so memory and reports stay bounded.
MAX_FINDINGS_PER_RULE = 1_000
MAX_FINDINGS_PER_FILE = 5_000
MAX_OCCURRENCES = 1_000
_KEPT_HITS = MAX_FINDINGS_PER_RULE + MAX_OCCURRENCES


@dataclass(frozen=True)
class Inputs:
    """What a scan reads besides the rules: the files discovery chose and those it skipped, the lines changed
    since --diff-base, and the Python packages the repository defines itself."""

    sources: tuple[SourceFile, ...]
    skipped: tuple[Skipped, ...]
    changes: Changes | None
    packages: frozenset[str]
    complete: bool  # the whole tree: no files named, no --diff-base


def scan(
    root: Path,
    settings: Settings,
    *,
    files: Iterable[Path] = (),
    progress: Progress | None = None,
) -> ScanResult:
    """Scan ROOT (or only FILES inside it) and return every finding and skip, sorted."""
    return scan_inputs(root, settings, inputs(root, settings, files), progress=progress)


def inputs(root: Path, settings: Settings, files: Iterable[Path] = ()) -> Inputs:
    """The files a scan of ROOT (or of FILES inside it) reads, and what else its result depends on."""
    sources: list[SourceFile] = []
    skipped: list[Skipped] = []
    named = list(files)
    for item in discover(
        root, files=named, exclude=settings.exclude, include=settings.include, max_file_size=settings.max_file_size
    ):
        if isinstance(item, Skipped):
            skipped.append(item)
        else:
            sources.append(item)
    changes = changed_lines(root, settings.diff_base) if settings.diff_base else None
    if changes is not None:
        sources = [s for s in sources if s.relpath in changes]
    return Inputs(tuple(sources), tuple(skipped), changes, own_packages(root), not named and changes is None)


def own_packages(root: Path) -> frozenset[str]:
    """The Python packages the repository defines: directories with an __init__.py at the top, in src/ or in
    python/ (its own `import flash_attn` is not a dependency on flash-attn)."""
    found: set[str] = set()
    for base in ("", "src", "python"):
        with contextlib.suppress(OSError), os.scandir(root / base) as entries:
            found.update(e.name for e in entries if e.is_dir() and os.path.isfile(os.path.join(e.path, "__init__.py")))
    return frozenset(found)


def scan_inputs(root: Path, settings: Settings, found: Inputs, *, progress: Progress | None = None) -> ScanResult:
    """Scan the files FOUND names: every finding and skip, sorted."""
    ruleset = ruleset_for(settings)
    sources, skipped, changes = list(found.sources), list(found.skipped), found.changes
    store = open_cache(root, ruleset, settings)
    deadline = time.monotonic() + settings.time_budget
    findings: list[Finding] = []
    guarded = unreadable = unscanned = 0
    held: list[Finding] = []
    evidence: list[Evidence] = []
    conditionals: dict[str, tuple[preproc.Directive, ...]] = {}
    with paused():  # the results the workers send (findings, evidence): many objects, no cycles
        for result in _results(sources, ruleset, settings, progress, store, deadline):
            unscanned += result.unscanned
            findings.extend(result.findings)
            guarded += result.guarded
            held.extend(result.guarded_findings)
            evidence.extend(result.evidence)
            if result.directives:
                conditionals[result.relpath] = tuple(preproc.Directive(*d) for d in result.directives)
            if result.skipped:
                skipped.append(result.skipped)
                unreadable += not result.partial
    store.save(complete=found.complete and not unscanned)
    with paused():  # the findings of a whole tree, restatused and sorted: no cycles to collect
        own = _without_first_party(findings, found.packages, ruleset)
        findings, moved = _never_compiled(own, conditionals, evidence)
        held.extend(moved)
        guarded += len(moved)
        status = _status([e for e in evidence if e.kind not in rocm_status.SOURCE_LISTS], guarded, sources)
        findings = _with_status(rocm_status.variants(findings, (s.relpath for s in sources)), status)
        kept, baselined = _narrow(tuple(ordered(findings)), settings, changes)
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
            unscanned=unscanned,
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


def _without_first_party(findings: list[Finding], packages: frozenset[str], ruleset: Ruleset) -> list[Finding]:
    """Drop import and dependency findings of PACKAGES, those the repository defines itself: scanning DeepSpeed,
    its own `import deepspeed` and the `pip install deepspeed` of its README are not a dependency on DeepSpeed."""
    import_rules = {r.id for r in ruleset.rules if r.match.get("imports")}
    package_rules = {r.id for r in ruleset.rules if r.match.get("matcher") == "manifest-package"}
    names = {canonicalize_name(p) for p in packages}
    return [f for f in findings
            if not (f.rule in import_rules and f.symbol and f.symbol.split(".")[0] in packages)
            and not (f.rule in package_rules and f.symbol in names)]


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
    sources: list[SourceFile], ruleset: Ruleset, settings: Settings, progress: Progress | None, store: Cache,
    deadline: float,
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
    for result in _computed(misses, ruleset, settings, progress, deadline):
        yield store.put(by_path.pop(result.relpath), result)
    reason = f"not scanned: the scan ran out of its time budget ({settings.time_budget:g} s; see --time-budget)"
    for relpath in by_path:
        yield FileResult(relpath, skipped=Skipped(relpath, reason), unscanned=True)


def _computed(
    sources: list[SourceFile], ruleset: Ruleset, settings: Settings, progress: Progress | None, deadline: float
) -> Iterator[FileResult]:
    """Each source's result, in the order they are done, until DEADLINE (a file started before it may finish)."""
    total = len(sources)
    jobs = worker_count(settings)
    if jobs <= 1 or total < _PARALLEL_FROM:
        for done, source in enumerate(sources, start=1):
            if time.monotonic() >= deadline:
                return
            yield scan_file(source, ruleset, settings)
            if progress:
                progress(done, total)
        return
    for kind in {s.kind for s in sources if s.kind in _TOKEN_KINDS}:
        # compiled once here, shared by the forked workers
        tokenscan.warm(_table(ruleset, kind).tokens.words)
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    with context.Pool(jobs, initializer=_init_worker, initargs=(ruleset, settings, token_level)) as pool:
        done = 0
        batches = pool.imap_unordered(_worker_scan, _batches(sources, jobs))
        while (results := _next_batch(batches, deadline)) is not None:
            for result in results:
                done += 1
                yield result
            if progress:
                progress(done, total)
    # leaving the block terminates the workers, those still busy past the deadline too


def _next_batch(batches: IMapIterator[list[FileResult]], deadline: float) -> list[FileResult] | None:
    """The next batch of results the workers finish before DEADLINE; None when they are all done or time is up."""
    try:
        return batches.next(timeout=max(0.0, deadline - time.monotonic()))
    except (StopIteration, multiprocessing.TimeoutError):
        return None


def _batches(sources: list[SourceFile], jobs: int) -> Iterator[list[SourceFile]]:
    """Work units of similar byte size, largest files first: the cost follows bytes, not file count, and
    starting the big ones early keeps one 2 MB header from leaving the other cores idle at the end."""
    budget = max(64 * 1024, sum(s.size for s in sources) // (jobs * 16))
    batch: list[SourceFile] = []
    size = 0
    for source in sorted(sources, key=lambda s: s.size, reverse=True):
        batch.append(source)
        size += source.size
        if size >= budget:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def worker_count(settings: Settings) -> int:
    """settings.jobs (0: one per core), never more than the cores this process may use: `jobs` may come
    from the scanned repository's own configuration."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(settings.jobs or cores, cores))


_worker_state: tuple[Ruleset, Settings] | None = None


def _init_worker(ruleset: Ruleset, settings: Settings, tokens: bool) -> None:
    global _worker_state, token_level
    _worker_state, token_level = (ruleset, settings), tokens
    gc.enable()  # forked inside the parent's paused() block
    gc.freeze()  # what the parent built (rules, compiled regexes) is never garbage: keep collections short
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent alone handles it


def _worker_scan(sources: list[SourceFile]) -> list[FileResult]:
    assert _worker_state is not None
    return [scan_file(source, *_worker_state) for source in sources]


def scan_file(source: SourceFile, ruleset: Ruleset, settings: Settings) -> FileResult:
    """Findings for one file, or the reason it was skipped (also when it takes more than FILE_TIME_BUDGET)."""
    try:
        with _time_budget(FILE_TIME_BUDGET):
            return _scan_file(source, ruleset, settings)
    except _OverBudget:
        return FileResult(source.relpath, skipped=Skipped(source.relpath, _over_budget()))
    except (RecursionError, MemoryError):
        return FileResult(source.relpath, skipped=Skipped(source.relpath, "too deeply nested to parse"))


class _OverBudget(Exception):
    """A file took longer than FILE_TIME_BUDGET."""


def _over_budget() -> str:
    return f"took longer than the time budget of {FILE_TIME_BUDGET:g} s a file"


@contextlib.contextmanager
def _time_budget(seconds: float) -> Iterator[None]:
    """Raise _OverBudget in this block after SECONDS (a no-op where SIGALRM is missing or off the main thread)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise _OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _scan_file(source: SourceFile, ruleset: Ruleset, settings: Settings) -> FileResult:
    table = _table(ruleset, source.kind)
    if not table.rules:
        return FileResult(source.relpath)
    try:
        text = read_text(source)
    except ParseError as exc:
        return FileResult(source.relpath, skipped=Skipped(source.relpath, str(exc)))
    lexed = tokenscan.lex(text, table.tokens.words) if source.kind in _TOKEN_KINDS else None
    evidence, directives = _facts(source, text, lexed)
    applicable = _parsed_rules(source, table, text, lexed)
    if applicable is None:
        assert lexed is not None
        found = _match_tokens(Document(source=source, text=text), lexed, table.tokens, settings)
        return replace(found, evidence=evidence, directives=directives)
    if not applicable and source.kind not in _VALIDATED:
        return FileResult(source.relpath, evidence=evidence, directives=directives)
    doc = parse(source, text)
    if isinstance(doc, Skipped):
        return FileResult(source.relpath, skipped=doc, evidence=evidence, directives=directives)
    if lexed is not None:  # the rules decided on tokens, and the #if ranges, come from the same pass
        doc.lexed = lexed
    return replace(_match(doc, applicable, settings), evidence=evidence, directives=directives)


def _parsed_rules(
    source: SourceFile, table: _Needles, text: str, lexed: tokenscan.Lexed | None
) -> tuple[Rule, ...] | None:
    """The rules to run on the file's parse; None for C/C++ that needs no tree (every rule runs on its tokens)."""
    if lexed is None:
        applicable = _applicable(table, text)
        if source.kind == FileKind.PYTHON and python_candidates:
            return _with_candidates(applicable, Code(text, ()))
        return applicable
    if not token_level:  # the reference the fast path is compared with: every rule on every file's tree
        return table.rules
    tree_rules = () if source.vendored else table.tokens.needing_tree(lexed)
    return _on_tree(table, tree_rules) if tree_rules else None


def _on_tree(table: _Needles, tree_rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """The rules a parsed C/C++ file runs, in the table's order: those decided on tokens, and TREE_RULES (the others
    have no candidate in its code, so they would find nothing)."""
    wanted = {id(rule) for rule, _ in table.tokens.token_rules} | {id(rule) for rule in tree_rules}
    return tuple(rule for rule in table.rules if id(rule) in wanted)


def _facts(
    source: SourceFile, text: str, lexed: tokenscan.Lexed | None
) -> tuple[tuple[Evidence, ...], tuple[tuple[int, str, str], ...]]:
    """What a file tells about the project as a whole: its ROCm evidence and its preprocessor lines."""
    if lexed is None:
        return rocm_status.evidence(source.kind, source.relpath, text), ()
    evidence = rocm_status.source_evidence(source.relpath, text, lexed.includes, lexed.directives)
    return evidence, tuple((d.line, d.keyword, d.argument) for d in lexed.directives)


def _match(doc: Document, rules: tuple[Rule, ...], settings: Settings) -> FileResult:
    runs = []
    for rule in rules:
        matcher = matchers.get(rule.match["matcher"])
        assert matcher is not None  # the ruleset validated every matcher name
        runs.append((rule, matcher.function(doc, rule.match)))
    return _result(doc, runs, settings)


def _match_tokens(doc: Document, lexed: tokenscan.Lexed, plan: tokenscan.Plan, settings: Settings) -> FileResult:
    """C/C++/CUDA without a parse: the rules that can be decided on tokens, from the lexer's pass (vendored code,
    and first-party files where no rule needs the tree)."""
    doc.guarded_ranges = lexed.guarded
    return _result(doc, [(rule, run(lexed, doc.text, rule.match)) for rule, run in plan.token_rules], settings)


def _result(doc: Document, runs: Iterable[tuple[Rule, Iterable[Hit]]], settings: Settings) -> FileResult:
    findings: list[Finding] = []
    held: list[Finding] = []
    sites = 0
    for rule, found in runs:
        # Each rule's first hits are kept (as many as a report can show), the rest only counted: a file of 300,000
        # calls costs a count, not 300,000 findings.
        hits: list[Hit] = []
        guarded: list[Hit] = []
        more = more_guarded = 0
        for hit in found:
            if doc.is_suppressed(hit.line, rule.id):
                continue
            if doc.is_guarded(hit.line):
                if len(guarded) < _KEPT_HITS:
                    guarded.append(hit)
                else:
                    more_guarded += 1
            elif len(hits) < _KEPT_HITS:
                hits.append(hit)
            else:
                more += 1
        if rule.per_file and len(guarded) > 1:
            held.append(_folded(doc, rule, guarded, more_guarded, settings).guarded())
        elif guarded:
            held.extend(f.guarded() for f in _capped(doc, rule, guarded, more_guarded, settings, MAX_FINDINGS_PER_RULE))
        sites += len(guarded) + more_guarded
        if rule.per_file and len(hits) > 1:
            findings.append(_folded(doc, rule, hits, more, settings))
        elif hits:
            room = max(1, min(MAX_FINDINGS_PER_RULE, MAX_FINDINGS_PER_FILE - len(findings)))
            findings.extend(_capped(doc, rule, hits, more, settings, room))
    relpath = doc.source.relpath
    skipped = Skipped(relpath, "; ".join(doc.problems)) if doc.problems else None
    return FileResult(relpath, tuple(findings), skipped=skipped, guarded=sites, partial=skipped is not None,
                      guarded_findings=tuple(held))


def _capped(doc: Document, rule: Rule, hits: list[Hit], more: int, settings: Settings, room: int) -> list[Finding]:
    """A finding per hit (HITS, and MORE only counted), at most ROOM: past that, the last one stands for the rest,
    with their count and the first places as its occurrences."""
    count = len(hits) + more
    if count <= room:
        return [_finding(doc, rule, hit, settings) for hit in hits]
    shown = [_finding(doc, rule, hit, settings) for hit in hits[: room - 1]]
    rest = hits[room - 1 :]
    places = tuple(_occurrence(doc, hit.line, hit.column, hit.end_line or hit.line) for hit in rest[:MAX_OCCURRENCES])
    note = (f"({count - room + 1:,} places in this file past the first {room - 1:,} findings of this rule, "
            f"folded here; the first {len(places):,} are listed.)")
    first = rest[0]
    folded = replace(first, note=f"{first.note} {note}" if first.note else note)
    return [*shown, _finding(doc, rule, folded, settings, occurrences=places)]


def _occurrence(doc: Document, line: int, column: int, end_line: int) -> Occurrence:
    return Occurrence(line, column, end_line, doc.line_text(line)[:_OCCURRENCE_EVIDENCE])


def _finding(doc: Document, rule: Rule, hit: Hit, settings: Settings,
             occurrences: tuple[Occurrence, ...] = ()) -> Finding:
    severity = _overrides(settings.severity_overrides).get(rule.id)
    if severity is None:
        severity = hit.severity if hit.severity is not None else _target_severity(rule, settings.targets)
    message = hit.message or rule.message
    if hit.note:
        message = f"{message} {hit.note}"
    if rule.by_wavefront and hit.severity is None:
        message = f"{message} {targets.wavefront_note(settings.targets)}"
    return Finding(
        path=doc.source.relpath,
        line=hit.line,
        column=hit.column,
        rule=rule.id,
        category=rule.category,
        severity=severity,
        end_line=hit.end_line or hit.line,
        message=message,
        evidence=doc.line_text(hit.line, hit.column),
        hip=hit.hip if hit.hip is not None else rule.hip,
        substitutions=rule.substitutions,
        vendored=doc.source.vendored,
        symbol=hit.symbol,
        effort=rule.effort,
        occurrences=occurrences,
    )


@cache
def _overrides(pairs: tuple[tuple[str, Severity], ...]) -> dict[str, Severity]:
    return dict(pairs)


def _folded(doc: Document, rule: Rule, hits: list[Hit], more: int, settings: Settings) -> Finding:
    """A once-per-file rule's hits as one finding at the first place, carrying every place as an occurrence (the
    first MAX_OCCURRENCES of them, when there are more; MORE hits were only counted)."""
    first = min(hits, key=lambda h: (h.line, h.column))
    places = sorted({(h.line, h.column, h.end_line or h.line) for h in hits})
    occurrences = tuple(_occurrence(doc, *place) for place in places[:MAX_OCCURRENCES])
    note = f"({len(places)} places in this file.)"
    if len(places) + more > len(occurrences):
        note = f"({len(places) + more:,} places in this file; the first {len(occurrences):,} are listed.)"
    return _finding(doc, rule, replace(first, note=note), settings, occurrences=occurrences)


def _target_severity(rule: Rule, gfx_targets: tuple[str, ...]) -> Severity:
    """For wavefront-dependent rules, the worst severity over the targets."""
    if not rule.by_wavefront:
        return rule.severity
    table = dict(rule.by_wavefront)
    return max(table.get(targets.wavefront_size(t), rule.severity) for t in gfx_targets)


def _applicable(table: _Needles, text: str) -> tuple[Rule, ...]:
    """The rules of TABLE whose needles occur in TEXT (rules without needles always apply).

    Once common needles keep matching, the search looks only for the needles of the rules not yet
    found, so it either removes a rule or runs to the end of the file in C."""
    remaining = table.searched  # a bit mask over table.rules
    position, pattern, stale = 0, table.pattern(remaining), 0
    while remaining:
        match = pattern.search(text, position)
        if match is None:
            break
        left = remaining & ~table.rules_of[match.group()]
        stale = 0 if left != remaining else stale + 1
        if stale > _STALE and left:  # narrow the regex to the rules still missing
            pattern, stale = table.pattern(left, compile_new=len(table.patterns) < _PATTERNS), 0
        remaining, position = left, match.start() + 1
    if not remaining:
        return table.rules
    return tuple(rule for index, rule in enumerate(table.rules) if not remaining >> index & 1)


def _with_candidates(rules: tuple[Rule, ...], code: Code) -> tuple[Rule, ...]:
    """The RULES whose matcher's test finds a candidate in CODE (a Python file's text): the rest cannot fire."""
    return tuple(rule for rule in rules if _code_test(rule)(code))


@cache
def _code_test(rule: Rule) -> CodeTest:
    matcher = matchers.get(rule.match["matcher"])
    return matcher.candidates(rule.match) if matcher and matcher.candidates else lambda _code: True


@dataclass(frozen=True)
class _Needles:
    """One kind's rules, which of them (a bit mask) each needle satisfies with the needles that are its prefixes,
    and regexes of the needles of sets of rules."""

    rules: tuple[Rule, ...]
    searched: int  # the rules with needles
    rules_of: dict[str, int]
    patterns: dict[int, re.Pattern[str]] = field(default_factory=dict)

    def pattern(self, mask: int, compile_new: bool = True) -> re.Pattern[str]:
        """The longest-match regex of the needles of the rules in MASK (or of all rules, not to compile more)."""
        found = self.patterns.get(mask)
        if found is None:
            if not compile_new:
                return self.patterns[self.searched]
            words = {n for index, rule in enumerate(self.rules) if mask >> index & 1 for n in _rule_needles(rule) or ()}
            found = self.patterns[mask] = re.compile(longest_match(words) if words else "(?!)")
        return found

    @cached_property
    def tokens(self) -> tokenscan.Plan:
        """How these rules run on tokens."""
        return tokenscan.plan(self.rules)


_TABLES: dict[FileKind, tuple[Ruleset, _Needles]] = {}


def _table(ruleset: Ruleset, kind: FileKind) -> _Needles:
    """The needle table of KIND's rules (kept per process while the ruleset stays the same object)."""
    kept = _TABLES.get(kind)
    if kept is None or kept[0] is not ruleset:
        kept = _TABLES[kind] = (ruleset, _needles(ruleset.for_kind(kind)))
    return kept[1]


def _needles(rules: tuple[Rule, ...]) -> _Needles:
    by_needle: dict[str, int] = {}
    searched = 0
    for index, rule in enumerate(rules):
        found = _rule_needles(rule)
        if found is not None:
            searched |= 1 << index
        for needle in found or ():
            by_needle[needle] = by_needle.get(needle, 0) | 1 << index
    # A match is the longest needle starting at a position; every needle that is a prefix of it occurs there too.
    rules_of = {}
    for needle in by_needle:
        rules_of[needle] = 0
        for other, mask in by_needle.items():
            if needle.startswith(other):
                rules_of[needle] |= mask
    return _Needles(rules, searched, rules_of)


@cache
def _rule_needles(rule: Rule) -> frozenset[str] | None:
    """Strings one of which must occur in a file for RULE to fire; None when it must always run."""
    matcher = matchers.get(rule.match["matcher"])
    found = matcher.needles(rule.match) if matcher and matcher.needles else None
    return frozenset(found) if found is not None else None
