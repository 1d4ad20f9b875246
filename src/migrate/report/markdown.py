"""A Markdown porting report sized for a pull-request comment."""

from __future__ import annotations

import re
from collections import defaultdict

from migrate import risk, targets
from migrate.assessment import Assessment
from migrate.report import status
from migrate.model import Finding, ScanResult, Severity, Substitution

LIMIT = 60_000  # characters; GitHub rejects comments over 65,536
_NOTE_RESERVE = 400
_PATHS_SHOWN = 8
_SKIPPED_SHOWN = 50
_EVIDENCE_CHARS = 160
_EVIDENCE_LINES = 5
_CAVEATS_SHOWN = 4
_OCCURRENCES_SHOWN = 50
_URL = re.compile(r"https?://[^\s<>]+")
_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")


def render(record: Assessment, *, limit: int = LIMIT) -> str:
    """The report: summary, drivers, checklist, substitutions, skips, then findings by file until LIMIT."""
    result, assessed = record.result, record.risk
    head = _summary(result, assessed) + _status(record) + _per_target(record) + _drivers(assessed) + _checklist(record)
    head += _substitutions(result, limit // 2 - len(head))  # the other half is for the findings
    head += _skipped(result)
    return head + _findings(result, assessed, limit - len(head))


def _summary(result: ScanResult, assessed: risk.Risk) -> str:
    files = len({f.path for f in result.findings})
    lines = [
        f"## ROCm porting report: {assessed.verdict}",
        "",
        f"**Verdict:** {assessed.verdict} · **Risk:** {assessed.score}/100 · "
        f"**Effort:** {risk.format_days(assessed.effort)}{status.per_program(assessed)}",
        "",
        f"{_count(len(result.findings), 'finding')} in {files} of {_count(result.files_scanned, 'file')} scanned, "
        f"for {_text(', '.join(result.targets))}.",
    ]
    if assessed.blockers:
        lines.append(
            f"**{assessed.blockers} blocker(s)** with no ROCm equivalent, "
            f"{risk.format_days(assessed.blocker_effort)} of the effort; listed apart in the checklist."
        )
    if result.guarded:
        lines.append(f"{_count(result.guarded, 'finding')} already behind HIP guards (credited).")
    return "\n".join(lines) + "\n\n"


def _status(record: Assessment) -> str:
    """The ROCm status statement: what already ports, what HIP never compiles, what remains."""
    found = status.lines(record)
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


def _drivers(assessed: risk.Risk) -> str:
    if not assessed.drivers:
        return ""
    return "### What drives the effort\n\n" + "".join(f"- {_text(d.text)}\n" for d in assessed.drivers) + "\n"


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


def _substitutions(result: ScanResult, budget: int) -> str:
    if not result.substitutions:
        return ""
    parts = ["### What to install instead\n\n"]
    used = len(parts[0]) + _NOTE_RESERVE
    subs = sorted(result.substitutions, key=lambda s: s.id)
    for index, sub in enumerate(subs):
        block = _substitution(sub, result.targets)
        if used + len(block) > budget:
            rest = len(subs) - index
            parts.append(f"> **Truncated:** {rest} more substitutes are not shown; `--format html` lists them all.\n\n")
            break
        parts.append(block)
        used += len(block)
    return "".join(parts)


def _substitution(sub: Substitution, gfx_targets: tuple[str, ...]) -> str:
    facts = (("risk", sub.risk), ("confidence", sub.confidence))
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


def _findings(result: ScanResult, assessed: risk.Risk, budget: int) -> str:
    if not result.findings:
        return "No findings: nothing CUDA-specific stands in the way.\n"
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in result.findings:
        by_file[finding.path].append(finding)
    parts = ["### Findings by file\n\n"]
    used = len(parts[0]) + _NOTE_RESERVE
    order = [r.key for r in assessed.by_file]
    order += sorted(set(by_file) - set(order))  # files with covered or optional findings only: after the work
    for index, path in enumerate(order):
        block = _file_block(path, by_file[path])
        if used + len(block) > budget:
            rest = order[index:]
            hidden = sum(len(by_file[p]) for p in rest)
            parts.append(
                f"> **Truncated:** {hidden} more findings in {len(rest)} files are not shown, to keep this "
                f"report under {LIMIT:,} characters. `migrate scan --format html` or `--format json` lists them all.\n"
            )
            break
        parts.append(block)
        used += len(block)
    return "".join(parts)


def _file_block(path: str, findings: list[Finding]) -> str:
    worst = max(f.severity for f in findings)
    lines = [f"#### {_code(path)} ({_count(len(findings), 'finding')}, worst {worst.label})", ""]
    for group in _groups(findings):
        lines.extend(_group_lines(group))
    return "\n".join(lines).rstrip("\n") + "\n\n"  # a closing <details> leaves a blank line of its own


def _groups(findings: list[Finding]) -> list[list[Finding]]:
    """Per file: renames one group per rule (as a list of names), other findings per rule and message."""
    groups: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in findings:
        rename = finding.severity <= Severity.LOW and finding.hip
        groups[(finding.rule, "" if rename else finding.message)].append(finding)
    return sorted(groups.values(), key=lambda g: (-max(f.severity for f in g), g[0].line, g[0].rule))


def _group_lines(group: list[Finding]) -> list[str]:
    first = group[0]
    worst = max(f.severity for f in group)
    numbers = sorted({f.line for f in group})
    where = "L" + ", ".join(map(str, numbers[:12])) + (f" (+{len(numbers) - 12} more)" if len(numbers) > 12 else "")
    head = f"- **{where}**" + (f" ×{len(group)}" if len(group) > 1 else "") + f" {worst.label} {_code(first.rule)}: "
    if len(group) > 1 and worst <= Severity.LOW and all(f.hip for f in group):
        pairs = sorted({(f.symbol or f.evidence.strip(), f.hip or "") for f in group})
        shown = ", ".join(f"{_code(a)} → {_code(b)}" for a, b in pairs[:8])
        return [head + "mechanical renames: " + shown + (f" and {len(pairs) - 8} more" if len(pairs) > 8 else "")]
    suggestion = f" → {_text(first.hip)}" if first.hip else ""
    if len(group) == 1 and first.evidence.strip():
        return [head + _text(first.message), f"  {_evidence(first)}{suggestion}", *_occurrences(first)]
    lines = [head + _text(first.message) + suggestion]
    by_line = {f.line: f for f in reversed(group)}
    lines += [f"  - L{n}: {_evidence(by_line[n])}" for n in numbers[:_EVIDENCE_LINES] if by_line[n].evidence.strip()]
    if len(numbers) > _EVIDENCE_LINES:
        lines.append(f"  - and {len(numbers) - _EVIDENCE_LINES} more lines")
    return lines


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
