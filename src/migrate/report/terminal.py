"""A short human summary for the terminal, drawn with rich."""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from migrate import risk
from migrate.assessment import Assessment
from migrate.report import status
from migrate.model import Finding, ScanResult, Severity
from migrate.report.escape import visible

SEVERITY_STYLE = {
    Severity.INFO: "dim",
    Severity.LOW: "cyan",
    Severity.MEDIUM: "yellow",
    Severity.HIGH: "bold red",
    Severity.BLOCKER: "bold white on red",
}
_WORST_FILES = 5
_TOP_FINDINGS = 15


def render(record: Assessment, *, color: bool = False, width: int = 100) -> str:
    """The summary, WIDTH columns wide, in colour or not."""
    result = record.result
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False)
    _header(console, result)
    _status(console, record)
    _risk(console, record)
    if result.findings:
        _counts(console, result)
        _worst_files(console, result.findings)
        _top_findings(console, result.findings)
    _skipped(console, result)
    return buffer.getvalue()


def _d(value: object) -> str:
    """Data for a markup string: terminal controls shown as escapes, rich markup escaped."""
    return escape(visible(str(value)))


def _header(console: Console, result: ScanResult) -> None:
    console.print(
        f"[bold]rocm-migrate[/bold] scanned {result.files_scanned} files in {_d(result.root)} "
        f"for {_d(', '.join(result.targets))}: {len(result.findings)} findings"
        + (f", {result.guarded} already behind HIP guards" if result.guarded else "")
    )


def _status(console: Console, record: Assessment) -> None:
    """The ROCm status lines first: what already ports decides how to read the rest."""
    for label, text in status.lines(record):
        console.print(Text.assemble((f"{label}: ", "bold"), text))


def _risk(console: Console, record: Assessment) -> None:
    assessed = record.risk
    blockers = f", {assessed.blockers} blocker" + ("s" if assessed.blockers != 1 else "") if assessed.blockers else ""
    console.print(
        f"Verdict: [bold]{assessed.verdict}[/bold] (risk {assessed.score}/100), "
        f"effort {risk.format_days(assessed.effort)}{status.per_program(assessed)}{blockers}"
    )
    for driver in assessed.drivers:
        console.print(f"  - {_d(driver.text)}")
    if record.per_target:
        per_target = (f"{gfx} {a.verdict} ({risk.format_days(a.effort)})" for gfx, a in record.per_target)
        console.print("Per target: " + _d("; ".join(per_target)))


def _counts(console: Console, result: ScanResult) -> None:
    by_severity = Counter(f.severity for f in result.findings)
    line = Text("By severity: ")
    for severity in sorted(Severity, reverse=True):
        line.append(f"{severity.label} {by_severity.get(severity, 0)}  ", style=SEVERITY_STYLE[severity])
    console.print(line)
    by_category = Counter(f.category for f in result.findings)
    console.print("By category: " + _d(", ".join(f"{c} {n}" for c, n in by_category.most_common())))


def _worst_files(console: Console, findings: Iterable[Finding]) -> None:
    weight: Counter[str] = Counter()
    worst: dict[str, Severity] = {}
    for finding in findings:
        weight[finding.path] += 4 ** int(finding.severity)
        worst[finding.path] = max(worst.get(finding.path, Severity.INFO), finding.severity)
    table = Table(title="Worst files", show_edge=False, title_justify="left")
    table.add_column("file")
    table.add_column("worst")
    table.add_column("findings", justify="right")
    counts = Counter(f.path for f in findings)
    for path, _ in weight.most_common(_WORST_FILES):
        table.add_row(Text(visible(path)), Text(worst[path].label, style=SEVERITY_STYLE[worst[path]]), str(counts[path]))
    console.print(table)


def aggregate(findings: Iterable[Finding]) -> list[tuple[Finding, list[int]]]:
    """Group repeated findings of one rule and symbol in one file: (first finding, all its lines)."""
    groups: dict[tuple[str, str, str | None], list[Finding]] = defaultdict(list)
    for finding in findings:
        key = (finding.path, finding.rule, finding.symbol or f"{finding.line}:{finding.column}")
        groups[key].append(finding)
    return [(group[0], [f.line for f in group]) for group in groups.values()]


def _top_findings(console: Console, findings: Iterable[Finding]) -> None:
    important = [f for f in findings if f.severity >= Severity.MEDIUM]
    if not important:
        return
    grouped = sorted(aggregate(important), key=lambda g: (-g[0].severity, g[0].path, g[0].line))
    console.print(f"[bold]Findings at medium and above[/bold] ({len(important)}):")
    for finding, lines in grouped[:_TOP_FINDINGS]:
        where = f"{finding.path}:{lines[0]}" + (f" (+{len(lines) - 1} more)" if len(lines) > 1 else "")
        label = Text(f"  {finding.severity.label:<8}", style=SEVERITY_STYLE[finding.severity])
        label.append(visible(f"{where}  {finding.rule}: {finding.message}"))
        console.print(label, no_wrap=True, overflow="ellipsis")  # one line each; the reports have the rest
    if len(grouped) > _TOP_FINDINGS:
        console.print(f"  ... and {len(grouped) - _TOP_FINDINGS} more (--format md|html|json for all)")


def _skipped(console: Console, result: ScanResult) -> None:
    if not result.skipped:
        return
    console.print(f"[bold]Skipped[/bold] ({len(result.skipped)}):")
    if result.unscanned:
        console.print(f"  [bold]{result.unscanned} file(s) not scanned: the scan ran out of its time budget[/bold]")
    for skip in result.skipped[:20]:
        console.print(f"  {_d(skip.path)}: {_d(skip.reason)}")
    if len(result.skipped) > 20:
        console.print(f"  ... and {len(result.skipped) - 20} more")
