"""AMD GPU targets: wavefront size and what ROCm supports (data in rules/data/gpu_archs.yaml)."""

from __future__ import annotations


def wavefront_size(gfx: str) -> int:
    """64 on GCN/CDNA (gfx9xx), 32 by default on RDNA (gfx10xx and later)."""
    return 64 if gfx.startswith("gfx9") else 32


def wavefront_note(gfx_targets: tuple[str, ...]) -> str:
    """One sentence on what the targets' wavefront size means for warp-size assumptions."""
    parts = [f"{t}: {wavefront_size(t)}-wide" for t in gfx_targets]
    return f"(wavefront on {', '.join(parts)})"
