"""CUDA -> HIP source translation: hipify-clang and hipify-perl wrapped, and a builtin token-aware engine."""

from __future__ import annotations

import difflib
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tree_sitter import Node

from migrate.apimap import ApiEntry, Version, api_map, header_map, lookup, parse_version
from migrate.bounded import Refused, read_bytes
from migrate.defaults import DEFAULT_MAX_FILE_SIZE
from migrate.discover import classify
from migrate.engine_rules import CallRule, engine_rules
from migrate.errors import InputError, MigrateError, ToolNotFound
from migrate.model import FileKind, Finding, Severity, SourceFile
from migrate.parse import ParseError
from migrate.parse.cuda import INCLUDES, CudaDocument, Token, captures, parse_cuda
from migrate.tools import ToolRun, find_tool, run_tool

ENGINES = ("auto", "clang", "perl", "builtin")
TRANSLATED_KINDS = frozenset({FileKind.CUDA, FileKind.CPP, FileKind.C})
RULE_UNSUPPORTED = "translate-unsupported-api"
RULE_TOOL_WARNING = "hipify-unconverted"
RULE_WARP = "translate-warp-size"
LAUNCH_SYNTAXES = ("cuda", "hipLaunchKernelGGL")
_RUNTIME_HEADER = "hip/hip_runtime.h"
_BOM = b"\xef\xbb\xbf"
_PERL_WARNING = re.compile(r"warning:\s*(?:(?P<file>[^\s:]+):)?\s*#?(?P<line>\d+)\s*:?\s*(?P<msg>.*)")
_CLANG_WARNING = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): warning: (?P<msg>.*)$", re.M)
_CLANG_UNCONVERTED = re.compile(r"UNCONVERTED refs count:\s*(\d+)")
_WORD = re.compile(rb"[A-Za-z_]\w*")
# An include of the HIP runtime (a comment or string that names the header does not count).
_INCLUDES_RUNTIME = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]' + re.escape(_RUNTIME_HEADER.encode()) + rb'[>"]', re.M)
_WIDE_LITERAL = re.compile(r"(?i)(?:0x[0-9a-f]+|[0-9]+)(?:ull|llu|ul|lu|ll|l)")


class ToolFailed(MigrateError):
    """An external translation tool ran and failed; the run is kept as data."""

    def __init__(self, run: ToolRun, relpath: str) -> None:
        super().__init__(f"{run.describe()} (translating {relpath})")
        self.run = run


@dataclass(frozen=True)
class Options:
    """How to translate: the target ROCm release ('' = the newest known), ROCm-library names, launch syntax."""

    rocm: str = ""
    roc: bool = False
    launch_syntax: str = "cuda"

    @property
    def rocm_version(self) -> Version:
        return parse_version(self.rocm or engine_rules().default_rocm)


def make_options(*, rocm: str | None = None, roc: bool = False, launch_syntax: str = "cuda") -> Options:
    """Options checked for the user: a bad --rocm or --launch-syntax is an InputError."""
    try:
        parse_version(rocm or engine_rules().default_rocm)
    except ValueError:
        raise InputError(f"--rocm {rocm}: expected a ROCm release such as 6.2 or 5.2") from None
    if launch_syntax not in LAUNCH_SYNTAXES:
        raise InputError(f"--launch-syntax {launch_syntax}: expected one of {', '.join(LAUNCH_SYNTAXES)}")
    return Options(rocm or "", roc, launch_syntax)


@dataclass(frozen=True)
class Engine:
    """The engine a run uses: its name, for the hipify tools the executable, and the translation options."""

    name: str
    executable: Path | None = None
    compile_db: Path | None = None
    options: Options = Options()


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
    options: Options = Options(),
) -> Engine:
    """The engine for CHOICE; auto prefers hipify-clang, then hipify-perl, then builtin."""
    if choice == "builtin":
        return Engine("builtin", options=options)
    wanted = {"clang": ["hipify-clang"], "perl": ["hipify-perl"], "auto": ["hipify-clang", "hipify-perl"]}[choice]
    explicit = {"hipify-clang": hipify_clang, "hipify-perl": hipify_perl}
    for tool in wanted:
        found = find_tool(tool, explicit[tool])
        if found is not None:
            return Engine(tool, found, _compile_db(root) if tool == "hipify-clang" else None, options)
    if choice == "auto":
        return Engine("builtin", options=options)
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


def translate_file(path: Path, relpath: str, engine: Engine, *, limit: int = DEFAULT_MAX_FILE_SIZE) -> Translation:
    """Translate one file with ENGINE; binary files, and files larger than LIMIT or not regular, come back skipped
    with a reason."""
    try:
        data = read_bytes(path, limit=limit)
    except OSError as exc:
        return Translation(relpath, b"", b"", engine.name, skipped=f"cannot read: {exc.strerror or exc}")
    except Refused as exc:
        return Translation(relpath, b"", b"", engine.name, skipped=f"cannot read: {exc}")
    if b"\0" in data[:8192]:
        return Translation(relpath, data, data, engine.name, skipped="binary file")
    if engine.name == "hipify-perl":
        return _hipify_perl(path, relpath, data, engine)
    if engine.name == "hipify-clang":
        return _hipify_clang(path, relpath, data, engine)
    return translate_bytes(data, relpath, engine.options)


def translate_bytes(data: bytes, relpath: str, options: Options = Options()) -> Translation:
    """The builtin engine: rename CUDA identifiers and headers, fix the calls HIP wants otherwise, keep every
    other byte; a .cu file gets the HIP runtime header nvcc would have included implicitly."""
    needs_runtime = relpath.endswith(".cu") and _INCLUDES_RUNTIME.search(data) is None
    if not needs_runtime and not _might_change(data):
        return Translation(relpath, data, data, "builtin")
    text, encoding, bom = _decode(data)
    source = SourceFile(path=Path(relpath), relpath=relpath, kind=FileKind.CUDA, size=len(data))
    try:
        doc = parse_cuda(source, text)
        assert isinstance(doc, CudaDocument)
    except (ParseError, RecursionError) as exc:
        return Translation(relpath, data, data, "builtin", skipped=str(exc) or "too deeply nested to parse")
    edits, findings = _identifier_edits(doc, options)
    includes = list(_include_edits(doc, options))
    edits.extend(includes)
    if options.launch_syntax == "hipLaunchKernelGGL":
        edits.extend(_launch_edits(doc))
    if needs_runtime and not any(e[2].endswith(f"{_RUNTIME_HEADER}>".encode()) for e in includes):
        edits.extend(_runtime_include(doc))
    if not edits:
        return Translation(relpath, data, data, "builtin", tuple(findings))
    out = _apply_edits(doc.data, edits).decode("utf-8").encode(encoding, "surrogateescape")
    return Translation(relpath, data, bom + out, "builtin", tuple(findings))


@cache
def _candidates() -> frozenset[bytes]:
    """Every word whose presence means the engine may have work: CUDA names, namespaces, header stems."""
    hmap = header_map()
    names = {n for n, e in api_map().items() if e.is_rename or not e.has_hip or e.library == "cudnn"}
    rules = engine_rules()
    names |= set(hmap.namespaces) | set(rules.renames) | set(rules.versioned_renames) | set(rules.roc_renames)
    names |= rules.warp.names
    names |= {re.split(r"[./]", h)[0] for h in [*hmap.headers, *hmap.roc_headers, *(p for p, _ in hmap.prefixes)]}
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


def _identifier_edits(doc: CudaDocument, options: Options) -> tuple[list[Edit], list[Finding]]:
    edits: list[Edit] = []
    findings: list[Finding] = []
    namespaces = header_map().namespaces
    rules = engine_rules()
    for token in doc.tokens_named(_token_names()):
        if doc.declares(token.name) or doc.is_guarded(token.line):
            continue
        if token.name in namespaces and _is_namespace(doc, token):
            edits.append((token.start_byte, token.end_byte, namespaces[token.name].encode()))
        elif token.name in rules.warp.names:
            found = _warp_edits(doc, token, options.rocm_version)
            edits.extend(found[0])
            findings.extend(found[1])
        elif (target := _target_name(token.name, options)) is not None:
            target = _overload_target(doc, token, target)
            if target != token.name:
                edits.append((token.start_byte, token.end_byte, target.encode()))
            if target in rules.calls and target != token.name:
                edits.extend(_call_edits(doc, token, rules.calls[target]))
        elif (entry := lookup(token.name)) is not None:
            findings.append(_unsupported(doc, token.name, token.line, token.column, entry.library, entry.roc_name))
    return edits, findings


@cache
def _token_names() -> frozenset[str]:
    """Every identifier the engine looks at: CUDA names, namespaces, its own renames, the warp intrinsics."""
    rules = engine_rules()
    return frozenset(api_map().keys() | header_map().namespaces.keys() | rules.renames.keys()
                     | rules.versioned_renames.keys() | rules.roc_renames.keys() | rules.warp.names)


def _is_namespace(doc: CudaDocument, token: Token) -> bool:
    """`cub::x`, and, in a file that includes CUB, `using namespace cub;` and `cub::` inside a macro body."""
    if token.node_type == "namespace_identifier":
        return True
    if not _includes_library(doc, token.name):
        return False
    if token.node_type == "macro":
        return doc.data[token.end_byte : token.end_byte + 2] == b"::"
    node = doc.root.descendant_for_byte_range(token.start_byte, token.end_byte)
    parent = node.parent if node is not None else None
    return parent is not None and parent.type == "using_declaration" and b"namespace" in doc.data[parent.start_byte : token.start_byte]


def _includes_library(doc: CudaDocument, namespace: str) -> bool:
    return doc.memo(f"includes:{namespace}", lambda: re.search(
        rb"^[ \t]*#[ \t]*include[ \t]*[<\"]" + re.escape(namespace.encode()) + rb"/", doc.data, re.M) is not None)


def _target_name(name: str, options: Options) -> str | None:
    """The name NAME becomes (itself when it stays), or None when it has no translation to report."""
    entry = lookup(name)
    rules = engine_rules()
    if options.roc and (roc_name := rules.roc_renames.get(name) or (entry.roc_name if entry else "")):
        return roc_name
    renamed = rules.rename(name, options.rocm_version)
    if renamed is not None:
        return renamed or None
    if entry is None:
        return name
    return entry.hip_name if _translatable(entry) else None


def _translatable(entry: ApiEntry) -> bool:
    return entry.has_hip and entry.library != "cudnn"


Span = tuple[int, int]


def _call_args(doc: CudaDocument, token: Token) -> tuple[list[Span], Span] | None:
    """The argument spans of the call TOKEN names and the span of its parentheses; None when it is no call."""
    if token.node_type == "macro":
        return _macro_args(doc.data, token.end_byte)
    node = doc.root.descendant_for_byte_range(token.start_byte, token.end_byte)
    call = node.parent if node is not None else None
    if call is None or call.type != "call_expression" or call.child_by_field_name("function") != node:
        return None
    arguments = call.child_by_field_name("arguments")
    if arguments is None or arguments.type != "argument_list":
        return None
    spans = [(a.start_byte, a.end_byte) for a in arguments.named_children if a.type != "comment"]
    return spans, (arguments.start_byte, arguments.end_byte)


_OPEN, _CLOSE = b"([{", b")]}"


def _macro_args(data: bytes, after: int) -> tuple[list[Span], Span] | None:
    """Arguments of a call inside a macro body, split at top-level commas (no parse tree there)."""
    open_at = after + len(data[after:]) - len(data[after:].lstrip(b" \t"))
    if data[open_at : open_at + 1] != b"(":
        return None
    depth, start, spans = 0, open_at + 1, []
    for index in range(open_at, min(len(data), open_at + 4096)):
        char = data[index : index + 1]
        if char == b"\n" and data[index - 1 : index] != b"\\":
            return None  # the macro ends before the call does
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                spans.append((start, index))
                return [_strip(data, s) for s in spans if data[s[0] : s[1]].strip()], (open_at, index + 1)
        elif char == b"," and depth == 1:
            spans.append((start, index))
            start = index + 1
    return None


def _strip(data: bytes, span: Span) -> Span:
    text = data[span[0] : span[1]]
    return span[0] + len(text) - len(text.lstrip()), span[1] - len(text) + len(text.rstrip())


def _overload_target(doc: CudaDocument, token: Token, target: str) -> str:
    """The HIP function a C++ overload of CUDA's calls (`cudaEventCreate(&e, flags)`): HIP declares it by another name."""
    rule = engine_rules().calls.get(target)
    if rule is None or not rule.rename:
        return target
    found = _call_args(doc, token)
    return rule.rename if found is not None and len(found[0]) == rule.arity else target


def _call_edits(doc: CudaDocument, token: Token, rule: CallRule) -> list[Edit]:
    """The argument rewrite RULE asks for on the call TOKEN names (hipify-perl's transformHostFunctions)."""
    found = _call_args(doc, token)
    if found is None:
        return []
    args, _ = found
    if rule.wrap and rule.arg < len(args):
        start, end = args[rule.arg]
        before, after = rule.wrap.split("{}")
        if doc.data[start:end].startswith(before.encode()):
            return []
        return [(start, start, before.encode()), (end, end, after.encode())]
    if rule.append and len(args) == rule.arity:
        return [(args[-1][1], args[-1][1], f", {rule.append}".encode())]
    if rule.drop >= 0 and len(args) == rule.arity and rule.drop + 1 < len(args):
        return [(args[rule.drop][0], args[rule.drop + 1][0], b"")]
    return []


def _warp_edits(doc: CudaDocument, token: Token, rocm: Version) -> tuple[list[Edit], list[Finding]]:
    """A *_sync warp intrinsic for ROCm ROCM: its non-sync form before the release that has it, else a 64-bit mask."""
    warp = engine_rules().warp
    found = _call_args(doc, token)
    if found is None:
        return [], []
    args, parens = found
    release = ".".join(map(str, rocm))
    why = (f"{token.name} rewritten as {{}} for ROCm {release} (no *_sync warp builtins before "
           f"{'.'.join(map(str, warp.sync_since))}): the mask is gone; check any 32-lane assumption "
           "(masks, warp-sized loops, WARP_SIZE 32) against a 64-wide wavefront")
    if rocm < warp.sync_since and token.name in warp.replaced:
        new = warp.replaced[token.name]
        edit = (token.start_byte, parens[1], _keep_lines(doc.data[token.start_byte : parens[1]], new))
        return [edit], [_warp_finding(doc, token, why.format(new.split("(")[0]))]
    if rocm < warp.sync_since and token.name in warp.unsync and len(args) >= 2:
        new = warp.unsync[token.name]
        edits = [(token.start_byte, token.end_byte, new.encode()), (args[0][0], args[1][0], b"")]
        return edits, [_warp_finding(doc, token, why.format(new))]
    if rocm >= warp.sync_since and token.name in warp.masked and args:
        return _widen_mask(doc, token, args[0])
    return [], []


def _widen_mask(doc: CudaDocument, token: Token, mask: Span) -> tuple[list[Edit], list[Finding]]:
    """A full 32-lane mask becomes the full wavefront; another 32-bit mask is cast to 64 bits and reported."""
    warp = engine_rules().warp
    text = doc.data[mask[0] : mask[1]].decode("utf-8", "replace")
    if text in warp.full_masks:
        return [(mask[0], mask[1], warp.full_mask.encode())], []
    before, after = warp.wide_mask.split("{}")
    if _WIDE_LITERAL.fullmatch(text) or text.startswith(before):
        return [], []
    why = (f"{token.name}: the lane mask `{text}` is widened to 64 bits (HIP requires it); on a 64-wide wavefront "
           "a 32-bit mask names only lanes 0-31: check the mask and any 32-lane assumption")
    return [(mask[0], mask[0], before.encode()), (mask[1], mask[1], after.encode())], [_warp_finding(doc, token, why)]


def _warp_finding(doc: CudaDocument, token: Token, why: str) -> Finding:
    return Finding(
        doc.source.relpath, token.line, token.column, RULE_WARP, category="warp-size", severity=Severity.MEDIUM,
        end_line=token.line, message=why, evidence=doc.line_text(token.line), symbol=token.name,
    )


def _keep_lines(old: bytes, new: str) -> bytes:
    """NEW followed by the line breaks OLD had, so line numbers after it do not move."""
    return new.encode() + b"\n" * old.count(b"\n")


_LAUNCHES = "(call_expression function: (_) @function (kernel_call_syntax) @config arguments: (argument_list) @args) @call"


def _launch_edits(doc: CudaDocument) -> Iterator[Edit]:
    """kernel<<<grid, block[, shared[, stream]]>>>(args) as hipLaunchKernelGGL(kernel, dim3(grid), dim3(block), shared,
    stream, args), spelled as hipify-clang writes it (a grid or block that is a dim3(...) call is not wrapped again)."""
    for match in doc.matches(_LAUNCHES):
        call, function, config, args = (match[k][0] for k in ("call", "function", "config", "args"))
        if doc.is_guarded(call.start_point.row + 1):
            continue
        template = function.type == "template_function"
        settings = [c for c in config.named_children if c.type != "comment"]
        arguments = [a for a in args.named_children if a.type != "comment"]
        if not settings:
            continue
        yield (call.start_byte, call.start_byte, b"hipLaunchKernelGGL(" + (b"HIP_KERNEL_NAME(" if template else b""))
        for size in settings[:2]:
            if not _is_dim3(doc, size):
                yield from ((size.start_byte, size.start_byte, b"dim3("), (size.end_byte, size.end_byte, b")"))
        for before, after in zip(settings, settings[1:]):
            gap = doc.data[before.end_byte : after.start_byte]
            if gap.strip() == b"," and b"\n" not in gap:
                yield (before.end_byte, after.start_byte, b", ")
        head = doc.data[function.end_byte : settings[0].start_byte]
        yield (function.end_byte, settings[0].start_byte, _keep_lines(head, ("), " if template else ", ")))
        tail = doc.data[settings[-1].end_byte : args.start_byte + 1]
        gap = doc.data[args.start_byte + 1 : arguments[0].start_byte] if arguments else b""
        missing = ", 0" * (4 - len(settings)) + ("" if not arguments else "," if b"\n" in gap else ", ")
        yield (settings[-1].end_byte, args.start_byte + 1, _keep_lines(tail, missing))
        if not arguments and doc.data[args.start_byte + 1 : args.end_byte - 1].strip(b" \t") == b"":
            yield (args.start_byte + 1, args.end_byte - 1, b"")


def _is_dim3(doc: CudaDocument, node: Node) -> bool:
    function = node.child_by_field_name("function") if node.type == "call_expression" else None
    return function is not None and doc.node_text(function) == "dim3"


def _runtime_include(doc: CudaDocument) -> Iterator[Edit]:
    """`#include <hip/hip_runtime.h>` on a line of its own before the first directive or declaration, but after a
    leading `#pragma once` or inside an include guard (as hipify-clang places it: the guard then covers the file)."""
    first = next((n for n in doc.root.children if n.type != "comment"), None)
    if first is None:
        return
    start = doc.data.rfind(b"\n", 0, first.start_byte) + 1
    line_end = doc.data.find(b"\n", first.start_byte)
    if line_end >= 0 and (_is_pragma_once(doc, first) or _is_include_guard(doc, first)):
        start = line_end + 1
    first_break = doc.data.find(b"\n")
    newline = b"\r\n" if first_break > 0 and doc.data[first_break - 1 : first_break] == b"\r" else b"\n"
    yield (start, start, f"#include <{_RUNTIME_HEADER}>".encode() + newline)


def _is_pragma_once(doc: CudaDocument, node: Node) -> bool:
    return node.type == "preproc_call" and doc.node_text(node).split() == ["#pragma", "once"]


def _is_include_guard(doc: CudaDocument, node: Node) -> bool:
    """`#ifndef NAME` whose first directive (after a `#pragma once`) defines NAME."""
    name = node.child_by_field_name("name")
    if node.type != "preproc_ifdef" or name is None or not doc.node_text(node).startswith("#ifndef"):
        return False
    body = [c for c in node.named_children[1:] if c.type != "comment" and not _is_pragma_once(doc, c)]
    defined = body[0].child_by_field_name("name") if body and body[0].type == "preproc_def" else None
    return defined is not None and doc.node_text(defined) == doc.node_text(name)


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


def _include_edits(doc: CudaDocument, options: Options) -> Iterator[Edit]:
    """Each CUDA header becomes its HIP header; one that is already included in the same block is dropped."""
    found = captures(doc.root, INCLUDES)
    includes = sorted(found.get("include", []), key=lambda n: n.start_byte)
    hmap = header_map()
    seen = {(_block(n), doc.node_text(p)[1:-1]) for n in includes if (p := n.child_by_field_name("path")) is not None}
    for node in includes:
        path = node.child_by_field_name("path")
        if path is None or doc.is_guarded(node.start_point.row + 1):
            continue
        raw = doc.node_text(path)
        hip = hmap.hip_header(raw[1:-1], roc=options.roc, rocm=options.rocm_version)
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
    # Insertions first, then the widest edit at a start: a removed argument swallows the renames inside it.
    for start, end, replacement in sorted(set(edits), key=lambda e: (e[0], e[1] != e[0], -e[1], e[2])):
        if start < position:
            continue  # an identifier inside an include or a removed argument we already rewrote
        parts.extend((data[position:start], replacement))
        position = end
    parts.append(data[position:])
    return b"".join(parts)


def _hipify_perl(path: Path, relpath: str, data: bytes, engine: Engine) -> Translation:
    assert engine.executable is not None
    run = run_tool([engine.executable, *_perl_options(engine.options), path])
    if not run.ok or (data.strip() and not run.stdout.strip()):
        raise ToolFailed(run if not run.ok else _empty_output(run), relpath)
    findings = tuple(_perl_findings(run.stderr, relpath, data))
    return Translation(relpath, data, run.stdout, "hipify-perl", findings)


def _perl_options(options: Options) -> list[str]:
    """hipify-perl's spelling of the options it shares with the builtin engine (it has no ROCm release option)."""
    flags = ["-roc"] if options.roc else []
    return flags + (["-hip-kernel-execution-syntax"] if options.launch_syntax == "hipLaunchKernelGGL" else [])


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


def original_line(original: bytes, translated: bytes, line: int) -> int:
    """The line of ORIGINAL that line LINE of TRANSLATED came from (engines insert lines: the HIP runtime include)."""
    old, new = original.splitlines(), translated.splitlines()
    if len(old) == len(new):
        return line
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if j1 < line <= j2:
            return min(i1 + (line - j1), i2) if tag != "insert" else max(i1, 1)
    return line


def translate_many(files: Iterable[tuple[Path, str]], engine: Engine) -> tuple[Translation, ...]:
    """Translate each (path, relpath) pair in order."""
    return tuple(translate_file(path, relpath, engine) for path, relpath in files)


def is_translatable(relpath: str) -> bool:
    """True for the C, C++ and CUDA sources an engine translates."""
    return classify(relpath) in TRANSLATED_KINDS
