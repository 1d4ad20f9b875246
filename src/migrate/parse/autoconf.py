"""Autoconf inputs (configure.ac, configure.in, acinclude.m4, m4/*.m4): the CUDA switches and checks of their
macros, and the shell code in their action arguments; comments, help texts and messages read as nothing."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import COMMAND, ENV, FACT, Item, ManifestDocument, Positions, arch_flag_items
from migrate.parse.shell import shell_items

# The arguments (1-based) of the common macros that hold shell code run by configure; every other argument (a name,
# a help text, a message, a C test program, the arguments of a project's own macro) is not shell and reads as blank.
_SHELL_ARGUMENTS: dict[str, tuple[int, ...]] = {
    "AS_IF": (1, 2, 3, 4, 5, 6, 7, 8, 9), "AS_CASE": (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
    "AC_DEFUN": (2,), "AC_DEFUN_ONCE": (2,), "AU_DEFUN": (2,),
    "AC_ARG_WITH": (3, 4), "AC_ARG_ENABLE": (3, 4), "AC_ARG_VAR": (),
    "AC_CHECK_LIB": (3, 4), "AC_SEARCH_LIBS": (3, 4), "AC_CHECK_HEADER": (2, 3), "AC_CHECK_HEADERS": (2, 3),
    "AC_CHECK_FUNC": (2, 3), "AC_CHECK_FUNCS": (2, 3), "AC_CHECK_FILE": (2, 3), "AC_CHECK_FILES": (2, 3),
    "AC_CACHE_CHECK": (3,), "AC_CACHE_VAL": (2,), "AC_COMPILE_IFELSE": (2, 3), "AC_LINK_IFELSE": (2, 3),
    "AC_RUN_IFELSE": (2, 3, 4), "AC_TRY_COMPILE": (3, 4), "AC_TRY_LINK": (3, 4), "AC_TRY_RUN": (2, 3, 4),
    "PKG_CHECK_MODULES": (3, 4), "AC_CONFIG_COMMANDS": (2, 3), "m4_ifdef": (2, 3), "m4_if": (3, 4, 5, 6),
    "AX_CHECK_COMPILE_FLAG": (2, 3), "AC_LANG_PUSH": (), "AC_LANG_POP": (),
}
# Macros whose arguments are text (help, messages, C test programs): a macro named inside them is not called by
# configure (AC_MSG_ERROR([AC_CHECK_LIB(cudart) failed])), and neither is one in the help argument of a switch
_TEXT_MACROS = frozenset({"AS_HELP_STRING", "AC_HELP_STRING", "AC_MSG_CHECKING", "AC_MSG_RESULT", "AC_MSG_NOTICE",
                          "AC_MSG_WARN", "AC_MSG_ERROR", "AC_MSG_FAILURE", "AS_ECHO", "AS_ECHO_N", "AC_LANG_PROGRAM",
                          "AC_LANG_SOURCE", "AC_LANG_CALL", "AC_INIT"})
_TEXT_ARGUMENTS = {"AC_ARG_WITH": 2, "AC_ARG_ENABLE": 2, "AC_ARG_VAR": 2, "AC_DEFINE": 3, "AC_DEFINE_UNQUOTED": 3}
# A macro call's name: Autoconf's and Automake's, m4's and the AX_/project ones, written in capitals (or m4_*)
_MACRO = re.compile(r"(?<![\w$])(?:[A-Z][A-Z0-9]*_[A-Z0-9_]*|m4_\w+)\(")
_DNL = re.compile(r"(?<![\w$])dnl\b")


@dataclass
class _Call:
    """A macro call being read: its name, where its argument list opened, its arguments' spans so far."""

    name: str
    start: int
    depth: int  # the quote depth its parentheses sit at: commas and parentheses at that depth are its own
    inert: bool = False  # named inside text: m4 does not call it where configure runs
    parens: int = 0
    spans: list[tuple[int, int]] = field(default_factory=list)
    arg_start: int = 0


@dataclass(frozen=True)
class MacroCall:
    """A macro call found in the text: its name, where it starts and ends and its arguments, unquoted and stripped."""

    name: str
    start: int
    end: int
    args: tuple[str, ...]
    arg_starts: tuple[int, ...]


def _unquote(text: str) -> str:
    return " ".join(text.replace("[", " ").replace("]", " ").split())


def read_m4(text: str) -> tuple[str, list[MacroCall]]:
    """The shell view of TEXT (same length and lines: comments, quotes, macro syntax and non-shell arguments blank,
    argument separators as `;`) and the macro calls it makes."""
    out = list(text)
    calls: list[MacroCall] = []
    stack: list[_Call] = []
    depth = i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "#" and (i == 0 or text[i - 1] in " \t\n;") or ch == "d" and _DNL.match(text, i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        if ch == "[":
            depth, out[i] = depth + 1, " "
        elif ch == "]":
            depth, out[i] = max(depth - 1, 0), " "
        elif (ch.isupper() or ch == "m") and (match := _MACRO.match(text, i)):
            stack.append(_Call(match.group()[:-1], i, depth, inert=bool(stack) and _in_text(stack[-1]),
                               arg_start=match.end()))
            out[i:match.end()] = " " * (match.end() - i - 1) + ";"
            i = match.end()
            continue
        elif stack and depth == stack[-1].depth and ch in "(),":
            call = stack[-1]
            if ch == "(":
                call.parens += 1
            elif ch == ")" and call.parens:
                call.parens -= 1
            else:
                call.spans.append((call.arg_start, i))
                call.arg_start, out[i] = i + 1, ";"
                if ch == ")":
                    stack.pop()
                    record = _finish(text, call, out)
                    if not call.inert:
                        calls.append(record)
        i += 1
    return "".join(out), sorted(calls, key=lambda c: c.start)


def _in_text(call: _Call) -> bool:
    """Whether the argument CALL is reading is text (a help string, a message), not code."""
    return call.inert or call.name in _TEXT_MACROS or _TEXT_ARGUMENTS.get(call.name) == len(call.spans) + 1


def _finish(text: str, call: _Call, out: list[str]) -> MacroCall:
    """The record of a closed CALL; its arguments that are not shell code are blanked in OUT."""
    shell = _SHELL_ARGUMENTS.get(call.name, ())
    for index, (start, end) in enumerate(call.spans, 1):
        if index not in shell:
            out[start:end] = [c if c == "\n" else " " for c in out[start:end]]
    args = tuple(_unquote(text[start:end]) for start, end in call.spans)
    return MacroCall(call.name, call.start, call.spans[-1][1], args, tuple(start for start, _ in call.spans))


# The option a switch names (--with-cuda, --enable-cusparse) and the checks that look for CUDA's parts
_SWITCHES = frozenset({"AC_ARG_WITH", "AC_ARG_ENABLE"})
_HEADER_CHECKS = frozenset({"AC_CHECK_HEADER", "AC_CHECK_HEADERS"})
_PROGRAM_CHECKS = frozenset({"AC_PATH_PROG", "AC_PATH_PROGS", "AC_CHECK_PROG", "AC_CHECK_PROGS", "AC_PATH_TOOL",
                             "AC_CHECK_TOOL", "AC_CHECK_TOOLS", "AC_PATH_TOOLS"})


def _facts(calls: list[MacroCall], positions: Positions) -> Iterator[Item]:
    """One fact per switch, library, header or program check: its macro and what it names, spanning the call (a
    switch's actions are where a port puts its HIP twin's beside)."""
    for call in calls:
        if not call.args:
            continue
        if call.name in _SWITCHES:
            yield _fact(call, "autoconf-switch", call.args[0], positions)
        elif call.name in _HEADER_CHECKS or call.name == "AC_CHECK_LIB":
            yield _fact(call, "autoconf-check", f"{call.name} {call.args[0]}", positions)
        elif call.name == "AC_SEARCH_LIBS" and len(call.args) > 1:  # (function, libraries, ...)
            yield _fact(call, "autoconf-check", f"{call.name} {call.args[1]}", positions)
        elif call.name in _PROGRAM_CHECKS and len(call.args) > 1:
            yield _fact(call, "autoconf-check", f"{call.name} {call.args[1]}", positions)


def _fact(call: MacroCall, name: str, value: str, positions: Positions) -> Item:
    line, column = positions.at(call.start)
    return Item(FACT, name, line, column, value=value, end_line=positions.at(call.end)[0])


def autoconf_items(text: str) -> list[Item]:
    """The facts of an Autoconf input's macros and the items of the shell code configure runs."""
    positions = Positions(text)
    shell, calls = read_m4(text)
    found = shell_items(shell, positions.at)
    return [*_facts(calls, positions), *found, *_value_items(found), *_switch_tests(found)]


# `LIBS+=" -lcublas"`: bash's append, which the shell parser reads as a command of that name
_APPEND = re.compile(r"^([A-Za-z_]\w*)\+=(.*)$", re.S)
# a test of a CUDA switch's variable (`if test "x$with_cuda" = xyes`, `[ "$hypre_using_cublas" = yes ]`)
_TESTS = frozenset({"if", "elif", "test", "[", "while", "until"})
_SWITCH_VARIABLE = re.compile(r"\$\{?([A-Za-z_]\w*)")


def _values(found: list[Item]) -> Iterator[tuple[str, int, int]]:
    """(value, line, column) of each assignment, appends included."""
    for item in found:
        if item.kind == ENV:
            yield item.value, item.line, item.column
        elif item.kind == COMMAND and (append := _APPEND.match(item.name)):
            yield " ".join((append.group(2), *item.args)), item.line, item.column


def _value_items(found: list[Item]) -> Iterator[Item]:
    """The options inside quoted assignments (NVCCFLAGS="-O3 -arch=sm_70", LIBS+=" -lcudart"), which configure's
    shell sets as one word: an nvcc architecture flag once per value, and the options as the words of a command."""
    reported = {(item.line, item.column) for item in found if item.kind == FACT and item.name == "nvcc-arch-flag"}
    for value, line, column in _values(found):
        words = [(word, line, column) for word in value.split() if word.startswith("-")]
        if not words:
            continue
        if (line, column) not in reported:
            yield from itertools.islice(arch_flag_items(words), 1)
        yield Item(COMMAND, ":", line, column, args=tuple(w for w, _, _ in words), positions=((line, column),) * len(words))


def _switch_tests(found: list[Item]) -> Iterator[Item]:
    """A fact per shell test of a variable (its name as the value): where a HIP twin of a CUDA switch is tested."""
    for item in found:
        if item.kind == COMMAND and item.name in _TESTS:
            for name in dict.fromkeys(m.group(1) for arg in item.args for m in _SWITCH_VARIABLE.finditer(arg)):
                yield Item(FACT, "autoconf-switch", item.line, item.column, value=name)


@register(FileKind.AUTOCONF)
def parse_autoconf(source: SourceFile, text: str) -> ManifestDocument:
    """configure.ac / configure.in / *.m4: macro facts and the shell of their actions."""
    return ManifestDocument(source=source, text=text, manifest=autoconf_items(text))
