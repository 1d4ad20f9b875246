"""Cython sources (.pyx, .pxd, .pxi): the CUDA headers their `cdef extern from` blocks declare, the CUDA API names
their code calls, the libraries it dlopens by name, and the cuda-python Cython bindings they cimport. Comments and string literals are blanked first,
so nothing in them is read; a file without a CUDA name prefix yields nothing and is never lexed."""

from __future__ import annotations

import re

from migrate.model import FileKind, SourceFile
from migrate.parse.document import blank_match, register
from migrate.parse.manifest import FACT, Item, ManifestDocument, Positions

_PREFIXES = ("cu", "nvrtc", "nccl", "nvml")  # the literal prefilter: a CUDA name holds one of these
# Cython reaches C only through a `cdef extern from` block or a cimport: a file with neither calls no CUDA
_GATES = ("extern", "cimport")
# a comment, or a string literal (triple-quoted first); a prefix such as b, r or f stays, as it holds no text
_LEXEME = re.compile(r"#[^\n]*|(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\")")
_EXTERN = re.compile(r"^[ \t]*cdef[ \t]+extern[ \t]+from[ \t]+(?:\"([^\"\n]+)\"|'([^'\n]+)')", re.M)
_CUDA_NAME = r"(?:cu|cuda|cublas(?:Lt|Mp)?|cufft|curand|cusparse|cusolver(?:Dn|Sp|Mp)?|cudnn|nvrtc|nvml|nccl|cuFile|cutensor|cudss)[A-Z]\w*"
_CALL = re.compile(rf"(?<![\w.])({_CUDA_NAME})\s*\(")
_DLOPEN = re.compile(r"(?<![\w.])dlopen\s*\(\s*[bu]?['\"]([^'\"\n]+)['\"]")  # read from TEXT; the call must be code
_CIMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(cuda(?:\.bindings)?(?:\.\w+)*)[ \t]+cimport\b|cimport[ \t]+(cuda(?:\.bindings)?\.\w+))", re.M)


def blanked(text: str) -> str:
    """TEXT with every comment and string literal turned to spaces (line breaks kept, so offsets hold)."""
    return _LEXEME.sub(blank_match, text)


@register(FileKind.CYTHON)
def parse_cython(source: SourceFile, text: str) -> ManifestDocument:
    """A Cython file reduced to the CUDA headers it declares, the CUDA calls it makes and the bindings it cimports."""
    if not any(gate in text for gate in _GATES) or not any(prefix in text for prefix in _PREFIXES):
        return ManifestDocument(source=source, text=text)
    where = Positions(text)
    code = blanked(text)
    found: list[Item] = []
    for match in _EXTERN.finditer(text):  # the header is a literal, so read from TEXT where the line is code
        group = 1 if match.group(1) else 2
        if code[match.start():match.end()].strip().startswith("cdef"):
            found.append(Item(FACT, "cython-include", *where.at(match.start(group)), value=match.group(group)))
    found.extend(Item(FACT, "cython-call", *where.at(m.start(1)), value=m.group(1)) for m in _CALL.finditer(code))
    for match in _DLOPEN.finditer(text):
        if code[match.start():match.start() + 6] == "dlopen":
            found.append(Item(FACT, "cython-dlopen", *where.at(match.start(1)), value=match.group(1)))
    for match in _CIMPORT.finditer(code):
        group = 1 if match.group(1) else 2
        found.append(Item(FACT, "cython-cimport", *where.at(match.start(group)), value=match.group(group)))
    return ManifestDocument(source=source, text=text, manifest=found)
