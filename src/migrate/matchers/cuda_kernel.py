"""CUDA kernels, on tokens in every file: definitions (`__global__ ... name(...) {`) at the kernel's name, and
`<<<...>>>` launches at the kernel launched, in host or device code by the qualifiers of the functions around them."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.cuda_common import in_directive, per_text
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed, is_word_char

_FORMS = ("definition", "launch")
_GLOBAL = frozenset({"__global__"})
_WHERE = ("any", "device", "host")
_PARENS = re.compile(r"[()]")


def _validate(params: Mapping[str, Any]) -> None:
    if params.get("form") not in _FORMS:
        raise ValueError(f"cuda-kernel needs 'form': one of {', '.join(_FORMS)}")
    if params.get("where", "any") not in _WHERE:
        raise ValueError(f"'where' must be one of {', '.join(_WHERE)}")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return ["__global__"] if params["form"] == "definition" else ["<<<"]


def kernel_hits(lexed: Lexed, _text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """`form: definition`: each __global__ function defined (with a body), at its name; `form: launch`: each
    `<<<` call, at its callee, in host or device code (`where`). Once per line; never in a #define. Read on the
    lexer's code, comments blanked, whichever path calls: a `)`, `;` or `{` in a comment of a kernel's head (a
    parameter commented out, `// grid: (B, H); block: 128` before the body) is no part of it."""
    code = lexed.code
    if params["form"] == "definition":
        places = _kernel_definitions(lexed, code)
    else:
        where = params.get("where", "any")
        places = (
            (_name_before(code, offset), _call_end(code, offset)) for offset in lexed.launches
            if where == "any" or lexed.in_device_code(offset) == (where == "device")
        )
    seen: set[int] = set()
    for place, end in places:
        if place is None:
            continue
        line, column = lexed.point(place[0])
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, end_line=lexed.point(end)[0], symbol=" ".join(place[1].split()) or None)


@register("cuda-kernel", validate=_validate, needles=_needles, identifiers=lambda _p: _GLOBAL, tokens=kernel_hits)
def match_cuda_kernel(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each kernel defined, or each launch in the code `where` asks for; once per line."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    lexed = doc.lexed_for(_GLOBAL)
    return kernel_hits(lexed, lexed.code, params)


def _call_end(code: str, launch: int) -> int:
    """The offset of the `)` closing the arguments of the launch whose `<<<` is at LAUNCH (else of `>>>`)."""
    found = per_text(code, _chevrons)
    next_chevrons = bisect.bisect_left(found, launch)
    if next_chevrons == len(found):
        return launch
    chevrons = found[next_chevrons]
    ends = per_text(code, _argument_ends)
    if chevrons not in ends:  # every `<<<` before the same `>>>` asks again
        ends[chevrons] = _arguments_end(code, chevrons)
    return ends[chevrons]


def _arguments_end(code: str, chevrons: int) -> int:
    """The offset of the `)` closing the arguments after the `>>>` at CHEVRONS (else CHEVRONS)."""
    index = chevrons + 3
    while index < len(code) and code[index].isspace():
        index += 1
    if index == len(code) or code[index] != "(":
        return chevrons
    close = per_text(code, _closing_parens).get(index, -1)
    return close if index < close < index + 20000 else chevrons


def _argument_ends(_code: str) -> dict[int, int]:
    """Filled by _call_end: the end of the launch arguments after each `>>>`."""
    return {}


def _chevrons(code: str) -> list[int]:
    """Every offset where `>>>` starts (overlapping ones too, as str.find sees them), in order."""
    found, start = [], code.find(">>>")
    while start != -1:
        found.append(start)
        start = code.find(">>>", start + 1)
    return found


def _closing_parens(code: str) -> dict[int, int]:
    """Each `(` that is closed, to its `)`: one pass for the arguments of every launch."""
    closing: dict[int, int] = {}
    opened: list[int] = []
    for match in _PARENS.finditer(code):
        if match.group() == "(":
            opened.append(match.start())
        elif opened:
            closing[opened.pop()] = match.start()
    return closing


_NOT_A_NAME = frozenset({"__launch_bounds__", "__attribute__", "alignas", "__declspec", "decltype", "noexcept",
                         "__cluster_dims__", "__maxnreg__"})


def _kernel_definitions(lexed: Lexed, code: str) -> Iterator[tuple[tuple[int, str] | None, int]]:
    """(name, offset) of the kernel each `__global__` defines; one in the head of the one before belongs to the
    same declaration (and is not read again: a head of 20,000 `__global__` words is read once)."""
    head_end = -1
    for offset in lexed.offsets.get("__global__", ()):
        if offset >= head_end:
            name, head_end = _kernel_name(code, offset)
            yield name, offset


def _kernel_name(code: str, offset: int) -> tuple[tuple[int, str] | None, int]:
    """(start, text) of the name of the function the `__global__` at OFFSET qualifies, when a body follows: the
    last top-level `(...)` group of its head that follows a name (not __launch_bounds__ and the like); and the
    offset where its head ends."""
    if in_directive(code, offset):
        return None, offset  # `#define KERNEL __global__`: not a function until the macro is used
    found = None
    depth = 0
    end = min(len(code), offset + 20000)
    for index in range(offset, end):
        char = code[index]
        if char == "(":
            if depth == 0:
                name = _name_before(code, index)
                if name is not None and name[1].split("<")[0].split("::")[-1].strip() not in _NOT_A_NAME:
                    found = name
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and char in "{;}":
            return (found if char == "{" else None), index  # a body, or only a declaration
    return None, end


def _name_before(code: str, offset: int) -> tuple[int, str] | None:
    """The (possibly qualified, possibly templated) name that ends right before OFFSET: `ns::kernel<T>`."""
    index = _blank_before(code, offset)
    end = index
    while True:
        if index > 0 and code[index - 1] == ">":
            index = _template_start(code, index - 1)
            if index < 0:
                return None
            index = _blank_before(code, index)
        word_end = index
        while index > 0 and is_word_char(code[index - 1]):
            index -= 1
        if index == word_end or code[index].isdigit():
            return None
        before = index
        while before > 0 and code[before - 1] in " \t":
            before -= 1
        if code[before - 2 : before] != "::" or before < 2:
            return index, code[index:end]
        index = before - 2
        while index > 0 and code[index - 1] in " \t":
            index -= 1
        if index == 0 or not (is_word_char(code[index - 1]) or code[index - 1] == ">"):
            return before - 2, code[before - 2 : end]  # `::kernel`: the global one


def _blank_before(code: str, offset: int) -> int:
    """OFFSET moved back over blanks and line continuations."""
    while offset > 0 and (code[offset - 1].isspace() or code[offset - 1] == "\\"):
        offset -= 1
    return offset


def _template_start(code: str, close: int) -> int:
    """The offset of the `<` that the `>` at CLOSE ends, or -1."""
    depth = 0
    for index in range(close, max(-1, close - 2000), -1):
        char = code[index]
        if char == ">":
            depth += 1
        elif char == "<":
            depth -= 1
            if depth == 0:
                return index
        elif char in ";{}":
            return -1
    return -1
