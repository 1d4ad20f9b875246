"""The first screen every human report leads with, as plain data: ROCm status, the verdict and its three drivers,
its basis, the first three actions, the project-level counterpart, and the counts in words; pure."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import chain

from migrate import risk
from migrate.assessment import STACKS, Assessment, Removal
from migrate.finding_status import status_of
from migrate.model import Finding, Severity, Substitution
from migrate.risk import Effort
from migrate.report import components, status

ACTIONS = 3
SOURCES_SHOWN = 3  # a note's sources on the first screen; the substitute's own section has them all
_MOST = 0.5  # "most of what blocks": more than half of the effort at high and blocker severity
_RUN_AS_IS = frozenset({"inline-ptx", "unsupported-api", "cuda-driver-api"})
_TENSOR_CORE = re.compile(r"\b(?:w?mma|wgmma|ldmatrix|mma_sync)\b|nvcuda::wmma")


@dataclass(frozen=True)
class DriverLine:
    """One of the components that drive the effort: what it is, where, its status and effort."""

    title: str  # 'custom ops/kernels (csrc/)'
    status: str
    kinds: str
    findings: int
    files: int
    effort: str
    share: int  # percent of the effort

    @property
    def facts(self) -> str:
        """Everything after the title, in one phrase."""
        return (f"{self.kinds}, {_plural(self.findings, 'finding')} in {_plural(self.files, 'file')}, "
                f"{self.status}, {self.effort} ({self.share}% of the effort)")


@dataclass(frozen=True)
class Action:
    """One thing to do, why it comes now, and the command that starts it (empty where there is none)."""

    what: str
    why: str
    command: str = ""  # a command to copy
    install: str = ""  # how to install it, in words, where the knowledge base has no command


@dataclass(frozen=True)
class Note:
    """A fact from the knowledge base the reader should weigh first, with its limits, sources and date."""

    heading: str
    text: str
    limits: tuple[str, ...]
    sources: tuple[str, ...]
    as_of: tuple[str, ...]  # the date of each knowledge-base entry it rests on


@dataclass(frozen=True)
class FirstScreen:
    """What a porting lead reads first, in the order every format shows it."""

    status: tuple[tuple[str, str], ...]
    verdict: str
    score: int
    effort: str
    blockers: int
    drivers: tuple[DriverLine, ...]
    basis: str
    lead: Note | None
    actions: tuple[Action, ...]
    unchanged: tuple[Note, ...]
    counts: tuple[tuple[str, str], ...]

    @property
    def verdict_line(self) -> str:
        """'very-hard (risk 94/100), effort 32-83 engineer-days, 148 blocker findings'."""
        blockers = f", {_plural(self.blockers, 'blocker finding')}" if self.blockers else ""
        return f"{self.verdict} (risk {self.score}/100), effort {self.effort}{blockers}"


def build(record: Assessment) -> FirstScreen:
    """The first screen of RECORD."""
    assessed = record.risk
    return FirstScreen(
        status=tuple(status.headline(record)),
        verdict=assessed.verdict,
        score=assessed.score,
        effort=risk.format_days(assessed.effort) + status.per_program(assessed),
        blockers=assessed.blockers,
        drivers=drivers(record),
        basis=assessed.basis,
        lead=_lead(record),
        actions=actions(record),
        unchanged=_unchanged(record),
        counts=tuple(counts(record)),
    )


def drivers(record: Assessment) -> tuple[DriverLine, ...]:
    """The components that drive the effort, each named for what it is."""
    by_name = {c.name: c for c in record.risk.components if not c.optional}  # drivers are required work
    lines = []
    for driver in record.risk.drivers:
        component = by_name[driver.component]
        kinds = " and ".join(risk.label(c, record.weights) for c in component.categories[:2])
        lines.append(DriverLine(
            components.title(component), components.status(component, record.context), kinds,
            component.findings, component.files, risk.format_days(component.effort), round(driver.share * 100),
        ))
    return tuple(lines)


def actions(record: Assessment) -> tuple[Action, ...]:
    """The first actions: the substitutes that remove most effort, then the checklist's phases in order."""
    chosen = [r for r in record.removals if r.effort.mid > 0][:ACTIONS]
    found = [_replace(r) for r in chosen]
    covered = frozenset().union(*(r.paths for r in chosen))
    for item in record.checklist:
        if len(found) >= ACTIONS:
            break
        if item.phase.id == "environment" and found:
            continue  # the substitutes above are that phase
        if item.paths and set(item.paths) <= covered:
            continue  # the substitutes above are the work in these files
        why = f"{_plural(item.findings, 'finding')}, {risk.format_days(item.effort)}" if item.findings else ""
        if item.paths:
            why += ": " + ", ".join(item.paths[:3]) + (f" and {len(item.paths) - 3} more" if len(item.paths) > 3 else "")
        found.append(Action(f"{item.phase.title}: {item.phase.hint}", why))
    if not found:
        targets = ", ".join(record.result.targets)
        found.append(Action(f"Build it for ROCm and run its tests on {targets}", "nothing on the main path to port"))
    return tuple(found)


def _replace(removal: Removal) -> Action:
    sub = removal.substitution
    why = f"removes {risk.format_days(removal.effort)} ({_plural(removal.findings, 'finding')})"
    note = next((c for c in sub.caveats if c.startswith("Install: ")), "")
    return Action(f"{sub.id} → {removal.counterpart}", why, sub.install[0] if sub.install else "",
                  "" if sub.install else note.removeprefix("Install: "))


def _lead(record: Assessment) -> Note | None:
    """The ROCm counterpart project when most of what blocks the port is one NVIDIA stack."""
    total = record.blocking.mid
    for stack in STACKS:
        part = record.blocking_by_stack.get(stack.name, Effort()).mid
        entries = [record.knowledge[i] for i in stack.counterpart if i in record.knowledge]
        if total <= 0 or part <= _MOST * total or not entries:
            continue
        share = round(100 * part / total)
        return Note(
            f"Most of what blocks this port is {stack.name}: {share}% of the effort at high and blocker severity",
            "ROCm counterpart: " + "; ".join(e.rocm for e in entries),
            tuple(c for e in entries for c in e.caveats if not c.startswith("Install: "))[:3],
            tuple(s for e in entries for s in e.sources),
            tuple(e.as_of for e in entries if e.as_of),
        )
    return None


def _unchanged(record: Assessment) -> tuple[Note, ...]:
    """Ways to run the CUDA code unchanged, only where a port cannot handle what blocks it."""
    total = record.blocking.mid
    if total <= 0:
        return ()
    notes = []
    runtime = sum(e.mid for c, e in record.blocking_by_category.items() if c in _RUN_AS_IS)
    every = chain(record.result.findings, record.result.guarded_findings)  # read once, if at all: never a list
    scale = record.knowledge.get("scale-cuda-compiler")
    if scale is not None and runtime > _MOST * total and not any(_tensor_core(f) for f in every):
        notes.append(_note("Port or build unchanged: most of what blocks this port is inline PTX or CUDA-runtime "
                           "behaviour, with no tensor-core (MMA/WMMA) code", scale))
    binary = sum(e.mid for name, e in record.blocking_by_stack.items() if name in _binary_only())
    zluda = record.knowledge.get("zluda")
    if zluda is not None and binary > _MOST * total:
        notes.append(_note("Run unchanged? Most of what blocks this port is a binary-only NVIDIA stack", zluda))
    return tuple(notes)


def _binary_only() -> set[str]:
    return {s.name for s in STACKS if s.binary_only}


def _note(heading: str, entry: Substitution) -> Note:
    limits = tuple(c for c in entry.caveats if not c.startswith("Install: "))
    return Note(heading, entry.rocm, limits, entry.sources, (entry.as_of,) if entry.as_of else ())


def _tensor_core(finding: Finding) -> bool:
    return "wmma" in finding.substitutions or _TENSOR_CORE.search(finding.evidence) is not None


def counts(record: Assessment) -> list[tuple[str, str]]:
    """The counts, each saying what it counts and how it differs from its neighbour."""
    result = record.result
    by_status: Counter[str] = Counter()
    work: Counter[Severity] = Counter()
    files, previous, in_order = 0, None, True  # files counted as their paths change: in report order, path first
    for finding in result.findings:  # one read of them (a large scan's come back from disk)
        found_status = status_of(finding, record.context, record.weights)
        by_status[found_status] += 1
        if found_status == "remaining":
            work[finding.severity] += 1
        if finding.path != previous:
            in_order = in_order and (previous is None or previous < finding.path)
            files, previous = files + 1, finding.path
    if not in_order:  # findings made by hand, in no order: a set of their paths
        files = len({f.path for f in result.findings})
    levels = ", ".join(f"{work[s]} {s.label}" for s in sorted(Severity, reverse=True) if work.get(s))
    parts = [f"{by_status['remaining']} to port" + (f" ({levels})" if levels else "")]
    if by_status["optional-gap"]:
        parts.append(f"{by_status['optional-gap']} in CUDA-only add-ons")
    parts.append(f"{by_status['covered']} need nothing on ROCm (informational, or handled by its HIP build)")
    found = [("Findings", f"{_plural(len(result.findings), 'finding')} in {files} of {result.files_scanned} files "
                          f"scanned: " + ", ".join(parts))]
    if result.guarded:
        found.append(("Already handled", f"{_plural(result.guarded, 'more NVIDIA-only place')} in code a HIP build "
                                         f"never compiles (behind HIP guards, or another backend's code), not among "
                                         f"the findings above and not in the effort: {status.never(record)}"))
    return found


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
