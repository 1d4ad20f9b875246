"""Julia packages: the GPU packages a Project.toml declares, and what a .jl source reaches of CUDA.jl (its imports,
qualified CUDA.name calls, Cu* types and @cuda launches, its warp intrinsics, and NVVM intrinsics kept in strings
for llvmcall). Comments (# and nested #= =#) and string literals are blanked first, so a docstring or a comment
naming CuArray reads as nothing; a file without a CUDA word is never lexed."""

from __future__ import annotations

import re
from collections.abc import Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import as_spaces, nested_comment_end, register
from migrate.parse.manifest import FACT, Item, ManifestDocument, Positions

# the literal prefilter of a .jl file: CUDA.jl, its predecessors (CUDAnative, CuArrays, CUDAdrv), cuDNN and NCCL
_WORDS = ("CUDA", "Cu", "cuDNN", "NCCL", "nvvm")
# a comment, a string (triple-quoted first), or a character literal (so that '"' opens no string)
_LEXEME = re.compile(r"#=|#|\"\"\"|\"|'(?:\\.|[^'\\\n])'")
_PACKAGES = r"CUDA|CUDAnative|CuArrays|CUDAdrv|cuDNN|NCCL|CUDAKernels"
_USE = re.compile(rf"^[ \t]*(?:@\w+[ \t]+)?(?:using|import)[ \t][^\n]*?(?<![\w.])({_PACKAGES})\b", re.M)
# CUDA.jl reached in code: a qualified name, a Cu* type of CUDA.jl (CuArray, CuStream, CuDeviceArray, CuPtr ...),
# a @cuda launch
_CALL = re.compile(r"(?<![\w.])(?:CUDA\.(\w+)|(Cu(?:Array|Vector|Matrix|DeviceArray|DeviceVector|DeviceMatrix|Stream|"
                   r"Event|Context|Device|Ptr|Function|Module|SparseMatrix\w*|Text\w*))\b|@(cuda)\b)")
# warp-level intrinsics of CUDA.jl: a warp of 32 lanes and 32-bit masks are written into them
_WARP = re.compile(r"(?<![\w.])(?:CUDA\.)?(shfl_(?:up_|down_|xor_)?sync|vote_(?:all|any|uni|ballot)_sync|sync_warp|"
                   r"active_mask|laneid|warpsize|FULL_MASK)\b")
_NVVM = re.compile(r"llvm\.nvvm\.[\w.]+")
# an intrinsic's string is llvmcall's: ccall("llvm.nvvm.x", llvmcall, ...) after it, Base.llvmcall(""" ... """) before
_LLVMCALL_BEFORE, _LLVMCALL_AFTER = 40, 120
_SECTION = re.compile(r"^[ \t]*\[([\w.-]+)\][ \t]*$", re.M)
_ENTRY = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*\"[0-9a-f-]{36}\"", re.M)
_DEPENDENCY_TABLES = ("deps", "weakdeps", "extras")
_ROCM_BACKEND = "AMDGPU"
_PACKAGE_NAME = re.compile(r"^name[ \t]*=[ \t]*\"\w+\"", re.M)  # a package's own name, before any table


def spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The comments and the string literals of a Julia source, as (start, end) offsets."""
    comments: list[tuple[int, int]] = []
    strings: list[tuple[int, int]] = []
    match = _LEXEME.search(text)
    while match is not None:
        start, token = match.start(), match.group()
        if token == "#=":
            end = nested_comment_end(text, start, "#=", "=#")
            comments.append((start, end))
        elif token == "#":
            stop = text.find("\n", start)
            end = len(text) if stop < 0 else stop
            comments.append((start, end))
        elif token == '"""':
            stop = text.find('"""', start + 3)
            end = len(text) if stop < 0 else stop + 3
            strings.append((start, end))
        elif token == '"':
            end = _quoted_end(text, start)
            strings.append((start, end))
        else:
            end = match.end()  # a character literal: nothing to read, nothing to blank
        match = _LEXEME.search(text, end)
    return comments, strings


def _quoted_end(text: str, start: int) -> int:
    """Past the closing quote of the string at START (strings may span lines; `\\"` escapes)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return len(text)


def blanked(text: str, regions: list[tuple[int, int]]) -> str:
    """TEXT with REGIONS turned to spaces (line breaks kept, offsets unchanged)."""
    parts: list[str] = []
    last = 0
    for start, end in sorted(regions):
        parts.extend((text[last:start], as_spaces(text[start:end])))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _source_items(text: str) -> Iterator[Item]:
    comments, strings = spans(text)
    code = blanked(text, comments + strings)
    where = Positions(text)
    uses = [Item(FACT, "julia-cuda-code", *where.at(m.start(1)), value=m.group(1)) for m in _USE.finditer(code)]
    for match in _CALL.finditer(code):
        group = next(g for g in (1, 2, 3) if match.group(g))
        uses.append(Item(FACT, "julia-cuda-code", *where.at(match.start(group)), value=match.group(group)))
    yield from uses
    # an unqualified laneid() or warpsize() is CUDA.jl's only in a file that uses CUDA.jl (AMDGPU.jl and
    # backend-neutral packages define functions of those names too)
    for match in _WARP.finditer(code):
        if uses or match.group().startswith("CUDA."):
            yield Item(FACT, "julia-cuda-warp", *where.at(match.start(1)), value=match.group(1))
    for start, end in strings:
        if "llvmcall" not in code[max(0, start - _LLVMCALL_BEFORE):end + _LLVMCALL_AFTER]:
            continue  # a message or a comment-like string naming an intrinsic calls nothing
        for match in _NVVM.finditer(text, start, end):
            yield Item(FACT, "julia-nvvm-intrinsic", *where.at(match.start()), value=match.group())


@register(FileKind.JULIA)
def parse_julia(source: SourceFile, text: str) -> ManifestDocument:
    """A Julia source reduced to the CUDA.jl it uses, its warp intrinsics and the NVVM intrinsics of its strings."""
    if not any(word in text for word in _WORDS):
        return ManifestDocument(source=source, text=text)
    found = sorted(_source_items(text), key=lambda item: (item.line, item.column))
    return ManifestDocument(source=source, text=text, manifest=found)


def _dependencies(text: str) -> Iterator[tuple[str, int]]:
    """(package, offset) of each package [deps], [weakdeps] and [extras] name, at its first entry (a test-only
    package of [extras] often repeats a weak dependency)."""
    seen: set[str] = set()
    sections = list(_SECTION.finditer(text))
    for index, section in enumerate(sections):
        if section.group(1) not in _DEPENDENCY_TABLES:
            continue
        stop = sections[index + 1].start() if index + 1 < len(sections) else len(text)
        for entry in _ENTRY.finditer(text, section.end(), stop):
            if entry.group(1) not in seen:
                seen.add(entry.group(1))
                yield entry.group(1), entry.start(1)


@register(FileKind.JULIA_PROJECT)
def parse_julia_project(source: SourceFile, text: str) -> ManifestDocument:
    """A Julia Project.toml: each declared package, as NAME, NAME+AMDGPU where the project also declares AMDGPU.jl
    (a ROCm backend exists beside the CUDA one), and either with @env where the file is an environment (docs, tests,
    benchmarks: no package name of its own) rather than a package."""
    entries = list(_dependencies(text))
    suffix = "+" + _ROCM_BACKEND if any(name == _ROCM_BACKEND for name, _ in entries) else ""
    if not _PACKAGE_NAME.search(text):
        suffix += "@env"
    where = Positions(text)
    found = [Item(FACT, "julia-package", *where.at(offset), value=name + suffix) for name, offset in entries]
    return ManifestDocument(source=source, text=text, manifest=found)
