"""MATLAB build scripts (.m) and mex option files (mex_CUDA_*.xml, nvcc_*.xml): where MEX functions are built from
CUDA sources with nvcc (mexcuda, `mex -setup:` with a CUDA option file, mex of .cu sources, nvmex) and the nvcc
architecture flags they pass, and where a script computes on MATLAB's NVIDIA-only GPU arrays (gpuArray, gpuDevice).
Only these facts are reported: an Objective-C .m file, or a MATLAB script that neither builds with CUDA nor uses
gpuArray, yields none."""

from __future__ import annotations

import re
from collections.abc import Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import blank_match, register
from migrate.parse.manifest import FACT, Item, ManifestDocument, Positions

_XML_COMMENT = re.compile(r"<!--.*?-->", re.S)
# a `%` comment to the end of the line, and `%{ ... %}` blocks; quoted text on one line is a string first, so the
# `%d` of a format stays (a transpose's quote, `a'`, has no partner on most lines and is passed over)
_M_LINE = re.compile(r"""'(?:[^'\n]|'')*'|"(?:[^"\n]|"")*"|%[^\n]*""")
_M_BLOCK = re.compile(r"^[ \t]*%\{[ \t]*\n.*?^[ \t]*%\}[ \t]*$", re.S | re.M)
# the MEX build runs nvcc: the mexcuda command or function, MathWorks' older nvmex script, `mex -setup:` with an
# option file that names CUDA, or mex given a .cu source (compiled through the CUDA option file set up before)
_M_CUDA_MEX = re.compile(
    r"\bmexcuda\b|\bnvmex\b|\bmex\b[^\n;%]*?-setup:[^\n;%]*?cuda|\bmex\s*\([^\n;]*?\.cu\b['\"]", re.I)
# an option file's compiler is nvcc: `Name="nvcc"`, `CXX="$NVCC"`, `Location="$NVCC"`
_XML_CUDA_MEX = re.compile(r"\bName\s*=\s*\"nvcc\"|\"\$NVCC\"")
# Objective-C shares the .m suffix: a file with its directives is not MATLAB
_OBJECTIVE_C = re.compile(r"^[ \t]*(?:#import\b|#include\b|@interface\b|@implementation\b)", re.M)
# MATLAB's own GPU arrays and device selection (Parallel Computing Toolbox): gpuArray(x), gpuArray.zeros(...),
# gpuDevice(n), gpuDeviceCount, parallel.gpu.*; matched in code only, so isa(x, 'gpuArray') and messages stay quiet
_M_GPU_ARRAY = re.compile(r"\bgpuArray\b|\bgpuDevice(?:Count)?\b|\bparallel\.gpu\.")
_ARCH = re.compile(r"-gencode[= ]+arch=compute_\d+[af]?,code=(?:sm|compute)_\d+[af]?|-arch[= ]sm_\d+[af]?")


def _m_code(text: str, strings: bool) -> str:
    """The script with its comments blanked (same length, newlines kept), and its strings too unless STRINGS."""
    text = _M_BLOCK.sub(blank_match, text)
    return _M_LINE.sub(lambda m: blank_match(m) if m.group().startswith("%") or not strings else m.group(), text)


def matlab_items(text: str, xml: bool) -> Iterator[Item]:
    """The CUDA MEX build facts of a script or option file, in the order they appear. In a script the command
    (mexcuda, nvmex, mex) and its gpuArray / gpuDevice uses are code, not text in a message; the mex arguments and
    the arch flags are strings."""
    code = _XML_COMMENT.sub(blank_match, text) if xml else _m_code(text, strings=True)
    bare = code if xml else _m_code(text, strings=False)
    positions = Positions(code)
    for match in (_XML_CUDA_MEX if xml else _M_CUDA_MEX).finditer(code):
        if not bare[match.start()].isspace():
            yield Item(FACT, "matlab-cuda-mex", *positions.at(match.start()), value=match.group())
    if not xml:
        for match in _M_GPU_ARRAY.finditer(bare):
            yield Item(FACT, "matlab-gpu-array", *positions.at(match.start()), value=match.group())
    lines: set[int] = set()
    for match in _ARCH.finditer(code):  # one per line: a flag list is one setting to replace
        line, column = positions.at(match.start())
        if line not in lines:
            lines.add(line)
            yield Item(FACT, "nvcc-arch-flag", line, column, value=match.group())


@register(FileKind.MATLAB)
def parse_matlab(source: SourceFile, text: str) -> ManifestDocument:
    """A MATLAB script or mex option file reduced to its CUDA MEX build facts."""
    xml = source.relpath.lower().endswith(".xml")
    if not xml and _OBJECTIVE_C.search(text):
        return ManifestDocument(source=source, text=text, manifest=[])
    found = sorted(matlab_items(text, xml), key=lambda i: (i.line, i.column))
    return ManifestDocument(source=source, text=text, manifest=found)
