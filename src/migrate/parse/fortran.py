"""Fortran sources (free and fixed form): CUDA Fortran (nvfortran's kernels, launches, `!$cuf kernel do` loops,
device data, the cudafor and CUDA library modules and calls) and OpenACC directives. Comments other than directive
sentinels, and strings, are never read; a file with none of these constructs yields nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator

from migrate.lazyre import lazy_regex
from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import FACT, Item, ManifestDocument

CUDA_CODE = "cuda-fortran-code"  # what nvfortran alone compiles: kernels, launches, !$cuf loops, device data, indices
CUDA_LIBRARY = "cuda-fortran-library"  # the cudafor and CUDA library modules, and the CUDA API called from Fortran
OPENACC = "openacc-directive"

# what any of the facts needs somewhere in the (lower-cased) file: most Fortran files have none and stop here
_ANY = lazy_regex(r"attributes\s*\(|<<<|[!c*][$@]cuf|[!c*]\$acc|\buse\b[\s,:a-z]*\b(?:cu|nvtx)|\bcuda[a-z]|"
                  r",\s*(?:device|managed|pinned)\b|(?:threadidx|blockidx)\s*%|name\s*=\s*[\"'](?:cu|nvtx|nccl)")
_FIXED_SUFFIXES = (".f", ".for", ".ftn", ".f77")
# a string on one line, or a `!` comment to the end of the line (strings first: a `!` inside one is text)
_STRING_OR_COMMENT = re.compile(r"'(?:[^'\n]|'')*'|\"(?:[^\"\n]|\"\")*\"|![^\n]*")
_DIRECTIVE = re.compile(r"[!c*]([$@])(acc|cuf)\b(.*)")
# attributes(global) / (device) / (host,device) before a procedure; followed by `::` it declares data instead
_PROCEDURE_ATTRIBUTE = re.compile(r"\battributes\s*\(\s*(global|grid_global|device|host\s*,\s*device|device\s*,"
                                  r"\s*host)\s*\)(?!\s*::)")
_DATA_ATTRIBUTE = re.compile(r"\battributes\s*\(\s*(device|managed|pinned|constant|texture|shared)\s*\)\s*::")
_DATA_DECLARATION = re.compile(r"^\s*(?:real|integer|complex|logical|character|double\s+precision|double\s+complex|"
                               r"type\s*\(|class\s*\()(?:[^:]|:(?!:))*?,\s*(device|managed|pinned|constant|shared)\b(?:[^:]|:(?!:))*::")
_LAUNCH = re.compile(r"\bcall\s+(\w+)\s*<<<")
_INDEX = re.compile(r"\b(threadidx|blockidx|blockdim|griddim)\s*%")
# cudadevice's intrinsics, read only in a file that has other CUDA Fortran (they need no `use` in device code):
# barriers and fences, atomics, warp votes and shuffles; a kernel rewritten in HIP C++ takes each one with it
_DEVICE_INTRINSIC = re.compile(r"\bcall\s+(?:syncthreads|syncwarp|threadfence(?:_block|_system)?)\b|"
                               r"\b(?:syncthreads_(?:count|and|or)|atomic(?:add|sub|max|min|exch|cas|inc|dec|and|or|xor)|"
                               r"ballot|allthreads|anythread|__shfl(?:_up|_down|_xor)?|__activemask)\s*\(")
_MODULE = re.compile(r"^\s*use\b\s*(?:,\s*intrinsic\s*)?(?:::)?\s*(cudafor|cudadevice|cublas\w*|cufft\w*|curand\w*|"
                     r"cusparse\w*|cusolver\w*|cutensor\w*|nvtx|openacc_cu\w*)\b")
_API_CALL = re.compile(r"\b((?:cuda|cublas|cufft|curand|cusparse|cusolver)[a-z]\w*)\s*\(")
_NOT_API = frozenset({"cudafor", "cudadevice"})
# a Fortran interface to a CUDA library's C function: bind(c, name="cufftPlan1d"), bind(c, name='nvtxRangePushA')
_BIND_NAME = re.compile(r"\bbind\s*\(\s*c\s*,\s*name\s*=\s*[\"']((?:cuda|cublas|cufft|curand|cusparse|cusolver|"
                        r"cudnn|cutensor|nvtx|nccl)[a-z_]\w*)[\"']")


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def _code(line: str) -> str:
    """LINE with its strings and its trailing comment blanked (same length)."""
    return _STRING_OR_COMMENT.sub(_blank, line) if ("!" in line or "'" in line or '"' in line) else line


def fortran_items(text: str, fixed: bool) -> Iterator[Item]:
    """The CUDA Fortran and OpenACC facts of a source, line by line, at most one of each kind per line."""
    low = text.lower()
    if not _ANY.search(low):
        return
    for number, line in enumerate(low.split("\n"), 1):
        if fixed and line[:1] in ("c", "*", "!") and _DIRECTIVE.match(line) is None:
            continue  # a fixed-form comment line
        stripped = line.lstrip()
        directive = _DIRECTIVE.match(stripped) if stripped[:1] in ("!", "c", "*") else None
        column = len(line) - len(stripped) + 1
        if directive is not None:
            yield from _directive(directive, number, column)
            continue
        yield from _code_facts(_code(line), line, number)


def _directive(match: re.Match[str], line: int, column: int) -> Iterator[Item]:
    sentinel, name, rest = match.groups()
    if name == "acc" and sentinel == "$":
        yield Item(FACT, OPENACC, line, column, value=("acc" + rest).strip()[:60])
    elif name == "cuf":  # `!$cuf kernel do` loops, and `!@cuf` lines that only nvfortran -cuda compiles
        yield Item(FACT, CUDA_CODE, line, column, value=f"{sentinel}cuf{rest}".strip()[:60])


def _code_facts(code: str, text: str, line: int) -> Iterator[Item]:
    """The facts of one line of code (CODE: TEXT with its strings and comment blanked)."""
    for pattern in (_PROCEDURE_ATTRIBUTE, _DATA_ATTRIBUTE, _DATA_DECLARATION, _LAUNCH, _INDEX, _DEVICE_INTRINSIC):
        found = pattern.search(code)
        if found is not None:
            yield Item(FACT, CUDA_CODE, line, found.start() + 1, value=found.group().strip())
            break
    module = _MODULE.search(code)
    call = None if module else next((c for c in _API_CALL.finditer(code) if c.group(1) not in _NOT_API), None)
    library = module or call or (_BIND_NAME.search(text) if "bind" in code else None)
    if library is not None:
        yield Item(FACT, CUDA_LIBRARY, line, library.start(1) + 1, value=library.group(1))


@register(FileKind.FORTRAN)
def parse_fortran(source: SourceFile, text: str) -> ManifestDocument:
    """A Fortran source reduced to its CUDA Fortran and OpenACC facts."""
    fixed = source.relpath.lower().endswith(_FIXED_SUFFIXES)
    return ManifestDocument(source=source, text=text, manifest=list(fortran_items(text, fixed)))
