"""Build words: nvcc-only options, arch-specific sources and linked libraries in setup.py, Python build
helpers, CMake, Makefiles, shell scripts and Rust build scripts."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.manifest_common import check, compiled
from migrate.matchers.python_build_sources import HOST_ONLY_NOTE, host_only_build
from migrate.model import FileKind, Severity
from migrate.parse import Document
from migrate.parse.golang import GoDocument
from migrate.parse.manifest import CMAKE, COMMAND, items
from migrate.parse.python import PythonDocument
from migrate.parse.rust import RustDocument
from migrate.parse.setup_py import link_libraries

# A Python file outside setup.py builds CUDA code only if it says so; elsewhere "-lineinfo" is just a string.
_PY_BUILD_CONTEXT = ("cpp_extension", "extra_cuda_cflags", "nvcc", "CUDAExtension")
_CMAKE_LINKS = frozenset({"target_link_libraries", "link_libraries", "target_link_options", "set_target_properties",
                          "set_property", "find_library"})
_WORD = re.compile(r"[^\s,;\"']+")
_IMPORTED_TARGET = re.compile(r"^[A-Za-z_][\w.-]*::")  # the namespace of `TensorRT::nvinfer`, `cvcuda::cvcuda`
_STR_METHODS = frozenset({"endswith", "startswith", "removesuffix", "removeprefix", "replace", "find", "rfind", "index",
                          "count", "split", "rsplit", "strip", "rstrip", "lstrip", "partition", "rpartition"})


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("words",), regexes=("pattern", "ported_when"), required=("needles",))
    if ("words" in params) == ("pattern" in params):
        raise ValueError("build-word needs exactly one of 'words' (option names) or 'pattern' (a regex)")
    if "without_cuda_sources" in params:
        Severity.parse(str(params["without_cuda_sources"]))


def _wanted(params: Mapping[str, Any], word: str) -> bool:
    if "words" in params:
        return word.split("=", 1)[0] in params["words"]
    return compiled(params["pattern"]).fullmatch(word) is not None


def _python_code_test(params: Mapping[str, Any]) -> CodeTest:
    """For a Python file other than setup.py (the only kind scan asks this about): a build context (see _words)."""
    return lambda code: any(c in code.text for c in _PY_BUILD_CONTEXT)


@register("build-word", validate=_validate, needles=lambda p: list(p["needles"]), candidates=_python_code_test)
def match_build_word(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each word of a build string or argument that is one of `words` (an option, before any `=`) or
    matches `pattern` whole: in Python string literals, CMake arguments, Makefile values and shell commands.
    `without_cuda_sources` (a severity): that of a Python file whose extension builds compile no CUDA source."""
    hits = list(_one_per_line(Hit(ln, c, symbol=w) for w, ln, c in _words(doc, options="words" in params)
                              if _wanted(params, w)))
    if hits and "without_cuda_sources" in params and isinstance(doc, PythonDocument) and host_only_build(doc):
        severity = Severity.parse(str(params["without_cuda_sources"]))
        hits = [Hit(h.line, h.column, severity=severity, symbol=h.symbol, note=HOST_ONLY_NOTE) for h in hits]
    if hits and "ported_when" in params and compiled(params["ported_when"]).search(doc.text):
        hits = [Hit(h.line, h.column, severity=Severity.INFO, symbol=h.symbol, note=_PORTED_NOTE) for h in hits]
    yield from hits




def _one_per_line(hits: Iterator[Hit]) -> Iterator[Hit]:
    """The first hit of each line: one finding per line a person edits."""
    seen: set[int] = set()
    for hit in sorted(hits, key=lambda h: (h.line, h.column)):
        if hit.line not in seen:
            seen.add(hit.line)
            yield hit


def _words(doc: Document, *, options: bool) -> Iterator[tuple[str, int, int]]:
    if isinstance(doc, (RustDocument, GoDocument)):
        yield from doc.words  # a build script's option lists (where it drives nvcc) and paths; cgo's flags
        return
    if isinstance(doc, PythonDocument):
        if doc.source.kind == FileKind.SETUP_PY or any(c in doc.text for c in _PY_BUILD_CONTEXT):
            yield from _python_words(doc, options=options)
        return
    for item in items(doc, CMAKE):
        if item.name.startswith("find_"):
            continue  # HINTS and PATHS of a search: places to look, not build flags or sources
        for arg, (line, column) in zip(item.args, item.positions):
            yield from (_genex_payload(w, ln, c) for w, ln, c in _split(arg, line, column))
    yield from _make_words(doc)


_PORTED_NOTE = "The same file names the AMD target too (amdgcn, gfxNNN): its ROCm build path exists."
# a shell argument `-DNAME[:TYPE]="flags ..."` (a CMake cache variable set from a build script) holds an option list:
# its options are read without the `-DNAME=` before them
_CACHE_VALUE = re.compile(r"-D[\w.]+(?::\w+)?=")


_GENEX_CONDITION = re.compile(r">:|^\$<[A-Za-z_]+:")


def _genex_payload(word: str, line: int, column: int) -> tuple[str, int, int]:
    """The option a CMake generator expression adds: `$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>` and
    `$<BUILD_INTERFACE:-lineinfo>` give their last part without the closing `>`s; any other word as it is."""
    if "$<" not in word:
        return word, line, column
    start = max((m.end() for m in _GENEX_CONDITION.finditer(word)), default=0)
    return word[start:].rstrip(">"), line, column + start


def _make_words(doc: Document) -> Iterator[tuple[str, int, int]]:
    """Words of shell commands: scripts, Makefile recipes and Makefile values (parsed as commands)."""
    for item in items(doc, COMMAND):
        if item.name.startswith("-"):  # a Makefile value such as `NVCCFLAGS = --use_fast_math -O3`
            yield item.name, item.line, item.column
        for arg, (line, column) in zip(item.args, item.positions):
            # a quoted option list (-DCUDA_FLAGS="-O3 --use_fast_math", -foffload="-lm -march=sm_70"): each option; a
            # quoted message (echo "build with -acc") does not start with an option
            if arg.startswith("-") and any(c.isspace() for c in arg):
                value = _CACHE_VALUE.match(arg)
                start = value.end() if value else 0
                yield from _split(arg[start:], line, column + start)
            else:
                yield arg, line, column


def _python_words(doc: PythonDocument, *, options: bool) -> Iterator[tuple[str, int, int]]:
    """Words of string literals that are option lists ("-O3 --use_fast_math") or, for names, one word (a path):
    never a message that mentions a flag or a file."""
    for node in doc.nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in doc.docstrings:
            words = node.value.split()
            if words and (all(w.startswith("-") for w in words) if options else len(words) == 1):
                if not _said(doc, node):
                    yield from _split(node.value, node.lineno, node.col_offset + 2)


def _said(doc: PythonDocument, node: ast.Constant) -> bool:
    """A string that is shown or looked for, not passed to a compiler: a message, a side of a comparison
    (`assert "-lineinfo" in flags`), or the argument of a string method (`source.endswith("_sm90.cu")`)."""
    parent = doc.parents.get(node)
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr in _STR_METHODS:
        return True
    return doc.string_site(node).role in ("prose", "doc")


def _split(text: str, line: int, column: int) -> Iterator[tuple[str, int, int]]:
    for match in _WORD.finditer(text):
        yield match.group(), line, column + match.start()


def _link_validate(params: Mapping[str, Any]) -> None:
    check(params, regexes=("libraries",), required=("libraries", "needles"))


@register("link-library", validate=_link_validate, needles=lambda p: list(p["needles"]))
def match_link_library(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each linked library whose bare name matches `libraries` whole: setup.py `libraries=` / `-l` link args,
    CMake link commands, `-lX` in Makefiles and shell commands."""
    pattern = compiled(params["libraries"])
    yield from _one_per_line(Hit(ln, c, symbol=n) for n, ln, c in _libraries(doc) if pattern.fullmatch(n))


def _libraries(doc: Document) -> Iterator[tuple[str, int, int]]:
    if isinstance(doc, (RustDocument, GoDocument)):
        yield from doc.links
        return
    if isinstance(doc, PythonDocument):
        if doc.source.kind == FileKind.SETUP_PY:
            yield from link_libraries(doc)
        return
    for item in items(doc, CMAKE):
        if item.name in _CMAKE_LINKS:
            for arg, (line, column) in zip(item.args, item.positions):
                yield from ((_bare(w), ln, c) for w, ln, c in _split(arg, line, column))
    for word, line, column in _make_words(doc):
        if word.startswith("-l") and len(word) > 2:
            yield word[2:], line, column


def _bare(word: str) -> str:
    """cudart, -lcudart, libcudart.so, libcudart_static.a, TensorRT::nvinfer (an imported target that a
    Find module or a package config names after the library) -> the library's name."""
    word = word[2:] if word.startswith("-l") else word
    word = _IMPORTED_TARGET.sub("", word)
    match = re.fullmatch(r"lib(\w[\w+-]*)\.(?:so|a|dylib)(?:\.[\d.]+)?", word.rsplit("/", 1)[-1])
    return match.group(1) if match else word
