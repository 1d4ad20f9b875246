"""A Markdown porting report sized for a pull-request comment."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from migrate import risk, targets
from migrate.assessment import Assessment
from migrate.report import firstscreen, grouping, status
from migrate.model import Finding, ScanResult, Severity, Substitution

LIMIT = 60_000  # characters; GitHub rejects comments over 65,536
_NOTE_RESERVE = 400
_PATHS_SHOWN = 8
_SKIPPED_SHOWN = 50
_EVIDENCE_CHARS = 160
_CAVEATS_SHOWN = 4
_OCCURRENCES_SHOWN = 50
_PLACES_SHOWN = 50
_URL = re.compile(r"https?://[^\s<>]+")
_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")


def render(record: Assessment, *, limit: int = LIMIT) -> str:
    """The first screen, then the gaps, checklist, substitutes, skips, and findings by component until LIMIT."""
    result = record.result
    head = _first_screen(firstscreen.build(record), result) + _details(record) + _per_target(record) + _checklist(record)
    head += _substitutions(record, limit // 2 - len(head))  # the other half is for the findings
    head += _skipped(result)
    return head + _findings(record, limit - len(head))


def _first_screen(screen: firstscreen.FirstScreen, result: ScanResult) -> str:
    """Status, verdict and drivers, basis, counterpart, the first actions, run-unchanged notes, the counts."""
    lines = [f"## ROCm porting report: {screen.verdict}", ""]
    if screen.status:
        lines += [*(f"- **{label}:** {_text(text)}" for label, text in screen.status), ""]
    lines += [f"**Verdict:** {_text(screen.verdict_line)}, for {_text(', '.join(result.targets))}  ",
              f"**Why {screen.verdict}:** {_text(screen.basis)}", ""]
    if screen.drivers:
        lines += ["**What drives the effort**", ""]
        lines += [f"{n}. **{_text(d.title)}**: {_text(d.facts)}" for n, d in enumerate(screen.drivers, start=1)]
        lines.append("")
    if screen.lead is not None:
        lines += _note(screen.lead)
    if screen.actions:
        lines += ["**First actions**", ""]
        for number, action in enumerate(screen.actions, start=1):
            why = f" — {_text(action.why)}" if action.why else ""
            lines.append(f"{number}. {_text(action.what)}{why}")
            if action.command:
                lines += ["", *("   " + line for line in _fence(action.command, "sh").splitlines())]
            elif action.install:
                lines.append(f"   Install: {_text(action.install)}")
        lines.append("")
    for note in screen.unchanged:
        lines += _note(note)
    lines += [f"- **{label}:** {_text(text)}" for label, text in screen.counts]
    return "\n".join(lines) + "\n\n---\n\n"


def _note(note: firstscreen.Note) -> list[str]:
    """A knowledge-base fact as a quote: heading, text, limits, sources and date."""
    lines = [f"> **{_text(note.heading)}**  ", f"> {_text(note.text)}"]
    lines += [f"> - {_text(limit)}" for limit in note.limits]
    when = f" (as of {_text('; '.join(note.as_of))})" if note.as_of else ""
    shown = note.sources[:firstscreen.SOURCES_SHOWN]
    more = f" and {len(note.sources) - len(shown)} more" if len(note.sources) > len(shown) else ""
    lines.append(f"> Source: {'; '.join(_source(s) for s in shown)}{more}{when}.")
    return [*lines, ""]


def _details(record: Assessment) -> str:
    """After the first screen: every remaining gap and the CUDA-only add-ons."""
    found = status.details(record)
    return "".join(f"- **{label}:** {_text(text)}\n" for label, text in found) + "\n" if found else ""


def _per_target(record: Assessment) -> str:
    if not record.per_target:
        return ""
    rows = ["### Per target", "", "| target | wavefront | verdict | risk | effort |", "| --- | --- | --- | --- | --- |"]
    for gfx, assessed in record.per_target:
        rows.append(
            f"| {_text(gfx)} | {targets.wavefront_size(gfx)} | {assessed.verdict} | {assessed.score} "
            f"| {risk.format_days(assessed.effort)} |"
        )
    return "\n".join(rows) + "\n\n"


def _checklist(record: Assessment) -> str:
    items = record.checklist
    if not items:
        return ""
    lines = ["### Porting checklist", ""]
    for item in items:
        line = f"- [ ] **{item.phase.title}**: {item.phase.hint}"
        if item.findings:
            line += f" {_count(item.findings, 'finding')}, {risk.format_days(item.effort)}: {_paths(item.paths)}"
        lines.append(line)
    return "\n".join(lines) + "\n\n"


def _paths(paths: tuple[str, ...]) -> str:
    shown = ", ".join(_code(p) for p in paths[:_PATHS_SHOWN])
    return shown + (f" and {len(paths) - _PATHS_SHOWN} more" if len(paths) > _PATHS_SHOWN else "")


def _substitutions(record: Assessment, budget: int) -> str:
    """Every substitute, the one that removes most effort first."""
    if not record.removals:
        return ""
    parts = ["### What to install instead (most effort removed first)\n\n"]
    used = len(parts[0]) + _NOTE_RESERVE
    for index, removal in enumerate(record.removals):
        block = _substitution(removal.substitution, record.result.targets, removal.effort)
        if used + len(block) > budget:
            rest = len(record.removals) - index
            parts.append(f"> **Truncated:** {rest} more substitutes are not shown; `--format html` lists them all.\n\n")
            break
        parts.append(block)
        used += len(block)
    return "".join(parts)


def _substitution(sub: Substitution, gfx_targets: tuple[str, ...], removes: risk.Effort) -> str:
    facts = (("removes", risk.format_days(removes) if removes.high else ""), ("risk", sub.risk),
             ("confidence", sub.confidence))
    about = ", ".join(f"{name} {value}" for name, value in facts if value)
    lines = [f"#### {_code(sub.id)}" + (f" ({_text(about)})" if about else ""), ""]
    lines.append(f"Replaces: {_text(sub.replaces)}  ")
    lines.append(f"ROCm: {_text(sub.rocm)}" + ("  " if sub.rocm_versions or sub.target_notes else ""))
    if sub.rocm_versions:
        lines.append(f"ROCm versions: {_text(sub.rocm_versions)}" + ("  " if sub.target_notes else ""))
    notes = [f"{_text(gfx)}: {_text(note)}" for gfx, note in sub.target_notes if gfx in gfx_targets]
    lines.append("  \n".join(notes)) if notes else None
    lines.append("")
    if sub.install:
        lines.append(_fence("\n".join(sub.install), "sh"))
    lines += [f"- {_text(caveat)}" for caveat in sub.caveats[:_CAVEATS_SHOWN]]
    if len(sub.caveats) > _CAVEATS_SHOWN:
        lines.append(f"- and {_count(len(sub.caveats) - _CAVEATS_SHOWN, 'more caveat')} (`--format html` shows them)")
    if sub.caveats:
        lines.append("")
    sources = "; ".join(_source(s) for s in sub.sources) or "no source recorded"
    lines.append(f"Source: {sources}" + (f" (as of {_text(sub.as_of)})" if sub.as_of else "") + ".")
    return "\n".join(lines) + "\n\n"


def _skipped(result: ScanResult) -> str:
    if not result.skipped:
        return ""
    lines = [f"### Skipped files ({len(result.skipped)})", ""]
    lines += [f"- {_code(s.path)}: {_text(s.reason)}" for s in result.skipped[:_SKIPPED_SHOWN]]
    if len(result.skipped) > _SKIPPED_SHOWN:
        lines.append(f"- and {len(result.skipped) - _SKIPPED_SHOWN} more")
    return "\n".join(lines) + "\n\n"


def _findings(record: Assessment, budget: int) -> str:
    """Findings by component, the costliest first; one row per rule, its other places folded."""
    if not record.result.findings:
        return "No findings: nothing CUDA-specific stands in the way.\n"
    tallied = grouping.tally(record, places=_PLACES_SHOWN)
    by_component: dict[str, list[grouping.Group]] = defaultdict(list)
    for group in tallied.groups:
        by_component[group.component].append(group)
    parts = ["### Findings by component (one row per rule; `--format json` lists every finding)\n\n"]
    used = len(parts[0]) + _NOTE_RESERVE
    order = tallied.order
    for index, name in enumerate(order):
        block = _component_block(record.result.findings, by_component[name])
        if used + len(block) > budget:
            rest = order[index:]
            hidden = sum(g.count for n in rest for g in by_component[n])
            parts.append(
                f"> **Truncated:** {hidden} more findings in {len(rest)} components are not shown, to keep this "
                f"report under {LIMIT:,} characters. `migrate scan --format html` or `--format json` lists them all.\n"
            )
            break
        parts.append(block)
        used += len(block)
    return "".join(parts)


def _component_block(findings: Sequence[Finding], groups: list[grouping.Group]) -> str:
    count = sum(g.count for g in groups)
    worst = max(g.severity for g in groups)
    lines = [f"#### {_text(groups[0].title)}: {_count(count, 'finding')}, worst {worst.label}", ""]
    for group in groups:
        lines.extend(_group_lines(findings, group))
    return "\n".join(lines).rstrip("\n") + "\n\n"  # a closing <details> leaves a blank line of its own


def _group_lines(findings: Sequence[Finding], group: grouping.Group) -> list[str]:
    """One row: severity, rule, count, message; the first place; the rest folded."""
    first = group.first
    times = f" ×{group.count}" if group.count > 1 else ""
    head = f"- **{group.severity.label}** {_code(first.rule)}{times}: "
    if group.count > 1 and group.renames is not None:
        pairs = sorted(group.renames)
        shown = ", ".join(f"{_code(a)} → {_code(b)}" for a, b in pairs[:8])
        head += "mechanical renames: " + shown + (f" and {len(pairs) - 8} more" if len(pairs) > 8 else "")
    else:
        head += _text(first.message) + (f" → {_text(first.hip)}" if first.hip else "")
    lines = [head, f"  {_place(first)}", *_occurrences(first)]
    rest = group.count - 1
    if rest:
        lines += ["", f"  <details><summary>{_count(rest, 'more place')}</summary>", ""]
        lines += [f"  - {_place(f)}" for f in grouping.placed(findings, group)]
        if rest > len(group.places):
            lines.append(f"  - and {rest - len(group.places)} more (`--format json` lists them all)")
        lines += ["", "  </details>", ""]
    return lines


def _place(finding: Finding) -> str:
    evidence = f": {_evidence(finding)}" if finding.evidence.strip() else ""
    return f"{_code(f'{finding.path}:{finding.line}')}{evidence}"


def _occurrences(finding: Finding) -> list[str]:
    """Every place a once-per-file finding stands for, collapsed under the finding."""
    if not finding.occurrences:
        return []
    shown = finding.occurrences[:_OCCURRENCES_SHOWN]
    lines = ["", f"  <details><summary>{_count(len(finding.occurrences), 'place')} in this file</summary>", ""]
    lines += [f"  - L{o.line}: {_code(o.evidence[:_EVIDENCE_CHARS])}" for o in shown]
    if len(finding.occurrences) > len(shown):
        lines.append(f"  - and {len(finding.occurrences) - len(shown)} more (`--format json` lists them all)")
    return [*lines, "", "  </details>", ""]


def _evidence(finding: Finding) -> str:
    return _code(finding.evidence.strip()[:_EVIDENCE_CHARS])


def _source(text: str) -> str:
    """A URL as an autolink (escapes would break it), anything else as text."""
    return f"<{text}>" if _URL.fullmatch(text) else _text(text)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _one_line(text: str) -> str:
    """TEXT on one line, runs of blanks as one space. Only ASCII blanks: a line separator (U+2028) or a control
    character in a file name stays itself, and is shown escaped like any other."""
    return _BLANKS.sub(" ", text).strip(" ")


_BLANKS = re.compile(r"[ \t\n\r\f\v]+")


def _text(text: str) -> str:
    """Scanned-repo text as literal Markdown: no markup, no HTML, one line."""
    return _SPECIAL.sub(r"\\\1", _one_line(text))


def _code(text: str) -> str:
    """An inline code span that holds any backticks in TEXT."""
    text = _one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fence(text: str, info: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{info}\n{text}\n{fence}\n"
