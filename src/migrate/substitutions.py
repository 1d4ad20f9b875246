"""The substitutions knowledge base (rules/data/substitutions.yaml): which ROCm substitute answers which finding."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from migrate import targets
from migrate.data import load_yaml
from migrate.model import Finding, Substitution

ANY_ARCH = "any"


@dataclass(frozen=True)
class Entry:
    """One knowledge-base entry, as generated from the shared reference."""

    id: str
    kind: str
    replaces: tuple[str, ...]
    rocm: tuple[str, ...]
    install: tuple[str, ...]
    archs: tuple[str, ...]  # gfx names; (ANY_ARCH,) when the entry covers every ROCm target
    archs_note: str
    target_notes: tuple[tuple[str, str], ...]  # keys: gfx names, or "rdna" for every RDNA target
    rocm_versions: str
    risk: str
    caveats: tuple[str, ...]
    sources: tuple[str, ...]
    as_of: str
    confidence: str
    unconfirmed: tuple[str, ...]

    def covers(self, gfx: str) -> bool:
        return self.archs == (ANY_ARCH,) or gfx in self.archs


@cache
def knowledge_base() -> dict[str, Entry]:
    """Every substitution of the knowledge base, by id."""
    return {raw["id"]: _entry(raw) for raw in load_yaml("substitutions.yaml")["substitutions"]}


def dropped() -> dict[str, str]:
    """Reference entries the knowledge base leaves out, with the reason."""
    return dict(load_yaml("substitutions.yaml").get("dropped", {}))


def _entry(raw: dict[str, Any]) -> Entry:
    archs = raw["archs"]
    return Entry(
        id=raw["id"],
        kind=raw["kind"],
        replaces=tuple(raw["replaces"]),
        rocm=tuple(raw["rocm"]),
        install=tuple(raw["install"]),
        archs=(ANY_ARCH,) if archs == ANY_ARCH else tuple(archs),
        archs_note=raw.get("archs_note", ""),
        target_notes=tuple(raw["target_notes"].items()),
        rocm_versions=raw["rocm_versions"],
        risk=raw["risk"],
        caveats=tuple(raw["caveats"]),
        sources=tuple(raw["sources"]),
        as_of=raw["as_of"],
        confidence=raw["confidence"],
        unconfirmed=tuple(raw["unconfirmed"]),
    )


def propose(findings: Iterable[Finding], gfx_targets: tuple[str, ...]) -> tuple[Substitution, ...]:
    """The substitutions answering FINDINGS, each with its answers and per-target install and notes."""
    answers: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for finding in findings:
        for sub_id in finding.substitutions:
            answers[sub_id].add((finding.rule, finding.path))
    if not answers:
        return ()
    base = knowledge_base()
    return tuple(
        for_targets(base[sub_id], gfx_targets, answers=tuple(sorted(pairs)))
        for sub_id, pairs in sorted(answers.items())
        if sub_id in base
    )


def for_targets(
    entry: Entry, gfx_targets: tuple[str, ...], *, answers: tuple[tuple[str, str], ...] = ()
) -> Substitution:
    """ENTRY as the report shows it for GFX_TARGETS: install commands filled in, one note per target."""
    covered = tuple(t for t in gfx_targets if entry.covers(t)) or gfx_targets
    return Substitution(
        id=entry.id,
        replaces="; ".join(entry.replaces),
        rocm="; ".join(entry.rocm),
        install=tuple(dict.fromkeys(fill_targets(command, covered) for command in entry.install)),
        archs=entry.archs,
        caveats=entry.caveats,
        sources=entry.sources,
        as_of=entry.as_of,
        answers=answers,
        kind=entry.kind,
        risk=entry.risk,
        confidence=entry.confidence,
        rocm_versions=entry.rocm_versions,
        target_notes=tuple((gfx, target_note(entry, gfx)) for gfx in gfx_targets),
        unconfirmed=entry.unconfirmed,
    )


def fill_targets(command: str, gfx_targets: tuple[str, ...]) -> str:
    """Replace the knowledge base's target placeholders in an install command."""
    device = f"device-{gfx_targets[0]}" if len(gfx_targets) == 1 else "device-all"
    values = {
        "{archs}": ";".join(gfx_targets),
        "{archs_space}": " ".join(gfx_targets),
        "{archs_comma}": ",".join(gfx_targets),
        "{offload_arch}": " ".join(f"--offload-arch={t}" for t in gfx_targets),
        "{device_extra}": device,
    }
    for placeholder, value in values.items():
        command = command.replace(placeholder, value)
    return command


def target_note(entry: Entry, gfx: str) -> str:
    """What ENTRY means on one target: covered or not, plus the knowledge base's note for it."""
    notes = dict(entry.target_notes)
    target = targets.get(gfx)
    specific = notes.get(gfx) or (notes.get("rdna") if target is not None and target.is_rdna else None)
    if not entry.archs:
        coverage = "no ROCm substitute"
    elif entry.covers(gfx):
        generic = entry.archs_note.startswith("all") or entry.archs_note in ("", "any")
        coverage = "covered" + ("" if generic or entry.archs != (ANY_ARCH,) else f" ({entry.archs_note})")
    else:
        coverage = f"no build listed for {gfx} (listed: {', '.join(entry.archs)})"
    return f"{coverage}; {specific}" if specific else coverage
