"""Warp-size constants per platform: a constant the scan reports as fixing the warp at 32 (`#define WARP_SIZE 32`,
a constexpr, an enum, a template default) becomes 64 under the ROCm macro, so a CDNA wavefront is used whole, but
only where every file using it sizes its warps by it; shuffle ladders that start at a literal 16 in those files
start at `WARP_SIZE / 2` (16 on CUDA: that path is unchanged)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from migrate.model import Finding
from migrate.parse.cuda import CudaDocument
from migrate.port.branches import Branch, Edit
from migrate.targets import UNKNOWN_WAVEFRONT, known

ROCM_WARP = 64
NOTE = "  // 64-lane wavefronts (CDNA); build RDNA targets with -mwavefrontsize64"
# 32-lane code the constant cannot fix: lane math on a literal 32, 32-bit ballots and masks, other literal-32 sizes
_BLOCKING = frozenset({"warp-lane-math", "warp-ballot-32bit", "warp-narrow-mask", "warpsize-compile-time",
                       "warp-literal-32"})
_CONSTANTS = (
    re.compile(r"^[ \t]*#[ \t]*define[ \t]+(?P<name>\w+)[ \t]+\(?[ \t]*(?P<value>32)[uU]?[ \t]*\)?[ \t]*(?://.*)?$"),
    re.compile(r"^[ \t]*(?:(?:static|inline|__device__|__host__|__constant__)[ \t]+)*(?:constexpr|const)[ \t]+"
               r"(?:[\w:]+[ \t]+)?(?:const[ \t]+)?(?P<name>\w+)[ \t]*(?:=[ \t]*|\{[ \t]*)(?P<value>32)[uU]?[ \t]*\}?[ \t]*;"
               r"[ \t]*(?://.*)?$"),
    re.compile(r"^[ \t]*(?:static[ \t]+)?[\w:]+[ \t]+const[ \t]+(?P<name>\w+)[ \t]*=[ \t]*(?P<value>32)[uU]?[ \t]*;"
               r"[ \t]*(?://.*)?$"),
    re.compile(r"^[ \t]*enum[ \t]*\{[ \t]*(?P<name>\w+)[ \t]*=[ \t]*(?P<value>32)[ \t]*\}[ \t]*;[ \t]*(?://.*)?$"),
    re.compile(r"^[ \t]*template[ \t]*<[^<>]*\b(?:int|unsigned|uint32_t|size_t|index_t)[ \t]+(?P<name>\w+)[ \t]*=[ \t]*"
               r"(?P<value>32)\b[^<>]*>[ \t]*$"),
)
_LADDER = re.compile(r"\bfor[ \t]*\([ \t]*(?:[\w:]+[ \t]+)?(?P<var>\w+)[ \t]*=[ \t]*(?P<start>16)[ \t]*;[ \t]*(?P=var)[ \t]*"
                     r"(?:>[ \t]*0|>=[ \t]*1|!=[ \t]*0)[ \t]*;[ \t]*(?:(?P=var)[ \t]*(?:/=[ \t]*2|>>=[ \t]*1)|(?P=var)[ \t]*=[ \t]*"
                     r"(?P=var)[ \t]*(?:/[ \t]*2|>>[ \t]*1))[ \t]*\)")
_WIDTH_32 = re.compile(r"__shfl\w*\s*\([^;]*,\s*32\s*\)")
_MACRO_SHUFFLE = re.compile(r"^[ \t]*#[ \t]*define(?:[^\n]*\\\n)*[^\n]*\b__shfl", re.M)  # no #ifdef branch fits there
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


@dataclass(frozen=True)
class WarpSizes:
    """The constants made 64 on ROCm ((path, line) of each definition), the ladders that start from them, and the
    files whose shuffles keep the wavefront's width (every file using one of the constants)."""

    constants: frozenset[tuple[str, int, str]] = frozenset()  # (path, line, the constant's name)
    ladders: frozenset[tuple[str, int, str]] = frozenset()  # (path, line, the constant's name)
    wide_files: frozenset[str] = frozenset()
    files: frozenset[str] = field(default=frozenset())  # every file with a constant or a ladder to edit


def plan_warp_sizes(texts: Mapping[str, str], findings: Sequence[Finding], targets: Sequence[str]) -> WarpSizes:
    """Which warp-size constants of TEXTS (path -> source) the port makes per-platform, from the scan's FINDINGS;
    none when no target runs 64-lane wavefronts."""
    if not _any_wave64(targets):
        return WarpSizes()
    mine = [f for f in findings if f.path in texts and f.status != "guarded" and f.category == "warp-size-assumption"]
    definitions: dict[str, list[tuple[str, int]]] = {}
    blocked: set[str] = set()
    for finding in (f for f in mine if f.rule == "warp-size-constant"):
        name = _constant_name(texts[finding.path], finding.line)
        if name is None:
            blocked.add(finding.path)
        else:
            definitions.setdefault(name, []).append((finding.path, finding.line))
    users = {name: {p for p, text in texts.items() if re.search(rf"\b{name}\b", text)} for name in definitions}
    ladders = []
    # the uses of a constant (warp-size-name-use) follow it once it is per-platform: they never block it
    for finding in (f for f in mine if f.rule in _BLOCKING or (f.occurrences and f.rule != "warp-size-name-use")):
        # a finding folding many places (the scan's cap) stands for lines not all listed: the file stays 32-wide
        rewritable = finding.rule == "warp-literal-32" and not finding.occurrences
        ladder = _ladder(texts, finding, definitions) if rewritable else None
        if ladder is None:
            blocked.add(finding.path)
        else:
            ladders.append(ladder)
    blocked |= {p for names in users.values() for p in names
                if _WIDTH_32.search(texts[p]) or _MACRO_SHUFFLE.search(texts[p])}
    accepted = _accepted(users, blocked)
    wide = frozenset(p for name in accepted for p in users[name])
    constants = frozenset((path, line, name) for name in accepted for path, line in definitions[name])
    kept = frozenset(ladder for ladder in ladders if ladder[0] in wide and ladder[2] in accepted)
    return WarpSizes(constants, kept, wide, frozenset({p for p, _, _ in constants} | {p for p, _, _ in kept}))


def _any_wave64(targets: Iterable[str]) -> bool:
    table = known()
    return any(table[t].wavefront in (64, UNKNOWN_WAVEFRONT) if t in table else True for t in targets)


def _constant_name(text: str, line: int) -> str | None:
    """The constant defined on LINE when the whole line is one definition of it as 32 (not a macro's body)."""
    lines = text.splitlines()
    if not 0 < line <= len(lines) or (line > 1 and lines[line - 2].rstrip().endswith("\\")):
        return None
    found = next((m for pattern in _CONSTANTS if (m := pattern.match(lines[line - 1]))), None)
    return found.group("name") if found else None


def _ladder(
    texts: Mapping[str, str], finding: Finding, definitions: Mapping[str, list[tuple[str, int]]],
) -> tuple[str, int, str] | None:
    """(path, line, name) for a shuffle ladder `for (o = 16; o > 0; o /= 2)` that a constant defined above it (in the
    file or a header it includes before the ladder) can start."""
    lines = texts[finding.path].splitlines()
    if not 0 < finding.line <= len(lines) or not _LADDER.search(lines[finding.line - 1]):
        return None
    before = "\n".join(lines[: finding.line - 1])
    included = [m.group(1) for m in _INCLUDE.finditer(before)]
    for name, places in sorted(definitions.items()):
        for path, line in places:
            if (path == finding.path and line < finding.line) or any(
                    path == inc or path.endswith("/" + inc) or PurePosixPath(path).name == inc for inc in included):
                return finding.path, finding.line, name
    return None


def _accepted(users: Mapping[str, set[str]], blocked: set[str]) -> frozenset[str]:
    """The names none of whose files is blocked; a file that uses a refused name is blocked for the others (one file
    must not mix 32- and 64-wide warps)."""
    accepted = set(users)
    blocked = set(blocked)
    changed = True
    while changed:
        changed = False
        for name in sorted(accepted):
            if users[name] & blocked:
                accepted.discard(name)
                blocked |= users[name]
                changed = True
    return frozenset(accepted)


def warp_size_edits(doc: CudaDocument, warp: WarpSizes) -> tuple[list[Branch], list[Edit]]:
    """The branches that make DOC's warp-size constants 64 on ROCm, and its ladders started from them."""
    path = doc.source.relpath
    if path not in warp.files:
        return [], []
    starts = _line_starts(doc.data)
    branches = []
    for place, line, name in sorted(warp.constants):
        value = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b[ \t]*[=({ \t][ \t]*\(?[ \t]*(32)(?![\w.])")
        found = value.search(doc.data, starts[line - 1], starts[line]) if place == path else None
        if found is not None and not doc.is_guarded(line):
            branches.append(Branch(line - 1, line - 1, (Edit(found.start(1), found.end(1), str(ROCM_WARP)),), NOTE))
    edits = []
    for place, line, name in sorted(warp.ladders):
        found = _LADDER_BYTES.search(doc.data, starts[line - 1], starts[line]) if place == path else None
        if found is not None and not doc.is_guarded(line):
            edits.append(Edit(found.start("start"), found.end("start"), f"{name} / 2"))
    return branches, edits


_LADDER_BYTES = re.compile(_LADDER.pattern.encode())


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts
