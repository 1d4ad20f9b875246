"""A scan's findings kept on disk as they come, a file's findings a block, and read back in path order: the parent's
memory no longer grows with them (a 15,000-file tree gives 350,000 findings, ~0.5 KB each in memory)."""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import IO, Any, overload

from migrate.model import Finding, InReportOrder, Occurrence
from migrate.packed import decode, encode

# Bytes of encoded findings kept in memory before the first is written to disk: a small scan (`check`, a few
# hundred files) never makes a file, nor imports tempfile.
IN_MEMORY = 1024 * 1024
# Findings kept decoded once read, the first blocks' (~0.5 KB each): every stage of a scan of up to this many reads
# them as often as it needs at no cost; past them, each read of a block decodes it again (~2 us a finding).
RESIDENT = 65_536


class Spill:
    """Bytes appended and read back by offset: in memory up to IN_MEMORY, past that in a temp file the scan owns.
    The file has no name (or loses it when made: tempfile.TemporaryFile), so it goes when it is closed or the
    process ends, however it ends."""

    def __init__(self, in_memory: int | None = None) -> None:
        self._in_memory = IN_MEMORY if in_memory is None else in_memory
        self._buffer = bytearray()
        self._file: IO[bytes] | None = None
        self._size = 0
        self._flushed = 0  # bytes of the file written through to it: pread sees them

    def append(self, blob: bytes) -> tuple[int, int]:
        """Store BLOB: its (offset, length)."""
        offset = self._size
        if self._file is None and len(self._buffer) + len(blob) > self._in_memory:
            import tempfile  # here: most scans never spill

            self._file = tempfile.TemporaryFile(prefix="migrate-findings-")
            self._file.write(self._buffer)
            self._buffer = bytearray()
        if self._file is None:
            self._buffer += blob
        else:
            self._file.write(blob)
        self._size += len(blob)
        return offset, len(blob)

    def read(self, offset: int, length: int) -> bytes:
        """The LENGTH bytes stored at OFFSET."""
        if self._file is None:
            return bytes(self._buffer[offset:offset + length])
        if offset + length > self._flushed:  # what was written before is read without a flush (a write each time a
            self._file.flush()  # scan reads one file's findings back and appends them again: 11,000 for CUTLASS)
            self._flushed = self._size
        return os.pread(self._file.fileno(), length, offset)

    @property
    def on_disk(self) -> bool:
        """The bytes went to a temp file."""
        return self._file is not None

    def close(self) -> None:
        """Let the bytes go (the temp file with them)."""
        if self._file is not None:
            self._file.close()
        self._buffer = bytearray()

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SpilledFindings(InReportOrder):
    """A scan's findings, a block per file in path order, read back from its Spill as they are asked for: a Sequence
    (length, iteration, indexing) that holds at most RESIDENT of them decoded."""

    def __init__(self, spill: Spill, *, resident: int | None = None) -> None:
        self._spill = spill
        self._resident = RESIDENT if resident is None else resident
        self._offsets = array("q")
        self._lengths = array("q")
        self._starts = array("q", [0])  # index of each block's first finding; the last: the count
        self._kept: list[list[Finding] | None] = []  # the resident blocks, decoded
        self._kept_count = 0
        self._last: tuple[int, list[Finding]] = (-1, [])  # the block read last (indexing reads a block many times)
        self._strings: dict[Any, Any] | None = {}  # the resident findings' values, one copy of each

    def add(self, findings: list[Finding]) -> None:
        """Append one file's FINDINGS (in report order, after every file added before); the first RESIDENT of them
        stay decoded (and only the others are encoded into the spill)."""
        if not findings:
            return
        strings = self._strings
        if strings is not None and self._kept_count + len(findings) <= self._resident:
            self._kept.append(_shared(findings, strings))
            self._kept_count += len(findings)
            offset, length = -1, 0  # kept decoded until the findings go: never read back, so never written
        else:  # the resident findings are the first blocks: past them, their one copy of each value goes
            self._kept.append(None)
            self._strings = None
            offset, length = self._spill.append(encode(findings))
        self._offsets.append(offset)
        self._lengths.append(length)
        self._starts.append(self._starts[-1] + len(findings))

    def close(self) -> None:
        """Let the findings go (the temp file with them)."""
        self._spill.close()

    def blocks(self) -> Iterator[list[Finding]]:
        """Each file's findings, in path order."""
        for block in range(len(self._offsets)):
            yield self._block(block)

    def _block(self, block: int) -> list[Finding]:
        kept = self._kept[block]
        if kept is not None:
            return kept
        if self._last[0] == block:
            return self._last[1]
        found = decode(self._spill.read(self._offsets[block], self._lengths[block]))
        self._last = (block, found)
        return found

    def __len__(self) -> int:
        return self._starts[-1]

    def __iter__(self) -> Iterator[Finding]:
        for block in self.blocks():
            yield from block

    @overload
    def __getitem__(self, index: int) -> Finding: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Finding]: ...

    def __getitem__(self, index: int | slice) -> Finding | Sequence[Finding]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        count = len(self)
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("finding index out of range")
        block = bisect_right(self._starts, index) - 1
        return self._block(block)[index - self._starts[block]]

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same findings, as a tuple of them is."""
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # equal to tuples, yet not a value of its own

    def __repr__(self) -> str:
        return f"SpilledFindings({len(self)} findings)"

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (tuple(self),)  # a copy for another process holds the findings themselves


# the strings, and the line numbers and substitution tuples (each decoded as its own object, 28-60 bytes a finding)
_SHARED = ("path", "rule", "category", "message", "evidence", "hip", "symbol", "status", "line", "column", "end_line",
           "substitutions")


def _shared(findings: list[Finding], strings: dict[Any, Any]) -> list[Finding]:
    """FINDINGS (just decoded: no one else holds them yet) with each of their values the one copy STRINGS keeps. Each
    file's come with copies of their own, and a large tree's findings repeat a few messages, rules and lines of code
    thousands of times: kept once, the resident findings take 30-40% less memory."""
    for finding in findings:
        fields = finding.__dict__
        for name in _SHARED:
            value = fields[name]
            if value is not None:
                fields[name] = strings.setdefault(value, value)
        if finding.occurrences:
            fields["occurrences"] = _shared_places(finding.occurrences, strings)
    return findings


def _shared_places(places: tuple[Occurrence, ...], strings: dict[Any, Any]) -> tuple[Occurrence, ...]:
    """PLACES with each evidence the one copy STRINGS keeps (a folded finding of a large header has a thousand)."""
    new, shared = tuple.__new__, strings.setdefault
    return tuple([new(Occurrence, (line, column, end, shared(text, text))) for line, column, end, text in places])
