"""A project's own HIP compat headers seen through its #include "..." lines: the macros each C/C++/CUDA file gets
from them (`#define __shfl_xor_sync(mask, v, l) __shfl_xor(v, l)` inside `#if defined(USE_ROCM)` of a header the
file or its includer includes, or in a header included only under a HIP guard) and the device functions such a
guard defines (`__device__ unsigned umin(unsigned a, unsigned b)`), worked out once per scan from every file's
preprocessor lines; pure."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from migrate import preproc
from migrate.lazyre import lazy_regex

# The entries scan.file adds to a file's preprocessor lines: a quoted #include (its path), one inside a block that
# tests a HIP macro, and the name of a macro #defined inside such a block.
INCLUDE, HIP_INCLUDE, HIP_DEFINE = "include", "include-hip", "define-hip"
# The warp-size checks that read a call or name the file's own HIP compat macros redefine as handled
# (CudaDocument.compat_names): the same macros from another header count the same.
CHECKS = frozenset({"full-mask", "narrow-mask", "size-name-use", "literal-size"})
_DEPTH = 6  # nested includes followed from one file
_NAME = lazy_regex(r"[A-Za-z_]\w*")
# a device function a HIP-only branch defines (`__device__ __forceinline__ unsigned umin(unsigned a, ...) {`, over
# lines with its template head): the compat layer gives the CUDA name a HIP body, as a macro does
_DEVICE_FUNCTION = lazy_regex(
    r"(?:^|[;}])\s*(?:template\s*<[^<>{};]*>\s*)?((?:(?:static|inline|__inline__|__forceinline__|constexpr|"
    r"__device__|__host__)\s+)+)[\w:<>,*&\s]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(?:const\s*)?\{", re.M)


def entries(
    text: str, includes: Iterable[tuple[str, int]], directives: Sequence[preproc.Directive],
    line_of: Callable[[int], int],
) -> tuple[preproc.Directive, ...]:
    """A file's quoted #include lines and the macros it #defines in branches only a HIP build compiles, as the extra
    preprocessor lines the project pass reads."""
    ranges = _hip_only(directives) if any(preproc.tests_hip(n) for d in directives for n in _NAME.findall(
        d.argument) if d.keyword in _TESTS) else []
    found: list[preproc.Directive] = []
    for path, offset in includes:
        if text.startswith('"', offset):
            line = line_of(offset)
            found.append(preproc.Directive(line, HIP_INCLUDE if _within(ranges, line) else INCLUDE, path))
    for directive in directives if ranges else ():
        name = _NAME.match(directive.argument) if directive.keyword == "define" else None
        if name and _within(ranges, directive.line):
            found.append(preproc.Directive(directive.line, HIP_DEFINE, name.group()))
    if ranges and "__device__" in text:
        found.extend(_device_functions(text, ranges))
    return tuple(found)


def _device_functions(text: str, ranges: Sequence[tuple[int, int]]) -> Iterator[preproc.Directive]:
    """The device functions defined between the lines of RANGES (HIP-only branches), as HIP_DEFINE entries."""
    lines = text.split("\n", max(end for _, end in ranges))  # no further than the last range: headers can be long
    for start, end in ranges:
        block = "\n".join(lines[start : end - 1])  # the lines strictly between the branch's directives
        for match in _DEVICE_FUNCTION.finditer(block) if "__device__" in block else ():
            if "__device__" in match.group(1):
                yield preproc.Directive(start + 1 + block.count("\n", 0, match.start(2)), HIP_DEFINE, match.group(2))


_TESTS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})


def answers(match: Mapping[str, Any]) -> bool:
    """Whether a finding of a rule with this MATCH is answered where the project's compat code defines its symbol
    for HIP: the warp-size checks (a macro that redefines the call) and the CUDA names HIP does not declare."""
    if match.get("matcher") == "warp-size":
        return match.get("check") in CHECKS
    return match.get("matcher") == "cuda-api" and match.get("with_hip") is False


def _within(ranges: Sequence[tuple[int, int]], line: int) -> bool:
    return any(start <= line <= end for start, end in ranges)


def _hip_only(directives: Sequence[preproc.Directive]) -> list[tuple[int, int]]:
    """The line ranges of #if branches a HIP build compiles and a CUDA build does not (`#if defined(USE_ROCM)`, the
    #else of `#ifndef __HIP_PLATFORM_AMD__`; never the #else of `#ifdef USE_ROCM`, which is the CUDA build's)."""
    ranges: list[tuple[int, int]] = []
    stack: list[list[Any]] = []  # per open #if: [taken under HIP, under CUDA (None: maybe), start of a HIP-only branch]
    for item in directives:
        if item.keyword in ("if", "ifdef", "ifndef"):
            stack.append([False, False, None])
        elif item.keyword not in ("elif", "elifdef", "elifndef", "else", "endif") or not stack:
            continue
        frame = stack[-1]
        if frame[2] is not None:
            ranges.append((frame[2], item.line))
            frame[2] = None
        if item.keyword == "endif":
            stack.pop()
            continue
        hip, cuda = _branch(item)
        if frame[0] is False and hip is True and (frame[1] is True or (frame[1] is False and cuda is False)):
            frame[2] = item.line
        frame[0] = True if hip is True or frame[0] is True else (None if hip is None or frame[0] is None else False)
        frame[1] = True if cuda is True or frame[1] is True else (None if cuda is None or frame[1] is None else False)
    return ranges


def _branch(item: preproc.Directive) -> tuple[bool | None, bool | None]:
    """Whether a HIP build and a CUDA build take this branch, if the earlier ones are not taken (None: unknown)."""
    if item.keyword == "else":
        return True, True
    argument = item.argument.split()[0] if item.keyword.endswith(("ifdef", "ifndef")) and item.argument else ""
    text = (f"defined({argument})" if item.keyword.endswith("ifdef") else f"!defined({argument})") if argument else (
        item.argument)
    hip_names = {n for n in _NAME.findall(text) if preproc.tests_hip(n)}
    cuda = {n: preproc.Macro(preproc.UNDEFINED, True) for n in hip_names}
    return preproc.evaluate(text, {})[0], preproc.evaluate(text, cuda)[0]


def seen(
    files: Mapping[str, Sequence[preproc.Directive]], paths: Iterable[str] = (),
    dead: Callable[[str, int], bool] | None = None,
) -> dict[str, frozenset[str]]:
    """Per file (FILES: those with preprocessor lines; PATHS: every other), the names its project's HIP compat macros
    give a HIP meaning there: those of the headers it includes (following their includes), else those every file that
    includes it gets, itself or from its own includers (an include on a line DEAD says a HIP build never compiles
    does not count). Empty where no file has any (PATHS then never read)."""
    if not any(d.keyword in (HIP_DEFINE, HIP_INCLUDE) for found in files.values() for d in found):
        return {}
    resolve = Resolver(frozenset(files).union(paths))
    memo: dict[tuple[str, bool], frozenset[str]] = {}
    down = {path: _down(path, files, resolve, memo, everything=False, depth=0) for path in files}
    includers: dict[str, list[str]] = {}
    for path, found in files.items():
        for directive in found:
            target = resolve(path, directive.argument) if directive.keyword in (INCLUDE, HIP_INCLUDE) else None
            if target is not None and target != path and not (dead is not None and dead(path, directive.line)):
                includers.setdefault(target, []).append(path)
    got: dict[str, frozenset[str]] = {}

    def names(path: str, depth: int) -> frozenset[str]:
        if path not in got:
            got[path] = down.get(path, frozenset())  # an include cycle, or too deep: its own only
            above = [names(p, depth + 1) for p in includers.get(path, ())] if depth < _DEPTH else []
            got[path] = got[path] | (frozenset.intersection(*above) if above else frozenset())
        return got[path]

    result = {}
    for path in down.keys() | includers.keys():
        if found_names := names(path, 0):
            result[path] = found_names
    return result


def _down(
    path: str, files: Mapping[str, Sequence[preproc.Directive]], resolve: Resolver,
    memo: dict[tuple[str, bool], frozenset[str]], *, everything: bool, depth: int,
) -> frozenset[str]:
    """The compat names PATH gets from itself and what it includes; EVERYTHING: it is included only by a HIP build,
    so each macro it defines is one."""
    key = (path, everything)
    if key in memo:
        return memo[key]
    memo[key] = frozenset()  # an include cycle ends here
    found = files.get(path, ())
    wanted = (HIP_DEFINE, "define") if everything else (HIP_DEFINE,)
    names = {_name(d.argument) for d in found if d.keyword in wanted}
    for directive in found:
        if directive.keyword in (INCLUDE, HIP_INCLUDE) and depth < _DEPTH:
            target = resolve(path, directive.argument)
            if target is not None:
                names |= _down(target, files, resolve, memo, everything=everything or directive.keyword == HIP_INCLUDE,
                               depth=depth + 1)
    memo[key] = frozenset(names - {""})
    return memo[key]


def _name(argument: str) -> str:
    match = _NAME.match(argument)
    return match.group() if match else ""


class Resolver:
    """A quoted include's file in the repository: beside the includer, from the root, or the one path that ends so."""

    def __init__(self, known: frozenset[str]) -> None:
        self.known = known
        self.by_name: dict[str, list[str]] = {}
        for path in self.known:
            self.by_name.setdefault(posixpath.basename(path), []).append(path)

    def __call__(self, includer: str, include: str) -> str | None:
        for candidate in (posixpath.join(posixpath.dirname(includer), include), include):
            candidate = posixpath.normpath(candidate)
            if candidate in self.known:
                return candidate
        ending = [p for p in self.by_name.get(posixpath.basename(include), ()) if p.endswith("/" + include)]
        return ending[0] if len(ending) == 1 else None
