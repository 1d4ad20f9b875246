"""ROCm `#if` branches and in-place edits, rendered into a C/C++/CUDA source with its own line ends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Edit:
    """Bytes [start, end) of the source replaced by TEXT."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Branch:
    """Whole source lines [first, last] (0-based) kept for CUDA, and the edits that make their ROCm copy."""

    first: int
    last: int
    edits: tuple[Edit, ...]
    note: str


def merged(branches: Sequence[Branch]) -> list[Branch]:
    """Branches whose lines overlap become one."""
    out: list[Branch] = []
    for branch in sorted(branches, key=lambda b: (b.first, b.last)):
        if out and branch.first <= out[-1].last:
            last = out[-1]
            out[-1] = replace(last, last=max(last.last, branch.last), edits=last.edits + branch.edits,
                              note=last.note or branch.note)
        else:
            out.append(branch)
    return out


def render(data: bytes, branches: Sequence[Branch], edits: Sequence[Edit], macro: str) -> bytes:
    """DATA with each branch's lines as `#ifdef MACRO <ROCm copy> #else <lines> #endif` and EDITS made in place (in
    both copies of a branch's lines, unless a branch edit already rewrites that text)."""
    lines = data.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out: list[bytes] = []
    position = 0
    for branch in merged(branches):
        begin, end = starts[branch.first], starts[branch.last + 1]
        out.append(_edited(data, position, begin, edits))
        newline = b"\r\n" if data[begin:end].endswith(b"\r\n") else b"\n"
        original = _edited(data, begin, end, edits)
        original += b"" if original.endswith(b"\n") else newline
        own = [e for e in edits if begin <= e.start and e.end <= end
               and not any(b.start < e.end and e.start < b.end for b in branch.edits)]
        rocm = _edited(data, begin, end, [*branch.edits, *own])
        rocm += b"" if rocm.endswith(b"\n") else newline
        out += [f"#ifdef {macro}{branch.note}".encode() + newline, rocm, b"#else" + newline, original,
                b"#endif" + newline]
        position = end
    out.append(_edited(data, position, len(data), edits))
    return b"".join(out)


def _edited(data: bytes, begin: int, end: int, edits: Sequence[Edit]) -> bytes:
    """DATA[begin:end] with the EDITS that lie inside it."""
    chunk = data[begin:end]
    for edit in sorted((e for e in edits if begin <= e.start and e.end <= end), key=lambda e: e.start, reverse=True):
        chunk = chunk[: edit.start - begin] + edit.text.encode("utf-8") + chunk[edit.end - begin :]
    return chunk
