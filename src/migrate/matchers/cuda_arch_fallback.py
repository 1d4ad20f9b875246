"""Branches a HIP build skips for a portable fallback: `#if __CUDA_ARCH__ >= 350` (PTX) ... `#else` (plain C++) ...
`#endif`. hipcc defines no __CUDA_ARCH__ (hipcc -dM -E, host and device pass), so the comparison is false there and
the #else is what a ROCm build compiles: the branch is an NVIDIA fast path, not code the port must rewrite."""

from __future__ import annotations

import re

from migrate import preproc
from migrate.parse.lexer import Lexed

_ARCH = "__CUDA_ARCH__"
_NO_ARCH: preproc.Table = {_ARCH: preproc.Macro(preproc.UNDEFINED, True)}
_CONDITIONALS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif"})
# What an #else holds when it is no fallback: an abort, a message, an empty result, or asm again.
_STUB = re.compile(
    r"(?:assert|static_assert|__trap|__builtin_trap|__builtin_unreachable|abort|printf|\w*(?:ERROR|Error|error)\w*)\b.*"
    r"|return\s*(?:0|false|nullptr|\{\s*\}|\w+\s*\(\s*\))?|\(void\)\s*\w+|break|continue",
    re.S,
)
_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b")
Ranges = tuple[tuple[int, int], ...]
ARCH_FALLBACK_NOTE = (
    "Here the asm sits in an #if that compares __CUDA_ARCH__ (hipcc defines no __CUDA_ARCH__, so the test is false "
    "on ROCm) and its #else holds portable code: a ROCm build compiles that fallback and never sees this PTX. "
    "Nothing stops the build; an AMD fast path (a __builtin_amdgcn_* builtin) is a performance choice."
)


def arch_fallbacks(lexed: Lexed) -> Ranges:
    """(first, last) body lines of each #if / #elif branch that only a __CUDA_ARCH__ comparison keeps from a HIP
    build, in a chain whose #else holds a fallback (code that is not an abort, a message or asm). A condition that
    names HIP, or that a repository macro could decide, is left to the preprocessor walk (guarded code)."""
    found: list[tuple[int, int]] = []
    stack: list[_Chain] = []
    lines = lexed.code.split("\n")
    conditionals = {d.line for d in lexed.directives if d.keyword in _CONDITIONALS}
    for item in lexed.directives:
        if item.keyword not in _CONDITIONALS:
            continue
        if item.keyword in ("if", "ifdef", "ifndef"):
            stack.append(_Chain(item.line if item.keyword == "if" and arch_only_false(item.argument) else None))
        elif stack and item.keyword == "endif":
            chain = stack.pop()
            chain.close(item.line)
            if chain.fallback is not None and _is_fallback(lines, chain.fallback, item.line, conditionals):
                found.extend(chain.skipped)
        elif stack:
            chain = stack[-1]
            chain.close(item.line)
            if item.keyword == "else":
                chain.fallback = item.line
            elif item.keyword == "elif" and arch_only_false(item.argument):
                chain.start = item.line
    return tuple(found)


class _Chain:
    """One #if chain: the branch being read when it is a candidate, the candidates read, the #else line."""

    def __init__(self, start: int | None) -> None:
        self.start = start
        self.skipped: list[tuple[int, int]] = []
        self.fallback: int | None = None

    def close(self, line: int) -> None:
        if self.start is not None and self.fallback is None:
            self.skipped.append((self.start + 1, line - 1))
        self.start = None


def arch_only_false(argument: str) -> bool:
    """ARGUMENT compares __CUDA_ARCH__, names nothing for HIP, and is false once __CUDA_ARCH__ is undefined."""
    if _ARCH not in argument or any(preproc.tests_hip(n) for n in re.findall(r"[A-Za-z_]\w*", argument)):
        return False
    return preproc.evaluate(argument, _NO_ARCH)[0] is False


def _is_fallback(lines: list[str], start: int, end: int, conditionals: set[int]) -> bool:
    """Lines START+1..END-1 (an #else body, comments and strings blanked; the lines of CONDITIONALS, the file's
    #if/#else/#endif lines, left out) hold code other than an abort, a message, an empty return or asm: a #define
    counts (the fallback of a macro)."""
    body = " ".join(lines[n - 1] for n in range(start + 1, end) if n not in conditionals and n - 1 < len(lines))
    if _ASM.search(body):
        return False
    statements = [s.strip() for s in re.split(r"[;{}]", body) if s.strip()]
    return any(not _STUB.fullmatch(s) for s in statements)
