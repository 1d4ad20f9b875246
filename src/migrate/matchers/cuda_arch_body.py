"""Kernels whose whole body sits in one `#if __CUDA_ARCH__ >= 530` ... `#endif` with no #else or #elif. hipcc defines
no __CUDA_ARCH__ (hipcc -dM -E, host and device pass), so the condition is false there and a ROCm build compiles an
empty function: the kernel launches, returns at once and writes nothing, with no diagnostic."""

from __future__ import annotations

import re

from migrate.matchers.cuda_arch_fallback import arch_only_false
from migrate.parse.lexer import Lexed
from migrate.preproc import Directive

_OPEN = frozenset({"if", "ifdef", "ifndef"})
_LATER = frozenset({"elif", "elifdef", "elifndef", "else"})
# The head of a function definition run on the GPU: a __global__ / __device__ qualifier, then a parameter list
# closed just before the body's brace (a const, noexcept or trailing return type allowed).
_DEVICE = re.compile(r"\b(?:__global__|__device__)\b")
_SIGNATURE_END = re.compile(r"\)\s*(?:const\b\s*)?(?:noexcept\b\s*)?(?:->\s*[\w:<>, *&]+)?$")
_HEAD_LINES = 40  # how far up a function's head is read
_CONTROL = re.compile(r"^\s*(?:if|for|while|switch|do|else)\b")


def vanishing_bodies(lexed: Lexed) -> frozenset[int]:
    """The #if lines that open the whole body of a __global__ / __device__ function: nothing but blank lines
    between the function's `{` and the #if, nothing between the #endif and its `}`, no #else / #elif in the chain,
    and a condition that compares __CUDA_ARCH__, names nothing for HIP and is false once __CUDA_ARCH__ is
    undefined."""
    found: set[int] = set()
    lines = lexed.code.split("\n")
    for opening, closing in _bare_chains(lexed):
        if arch_only_false(opening.argument) and _fills_device_body(lines, opening.line, closing):
            found.add(opening.line)
    return frozenset(found)


def _bare_chains(lexed: Lexed) -> list[tuple[Directive, int]]:
    """(#if directive, #endif line) of each chain opened by a plain #if with no #elif / #else."""
    found: list[tuple[Directive, int]] = []
    stack: list[tuple[Directive, bool]] = []
    for item in lexed.directives:
        if item.keyword in _OPEN:
            stack.append((item, item.keyword == "if"))
        elif stack and item.keyword in _LATER:
            stack[-1] = (stack[-1][0], False)
        elif stack and item.keyword == "endif":
            opening, bare = stack.pop()
            if bare:
                found.append((opening, item.line))
    return found


def _fills_device_body(lines: list[str], first: int, last: int) -> bool:
    """Lines FIRST..LAST (1-based, the #if and the #endif) are all that a device function's braces hold."""
    above = _next_code(lines, first - 2, -1)
    below = _next_code(lines, last, 1)
    if above is None or below is None or not lines[below].lstrip().startswith("}"):
        return False
    head = lines[above].rstrip()
    if not head.endswith("{"):
        return False
    parts = [head[:-1]]
    index = above
    while not any(mark in parts[0] for mark in ";{}") and index > 0 and above - index < _HEAD_LINES:
        index -= 1
        if not lines[index].lstrip().startswith("#"):
            parts.insert(0, lines[index])
    text = "\n".join(parts)
    text = text[max(text.rfind(";"), text.rfind("{"), text.rfind("}")) + 1 :]
    return bool(_DEVICE.search(text)) and bool(_SIGNATURE_END.search(text.rstrip())) and not _CONTROL.match(text)


def _next_code(lines: list[str], index: int, step: int) -> int | None:
    """The first 0-based line from INDEX on (going by STEP) that holds anything but blanks."""
    while 0 <= index < len(lines):
        if lines[index].strip():
            return index
        index += step
    return None
