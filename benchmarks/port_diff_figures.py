"""The pure parts of benchmarks/port_diff.py: unified diffs, kinds of file, marks, the grep baseline and the figures."""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WINDOW = 3  # a mark within this many lines of a changed hunk points at it
# Words by which a port's own lines say they are ROCm work; a hunk whose new lines hold one is "named".
ROCM_WORDS = re.compile(
    r"(?<![a-z])(hip|amd)|rocm|gfx\d|mfma|wavefront|__HIP|USE_ROCM|miopen|rccl|rocblas|composable_kernel|ck_tile|\bck\b",
    re.IGNORECASE,
)
KINDS = ("cuda", "cpp", "build", "python", "other")
SEVERITIES = ("info", "low", "medium", "high", "blocker")

# -- unified diffs ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One run of changed lines on the old side: lines START..END, or for a pure insertion the line it goes before."""

    start: int
    end: int
    insertion: bool
    removed: tuple[str, ...]
    added: tuple[str, ...]


@dataclass(frozen=True)
class FileDiff:
    """One file of a diff: its old and new path (None for /dev/null), what git said about it, its change blocks."""

    old: str | None
    new: str | None
    submodule: bool = False
    symlink: bool = False
    binary: bool = False
    blocks: tuple[Block, ...] = ()

    @property
    def status(self) -> str:
        """A (added), D (deleted), R (renamed) or M (modified)."""
        if self.old is None:
            return "A"
        if self.new is None:
            return "D"
        return "R" if self.old != self.new else "M"


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_MODE_LINES = ("index ", "new file mode", "deleted file mode", "new mode", "old mode")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "r": "\r", "v": "\v"}


def unquote(name: str) -> str:
    """A path as git prints it (C-quoted when it holds odd bytes) back to text."""
    if not (len(name) >= 2 and name[0] == name[-1] == '"'):
        return name
    raw, body, index = bytearray(), name[1:-1], 0
    while index < len(body):
        char = body[index]
        if char == "\\" and body[index + 1: index + 4].isdigit():
            raw.append(int(body[index + 1: index + 4], 8))
            index += 4
            continue
        if char == "\\":
            raw.extend(_ESCAPES.get(body[index + 1], body[index + 1]).encode())
            index += 2
            continue
        raw.extend(char.encode())
        index += 1
    return raw.decode("utf-8", "replace")


def _side(text: str, prefix: str) -> str | None:
    name = unquote(text.strip())
    if name == "/dev/null":
        return None
    return name[len(prefix):] if name.startswith(prefix) else name


def _header_paths(line: str) -> tuple[str | None, str | None]:
    """Both paths of `diff --git a/P b/P` when they are the same (the only case without ---/+++ or rename lines)."""
    rest = line[len("diff --git "):]
    half = (len(rest) - 1) // 2
    if rest[half] == " " and rest[:half].startswith("a/") and rest[:half][2:] == rest[half + 1:][2:]:
        return rest[2:half], rest[half + 3:]
    return None, None


class _FileBuilder:
    """Collects one file's header lines and hunk bodies into a FileDiff."""

    def __init__(self, header: str) -> None:
        self.old, self.new = _header_paths(header)
        self.flags: set[str] = set()
        self.blocks: list[Block] = []
        self.old_line = 0
        self.removed: list[str] = []
        self.added: list[str] = []
        self.run_start = 0

    def meta(self, line: str) -> None:
        if line.startswith("--- "):
            self.old = _side(line[4:], "a/")
        elif line.startswith("+++ "):
            self.new = _side(line[4:], "b/")
        elif line.startswith("rename from "):
            self.old = unquote(line[len("rename from "):])
        elif line.startswith("rename to "):
            self.new = unquote(line[len("rename to "):])
        elif line.startswith("new file mode"):
            self.old = None
        elif line.startswith("deleted file mode"):
            self.new = None
        elif line.startswith("Binary files"):
            self.flags.add("binary")
        if line.startswith(_MODE_LINES) and " 160000" in line:
            self.flags.add("submodule")
        if line.startswith(_MODE_LINES) and " 120000" in line:
            self.flags.add("symlink")

    def hunk(self, line: str) -> None:
        self.close_run()
        found = _HUNK.match(line)
        assert found, line
        start, count = int(found.group(1)), found.group(2)
        # `-A,0` is an insertion after old line A: the first old line of the hunk is the next one
        self.old_line = start + 1 if count == "0" else start

    def body(self, line: str) -> None:
        if line.startswith("-"):
            if not self.removed and not self.added:
                self.run_start = self.old_line
            self.removed.append(line[1:])
            self.old_line += 1
        elif line.startswith("+"):
            if not self.removed and not self.added:
                self.run_start = self.old_line
            self.added.append(line[1:])
        elif line.startswith(" ") or line == "":
            self.close_run()
            self.old_line += 1

    def close_run(self) -> None:
        if not self.removed and not self.added:
            return
        insertion = not self.removed
        end = self.run_start if insertion else self.run_start + len(self.removed) - 1
        self.blocks.append(Block(self.run_start, end, insertion, tuple(self.removed), tuple(self.added)))
        self.removed, self.added = [], []

    def build(self) -> FileDiff:
        self.close_run()
        return FileDiff(self.old, self.new, "submodule" in self.flags, "symlink" in self.flags,
                        "binary" in self.flags, tuple(self.blocks))


def parse_diff(text: str) -> list[FileDiff]:
    """The files and change blocks of a `git diff` (any context size; -U0 gives one block per hunk)."""
    files: list[FileDiff] = []
    current: _FileBuilder | None = None
    in_hunk = False
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            if current:
                files.append(current.build())
            current, in_hunk = _FileBuilder(line), False
        elif current is None or line.startswith("\\"):
            continue
        elif line.startswith("@@ "):
            current.hunk(line)
            in_hunk = True
        elif in_hunk:
            current.body(line)
        else:
            current.meta(line)
    if current:
        files.append(current.build())
    return files


# -- what a port changed -----------------------------------------------------------------------------------------------

_VERSION_FILES = frozenset({"version.txt", "version", "version.py", "_version.py", "__version__.py", "version.h"})


@dataclass(frozen=True)
class Hunk:
    """A changed block in an upstream file, with the kind of that file."""

    path: str
    block: Block
    kind: str

    @property
    def named(self) -> bool:
        """Whether the port's new lines here name HIP, ROCm or AMD: surely port work, not fork drift."""
        return any(ROCM_WORDS.search(line) for line in self.block.added)


@dataclass(frozen=True)
class PortTruth:
    """What a port changed: hunks in upstream files, the files it added, and what was left out as noise."""

    hunks: tuple[Hunk, ...]
    added: tuple[str, ...]
    excluded: dict[str, list[str]] = field(default_factory=dict)

    @property
    def touched(self) -> frozenset[str]:
        """The upstream files with at least one changed hunk."""
        return frozenset(h.path for h in self.hunks)


def port_truth(files: Iterable[FileDiff]) -> PortTruth:
    """Split a merge-base → fork diff into the port's hunks and added files; set the noise aside, by reason."""
    hunks: list[Hunk] = []
    added: list[str] = []
    excluded: dict[str, list[str]] = defaultdict(list)
    for diff in files:
        reason = _noise(diff)
        if reason:
            excluded[reason].append(diff.old or diff.new or "")
        elif diff.status == "A":
            added.append(diff.new or "")
        elif not diff.blocks:
            excluded["renamed-unchanged" if diff.status == "R" else "mode-only"].append(diff.old or "")
        else:
            hunks.extend(Hunk(diff.old or "", block, kind_of(diff.old or "")) for block in diff.blocks)
    return PortTruth(tuple(hunks), tuple(sorted(added)), {k: sorted(v) for k, v in sorted(excluded.items())})


def _noise(diff: FileDiff) -> str | None:
    """Why a file's change is not a port's work: a submodule bump, a link, a binary, a version file, a deletion."""
    if diff.submodule:
        return "submodule"
    if diff.symlink:
        return "symlink"
    if diff.binary:
        return "binary"
    if diff.status == "D":
        return "deleted"
    name = (diff.old or diff.new or "").rpartition("/")[2].lower()
    return "version-file" if name in _VERSION_FILES else None


# -- kinds of file ---------------------------------------------------------------------------------------------------

_CPP_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".c", ".cc", ".cpp", ".cxx", ".inl", ".ipp", ".tpp"})
_BUILD_NAMES = frozenset({"setup.py", "setup.cfg", "pyproject.toml", "cmakelists.txt", "jenkinsfile"})
_CI_DIRS = (".github/workflows/", ".circleci/", ".buildkite/", ".jenkins/", ".gitlab/", ".azure-pipelines/")


def kind_of(path: str) -> str:
    """cuda, cpp, build, python or other, from a repository-relative path."""
    lower = path.lower()
    name = lower.rpartition("/")[2]
    suffix = name[name.rfind("."):] if "." in name else ""
    if suffix in (".cu", ".cuh"):
        return "cuda"
    if suffix in _CPP_SUFFIXES:
        return "cpp"
    if _is_build(lower, name, suffix):
        return "build"
    if suffix in (".py", ".pyi", ".pyx"):
        return "python"
    return "other"


def _is_build(lower: str, name: str, suffix: str) -> bool:
    if name in _BUILD_NAMES or suffix in (".cmake", ".mk"):
        return True
    if name.startswith(("makefile", "dockerfile")) or name.endswith(".dockerfile"):
        return True
    if name.startswith("requirements") and suffix in (".txt", ".in") or "/requirements/" in f"/{lower}":
        return True
    if suffix in (".yml", ".yaml"):
        return lower.startswith(_CI_DIRS) or name.startswith((".gitlab-ci", "azure-pipelines"))
    return False


# -- marks: where a tool points ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """One finding (or grep line): its file, the lines it points at, and its rank (severity; grep lines rank 0)."""

    path: str
    lines: tuple[int, ...]
    rank: int


def scan_marks(report: dict[str, Any], *, min_severity: str) -> list[Mark]:
    """The findings of a `migrate scan --format json` report at MIN_SEVERITY or above; occurrences count as lines."""
    floor = SEVERITIES.index(min_severity)
    marks = []
    for finding in report.get("findings", []):
        rank = SEVERITIES.index(finding["severity"])
        if rank < floor:
            continue
        spots = [finding, *finding.get("occurrences", [])]
        lines = {n for spot in spots for n in range(spot["line"], (spot.get("end_line") or spot["line"]) + 1)}
        marks.append(Mark(finding["path"], tuple(sorted(lines)), rank))
    return marks


GREP_WORDS = re.compile(
    r"cuda|__global__|\basm\b|flash_attn|xformers|tensorrt|nvidia|nvcc|0xffffffff|__shfl|__ballot|triton|cublas"
    r"|cudnn|nccl|sm_\d\d|warp",
    re.IGNORECASE,
)
_GREP_SUFFIXES = frozenset(
    {".py", ".pyi", ".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".inl", ".txt", ".toml", ".cfg",
     ".yml", ".yaml", ".sh", ".cmake", ".mk", ".in"}
)
_GREP_MAX_BYTES = 5 * 1024 * 1024


def grep_marks(root: Path) -> list[Mark]:
    """The grep baseline: every line of a source, build or text file that holds a CUDA word, one mark each."""
    marks = []
    for path, relpath in _grep_files(root):
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if GREP_WORDS.search(line):
                marks.append(Mark(relpath, (number,), 0))
    return marks


def _grep_files(root: Path) -> Iterator[tuple[Path, str]]:
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _GREP_MAX_BYTES:
            continue
        if path.relative_to(root).parts[0] == ".git":
            continue  # the index port_diff writes beside the files, not the repository's
        name = path.name.lower()
        suffix = path.suffix.lower()
        if suffix in _GREP_SUFFIXES or suffix == "" or name.startswith(("dockerfile", "makefile")):
            yield path, path.relative_to(root).as_posix()


class MarkIndex:
    """Marks by file, with their lines sorted, to ask whether any lies near a line range."""

    def __init__(self, marks: Iterable[Mark]) -> None:
        lines: dict[str, list[int]] = defaultdict(list)
        for mark in marks:
            lines[mark.path].extend(mark.lines)
        self._lines = {path: sorted(found) for path, found in lines.items()}

    def near(self, path: str, start: int, end: int, window: int = WINDOW) -> bool:
        """Whether a mark in PATH lies on lines START-WINDOW .. END+WINDOW."""
        found = self._lines.get(path, [])
        index = bisect.bisect_left(found, start - window)
        return index < len(found) and found[index] <= end + window

    def has(self, path: str) -> bool:
        """Whether PATH has any mark."""
        return path in self._lines


# -- figures ---------------------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Counts behind the figures of one tool, for one pair or a sum of pairs, in one kind of file or all."""

    hunks: int = 0
    hunks_hit: int = 0
    named_hunks: int = 0
    named_hunks_hit: int = 0
    files: int = 0
    files_hit: int = 0
    findings: int = 0
    ranked: int = 0  # findings that count for focus: high and blocker (every grep line)
    ranked_in_touched: int = 0

    def add(self, other: Tally) -> None:
        """Add OTHER's counts to these."""
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def figures(self) -> dict[str, float | int | None]:
        """The counts and hunk recall, file recall and focus (None where nothing was counted)."""
        return {**vars(self), "hunk_recall": _share(self.hunks_hit, self.hunks),
                "named_hunk_recall": _share(self.named_hunks_hit, self.named_hunks),
                "file_recall": _share(self.files_hit, self.files), "focus": _share(self.ranked_in_touched, self.ranked)}


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def tally(truth: PortTruth, marks: list[Mark], *, focus_rank: int) -> tuple[dict[str, Tally], list[Hunk]]:
    """Per kind of file: the port's hunks and files the marks reach, and the marks' focus; then the missed hunks."""
    index, touched = MarkIndex(marks), truth.touched
    by_kind = {kind: Tally() for kind in KINDS}
    missed = []
    for hunk in truth.hunks:
        counts = by_kind[hunk.kind]
        hit = index.near(hunk.path, hunk.block.start, hunk.block.end)
        counts.hunks += 1
        counts.hunks_hit += hit
        counts.named_hunks += hunk.named
        counts.named_hunks_hit += hit and hunk.named
        if not hit:
            missed.append(hunk)
    for path in touched:
        by_kind[kind_of(path)].files += 1
        by_kind[kind_of(path)].files_hit += index.has(path)
    for mark in marks:
        counts = by_kind[kind_of(mark.path)]
        counts.findings += 1
        if mark.rank >= focus_rank:
            counts.ranked += 1
            counts.ranked_in_touched += mark.path in touched
    return by_kind, missed


def total(by_kind: dict[str, Tally]) -> Tally:
    """The sum over kinds of file."""
    whole = Tally()
    for counts in by_kind.values():
        whole.add(counts)
    return whole


# -- overlap of `migrate apply --dry-run` with the port ----------------------------------------------------------------


def apply_overlap(truth: PortTruth, applied: list[FileDiff]) -> dict[str, int]:
    """Files and hunks that apply changes and the port changed: both, apply only, port only."""
    changed = {d.old: d.blocks for d in applied if d.status in "MR" and d.blocks and d.old}
    created = {d.new for d in applied if d.status == "A" and d.new}
    touched, added = truth.touched, set(truth.added)
    apply_index = MarkIndex(Mark(path, tuple(_lines(b)), 0) for path, blocks in changed.items() for b in blocks)
    port_index = MarkIndex(Mark(h.path, tuple(_lines(h.block)), 0) for h in truth.hunks)
    apply_blocks = [(path, b) for path, blocks in changed.items() for b in blocks]
    return {
        "files_both": len(touched & changed.keys()),
        "files_apply_only": len(changed.keys() - touched),
        "files_port_only": len(touched - changed.keys()),
        "added_both": len(added & created),
        "added_apply_only": len(created - added),
        "added_port_only": len(added - created),
        "port_hunks": len(truth.hunks),
        "port_hunks_near_apply": sum(apply_index.near(h.path, h.block.start, h.block.end) for h in truth.hunks),
        "apply_hunks": len(apply_blocks),
        "apply_hunks_near_port": sum(port_index.near(path, b.start, b.end) for path, b in apply_blocks),
    }


def _lines(block: Block) -> range:
    return range(block.start, block.end + 1)


def sum_counts(rows: Iterable[dict[str, int]]) -> dict[str, int]:
    """Key-wise sum of count dictionaries."""
    whole: Counter[str] = Counter()
    for row in rows:
        whole.update(row)
    return dict(whole)
