"""CUDA -> HIP source translation: hipify-clang and hipify-perl wrapped, and a builtin token-aware engine."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from migrate.apimap import api_map, header_map, lookup
from migrate.errors import MigrateError, ToolNotFound
from migrate.model import FileKind, Finding, Severity, SourceFile
from migrate.parse import ParseError
from migrate.parse.cuda import CudaDocument, captures, parse_cuda
from migrate.tools import ToolRun, find_tool, run_tool

ENGINES = ("auto", "clang", "perl", "builtin")
TRANSLATED_KINDS = frozenset({FileKind.CUDA, FileKind.CPP, FileKind.C})
RULE_UNSUPPORTED = "translate-unsupported-api"
RULE_TOOL_WARNING = "hipify-unconverted"
_BOM = b"\xef\xbb\xbf"
_INCLUDES = "(preproc_include path: (_) @path) @include"
_PERL_WARNING = re.compile(r"warning:\s*(?:(?P<file>[^\s:]+):)?\s*#?(?P<line>\d+)\s*:?\s*(?P<msg>.*)")
_CLANG_WARNING = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): warning: (?P<msg>.*)$", re.M)
_CLANG_UNCONVERTED = re.compile(r"UNCONVERTED refs count:\s*(\d+)")
_WORD = re.compile(rb"[A-Za-z_]\w*")


class ToolFailed(MigrateError):
    """An external translation tool ran and failed; the run is kept as data."""

    def __init__(self, run: ToolRun, relpath: str) -> None:
        super().__init__(f"{run.describe()} (translating {relpath})")
        self.run = run


@dataclass(frozen=True)
class Engine:
    """The engine a run uses: its name and, for the hipify tools, the executable."""

    name: str
    executable: Path | None = None
    compile_db: Path | None = None


@dataclass(frozen=True)
class Translation:
    """One file before and after translation, with what could not be translated."""

    relpath: str
    original: bytes
    translated: bytes
    engine: str
    findings: tuple[Finding, ...] = ()
    skipped: str | None = None

    @property
    def changed(self) -> bool:
        return self.skipped is None and self.translated != self.original


def select_engine(
    choice: str = "auto",
    *,
    hipify_clang: str | Path | None = None,
    hipify_perl: str | Path | None = None,
    root: Path | None = None,
) -> Engine:
    """The engine for CHOICE; auto prefers hipify-clang, then hipify-perl, then builtin."""
    if choice == "builtin":
        return Engine("builtin")
    wanted = {"clang": ["hipify-clang"], "perl": ["hipify-perl"], "auto": ["hipify-clang", "hipify-perl"]}[choice]
    explicit = {"hipify-clang": hipify_clang, "hipify-perl": hipify_perl}
    for tool in wanted:
        found = find_tool(tool, explicit[tool])
        if found is not None:
            return Engine(tool, found, _compile_db(root) if tool == "hipify-clang" else None)
    if choice == "auto":
        return Engine("builtin")
    given = explicit[wanted[0]]
    where = f"at {given}" if given else "on PATH, in $ROCM_PATH/bin or /opt/rocm/bin"
    raise ToolNotFound(f"{wanted[0]} not found {where}; install it, pass --{wanted[0]} PATH, or use --engine builtin")


def _compile_db(root: Path | None) -> Path | None:
    if root is None:
        return None
    for candidate in (root, root / "build"):
        if (candidate / "compile_commands.json").is_file():
            return candidate
    return None


def translate_file(path: Path, relpath: str, engine: Engine) -> Translation:
    """Translate one file with ENGINE; binary files come back skipped with a reason."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Translation(relpath, b"", b"", engine.name, skipped=f"cannot read: {exc.strerror or exc}")
    if b"\0" in data[:8192]:
        return Translation(relpath, data, data, engine.name, skipped="binary file")
    if engine.name == "hipify-perl":
        return _hipify_perl(path, relpath, data, engine)
    if engine.name == "hipify-clang":
        return _hipify_clang(path, relpath, data, engine)
    return translate_bytes(data, relpath)


def translate_bytes(data: bytes, relpath: str) -> Translation:
    """The builtin engine: rename CUDA identifiers and headers, keep every other byte."""
    if not _might_change(data):
        return Translation(relpath, data, data, "builtin")
    text, encoding, bom = _decode(data)
    source = SourceFile(path=Path(relpath), relpath=relpath, kind=FileKind.CUDA, size=len(data))
    try:
        doc = parse_cuda(source, text)
        assert isinstance(doc, CudaDocument)
    except (ParseError, RecursionError) as exc:
        return Translation(relpath, data, data, "builtin", skipped=str(exc) or "too deeply nested to parse")
    edits, findings = _identifier_edits(doc)
    edits.extend(_include_edits(doc))
    if not edits:
        return Translation(relpath, data, data, "builtin", tuple(findings))
    out = _apply_edits(doc.data, edits).decode("utf-8").encode(encoding, "surrogateescape")
    return Translation(relpath, data, bom + out, "builtin", tuple(findings))


@cache
def _candidates() -> frozenset[bytes]:
    """Every word whose presence means the engine may have work: CUDA names, namespaces, header stems."""
    hmap = header_map()
    names = {n for n, e in api_map().items() if e.is_rename or not e.has_hip or e.library == "cudnn"}
    names |= set(hmap.namespaces)
    names |= {re.split(r"[./]", h)[0] for h in [*hmap.headers, *(p for p, _ in hmap.prefixes)]}
    return frozenset(n.encode() for n in names)


def _might_change(data: bytes) -> bool:
    """A cheap word-level prefilter: no candidate word, no parse."""
    return not _candidates().isdisjoint(_WORD.findall(data))


def _decode(data: bytes) -> tuple[str, str, bytes]:
    """Text, the codec that gives the bytes back exactly, and any UTF-8 BOM."""
    bom = _BOM if data.startswith(_BOM) else b""
    body = data[len(bom) :]
    try:
        return body.decode("utf-8"), "utf-8", bom
    except UnicodeDecodeError:
        return body.decode("latin-1"), "latin-1", bom


Edit = tuple[int, int, bytes]


def _identifier_edits(doc: CudaDocument) -> tuple[list[Edit], list[Finding]]:
    edits: list[Edit] = []
    findings: list[Finding] = []
    namespaces = header_map().namespaces
    declared = doc.declared_names
    for token in doc.tokens_named(api_map().keys() | namespaces.keys()):
        entry = lookup(token.name)
        namespace = token.node_type == "namespace_identifier" and token.name in namespaces
        if (entry is None and not namespace) or token.name in declared or doc.is_guarded(token.line):
            continue
        if namespace:
            edits.append((token.start_byte, token.end_byte, namespaces[token.name].encode()))
            continue
        assert entry is not None
        if entry.library == "cudnn" or not entry.has_hip:
            findings.append(_unsupported(doc, token.name, token.line, token.column, entry.library, entry.roc_name))
        elif entry.is_rename:
            edits.append((token.start_byte, token.end_byte, entry.hip_name.encode()))
    return edits, findings


def _unsupported(doc: CudaDocument, name: str, line: int, column: int, library: str, roc_name: str) -> Finding:
    if library == "cudnn":
        why = f"{name} is cuDNN, which has no HIP translation (MIOpen's API differs): port this use by hand"
    else:
        native = f"; the ROCm library has {roc_name}" if roc_name else ""
        why = f"{name} has no HIP equivalent ({library}){native}: left as it is, rewrite by hand"
    return Finding(
        doc.source.relpath, line, column, RULE_UNSUPPORTED, category="unsupported-api", severity=Severity.MEDIUM,
        end_line=line, message=why, evidence=doc.line_text(line), hip=roc_name or None, symbol=name,
    )


def _include_edits(doc: CudaDocument) -> Iterator[Edit]:
    """Each CUDA header becomes its HIP header; one that is already included in the same block is dropped."""
    found = captures(doc.root, _INCLUDES)
    includes = sorted(found.get("include", []), key=lambda n: n.start_byte)
    hmap = header_map()
    seen = {(_block(n), doc.node_text(p)[1:-1]) for n in includes if (p := n.child_by_field_name("path")) is not None}
    for node in includes:
        path = node.child_by_field_name("path")
        if path is None or doc.is_guarded(node.start_point.row + 1):
            continue
        raw = doc.node_text(path)
        hip = hmap.hip_header(raw[1:-1])
        if hip is None or hip == raw[1:-1]:
            continue
        key = (_block(node), hip)
        if key in seen:
            yield (node.start_byte, path.end_byte, b"")
            continue
        seen.add(key)
        yield (path.start_byte, path.end_byte, (raw[0] + hip + raw[-1]).encode())


def _block(node: object) -> tuple[int, int]:
    parent = getattr(node, "parent", None)
    return (parent.start_byte, parent.end_byte) if parent is not None else (0, 0)


def _apply_edits(data: bytes, edits: list[Edit]) -> bytes:
    parts: list[bytes] = []
    position = 0
    for start, end, replacement in sorted(set(edits)):
        if start < position:
            continue  # an identifier inside an include we already rewrote
        parts.extend((data[position:start], replacement))
        position = end
    parts.append(data[position:])
    return b"".join(parts)


def _hipify_perl(path: Path, relpath: str, data: bytes, engine: Engine) -> Translation:
    assert engine.executable is not None
    run = run_tool([engine.executable, path])
    if not run.ok or (data.strip() and not run.stdout.strip()):
        raise ToolFailed(run if not run.ok else _empty_output(run), relpath)
    findings = tuple(_perl_findings(run.stderr, relpath, data))
    return Translation(relpath, data, run.stdout, "hipify-perl", findings)


def _empty_output(run: ToolRun) -> ToolRun:
    return ToolRun(run.command, 1, run.stdout, run.stderr + "\nerror: produced no output")


def _perl_findings(stderr: str, relpath: str, data: bytes) -> Iterator[Finding]:
    lines = data.decode("utf-8", "replace").splitlines()
    for match in _PERL_WARNING.finditer(stderr):
        line = int(match["line"])
        yield _tool_finding(relpath, line, 1, match["msg"].strip(), lines)


def _tool_finding(relpath: str, line: int, column: int, message: str, lines: list[str]) -> Finding:
    evidence = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return Finding(
        relpath, line, column, RULE_TOOL_WARNING, category="unsupported-api", severity=Severity.MEDIUM,
        end_line=line, message=f"hipify could not convert: {message}", evidence=evidence,
    )


def _hipify_clang(path: Path, relpath: str, data: bytes, engine: Engine) -> Translation:
    assert engine.executable is not None
    with tempfile.TemporaryDirectory(prefix="migrate-hipify-") as tmp:
        out = Path(tmp) / path.name
        command: list[str | Path] = [engine.executable, path, "-o", out, "--print-stats"]
        command += ["-p", engine.compile_db] if engine.compile_db else ["--"]
        run = run_tool(command)
        translated = out.read_bytes() if out.is_file() else b""
    if not run.ok or (data.strip() and not translated.strip()):
        raise ToolFailed(run if not run.ok else _empty_output(run), relpath)
    return Translation(relpath, data, translated, "hipify-clang", tuple(_clang_findings(run.stderr, relpath, data)))


def _clang_findings(stderr: str, relpath: str, data: bytes) -> Iterator[Finding]:
    lines = data.decode("utf-8", "replace").splitlines()
    found = False
    for match in _CLANG_WARNING.finditer(stderr):
        found = True
        yield _tool_finding(relpath, int(match["line"]), int(match["col"]), match["msg"].strip(), lines)
    unconverted = sum(int(n) for n in _CLANG_UNCONVERTED.findall(stderr))
    if unconverted and not found:
        yield _tool_finding(relpath, 1, 1, f"{unconverted} CUDA reference(s) left unconverted (hipify-clang statistics)", lines)


def translate_many(files: Iterable[tuple[Path, str]], engine: Engine) -> tuple[Translation, ...]:
    """Translate each (path, relpath) pair in order."""
    return tuple(translate_file(path, relpath, engine) for path, relpath in files)


def is_translatable(relpath: str) -> bool:
    """True for the C, C++ and CUDA sources an engine translates."""
    from migrate.discover import classify

    return classify(relpath) in TRANSLATED_KINDS
