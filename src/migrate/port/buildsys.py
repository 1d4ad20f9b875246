"""The CMake / Make port: the sources keep their CUDA names and include one generated compat header that maps
exactly the names they use to HIP on AMD, so the same sources build for both vendors."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import tree_sitter

from migrate.apimap import Version, api_names, header_map, lookup
from migrate.bounded import Refused, read_bytes, read_source
from migrate.model import FileKind, Finding, Severity, SourceFile
from migrate.parse.cuda import INCLUDES, CudaDocument, captures, parse_cuda
from migrate.port.plan import FileChange
from migrate.port.translate import RULE_UNSUPPORTED, is_translatable

COMPAT_HEADER = "cuda_hip_compat.h"
RULE_HEADER_TAKEN = "compat-header-exists"
_MARKER = "written by `migrate apply`"
_AMD = "#if defined(__HIP_PLATFORM_AMD__) || (defined(__HIPCC__) && !defined(__HIP_PLATFORM_NVIDIA__))"
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class _Use:
    """What one source needs from the compat header: CUDA names, and its CUDA include lines (byte spans)."""

    source: SourceFile
    data: bytes
    names: frozenset[str]
    includes: tuple[tuple[int, int, str], ...]
    first_include: int | None
    has_compat: bool
    unsupported: tuple[Finding, ...]


def compat_changes(
    root: Path, sources: Sequence[SourceFile], *, rocm: Version | None = None, limit: int,
) -> tuple[list[FileChange], list[Finding]]:
    """The compat header (its HIP headers as ROCm release ROCM names them) and, in each source using CUDA names,
    its include in place of the CUDA headers; an existing header larger than LIMIT is not ours."""
    chosen = [s for s in sources if not s.vendored and is_translatable(s.relpath)
              and PurePosixPath(s.relpath).name != COMPAT_HEADER]
    uses = [u for s in chosen if (u := _use(s)) is not None]
    findings = [f for u in uses for f in u.unsupported]
    if not uses:
        return [], findings
    directory = posixpath.commonpath([posixpath.dirname(u.source.relpath) for u in uses])
    header = posixpath.join(directory, COMPAT_HEADER) if directory else COMPAT_HEADER
    old = _existing(root / header, limit)
    if old is not None and _MARKER.encode() not in old:
        message = f"{header} exists and was not written by migrate: no compat header written; rename it and re-run"
        return [], [*findings, Finding(header, 1, 1, RULE_HEADER_TAKEN, "other", Severity.MEDIUM, 1, message, "")]
    earlier = re.findall(r"^#include <(.+)>$", old.decode("utf-8", "replace").partition("\n#else\n")[2], re.M) if old else []
    text = compat_header(uses, earlier, rocm=rocm)
    changes = [FileChange(header, old, text.encode("utf-8"), reason="CUDA -> HIP compat header")]
    for use in uses:
        new = _with_compat_include(use, posixpath.relpath(header, posixpath.dirname(use.source.relpath) or "."))
        if new != use.data:
            changes.append(FileChange(use.source.relpath, use.data, new, reason=f"includes {COMPAT_HEADER}"))
    return [c for c in changes if c.old != c.new], findings


def _existing(path: Path, limit: int) -> bytes | None:
    """PATH's bytes; None when there is no file (or a symlink, which the writer refuses); b"" when it is one we do
    not read (larger than LIMIT, a FIFO, a directory), which is not a header migrate wrote."""
    if path.is_symlink() or not path.exists():
        return None
    try:
        return read_bytes(path, limit=limit)
    except (OSError, Refused):
        return b""


def compat_header(uses: Sequence[_Use], earlier: Sequence[str] = (), *, rocm: Version | None = None) -> str:
    """`#define cudaX hipX` for exactly the names the sources use, the HIP headers on AMD, the CUDA ones elsewhere
    (with the CUDA headers an EARLIER run moved into the header)."""
    names = sorted({n for u in uses for n in u.names})
    cuda_headers = list(dict.fromkeys(["cuda_runtime.h", *(h for u in uses for _, _, h in u.includes), *earlier]))
    hmap = header_map()
    hip_headers = list(dict.fromkeys(h for c in cuda_headers if (h := hmap.hip_header(c)) is not None))
    if rocm is not None:
        hip_headers = list(dict.fromkeys(hmap.in_release(h, rocm) for h in hip_headers))
    lines = [
        f"// CUDA -> HIP names used by this project, {_MARKER} (regenerate after adding CUDA calls).",
        "// The sources keep their CUDA names and include this header: on AMD (hipcc, CMake's HIP language) each",
        "// name maps to HIP; on NVIDIA the CUDA headers are included as before.",
        "#pragma once", _AMD, *(f"#include <{h}>" for h in hip_headers),
        *(f"#define {n} {_hip_name(n)}" for n in names),
        "#else", *(f"#include <{h}>" for h in cuda_headers), "#endif",
    ]
    return "\n".join(lines) + "\n"


def _hip_name(name: str) -> str:
    entry = lookup(name)
    assert entry is not None
    return entry.hip_name


def _use(source: SourceFile) -> _Use | None:
    try:
        data = read_source(source)
        text = data.decode("utf-8")
    except (OSError, Refused, UnicodeDecodeError):
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    doc = parse_cuda(SourceFile(path=source.path, relpath=source.relpath, kind=FileKind.CUDA, size=len(data)), text)
    assert isinstance(doc, CudaDocument)
    names: set[str] = set()
    unsupported: list[Finding] = []
    for token in doc.tokens_named(api_names()):
        entry = lookup(token.name)
        if (entry is None or doc.declares(token.name) or doc.is_guarded(token.line)
                or token.start_byte in doc.scoped_offsets):
            continue
        if entry.library == "cudnn" or not entry.has_hip:
            unsupported.append(_unsupported(doc, token.name, token.line, token.column))
        elif entry.is_rename:
            names.add(token.name)
    includes = captures(doc.root, INCLUDES).get("include", [])
    cuda, first, has_compat = _includes(doc, includes)
    if not names and not cuda:
        return None
    return _Use(source, data, frozenset(names), tuple(cuda), first, has_compat, tuple(unsupported))


def _includes(doc: CudaDocument, nodes: Sequence[tree_sitter.Node]) -> tuple[list[tuple[int, int, str]], int | None, bool]:
    """The CUDA include lines (start, end incl. newline, header), the first include's line start, compat seen."""
    hmap = header_map()
    cuda: list[tuple[int, int, str]] = []
    first: int | None = None
    has_compat = False
    for node in sorted(nodes, key=lambda n: n.start_byte):
        path = node.child_by_field_name("path")
        if path is None:
            continue
        name = doc.node_text(path)[1:-1]
        start = max(doc.data.rfind(b"\n", 0, node.start_byte), doc.data.rfind(b"\r", 0, node.start_byte)) + 1
        first = start if first is None else first
        has_compat = has_compat or PurePosixPath(name).name == COMPAT_HEADER
        hip = hmap.hip_header(name)
        if hip is not None and hip != name and not doc.is_guarded(node.start_point.row + 1):
            end = _LINE_END.search(doc.data, path.end_byte)
            cuda.append((start, end.end() if end else len(doc.data), name))
    return cuda, first, has_compat


def _with_compat_include(use: _Use, include: str) -> bytes:
    """The source with its first CUDA include replaced by the compat header and the others emptied (every line
    keeps its number, so compiler errors map back one to one)."""
    found = _LINE_END.search(use.data)
    newline = found.group() if found else b"\n"
    directive = f'#include "{include}"'.encode() + newline
    data = use.data
    if use.has_compat:
        return data
    if not use.includes:
        at = use.first_include or 0
        return data[:at] + directive + data[at:]
    out = data
    for index, (start, end, _) in reversed(list(enumerate(use.includes))):
        out = out[:start] + (directive if index == 0 else newline) + out[end:]
    return out


def _unsupported(doc: CudaDocument, name: str, line: int, column: int) -> Finding:
    message = f"{name} has no HIP equivalent: the compat header cannot map it; port this use by hand"
    return Finding(doc.source.relpath, line, column, RULE_UNSUPPORTED, "unsupported-api", Severity.MEDIUM, line,
                   message, doc.line_text(line), symbol=name)
