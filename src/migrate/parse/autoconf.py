"""Autoconf inputs (configure.ac, configure.in, acinclude.m4, *.m4): the checks that make `configure` require the
CUDA toolkit, as facts: AC_CHECK_HEADER(S) of a CUDA header, AC_CHECK_LIB / AC_SEARCH_LIBS of a CUDA library,
AC_PATH_PROG(S) / AC_CHECK_PROG(S) of nvcc. `dnl` and shell `#` comments, messages and help strings are blanked
first; other text yields nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import blank_match, register
from migrate.parse.manifest import FACT, Item, ManifestDocument, Positions

# `dnl` to the end of the line; `#` where a shell comment starts (not `[#include <cuda.h>]`, a check's prologue)
_COMMENT = re.compile(r"\bdnl\b[^\n]*|(?:^|(?<=[ \t]))#[^\n]*", re.M)
# messages and help strings: their text is prose, whatever macro names it quotes
_MESSAGE = re.compile(r"\b(?:AC_MSG_[A-Z]+|AS_HELP_STRING|AC_HELP_STRING)\s*\(")
_CHECK = re.compile(r"\b(AC_CHECK_HEADERS?|AC_CHECK_LIB|AC_SEARCH_LIBS|AC_PATH_PROGS?|AC_CHECK_PROGS?)\s*\(([^()]*)")
# which argument names the header, library or program, by macro
_ARGUMENT = {"AC_CHECK_HEADER": 0, "AC_CHECK_HEADERS": 0, "AC_CHECK_LIB": 0, "AC_SEARCH_LIBS": 1,
             "AC_PATH_PROG": 1, "AC_PATH_PROGS": 1, "AC_CHECK_PROG": 1, "AC_CHECK_PROGS": 1}
_CUDA_HEADER = re.compile(r"^(?:cuda|cuda_runtime|cuda_runtime_api|cublas\w*|cufft\w*|curand\w*|cusparse\w*|"
                          r"cusolver\w*|cudnn|nvrtc|nccl|nvml|nvToolsExt|npp\w*)\.h$")
_CUDA_LIBRARY = re.compile(r"^(?:cuda|cudart|cublas\w*|cufft\w*|curand|cusparse|cusolver|cudnn|nvrtc|nccl|"
                           r"nvidia-ml|nvToolsExt|npp\w*)$")


def _blank_messages(code: str) -> str:
    """CODE with the arguments of every message and help-string macro blanked (to its balanced closing paren)."""
    parts, end = [], 0
    for match in _MESSAGE.finditer(code):
        if match.start() < end:
            continue
        depth, index = 1, match.end()
        while index < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[index], 0)
            index += 1
        parts += [code[end:match.end()], re.sub(r"[^\n]", " ", code[match.end():index])]
        end = index
    return "".join([*parts, code[end:]])


def _words(argument: str) -> list[str]:
    return argument.replace("[", " ").replace("]", " ").split()


def autoconf_items(text: str) -> Iterator[Item]:
    """One fact per check of a CUDA header, library or nvcc, at the macro; value = what it checks for."""
    code = _blank_messages(_COMMENT.sub(blank_match, text))
    positions = Positions(code)
    for match in _CHECK.finditer(code):
        arguments = match.group(2).split(",")
        index = _ARGUMENT[match.group(1)]
        if index >= len(arguments):
            continue
        prog = match.group(1).startswith(("AC_PATH_PROG", "AC_CHECK_PROG"))
        named = [w for w in _words(arguments[index])
                 if (w == "nvcc" if prog else (_CUDA_HEADER if "HEADER" in match.group(1) else _CUDA_LIBRARY).match(w))]
        if named:
            yield Item(FACT, "autoconf-cuda-check", *positions.at(match.start()), value=named[0])


@register(FileKind.AUTOCONF)
def parse_autoconf(source: SourceFile, text: str) -> ManifestDocument:
    """A configure.ac or m4 file reduced to its CUDA toolkit checks."""
    return ManifestDocument(source=source, text=text, manifest=list(autoconf_items(text)))
