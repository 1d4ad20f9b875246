"""What every parser gives and reads: the Document, ParseError, the bounded text reader and the parser registry."""

from __future__ import annotations

import bisect
import codecs
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from migrate.bounded import Refused, read_source
from migrate.lazyre import lazy_regex
from migrate.model import FileKind, Skipped, SourceFile

# A line this long is data, not code (a minified bundle, an embedded blob, generated tables): matching it
# would only repeat the blob in every finding.
LONG_LINE = 10_000
EVIDENCE = 240  # characters of a long line kept around a finding, so evidence never grows with the line
_SUPPRESS = lazy_regex(r"(?:#|//|/\*)\s*migrate:\s*ignore(?:\[([^\]]*)\])?")
_ALL_RULES = "*"


class ParseError(Exception):
    """The file could not be parsed; the message is the reason shown to the user."""


def as_spaces(text: str) -> str:
    """TEXT with every character but its line breaks turned to a space: a comment or a string blanked so that the
    offsets and line numbers after it hold."""
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(line) for line in text.split("\n"))


def blank_match(match: re.Match[str]) -> str:
    """as_spaces of what MATCH matched: a `re.sub` replacement."""
    return as_spaces(match.group())


def nested_comment_end(text: str, start: int, opening: str, closing: str) -> int:
    """Past the CLOSING that ends the block comment opened at START, where block comments nest (Rust's `/* */`,
    Julia's `#= =#`); the end of TEXT when it is never closed."""
    depth, i = 0, start
    while i < len(text):
        if text.startswith(opening, i):
            depth, i = depth + 1, i + len(opening)
        elif text.startswith(closing, i):
            depth, i = depth - 1, i + len(closing)
            if depth == 0:
                return i
        else:
            i += 1
    return len(text)


@dataclass
class Document:
    """A parsed file: its text, its lines, and whatever tree its parser made."""

    source: SourceFile
    text: str
    tree: Any = None
    guarded_ranges: list[tuple[int, int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # parts left out (a bad line), the rest was scanned
    _range_index: tuple[list[tuple[int, int]], int, list[int], list[int]] | None = field(
        default=None, init=False, repr=False, compare=False)

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def line_text(self, line: int, column: int = 1) -> str:
        """The source line (1-based), stripped, for a finding's evidence: a window around COLUMN when long."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if len(text) <= EVIDENCE:
            return text.strip()
        start = max(0, min(column - 1 - EVIDENCE // 3, len(text) - EVIDENCE))
        window = text[start : start + EVIDENCE].strip()
        return ("..." if start > 0 else "") + window + ("..." if start + EVIDENCE < len(text) else "")

    def is_guarded(self, line: int) -> bool:
        """True when the line sits in code already kept apart for HIP/ROCm."""
        return self.in_ranges(self.guarded_ranges, line)

    def guard_test(self) -> Callable[[int], bool] | None:
        """is_guarded, or None when no line can be guarded (no ranges, and no parser's own test): a file's hundreds
        of thousands of hits then ask nothing."""
        if self.guarded_ranges or type(self).is_guarded is not Document.is_guarded:
            return self.is_guarded
        return None

    def in_ranges(self, ranges: list[tuple[int, int]], line: int) -> bool:
        """LINE lies in one of RANGES (inclusive line ranges): a bisection, the ranges merged once per list."""
        if not ranges:
            return False
        index = self._range_index
        if index is None or index[0] is not ranges or index[1] != len(ranges):
            index = self._range_index = (ranges, len(ranges), *_merged(ranges))
        starts, ends = index[2], index[3]
        found = bisect.bisect_right(starts, line) - 1
        return found >= 0 and line <= ends[found]

    @cached_property
    def _suppressions(self) -> dict[int, set[str]]:
        found: dict[int, set[str]] = {}
        if "migrate:" not in self.text:
            return found
        for number, text in enumerate(self.lines, start=1):
            match = _SUPPRESS.search(text)
            if match:
                ids = {i.strip() for i in (match.group(1) or _ALL_RULES).split(",") if i.strip()}
                found[number] = ids
        return found

    @property
    def has_suppressions(self) -> bool:
        """Some line carries a `migrate: ignore` comment (else is_suppressed is False for every line)."""
        return bool(self._suppressions)

    def is_suppressed(self, line: int, rule_id: str) -> bool:
        """A `migrate: ignore[rule]` comment on this line or the one above silences the rule."""
        for number in (line, line - 1):
            ids = self._suppressions.get(number, set())
            if rule_id in ids or _ALL_RULES in ids:
                return True
        return False


def _merged(ranges: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """RANGES sorted and merged where they overlap or touch: (starts, ends)."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted(r for r in ranges if r[0] <= r[1]):
        if ends and start <= ends[-1] + 1:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


Parser = Callable[[SourceFile, str], Document]
_PARSERS: dict[FileKind, Parser] = {}


def register(*kinds: FileKind) -> Callable[[Parser], Parser]:
    """Declare the parser for some file kinds."""

    def wrap(func: Parser) -> Parser:
        for kind in kinds:
            _PARSERS[kind] = func
        return func

    return wrap


def parser_for(kind: FileKind) -> Parser:
    """The parser registered for KIND; a kind without one gets its text and lines only."""
    return _PARSERS.get(kind, _plain)


def _plain(source: SourceFile, text: str) -> Document:
    return Document(source=source, text=text)


def read_text(source: SourceFile) -> str:
    """The file's text; raises ParseError for binary, non-UTF-8 or minified content, or a file that changed
    into something else (a FIFO, a much larger file) since discovery."""
    try:
        data = read_source(source)
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    except Refused as exc:
        raise ParseError(f"cannot read: {exc}") from None
    if source.kind is FileKind.BINARY_LIBRARY:
        markers = _cuda_binary_markers(data)
        return markers + SOURCES_BESIDE + "\n" if markers and _cuda_sources_beside(source.path) else markers
    wide = _utf16_text(data)
    if wide is not None:
        _refuse_minified(wide)
        return wide
    if b"\0" in data[:8192]:
        raise ParseError("binary file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = _legacy_text(data, exc.start)
    _refuse_minified(text)
    return text


# A text file written as UTF-16 with a byte-order mark: what Windows PowerShell 5's `>` writes (`pip freeze >
# requirements.txt`), which pip and uv read as they read UTF-8 (pypa/pip#733, astral-sh/uv#2283). Its every other
# byte is NUL, so it was taken for a binary file and its pins went unread. Text only: no NUL and no other control
# characters once decoded, and mostly ASCII as source is (bytes that happen to open with FF FE stay what they were).
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_CONTROL = lazy_regex(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _utf16_text(data: bytes) -> str | None:
    if not data.startswith(_UTF16_BOMS) or data.startswith(codecs.BOM_UTF32_LE):
        return None
    try:
        text = data.decode("utf-16")
    except UnicodeDecodeError:
        return None
    if _CONTROL.search(text) or len(text.encode("ascii", "ignore")) < len(text) * (1 - _LEGACY_MAX_SHARE):
        return None
    return text


# A source file saved in an 8-bit code page (a Latin-1 or Windows-1252 comment such as `für`, a GBK one): its code
# is ASCII, so it is read byte for byte as Latin-1, every byte one character (as `migrate translate` reads such a
# file), rather than left out with its kernels and inline PTX. Content that is mostly not ASCII is not source code:
# refused as before.
_ASCII = bytes(range(128))
_LEGACY_MAX_SHARE = 0.5  # most of a source file is ASCII code, whatever its comments are written in


def _legacy_text(data: bytes, invalid_at: int) -> str:
    if len(data.translate(None, _ASCII)) > len(data) * _LEGACY_MAX_SHARE:
        raise ParseError(f"not UTF-8 text (invalid byte at offset {invalid_at})")
    return data.decode("latin-1")


# What nvcc leaves in an object it built: the fat binary's section and the host stubs that register its kernels with
# the CUDA runtime at load time. A prebuilt library that holds them carries NVIDIA device code, and without its
# sources nothing rebuilds it for an AMD GPU.
_CUDA_BINARY_MARKERS = (b".nv_fatbin", b"__cudaRegisterFatBinary", b"__cudaRegisterFunction", b"__fatbinwrap")


# A library whose own folder holds CUDA sources is a build artifact committed with them (a research op's `_so.so` or
# `.cu.o` next to its `_g.cu`), not a vendor's library: its text gets this line, and hipcc rebuilds it from them.
SOURCES_BESIDE = "cuda-sources-beside"
_CUDA_SOURCE_SUFFIXES = (".cu", ".cuh")


def _cuda_sources_beside(path: Path) -> bool:
    """PATH's folder holds a CUDA source file (one listing of that folder, at most)."""
    try:
        with os.scandir(path.parent) as entries:
            return any(e.name.lower().endswith(_CUDA_SOURCE_SUFFIXES) and e.is_file() for e in entries)
    except OSError:
        return False


def _cuda_binary_markers(data: bytes) -> str:
    """A prebuilt library read as text: one line per CUDA device-code marker it holds (none: an empty text)."""
    return "".join(marker.decode() + "\n" for marker in _CUDA_BINARY_MARKERS if marker in data)


def _has_long_line(text: str) -> bool:
    """A line of TEXT is longer than LONG_LINE: a window of LONG_LINE + 1 characters from a line's start holds no
    newline. A search back from each window's end, so a file is read in steps of ~LONG_LINE characters (splitting
    every file into lines cost ~0.19 CPU s over CUTLASS + CCCL's 132 M characters, this ~0.01)."""
    start, size = 0, len(text)
    while size - start > LONG_LINE:
        newline = text.rfind("\n", start, start + LONG_LINE + 1)
        if newline < 0:
            return True
        start = newline + 1
    return False


# A long line that is one brace-initialised table of numbers (`__constant__ uchar lut[] = { 0x80, 0x0, ... };`, an
# embedded cubin's bytes, a test's expected values) is data inside a hand-written file: the file's code around it is
# still scanned. Anything else on such a line (calls, strings, names) marks the file as minified or generated.
_TABLE_HEAD = 300  # characters of declaration allowed before the table's first brace
_NUMBER_TABLE = lazy_regex(r"[\s0-9a-fA-FxXuUlL.,{}+\-]*(?:;\s*)?")


def _is_number_table(line: str) -> bool:
    brace = line.find("{", 0, _TABLE_HEAD)
    return brace >= 0 and _NUMBER_TABLE.fullmatch(line, brace) is not None


def _refuse_minified(text: str) -> None:
    if not _has_long_line(text):  # the common case
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > LONG_LINE and not _is_number_table(line):
            raise ParseError(f"looks minified or generated (line {number} is {len(line):,} characters long)")
