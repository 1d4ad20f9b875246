"""Kernels whose whole body sits in one `#if __CUDA_ARCH__ >= 530` ... `#endif` with no #elif, and no #else but one that
only prints. hipcc defines no __CUDA_ARCH__ (hipcc -dM -E, host and device pass), so the condition is false there and
a ROCm build compiles an empty function: the kernel launches, returns at once and writes nothing, with no error."""

from __future__ import annotations

import re

from migrate.matchers.cuda_arch_fallback import arch_only_false
from migrate.parse.lexer import Lexed
from migrate.preproc import Directive

_ARCH = "__CUDA_ARCH__"
_EDITOR = "__INTELLISENSE__"
_WORD = re.compile(r"[A-Za-z_]\w*")
_ARCH_DEFINED = re.compile(r"\bdefined\s*\(?\s*__CUDA_ARCH__\s*\)?")
_COMPARED_BEFORE = re.compile(r"(?:<=|>=|==|!=|<|>)$")
_COMPARED_AFTER = re.compile(r"(?:<=|>=|==|!=|<|>)")
_OPEN = frozenset({"if", "ifdef", "ifndef"})
_LATER = frozenset({"elif", "elifdef", "elifndef"})
_MESSAGE = re.compile(r"printf\s*\(.*\)|return")
# The head of a function definition run on the GPU: a __global__ / __device__ qualifier, then a parameter list
# closed just before the body's brace (a const, noexcept or trailing return type allowed).
_DEVICE = re.compile(r"\b(?:__global__|__device__)\b")
_SIGNATURE_END = re.compile(r"\)\s*(?:const\b\s*)?(?:noexcept\b\s*)?(?:->\s*[\w:<>, *&]+)?$")
_CONDITIONAL = re.compile(r"\s*#\s*(?:if|ifdef|ifndef|elif|else|endif)\b")
_SHARED = re.compile(r"\s*(?:extern\s+)?__shared__\b[^;{}]*;\s*$")
_HEAD_LINES = 40  # how far up a function's head is read
_CONTROL = re.compile(r"^\s*(?:if|for|while|switch|do|else)\b")


def vanishing_bodies(lexed: Lexed) -> frozenset[int]:
    """The #if lines that open the whole body of a __global__ / __device__ function: nothing but blank lines and
    other conditionals between the function's `{` and the #if, nothing between the #endif and its `}`, no #elif in
    the chain and no #else but one that only prints a message or returns, and a condition that compares
    __CUDA_ARCH__, names nothing for HIP and is false once __CUDA_ARCH__ is undefined."""
    if _ARCH in lexed.defined and _sets_arch(lexed):
        return frozenset()  # the file gives __CUDA_ARCH__ a value of its own (ggml's HIP header sets 1300)
    found: set[int] = set()
    lines = lexed.code.split("\n")
    for opening, other, closing in _plain_chains(lexed):
        if not _arch_alone(opening.argument) or not _fills_device_body(lines, opening.line, closing):
            continue
        if other is None or _only_message(lines, other, closing):
            found.add(opening.line)
    return frozenset(found)


def _arch_alone(argument: str) -> bool:
    """ARGUMENT is false without __CUDA_ARCH__ and tests nothing else: every other name is a number compared with it
    (`__CUDA_ARCH__ >= GGML_CUDA_CC_VOLTA`), never a switch of the build (`defined(USE_PDL) && ...`, `... && HOPPER`)
    that can leave the body out on NVIDIA GPUs too."""
    if not arch_only_false(argument):
        return False
    rest = _ARCH_DEFINED.sub(" ", argument)
    for word in _WORD.finditer(rest):
        if word.group() == _ARCH:
            continue
        before = rest[: word.start()].rstrip(" \t(")
        after = rest[word.end() :].lstrip(" \t)")
        if not (_COMPARED_BEFORE.search(before) or _COMPARED_AFTER.match(after)):
            return False
    return True


def _sets_arch(lexed: Lexed) -> bool:
    """The file #defines __CUDA_ARCH__ outside a branch for an editor (`#ifdef __INTELLISENSE__`, which no compiler
    sets)."""
    open_tests: list[str] = []
    for item in lexed.directives:
        if item.keyword in _OPEN:
            open_tests.append(item.argument)
        elif item.keyword == "endif" and open_tests:
            open_tests.pop()
        elif item.keyword == "define" and item.argument.split()[:1] == [_ARCH]:
            if not any(_EDITOR in test for test in open_tests):
                return True
    return False


def _plain_chains(lexed: Lexed) -> list[tuple[Directive, int | None, int]]:
    """(#if directive, #else line or None, #endif line) of each chain opened by a plain #if, with no #elif."""
    found: list[tuple[Directive, int | None, int]] = []
    stack: list[tuple[Directive, int | None, bool]] = []
    for item in lexed.directives:
        if item.keyword in _OPEN:
            stack.append((item, None, item.keyword == "if"))
        elif stack and item.keyword == "else":
            opening, _, plain = stack[-1]
            stack[-1] = (opening, item.line, plain)
        elif stack and item.keyword in _LATER:
            stack[-1] = (stack[-1][0], stack[-1][1], False)
        elif stack and item.keyword == "endif":
            opening, other, plain = stack.pop()
            if plain:
                found.append((opening, other, item.line))
    return found


def _only_message(lines: list[str], start: int, end: int) -> bool:
    """Lines START+1..END-1 (an #else body, strings blanked) hold nothing but printf calls and bare returns: the
    kernel still computes nothing on ROCm. An assert, a trap or an abort fails loudly and is not this."""
    body = " ".join(lines[n - 1] for n in range(start + 1, end) if not lines[n - 1].lstrip().startswith("#"))
    return all(_MESSAGE.fullmatch(s.strip()) for s in re.split(r"[;{}]", body) if s.strip())


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
    """The first 0-based line from INDEX on (going by STEP) that holds anything but blanks and conditionals (the
    #endif of a signature chosen by #if, an outer #if around the gate); going up, a __shared__ declaration too (it
    computes nothing)."""
    while 0 <= index < len(lines):
        text = lines[index]
        if text.strip() and not _CONDITIONAL.match(text) and not (step < 0 and _SHARED.match(text)):
            return index
        index += step
    return None
