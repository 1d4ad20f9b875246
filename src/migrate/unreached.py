"""Headers a HIP build never compiles, seen through the project's own #include "..." lines: every file that includes
one does so inside an #if branch the HIP build rules out (`#ifdef CT2_WITH_FLASH_ATTN`, a macro only the CUDA branch
of the CMake file defines), or is itself a source only the CUDA build lists, or another such header. A header nobody
includes, or that the resolver cannot place, is compiled as far as this knows; pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from migrate import preproc
from migrate.compat_headers import HIP_INCLUDE, INCLUDE, Resolver

_HEADER = (".h", ".hpp", ".hh", ".hxx", ".cuh", ".inl", ".inc", ".tcc")
_DEPTH = 8  # includers followed up from one header


def headers(
    files: Mapping[str, Sequence[preproc.Directive]], settled: preproc.Settled,
    never_built: Callable[[str], bool] | None, paths: Iterable[str] = (),
) -> frozenset[str]:
    """The headers among FILES (each file's preprocessor lines, its quoted includes among them) that a HIP build
    never compiles under SETTLED's dead branches and the sources NEVER_BUILT says the CMake files list for CUDA only
    (PATHS: the tree's other files, which an include may name)."""
    resolve = Resolver(frozenset(files).union(paths))
    sites: dict[str, list[tuple[str, int]]] = {}
    for path, found in files.items():
        for directive in found:
            if directive.keyword in (INCLUDE, HIP_INCLUDE):
                target = resolve(path, directive.argument)
                if target is not None and target != path and target.endswith(_HEADER):
                    sites.setdefault(target, []).append((path, directive.line))
    memo: dict[str, bool] = {}
    def unreached(path: str, depth: int) -> bool:
        if path not in memo:
            memo[path] = False  # an include cycle, or too deep: compiled
            memo[path] = depth < _DEPTH and all(
                settled.is_dead(includer, line) or (never_built is not None and never_built(includer))
                or (includer in sites and unreached(includer, depth + 1))
                for includer, line in sites[path])
        return memo[path]

    return frozenset(path for path in sites if unreached(path, 0))
