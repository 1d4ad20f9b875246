"""What the builtin engine does beyond the name table (rules/data/hip_engine.yaml), loaded once: apart from the
name map (apimap.py), which every scan reads, so that a scan makes none of these classes."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from migrate.apimap import Version, parse_version
from migrate.data import load_yaml


@dataclass(frozen=True)
class CallRule:
    """An argument rewrite for one HIP call: wrap argument ARG, append one when there are ARITY, drop one, or
    call RENAME instead when there are ARITY."""

    arg: int = -1
    wrap: str = ""
    arity: int = 0
    append: str = ""
    drop: int = -1
    rename: str = ""


@dataclass(frozen=True)
class WarpRules:
    """How the *_sync warp intrinsics are translated before and after the ROCm release that has them."""

    sync_since: Version
    unsync: dict[str, str]
    replaced: dict[str, str]
    masked: frozenset[str]
    full_masks: frozenset[str]
    full_mask: str
    wide_mask: str

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.unsync) | frozenset(self.replaced) | self.masked


@dataclass(frozen=True)
class EngineRules:
    """What the builtin engine does beyond the name table (rules/data/hip_engine.yaml)."""

    default_rocm: str
    renames: dict[str, str]
    calls: dict[str, CallRule]
    warp: WarpRules
    versioned_renames: dict[str, tuple[Version, str, str]] = field(default_factory=dict)
    roc_renames: dict[str, str] = field(default_factory=dict)

    def rename(self, name: str, rocm: Version) -> str | None:
        """NAME's own rename for ROCm release ROCM ('' when that release has no counterpart; None: not renamed here)."""
        if name in self.versioned_renames:
            since, new, before = self.versioned_renames[name]
            return new if rocm >= since else before
        return self.renames.get(name)


@cache
def engine_rules() -> EngineRules:
    """The engine data, loaded once."""
    raw = load_yaml("hip_engine.yaml")
    warp = raw["warp"]
    versioned = {str(k): (parse_version(str(v["since"])), str(v["name"]), str(v["before"]))
                 for k, v in raw.get("versioned_renames", {}).items()}
    return EngineRules(
        str(raw["default_rocm"]),
        {str(k): str(v) for k, v in raw["renames"].items()},
        {str(k): CallRule(**v) for k, v in raw["calls"].items()},
        WarpRules(
            parse_version(str(warp["sync_since"])), dict(warp["unsync"]), dict(warp["replaced"]),
            frozenset(warp["masked"]), frozenset(str(m) for m in warp["full_masks"]), str(warp["full_mask"]),
            str(warp["wide_mask"]),
        ),
        versioned,
        {str(k): str(v) for k, v in raw.get("roc_renames", {}).items()},
    )
