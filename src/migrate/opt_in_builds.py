"""Code only an off-by-default build option builds: `option(WITH_CUDNN "..." OFF)` whose `if(WITH_CUDNN)` branch
defines a macro (`add_definitions(-DWITH_CUDNN_IMPL)`) or lists sources, or a Makefile switch left at 0 (`CUDNN=0`)
whose `ifeq ($(CUDNN),1)` block adds `-DCUDNN`. The lines under `#ifdef` of such a macro, the sources listed only
there, and the headers only they include are an add-on the user opts into when configuring: the default build (and
so the ROCm one) never compiles them. Read from the repository's files; nothing is run."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from migrate.bounded import read_text
from migrate.discover import SKIP_DIRS
from migrate.lazyre import lazy_regex
from migrate.parse import ParseError

_MAX_FILE_BYTES = 1_000_000

# a larger tree is not read for includes (every C/C++ file, in the parent, after the workers: ~1 s for CUTLASS +
# CCCL's 10,900): its headers then stay required
_MAX_FILES = 5_000
_C_SUFFIXES = frozenset({"cu", "cuh", "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "inl", "ipp", "tpp"})
_HEADER_SUFFIXES = frozenset({"cuh", "h", "hh", "hpp", "hxx", "inl", "ipp", "tpp"})
_OFF = frozenset({"OFF", "FALSE", "NO", "N", "0", "IGNORE", "NOTFOUND"})
_SCOPES = frozenset({"PRIVATE", "PUBLIC", "INTERFACE"})


@dataclass(frozen=True)
class OptIn:
    """What only off-by-default build options compile: line ranges by file, and whole files (sources and headers)."""

    ranges: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    files: frozenset[str] = frozenset()

    def holds(self, path: str, line: int) -> bool:
        """The line LINE of PATH is compiled only when the user turns an off-by-default option on."""
        return path in self.files or any(start <= line <= end for start, end in self.ranges.get(path, ()))


def opt_in(root: Path, build_dirs: Iterable[str], paths: Iterable[str], ahead: Ahead | None = None) -> OptIn:
    """OptIn of the tree at ROOT, read from the CMakeLists.txt of the root and of BUILD_DIRS, for the C/C++/CUDA files
    of PATHS (those with findings): their `#ifdef` ranges, and whether each is a source or header only opted-in code
    builds. AHEAD, what read_ahead read of the same tree and BUILD_DIRS, stands in for the files it read."""
    macros, sources = ahead.options if ahead else _options(root, build_dirs)
    wanted = {p for p in paths if _suffix(p) in _C_SUFFIXES}
    if not (macros or sources) or not wanted:
        return OptIn()
    ranges = {p: r for p in wanted if (r := ahead.ranges.get(p, ()) if ahead and p in ahead.read
                                       else _file_ranges(root, p, macros))}
    files = set(sources)
    headers = {p for p in wanted if _suffix(p) in _HEADER_SUFFIXES and p not in files}
    if headers:
        files |= (ahead.only if ahead else _included_only_by(root, files, macros)) & headers
    return OptIn(ranges=ranges, files=frozenset(files & wanted))


@dataclass(frozen=True)
class Ahead:
    """What opt_in reads of a tree before its findings are known: the opted macros and sources, the `#ifdef` ranges
    of the C/C++/CUDA files READ (those with none left out), and the headers only opted code includes."""

    options: tuple[frozenset[str], frozenset[str]]
    read: frozenset[str] = frozenset()
    ranges: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    only: frozenset[str] = frozenset()


def read_ahead(root: Path, build_dirs: Iterable[str], paths: Iterable[str]) -> Ahead:
    """opt_in's reads of the tree at ROOT for every C/C++/CUDA file of PATHS (a scan's files, while its workers
    run: the parent reads them no more once the findings are in)."""
    macros, sources = _options(root, build_dirs)
    if not (macros or sources):
        return Ahead((macros, sources))
    read = frozenset(p for p in paths if _suffix(p) in _C_SUFFIXES)
    ranges = {p: r for p in read if (r := _file_ranges(root, p, macros))}
    return Ahead((macros, sources), read, ranges, frozenset(_included_only_by(root, set(sources), macros)))


def _options(root: Path, build_dirs: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(macros, sources) only off-by-default options of the CMake files and Makefiles of ROOT and BUILD_DIRS
    compile."""
    directories = sorted({"", *build_dirs})
    cmake = {d: text for d in directories if (text := _read(root, d, "CMakeLists.txt"))}
    makefiles = [text for d in directories for name in _MAKEFILES if (text := _read(root, d, name))]
    opted: tuple[set[str], set[str], set[str], set[str]] = (set(), set(), set(), set())
    for found in [_cmake_opted(cmake), *map(_make_opted, makefiles)]:
        for into, more in zip(opted, found):
            into |= more
    return frozenset(opted[0] - opted[1]), frozenset(opted[2] - opted[3])  # one also set outside is no add-on


def _file_ranges(root: Path, path: str, macros: Iterable[str]) -> tuple[tuple[int, int], ...]:
    text = _read(root, path)
    return _ranges(text, macros) if text else ()


def _cmake_opted(cmake: Mapping[str, str]) -> tuple[set[str], set[str], set[str], set[str]]:
    """_opted over the CMake files CMAKE (by directory), for their off-by-default options."""
    opted: tuple[set[str], set[str], set[str], set[str]] = (set(), set(), set(), set())
    if not any("option" in text.lower() for text in cmake.values()):
        return opted
    parsed = {d: found for d, text in cmake.items() if (found := _commands(text))}
    options = {w[0] for found in parsed.values() for name, w in found
               if name == "option" and w and (len(w) < 3 or w[2].upper() in _OFF)}
    # set elsewhere: not left at its default; a whole GPU backend's switch is what is ported, not an add-on
    options -= {w[0] for found in parsed.values() for name, w in found if name == "set" and w}
    options = {o for o in options if not _BACKEND.search(o)}
    for directory, found in parsed.items() if options else ():
        for into, more in zip(opted, _opted(found, directory, options)):
            into |= more
    return opted


_MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
_MAKE_SETTING = lazy_regex(r"^[ \t]*(?:override[ \t]+)?([A-Za-z_]\w*)[ \t]*[:?]?=[ \t]*([^#\n]*?)[ \t]*(?:#.*)?$",
                           re.MULTILINE)
_MAKE_CONDITIONAL = lazy_regex(r"^[ \t]*(ifeq|ifneq|ifdef|ifndef|else|endif)\b(.*)$")
_MAKE_DEFINE = lazy_regex(r"(?<![\w-])-D([A-Za-z_]\w*)")


def _make_opted(text: str) -> tuple[set[str], set[str], set[str], set[str]]:
    """The macros a Makefile's TEXT adds with -D inside `ifeq ($(SWITCH),1)` of a switch it leaves at 0 (not a whole
    GPU backend's), beside those it adds elsewhere: (opted macros, other macros, no sources, no sources)."""
    settings: dict[str, set[str]] = defaultdict(set)
    for match in _MAKE_SETTING.finditer(text):
        settings[match.group(1)].add(match.group(2).strip().upper())
    switches = {name for name, values in settings.items() if values <= {"0"} and not _BACKEND.search(name)}
    opted: set[str] = set()
    always: set[str] = set()
    stack: list[bool] = []
    for line in text.splitlines():
        conditional = _MAKE_CONDITIONAL.match(line)
        if conditional:
            keyword, argument = conditional.groups()
            if keyword.startswith("if"):
                stack.append(_switched_on(keyword, argument, switches) or bool(stack and stack[-1]))
            elif keyword == "else" and stack:
                stack[-1] = len(stack) > 1 and stack[-2]
            elif stack:
                stack.pop()
            continue
        (opted if stack and stack[-1] else always).update(_MAKE_DEFINE.findall(line.split("#")[0]))
    return opted, always, set(), set()


def _switched_on(keyword: str, argument: str, switches: set[str]) -> bool:
    """`ifeq ($(X),1)` or `ifneq ($(X),0)` (either order, any quotes) of one of SWITCHES."""
    words = [w.strip(" \t'\"") for w in argument.strip().strip("()").split(",")]
    if keyword not in ("ifeq", "ifneq") or len(words) != 2:
        return False
    names = {w[2:-1] for w in words if w.startswith("$(") and w.endswith(")")}
    values = set(words) - {f"$({n})" for n in names}
    return bool(names & switches) and values == ({"1"} if keyword == "ifeq" else {"0"})


def _commands(text: str) -> list[tuple[str, list[str]]]:
    """(lower-case command name, arguments) of a CMake file's TEXT; none when it does not parse."""
    from migrate.parse.cmake import commands  # here: most trees have no such option

    try:
        return [(name.lower(), [a for a, _ in args]) for name, _, args in commands(text)]
    except ParseError:
        return []


def _opted(
    found: list[tuple[str, list[str]]], directory: str, options: set[str]
) -> tuple[set[str], set[str], set[str], set[str]]:
    """(macros, sources) a CMake file's commands FOUND define or list under `if()` of off-by-default OPTIONS, each
    beside those it defines or lists elsewhere: (opted macros, other macros, opted sources, other sources)."""
    stack: list[bool] = []
    opted_macros: set[str] = set()
    always_macros: set[str] = set()
    opted_sources: set[str] = set()
    always_sources: set[str] = set()
    for name, words in found:
        if name == "if":
            stack.append(_tests_option(words, options) or bool(stack and stack[-1]))
        elif name in ("elseif", "else") and stack:
            stack[-1] = len(stack) > 1 and stack[-2]
        elif name == "endif" and stack:
            stack.pop()
        elif not (name == "list" and words[:1] == ["REMOVE_ITEM"]):
            inside = bool(stack and stack[-1])
            (opted_macros if inside else always_macros).update(_defined(name, words))
            (opted_sources if inside else always_sources).update(_listed(words, directory))
    return opted_macros, always_macros, opted_sources, always_sources


def _tests_option(words: list[str], options: set[str]) -> bool:
    """An if() that holds only when one of OPTIONS is on: the option alone, or AND-ed with others."""
    if any(w in ("OR", "NOT") for w in words):
        return False
    return any(w.strip('"${}') in options for w in words)


def _defined(name: str, words: list[str]) -> set[str]:
    if name == "add_definitions":
        return {w[2:].partition("=")[0] for w in words if w.startswith("-D") and len(w) > 2}
    if name == "add_compile_definitions":
        return {w.partition("=")[0] for w in words if _NAME.match(w)}
    if name == "target_compile_definitions":
        return {w.partition("=")[0].removeprefix("-D") for w in words[1:] if w not in _SCOPES and _NAME.match(w)}
    return set()


# an option that switches a whole GPU backend on (WITH_CUDA, USE_GPU, GGML_CUDA, ENABLE_HIP), not one library of it
_BACKEND = lazy_regex(r"(?:^|_)(?:CUDA|GPU|NVIDIA|HIP|ROCM|CUBLAS)$", re.I)
_NAME = lazy_regex(r"(?:-D)?[A-Za-z_]\w*(?:=|$)")
_SOURCE = lazy_regex(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|inl)$")


def _listed(words: list[str], directory: str) -> set[str]:
    prefix = directory + "/" if directory else ""
    found = set()
    for word in words:
        word = word.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "").replace("${PROJECT_SOURCE_DIR}/", "")
        if "${" not in word and not word.startswith("/") and _SOURCE.search(word):
            found.add(prefix + word.removeprefix("./"))
    return found


_DIRECTIVE = lazy_regex(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$", re.MULTILINE)


def _ranges(text: str, macros: Iterable[str]) -> tuple[tuple[int, int], ...]:
    """The line ranges of TEXT under `#ifdef M` / `#if defined(M)` (alone or AND-ed) for M of MACROS, up to the
    branch's #else, #elif or #endif."""
    if not any(m in text for m in macros):
        return ()
    found = []
    stack: list[int | None] = []  # per open conditional: the line its opted-in branch starts, None if none
    for match in _DIRECTIVE.finditer(text):
        keyword, argument = match.group(1), match.group(2)
        line = text.count("\n", 0, match.start()) + 1
        if keyword in ("if", "ifdef", "ifndef"):
            stack.append(line if keyword != "ifndef" and _opted_condition(keyword, argument, macros) else None)
        elif stack:
            start = stack[-1]
            if start is not None:
                found.append((start, line))
            if keyword == "endif":
                stack.pop()
            else:
                stack[-1] = None
    return tuple(found)


def _opted_condition(keyword: str, argument: str, macros: Iterable[str]) -> bool:
    condition = argument.split("//")[0].split("/*")[0].strip()
    if keyword == "ifdef":
        return condition in macros
    if "||" in condition or "!" in condition:
        return False
    return any(re.search(rf"\b{re.escape(m)}\b", condition) for m in macros)


_INCLUDE = lazy_regex(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^">\n]+)[">]', re.MULTILINE)


def _included_only_by(root: Path, opted: set[str], macros: Iterable[str]) -> set[str]:
    """The headers every include of which (one at least) is in an OPTED file, under a MACROS conditional, or in a
    header that is itself so (followed through every header of the tree)."""
    tree = _c_files(root)
    known = set(tree)
    by_name: dict[str, set[str]] = defaultdict(set)
    for path in tree:
        if _suffix(path) in _HEADER_SUFFIXES:
            by_name[path.rpartition("/")[2]].add(path)
    sites: dict[str, list[tuple[str, int]]] = defaultdict(list)  # header -> (including file, line)
    ranges: dict[str, tuple[tuple[int, int], ...]] = {}
    for path in tree:
        text = _read(root, path)
        if not text or "include" not in text:
            continue
        ranges[path] = _ranges(text, macros)
        for match in _INCLUDE.finditer(text):
            spec = match.group(1).removeprefix("./")
            near = f"{path.rpartition('/')[0]}/{spec}".lstrip("/")
            found = [near] if near in known else [h for h in by_name.get(spec.rpartition("/")[2], ()) if _names(h, spec)]
            for header in found:
                sites[header].append((path, text.count("\n", 0, match.start()) + 1))
    # a header nothing in the tree includes is compiled by nothing here: its includes say nothing of the others
    loose = {h for names in by_name.values() for h in names if h not in sites}
    only: set[str] = set()
    changed = True
    while changed:
        changed = False
        for header, included in sites.items():
            if header not in only and all(p in opted or p in only or p in loose or any(s <= n <= e for s, e in
                                          ranges.get(p, ())) for p, n in included):
                only.add(header)
                changed = True
    # ... and one beside opted headers only, in their folder, is part of the same add-on
    folders: dict[str, bool] = {}
    for header in sites:
        folder = header.rpartition("/")[0]
        folders[folder] = folders.get(folder, True) and header in only
    only |= {h for h in loose if folders.get(h.rpartition("/")[0], False)}
    return only


def _names(header: str, spec: str) -> bool:
    return header == spec or header.endswith("/" + spec.removeprefix("./"))


def _c_files(root: Path) -> list[str]:
    """The C/C++/CUDA files under ROOT (relative paths), none where the tree has more than _MAX_FILES of them."""
    found = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        base = os.path.relpath(directory, root)
        for name in names:
            if _suffix(name) in _C_SUFFIXES:
                found.append(name if base == "." else f"{base}/{name}".replace(os.sep, "/"))
                if len(found) > _MAX_FILES:
                    return []
    return found


def _suffix(path: str) -> str:
    return path.rpartition(".")[2].lower() if "." in path.rpartition("/")[2] else ""


def _read(root: Path, *parts: str) -> str | None:
    """The text of ROOT's file at PARTS (joined as strings: a Path per file of a large tree cost more than its read)."""
    return read_text(os.path.join(root, *parts), limit=_MAX_FILE_BYTES)
