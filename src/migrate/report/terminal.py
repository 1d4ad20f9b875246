"""A short human summary for the terminal, drawn with rich."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from migrate import risk
from migrate.assessment import Assessment
from migrate.report import firstscreen, grouping, status
from migrate.model import ScanResult, Severity
from migrate.escape import visible

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
    """The first screen, then the rest in short, WIDTH columns wide, in colour or not."""
    result = record.result
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False)
    _header(console, result)
    _first_screen(console, firstscreen.build(record))
    console.rule(style="dim")
    _details(console, record)
    if result.findings:
        tallied = grouping.tally(record, least=Severity.MEDIUM, worst_files=_WORST_FILES)
        _counts(console, tallied)
        _top_findings(console, tallied.groups)
    _skipped(console, result)
    return buffer.getvalue()


def _d(value: object) -> str:
    """Data for a markup string: terminal controls shown as escapes, rich markup escaped."""
    return escape(visible(str(value)))


def _header(console: Console, result: ScanResult) -> None:
    console.print(
        f"[bold]rocm-migrate[/bold] scanned {result.files_scanned} files in {_d(result.root)} "
        f"for {_d(', '.join(result.targets))}"
    )


def _first_screen(console: Console, screen: firstscreen.FirstScreen) -> None:
    """Status, verdict and drivers, basis, the project-level counterpart, the first actions, the counts."""
    for label, text in screen.status:
        _labelled(console, label, text)
    console.print(f"Verdict: [bold]{_d(screen.verdict)}[/bold] " + _d(screen.verdict_line.removeprefix(screen.verdict + " ")))
    _labelled(console, f"  Why {screen.verdict}", screen.basis)
    for number, driver in enumerate(screen.drivers, start=1):
        console.print(f"  {number}. [bold]{_d(driver.title)}[/bold]: {_d(driver.facts)}")
    if screen.lead is not None:
        _note(console, screen.lead)
    if screen.actions:
        console.print("[bold]First actions:[/bold]")
    for number, action in enumerate(screen.actions, start=1):
        console.print(f"  {number}. {_d(action.what)}" + (f" [dim]— {_d(action.why)}[/dim]" if action.why else ""))
        if action.command:
            console.print(Text("     $ " + visible(action.command)), soft_wrap=True)  # one line: copy-able
        elif action.install:
            console.print(Text("     install: " + visible(action.install)))
    for note in screen.unchanged:
        _note(console, note)
    for label, text in screen.counts:
        _labelled(console, label, text)


def _labelled(console: Console, label: str, text: str) -> None:
    console.print(Text.assemble((f"{label}: ", "bold"), visible(text)))


def _note(console: Console, note: firstscreen.Note) -> None:
    """A knowledge-base fact in short: the first limit and the first source (the md and html reports have all)."""
    console.print(f"[bold]{_d(note.heading)}[/bold]")
    console.print(f"  {_d(note.text)}")
    if note.limits:
        more = f" (+{len(note.limits) - 1} more limits in --format md|html)" if len(note.limits) > 1 else ""
        console.print(f"  Limits: {_d(note.limits[0])}{more}")
    sources = note.sources[0] + (f" (+{len(note.sources) - 1} more)" if len(note.sources) > 1 else "") if note.sources else ""
    when = f"; as of {note.as_of[0]}" if note.as_of else ""
    console.print(Text("  Source: " + visible(sources + when), style="dim"), soft_wrap=True)  # a URL stays whole


def _details(console: Console, record: Assessment) -> None:
    """After the first screen: the remaining gaps, the add-ons, per target."""
    for label, text in status.details(record):
        _labelled(console, label, text)
    if record.per_target:
        per_target = (f"{gfx} {a.verdict} ({risk.format_days(a.effort)})" for gfx, a in record.per_target)
        console.print("Per target: " + _d("; ".join(per_target)))


def _counts(console: Console, tallied: grouping.Tally) -> None:
    """The counts by severity and category, and the worst files."""
    line = Text("By severity: ")
    for severity in sorted(Severity, reverse=True):
        line.append(f"{severity.label} {tallied.by_severity.get(severity, 0)}  ", style=SEVERITY_STYLE[severity])
    console.print(line)
    console.print("By category: " + _d(", ".join(f"{c} {n}" for c, n in tallied.by_category.most_common())))
    table = Table(title="Worst files", show_edge=False, title_justify="left")
    table.add_column("file")
    table.add_column("worst")
    table.add_column("findings", justify="right")
    for path, worst, count in tallied.worst_files:
        table.add_row(Text(visible(path)), Text(worst.label, style=SEVERITY_STYLE[worst]), str(count))
    console.print(table)


def _top_findings(console: Console, rows: Sequence[grouping.Group]) -> None:
    """Medium and above, one line per rule and component: the first place and how many more."""
    if not rows:
        return
    total = sum(row.count for row in rows)
    console.print(f"[bold]Findings at medium and above[/bold] ({total}, one line per rule and component):")
    for row in rows[:_TOP_FINDINGS]:
        first = row.first
        more = f" (+{row.count - 1} more in {row.title})" if row.count > 1 else ""
        label = Text(f"  {row.severity.label:<8}", style=SEVERITY_STYLE[row.severity])
        label.append(visible(f"{first.path}:{first.line}{more}  {first.rule}: {first.message}"))
        console.print(label, no_wrap=True, overflow="ellipsis")  # one line each; the reports have the rest
    if len(rows) > _TOP_FINDINGS:
        console.print(f"  ... and {len(rows) - _TOP_FINDINGS} more (--format md|html|json for all)")


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
