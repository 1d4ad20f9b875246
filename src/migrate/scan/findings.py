"""A rule's hits in one file -> findings, complete when made: suppressed and HIP-guarded lines sorted out, severity
from overrides, the hit or the targets, and a file's findings kept bounded (past the caps they fold into one)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import cache
from itertools import islice
from operator import attrgetter

from migrate import targets
from migrate.config import Settings
from migrate.matchers import Hit
from migrate.model import FileResult, Finding, Occurrence, Rule, Severity, Skipped
from migrate.parse.document import EVIDENCE, Document

_OCCURRENCE_EVIDENCE = 200  # characters per occurrence: a minified line must not blow up the report
# Findings one file may give (the largest real counts are a few hundred): past them a rule's findings fold into one
# that carries the count and the first places as occurrences, so memory and reports stay bounded.
MAX_FINDINGS_PER_RULE = 1_000
MAX_FINDINGS_PER_FILE = 5_000
MAX_OCCURRENCES = 1_000
_KEPT_HITS = MAX_FINDINGS_PER_RULE + MAX_OCCURRENCES


def _excluded_path(pattern: str, relpath: str) -> bool:
    """Whether RELPATH is under the tree a rule's `unless_path` regex names (a rule about using a library, in the
    library's own sources); for matchers whose tokens fast path does not see the file's path (cuda-include)."""
    return _compiled(pattern).search(relpath) is not None


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def file_result(doc: Document, runs: Iterable[tuple[Rule, Iterable[Hit]]], settings: Settings) -> FileResult:
    """The findings of RUNS (each rule with its hits) in DOC, and the parts of the file its parser left out."""
    findings: list[Finding] = []
    held: list[Finding] = []
    sites = 0
    suppressions = doc.has_suppressions
    guard = doc.guard_test()
    for rule, found in runs:
        if "unless_path" in rule.match and _excluded_path(rule.match["unless_path"], doc.source.relpath):
            continue  # the library's own tree (faiss's faiss/gpu/ including its own headers)
        # Each rule's first hits are kept (as many as a report can show), the rest only counted: a file of 300,000
        # calls costs a count, not 300,000 findings.
        if suppressions or guard is not None:
            hits, guarded, more, more_guarded = _sorted_out(doc, rule, found, guard, suppressions)
        else:  # most files: no line suppressed, none guarded, so every hit is kept or counted
            rest = iter(found)
            hits, guarded, more_guarded = list(islice(rest, _KEPT_HITS)), [], 0
            more = sum(1 for _ in rest) if len(hits) == _KEPT_HITS else 0  # fewer: RUN is spent
        if rule.match.get("matcher") == targets.TARGET_LIST_MATCHER:
            hits = _leaving_out(hits, settings.targets)
            guarded = _leaving_out(guarded, settings.targets)
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


def _leaving_out(hits: list[Hit], gfx_targets: tuple[str, ...]) -> list[Hit]:
    """The hits of a build's GPU target list that leave out one of GFX_TARGETS, each with a note naming them."""
    kept = []
    for hit in hits:
        missing = targets.left_out(hit.symbol or "", gfx_targets)
        if missing:
            kept.append(replace(hit, note=targets.left_out_note(hit.symbol or "", missing)))
    return kept


def _sorted_out(
    doc: Document, rule: Rule, found: Iterable[Hit], guard: Callable[[int], bool] | None, suppressions: bool
) -> tuple[list[Hit], list[Hit], int, int]:
    """RULE's hits in DOC without the suppressed ones (when it has SUPPRESSIONS): (kept, kept in guarded code,
    counted, counted guarded)."""
    hits: list[Hit] = []
    guarded: list[Hit] = []
    more = more_guarded = 0
    for hit in found:
        if suppressions and doc.is_suppressed(hit.line, rule.id):
            continue
        # asked even for a rule on ROCm's path: a Python file's guarded ranges are found when a hit first asks
        if guard is not None and guard(hit.line) and not rule.rocm_path:
            if len(guarded) < _KEPT_HITS:
                guarded.append(hit)
            else:
                more_guarded += 1
        elif len(hits) < _KEPT_HITS:
            hits.append(hit)
        else:
            more += 1
    return hits, guarded, more, more_guarded


def _capped(doc: Document, rule: Rule, hits: list[Hit], more: int, settings: Settings, room: int) -> list[Finding]:
    """A finding per hit (HITS, and MORE only counted), at most ROOM: past that, the last one stands for the rest,
    with their count and the first places as its occurrences."""
    count = len(hits) + more
    if count <= room:
        return [_finding(doc, rule, hit, settings) for hit in hits]
    shown = [_finding(doc, rule, hit, settings) for hit in hits[: room - 1]]
    rest = hits[room - 1 :]
    places = _occurrences(doc, [(hit.line, hit.column, hit.end_line or hit.line) for hit in rest[:MAX_OCCURRENCES]])
    note = (f"({count - room + 1:,} places in this file past the first {room - 1:,} findings of this rule, "
            f"folded here; the first {len(places):,} are listed.)")
    first = rest[0]
    folded = replace(first, note=f"{first.note} {note}" if first.note else note)
    return [*shown, _finding(doc, rule, folded, settings, occurrences=places)]


def _occurrences(doc: Document, places: list[tuple[int, int, int]]) -> tuple[Occurrence, ...]:
    """An occurrence of each of PLACES (line, column, end line), its evidence the line as Document.line_text gives
    it: a folded finding of a large header has a thousand, so a line of usual length is read here, without a call
    per place."""
    lines = doc.lines
    count = len(lines)
    found = []
    for line, column, end_line in places:
        text = lines[line - 1] if 0 < line <= count else ""
        evidence = text.strip() if len(text) <= EVIDENCE else doc.line_text(line)
        found.append(_new_occurrence((line, column, end_line, evidence[:_OCCURRENCE_EVIDENCE])))
    return tuple(found)


def _new_occurrence(fields: tuple[int, int, int, str]) -> Occurrence:
    return tuple.__new__(Occurrence, fields)


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
    # Finding(path=..., ...) without the frozen dataclass's __init__ (a setattr per field), each field set in the
    # class's order (as packed.decode does): a large tree makes tens of thousands
    finding = object.__new__(Finding)
    fields = finding.__dict__
    fields["path"] = doc.source.relpath
    fields["line"] = hit.line
    fields["column"] = hit.column
    fields["rule"] = rule.id
    fields["category"] = rule.category
    fields["severity"] = severity
    fields["end_line"] = hit.end_line or hit.line
    fields["message"] = message
    fields["evidence"] = doc.line_text(hit.line, hit.column)
    fields["hip"] = hit.hip if hit.hip is not None else rule.hip
    fields["substitutions"] = rule.substitutions
    fields["vendored"] = doc.source.vendored
    fields["symbol"] = hit.symbol
    fields["effort"] = rule.effort
    fields["status"] = "optional-gap" if hit.optional else "remaining"
    fields["occurrences"] = occurrences
    return finding


@cache
def _overrides(pairs: tuple[tuple[str, Severity], ...]) -> dict[str, Severity]:
    return dict(pairs)


def _folded(doc: Document, rule: Rule, hits: list[Hit], more: int, settings: Settings) -> Finding:
    """A once-per-file rule's hits as one finding at the first place, carrying every place as an occurrence (the
    first MAX_OCCURRENCES of them, when there are more; MORE hits were only counted)."""
    first = min(hits, key=_LINE_COLUMN)
    places = sorted({(h.line, h.column, h.end_line or h.line) for h in hits})
    occurrences = _occurrences(doc, places[:MAX_OCCURRENCES])
    note = f"({len(places)} places in this file.)"
    if len(places) + more > len(occurrences):
        note = f"({len(places) + more:,} places in this file; the first {len(occurrences):,} are listed.)"
    if first.severity is not None:  # a place the matcher rated itself: the file's worst place decides
        worst = _worst(rule, hits, settings)
        note = " ".join(filter(None, (worst.note, note)))
        return _finding(doc, rule, replace(first, severity=worst.severity, note=note), settings, occurrences=occurrences)
    return _finding(doc, rule, replace(first, note=note), settings, occurrences=occurrences)


def _worst(rule: Rule, hits: list[Hit], settings: Settings) -> Hit:
    """The hit of the highest severity (the rule's own where a hit sets none), the first of them on a tie."""
    default = _target_severity(rule, settings.targets)
    return max(sorted(hits, key=_LINE_COLUMN),
               key=lambda h: h.severity if h.severity is not None else default)


_LINE_COLUMN = attrgetter("line", "column")


def _target_severity(rule: Rule, gfx_targets: tuple[str, ...]) -> Severity:
    """For wavefront-dependent rules, the worst severity over the targets."""
    if not rule.by_wavefront:
        return rule.severity
    table = dict(rule.by_wavefront)
    return max(table.get(targets.wavefront_size(t), rule.severity) for t in gfx_targets)
