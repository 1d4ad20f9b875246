"""Makefiles: variable assignments and recipe lines (shell), comments and continuations handled."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import FACT, Item, ManifestDocument, Positions
from migrate.parse.shell import assignment_items, shell_items

_ASSIGN = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(?::{1,3}|\?|\+|!)?=\s*(.*)$", re.S)
# a target-specific assignment (`debug: NVCCFLAGS += -G -lineinfo`): the flags a make goal adds for its own build
_TARGET_ASSIGN = re.compile(
    r"^[^\s:=#][^:=#]*(?<!:):(?![:=])\s*(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(?::{1,3}|\?|\+|!)?=\s*(.*)$",
    re.S)
_DIRECTIVE = re.compile(r"^\s*(?:ifeq|ifneq|ifdef|ifndef|else|endif|include|-include|sinclude|define|endef|vpath)\b")
_COMMENT = re.compile(r"(?<!\\)#.*$")
# `-arch=sm_$(SM)`: the shell lexer reads make's `$(SM)` as a command substitution and cuts the flag in two; the
# CUDA samples' template builds `-gencode arch=compute_$(sm),code=sm_$(sm)` for each listed architecture the same way
_MAKE_VARIABLE_ARCH = re.compile(
    r"(?<![^\s\"'=])(?:(?:-arch|--gpu-architecture)=(?:sm|compute)_|-gencode(?:=|\s+)arch=compute_)\$\(\S*")
# a line that is a make function call (`$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += ...))`), neither rule nor assignment
_FUNCTION_LINE = re.compile(r"^\s*\$\((?:foreach|eval|call)\s")


# a make variable inside a word (`/usr/local/$(CUDAVERSION)/bin/nvcc`, `cuda-$(VER)`): make expands it before any
# shell runs, so the shell lexer must not read it as a command substitution that cuts the path in two; spelled as a
# shell variable of the same length it stays part of its word. A word that starts with one (`$(NVCC) ...`, also after
# another reference: `$(VERBOSE)$(NVCC)`) is left as it was.
_MID_WORD_REFERENCE = re.compile(r"(?<=[^\s\"'=;|&()`$])\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def _shell_text(text: str) -> str:
    """TEXT with its mid-word make variable references as shell variables (offsets unchanged)."""
    return _MID_WORD_REFERENCE.sub(r"${\1}", text) if "$(" in text else text


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(offset, text) of each logical line, continuations kept in place so offsets stay valid."""
    found, start, i = [], 0, 0
    while i <= len(text):
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        if end > 0 and text[end - 1] == "\\" and end < len(text):
            i = end + 1
            continue
        found.append((start, text[start:end]))
        start = i = end + 1
    return found


def _shifted(positions: Positions, base: int) -> Callable[[int], tuple[int, int]]:
    return lambda offset: positions.at(base + offset)


def _make_variable_arch_flags(text: str, at: Callable[[int], tuple[int, int]]) -> Iterator[Item]:
    """nvcc architecture flags whose number is a make variable (`-arch=sm_$(SM)`), which the shell words split."""
    if "_$(" not in text:
        return
    for match in _MAKE_VARIABLE_ARCH.finditer(_COMMENT.sub("", text)):
        yield Item(FACT, "nvcc-arch-flag", *at(match.start()), value=match.group())


# `$(foreach sm,$(SMS),-gencode arch=compute_$(sm),code=sm_$(sm))`: a make function the shell lexer reads as one
# command substitution, so the flags it expands to are found in its text
_MAKE_FUNCTION = re.compile(r"\$[({](?:foreach|eval|call|addprefix|patsubst)\s")
_FUNCTION_ARCH = re.compile(r"(?:(?:-gencode|--generate-code)[ \t=]+)?arch=compute_\$[({]")


def _function_arch_flags(code: str, at: Callable[[int], tuple[int, int]]) -> Iterator[Item]:
    """nvcc architecture flags written inside a make function call (foreach, eval), one per call."""
    for call in _MAKE_FUNCTION.finditer(code):
        match = _FUNCTION_ARCH.search(code, call.end())
        if match is not None:
            yield Item(FACT, "nvcc-arch-flag", *at(match.start()), value=match.group())
            return


def makefile_items(text: str) -> list[Item]:
    positions = Positions(text)
    found: list[Item] = []
    in_rule = False  # after a rule's target line, until the next assignment: a tab-led line is its recipe
    for offset, line in _logical_lines(text):
        code = _COMMENT.sub("", line)
        if line.startswith("\t") and (in_rule or not _plain_assignment(code)):
            body = line[1:].lstrip("@-+ ")
            lead = len(line) - len(body)
            found.extend(shell_items(_shell_text(body), _shifted(positions, offset + lead)))
            found.extend(_make_variable_arch_flags(body, _shifted(positions, offset + lead)))
            found.extend(_function_arch_flags(body, _shifted(positions, offset + lead)))
            continue
        if not code.strip():
            continue
        if _DIRECTIVE.match(code):
            found.extend(_conditional_probes(code, _shifted(positions, offset)))
            continue
        found.extend(_function_arch_flags(code, _shifted(positions, offset)))
        if _FUNCTION_LINE.match(code):
            continue
        assignment = _plain_assignment(code)
        indent = len(code) - len(code.lstrip())
        in_rule = assignment is None
        if assignment:
            value_at = offset + code.index(assignment.group(2)) if assignment.group(2) else offset
            found.extend(_assignment(assignment, positions, offset + indent, value_at))
            found.extend(_cuda_sources(code, _shifted(positions, offset)))
        elif target := _TARGET_ASSIGN.match(code.strip()):
            start = offset + indent
            found.extend(_assignment(target, positions, start + target.start(1), start + target.start(2)))
        elif ":" in code:
            found.extend(_cuda_sources(code, _shifted(positions, offset)))
    return found


def _plain_assignment(code: str) -> re.Match[str] | None:
    """`NAME = VALUE` (any of make's assignment operators), not a rule or a target-specific assignment. Outside a
    rule, GNU make reads a tab-led line as make syntax: the assignments of a conditional block are often indented
    with a tab (`ifeq ($(DEBUG),1)` / `<TAB>NVCCFLAGS += -G`)."""
    assignment = _ASSIGN.match(code.strip())
    return assignment if assignment and ":" not in code.split("=", 1)[0].rstrip(":") else None


# `ifneq ($(shell which nvcc),)`, `ifeq ($(shell command -v $(NVCC)),)`: a conditional that looks for the compiler;
# the variable that conventionally holds nvcc is read as nvcc, padded so that the offsets after it stay in place
_CONDITIONAL = re.compile(r"^\s*(?:else\s+)?ifn?eq\b")
_SHELL_CALL = re.compile(r"\$\(shell\s[^()]*(?:\$[({][\w.]+[)}][^()]*)*\)")
_NVCC_VARIABLE = re.compile(r"\$[({](?:NVCC|NVCC_BIN|NVCC_EXE|CUDA_NVCC|NVCC_PATH)[)}]")


def _conditional_probes(code: str, at: Callable[[int], tuple[int, int]]) -> Iterator[Item]:
    """The shell runs of an ifeq/ifneq condition (`$(shell which nvcc)`), which make runs to choose a branch."""
    if not _CONDITIONAL.match(code) or "$(shell" not in code:
        return
    for call in _SHELL_CALL.finditer(code):
        text = _NVCC_VARIABLE.sub(lambda m: "nvcc".ljust(len(m.group())), call.group())
        yield from shell_items(text, _offset(at, call.start()))


def _offset(at: Callable[[int], tuple[int, int]], base: int) -> Callable[[int], tuple[int, int]]:
    return lambda offset: at(base + offset)


# a .cu file named in a source list or a rule (`SRCS = $(wildcard *.cu)`, `%.o: %.cu`, `$(CU:%.cu=%.x)`); not .cuh
_CUDA_SOURCE = re.compile(r"[\w%*$(){}/.-]*\.cu(?![\w./:-])")


def _cuda_sources(code: str, at: Callable[[int], tuple[int, int]]) -> Iterator[Item]:
    """The first .cu file an assignment's value or a rule's line names: where the build lists its CUDA sources."""
    if ".cu" in code and (match := _CUDA_SOURCE.search(code)):
        yield Item(FACT, "make-cuda-source", *at(match.start()), value=match.group())


def _assignment(match: re.Match[str], positions: Positions, name_at: int, value_at: int) -> Iterator[Item]:
    """The items of one assignment (NAME op= VALUE): the variable's facts and the shell words of its value."""
    yield from assignment_items(match.group(1), match.group(2), positions.at(name_at))
    yield from shell_items(_shell_text(match.group(2)), _shifted(positions, value_at))
    yield from _make_variable_arch_flags(match.group(2), _shifted(positions, value_at))


@register(FileKind.MAKEFILE)
def parse_makefile(source: SourceFile, text: str) -> ManifestDocument:
    """A Makefile: assignments (NVCC := nvcc, CUDA_HOME ?= ...) and the shell of each recipe line. A Makefile.in that
    automake generated says so on its first line: its Makefile.am is read instead."""
    if _AUTOMAKE_OUTPUT.match(text):
        return ManifestDocument(source=source, text=text, manifest=[])
    return ManifestDocument(source=source, text=text, manifest=makefile_items(text))


_AUTOMAKE_OUTPUT = re.compile(r"\A#[^\n]*generated by automake")
