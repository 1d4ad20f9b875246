"""AMD GPU targets: wavefront size and what ROCm supports (data in rules/data/gpu_archs.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from migrate.data import load_yaml
from migrate.errors import InputError

UNKNOWN_WAVEFRONT = 0
CURRENT_LINES = ("rocm_7_0_to_7_2", "core_sdk_7_14_to_10_1")  # the two release streams of 2026
_STATUS = {"unknown": "status not confirmed", "not-supported": "not supported"}


@dataclass(frozen=True)
class Target:
    """One gfx target as the knowledge base describes it."""

    name: str
    products: tuple[str, ...]
    family: str
    architecture: str
    wavefront: int  # the size HIP compiles for by default; UNKNOWN_WAVEFRONT when unknown
    linux: tuple[tuple[str, str], ...]  # (ROCm line, status), oldest line first
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    as_of: str = ""
    confidence: str = ""

    @property
    def is_rdna(self) -> bool:
        return self.family == "RDNA"


def _data() -> dict[str, Any]:
    return load_yaml("gpu_archs.yaml")  # type: ignore[no-any-return]


@cache
def known() -> dict[str, Target]:
    """Every target of the knowledge base, by gfx name."""
    return {name: _target(name, raw) for name, raw in _data()["targets"].items()}


def _target(name: str, raw: dict[str, Any]) -> Target:
    return Target(
        name=name,
        products=tuple(raw["products"]),
        family=raw["family"],
        architecture=raw["architecture"],
        wavefront=raw["wavefront"] or UNKNOWN_WAVEFRONT,
        linux=tuple(raw["linux"].items()),
        notes=tuple(raw["notes"]),
        sources=tuple(raw["sources"]),
        as_of=raw["as_of"],
        confidence=raw["confidence"],
    )


def line_label(line: str) -> str:
    """A ROCm release line's name for people (rocm_7_0_to_7_2 -> ROCm 7.0-7.2)."""
    return str(_data()["lines"].get(line, line))


def get(gfx: str) -> Target | None:
    return known().get(gfx)


def validate(gfx_targets: tuple[str, ...]) -> tuple[str, ...]:
    """The targets unchanged, or an InputError naming one that is not a gfx name, or the unknown ones."""
    for name in gfx_targets:
        if not name.startswith("gfx"):
            raise InputError(f"{name!r} is not a gfx target name (e.g. gfx942, gfx1100)")
    unknown = [t for t in gfx_targets if t not in known()]
    if unknown:
        names = ", ".join(unknown)
        raise InputError(f"unknown target {names} (known targets: {', '.join(known())})")
    return gfx_targets


def wavefront_size(gfx: str) -> int:
    """The wavefront HIP compiles for by default: 64 on GCN/CDNA, 32 on RDNA; 0 when unknown."""
    target = get(gfx)
    if target is not None:
        return target.wavefront
    return 64 if gfx.startswith("gfx9") else 32


def wavefront_note(gfx_targets: tuple[str, ...]) -> str:
    """One sentence on what the targets' wavefront size means for warp-size assumptions."""
    parts = []
    for gfx in gfx_targets:
        size = wavefront_size(gfx)
        if size == 64:
            parts.append(f"{gfx}: 64-wide, so code assuming 32 lanes computes wrong results")
        elif size == 32:
            parts.append(f"{gfx}: 32-wide by default (wave64 is opt-in), so 32-lane code runs but is not portable")
        else:
            parts.append(f"{gfx}: wavefront size unknown")
    return f"(wavefront on {'; '.join(parts)})"


def support_note(gfx: str) -> str:
    """What ROCm on Linux officially says about the target, in one sentence."""
    target = get(gfx)
    if target is None:
        return f"{gfx} is not in the knowledge base."
    status = dict(target.linux)
    labels = dict(_data()["lines"])
    supported = [labels[line] for line in CURRENT_LINES if status[line] == "supported"]
    preview = [labels[line] for line in CURRENT_LINES if status[line] == "preview"]
    if len(supported) == len(CURRENT_LINES):
        return f"{gfx}: supported on Linux by {' and '.join(supported)}."
    if supported:
        others = ", ".join(
            f"{labels[line]}: {_STATUS.get(status[line], status[line])}"
            for line in CURRENT_LINES
            if labels[line] not in supported
        )
        extra = f" ({others})" if others else ""
        return f"{gfx}: officially supported on Linux by {supported[0]}{extra}; use that release line."
    if preview:
        return f"{gfx}: preview support only ({', '.join(preview)}); not a supported production target yet."
    last = [labels[line] for line, value in target.linux if value in ("supported", "deprecated")]
    since = f"; last listed in {last[-1]} ({status_of(target, last[-1])})" if last else ""
    return f"{gfx}: not supported by current ROCm releases on Linux{since}; plan on an older ROCm line or other hardware."


def status_of(target: Target, label: str) -> str:
    labels = {v: k for k, v in _data()["lines"].items()}
    return dict(target.linux)[labels[label]]


def describe(gfx: str) -> dict[str, Any]:
    """The JSON view of one target: family, wavefront and what ROCm on Linux says about it."""
    target = get(gfx)
    size = wavefront_size(gfx)
    return {
        "target": gfx,
        "family": target.family if target else "unknown",
        "wavefront": size or None,
        "linux": support_note(gfx),
        "as_of": target.as_of if target else "",
    }


TARGET_LIST_MATCHER = "gfx-target-list"  # its findings carry the gfx targets a build lists (';'-joined) as symbol


def left_out(listed: str, gfx_targets: tuple[str, ...]) -> tuple[str, ...]:
    """The targets of GFX_TARGETS a build's target list (LISTED: gfx names joined by ';') does not name."""
    names = set(listed.split(";"))
    return tuple(t for t in gfx_targets if t not in names)


def left_out_note(listed: str, missing: tuple[str, ...]) -> str:
    """One sentence: what the list names and which scan targets (with their products) it leaves out."""
    named = ", ".join(listed.split(";"))
    gone = "; ".join(f"{gfx} ({', '.join(target.products[:2])})" if (target := get(gfx)) and target.products else gfx
                     for gfx in missing)
    return f"(The list names {named}; it leaves out {gone}.)"
