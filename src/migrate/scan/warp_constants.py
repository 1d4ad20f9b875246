"""Warp-size constants that a C++ declaration fixes (`const int WARP_SIZE = 32;` in a shared header): each file's
declarations travel to the project pass as pseudo preprocessor lines, read there as `#define WARP_SIZE 32` is, so
a use of the name in another file is low, not info."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from migrate import preproc
from migrate.lazyre import lazy_regex
from migrate.matchers.cuda_warp import is_size_name

WARP_CONSTANT = "warp-constant"  # the pseudo line's keyword; its argument is "NAME VALUE", "NAME ?" under an #if

# `static constexpr uint32_t WARP_WIDTH = 32;`, `const int WARP_SIZE = 32;`: qualifiers with const or constexpr
# among them, an integer type, the name and its value (on the code view: no comments or strings)
_DECLARATION = lazy_regex(
    r"^[ \t]*((?:(?:static|inline|constexpr|const|__device__|__host__|__constant__)[ \t]+)+)"
    r"(?:(?:unsigned|signed)[ \t]+)?(?:std::)?(?:int|long|short|unsigned|size_t|u?int(?:8|16|32|64)_t|uint|auto)"
    r"[ \t]+([A-Za-z_]\w*)[ \t]*=[ \t]*([^;{}\n]{1,40});", re.M)
_OPENERS = frozenset({"if", "ifdef", "ifndef"})


def declarations(code: str, directives: Sequence[preproc.Directive],
                 line_of: Callable[[int], int]) -> tuple[preproc.Directive, ...]:
    """The warp-size constants CODE declares, as WARP_CONSTANT lines (value "?" where an #if other than the
    include guard encloses the declaration: a per-platform value, never a fixed one)."""
    if "arp" not in code and "ARP" not in code:  # warpSize, WARP_SIZE, kWarpSize, THREADS_PER_WARP
        return ()
    found: list[preproc.Directive] = []
    for match in _const_lines(code):
        qualifiers, name, value = match.groups()
        if "const" not in qualifiers or not is_size_name(name):
            continue
        line = line_of(match.start(2))
        found.append(preproc.Directive(line, WARP_CONSTANT, f"{name} {'?' if _enclosed(directives, line) else value.strip()}"))
    return tuple(found)


def _const_lines(code: str) -> Iterator[re.Match[str]]:
    """_DECLARATION's matches in CODE, tried only at the start of each line that holds `const` (a match lies in
    one line and starts it, and one without `const` in its qualifiers is no constant; the regex searched over the
    whole code tries every position)."""
    at = code.find("const")
    while at >= 0:
        match = _DECLARATION.match(code, code.rfind("\n", 0, at) + 1)
        if match is not None:
            yield match
        end = code.find("\n", at)
        at = code.find("const", end) if end >= 0 else -1


def _enclosed(directives: Sequence[preproc.Directive], line: int) -> bool:
    """LINE lies inside an #if block other than the file's include guard."""
    depth = 0
    for index, directive in enumerate(directives):
        if directive.line >= line:
            break
        if directive.keyword in _OPENERS and not _guard(directives, index):
            depth += 1
        elif directive.keyword == "endif" and depth:
            depth -= 1
    return depth > 0


def _guard(directives: Sequence[preproc.Directive], index: int) -> bool:
    """The #ifndef at INDEX is the include guard: the file's first conditional, its name #defined next."""
    opener = directives[index]
    if opener.keyword != "ifndef" or any(d.keyword in _OPENERS for d in directives[:index]):
        return False
    after = directives[index + 1] if index + 1 < len(directives) else None
    return after is not None and after.keyword == "define" and after.argument.split()[:1] == opener.argument.split()[:1]

