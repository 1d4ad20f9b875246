"""GPU target lists of a ROCm build: a variable that holds them (GPU_TARGETS, CMAKE_HIP_ARCHITECTURES,
PYTORCH_ROCM_ARCH, ...) set in CMake, a Makefile, a shell script or a Dockerfile, and hipcc's per-target options
(--offload-arch=gfxNNN). Each hit carries the listed targets in its symbol; which of them the scan's targets miss is
decided when findings are made (targets.left_out), since the matcher does not see the settings."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check
from migrate.model import FileKind
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_GFX = re.compile(r"\bgfx[0-9][0-9a-f]{1,3}\b")
# a list the build computes or leaves to the machine: a variable, the GPU it runs on, a family-wide generic target
_COMPUTED = re.compile(r"\$|@\w+@|\bnative\b|-generic\b|\ball\b")
# shown or compared, not built: a message, a test of the list
_SAID = re.compile(r"^\s*(?:if|elif|elseif|while)\b|\b(?:echo|printf|print|message|MATCHES|STREQUAL|IN_LIST)\b|==|!=|"
                   r"\bin\s*[\[(]|\blist\s*\(\s*FIND\b|\berror\b|\bwarning\b|\braise\b|Error\(|\bwarn\w*\(|\blog\w*\.\w+\(",
                   re.IGNORECASE)
# a Python file builds only when it says so (setup.py, a torch extension or an op builder); a test's flag strings are
# the expected values of a check, not a build
_PY_BUILD = re.compile(r"\bcpp_extension\b|\bextra_compile_args\b|\bCUDAExtension\b|\bCppExtension\b|\bnvcc_flags\b|"
                       r"\bsubprocess\b|\bos\.environ\b")
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|testing)/|(?:^|/)test_[^/]*\.py$|_test\.py$")
_CALLS_SPAN_LINES = ("CMakeLists.txt", ".cmake", ".py")  # where a statement's parentheses may span lines
_CMAKE_END = re.compile(r"\b(?:CACHE|PARENT_SCOPE|FORCE)\b|\)")


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("names", "flags"), required=("names", "flags", "needles"))


@register("gfx-target-list", validate=_validate, needles=lambda p: list(p["needles"]))
def match_target_list(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each place a build lists its GPU targets literally: a variable of `names` set to gfx names, or the `flags`
    (option prefixes, `--offload-arch=`) of one command line; the hit's symbol is the listed targets joined by ';'.
    Quiet where the list is computed (a variable, `native`, a generic target) or only shown or compared."""
    assign = _assignment(tuple(params["names"]))
    prose: frozenset[int] = frozenset()
    if isinstance(doc, PythonDocument):
        if not _builds(doc):
            return
        prose = _docstring_lines(doc)
    flags = re.compile("(?:" + "|".join(re.escape(f) for f in params["flags"]) + r")([\w,;:+-]+)")
    for starts, text in _logical_lines(doc.text, calls=doc.source.relpath.endswith(_CALLS_SPAN_LINES)):
        if "gfx" not in text or _SAID.search(text) or starts[0][1] in prose:
            continue
        hit = _assigned(assign, text) or _flagged(flags, text, quoted=isinstance(doc, PythonDocument))
        if hit is not None:
            yield _placed(hit, starts)


def _builds(doc: PythonDocument) -> bool:
    if _TEST_PATH.search(doc.source.relpath):
        return False
    return doc.source.kind == FileKind.SETUP_PY or _PY_BUILD.search(doc.text) is not None


def _docstring_lines(doc: PythonDocument) -> frozenset[int]:
    """The lines of DOC's docstrings: an example list there (`["--offload-arch=gfx942"]`) is prose."""
    lines: set[int] = set()
    for node in doc.nodes:
        if id(node) in doc.docstrings:
            lines.update(range(getattr(node, "lineno", 0), (getattr(node, "end_lineno", None) or 0) + 1))
    return frozenset(lines)


def _placed(hit: Hit, starts: list[tuple[int, int]]) -> Hit:
    """HIT, whose column is an offset (from 1) into a joined statement, at its own line and column; STARTS: each
    joined line's (offset in the statement, line number)."""
    offset, line = max((s for s in starts if s[0] < hit.column), default=starts[0])
    return Hit(line, hit.column - offset, symbol=hit.symbol)


def _assignment(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"""(?<![\w$])(?:-D)?({alternatives})(?::\w+)?(?:[\"']\]?)?(?:\s*(?:\?=|:=|\+=|=)\s*|\s+)(.*)""")


def _assigned(pattern: re.Pattern[str], text: str) -> Hit | None:
    match = pattern.search(text)
    if match is None:
        return None
    value = _value(match.group(2), cmake=_in_cmake_call(text, match.start()))
    return _hit(value, match.start() + 1)


def _in_cmake_call(text: str, start: int) -> bool:
    """Whether the name is an argument of a CMake command (`set(NAME a b c ...)`, `PROPERTIES NAME "..."`)."""
    return re.search(r"\b\w+\s*\(", text[:start]) is not None and "=" not in text[start:start + 64].split()[0]


def _value(rest: str, *, cmake: bool) -> str:
    if cmake:  # set(NAME gfx90a gfx942 CACHE STRING "doc"): the words before CACHE / the closing parenthesis
        end = _CMAKE_END.search(rest)
        return rest[: end.start()] if end else rest
    rest = rest.lstrip()
    if rest[:1] in "\"'":  # a quoted value ends at its closing quote
        close = rest.find(rest[0], 1)
        return rest[1:close] if close > 0 else rest[1:]
    return rest.split()[0] if rest.split() else ""


def _flagged(pattern: re.Pattern[str], text: str, *, quoted: bool) -> Hit | None:
    """The options of PATTERN in TEXT that name gfx targets; QUOTED (Python): only an option that is a string of its
    own (`["-O3", "--offload-arch=gfx90a"]`), not one a sentence mentions."""
    found = [m for m in pattern.finditer(text)
             if "gfx" in m.group(1) and (not quoted or text[m.start() - 1 : m.start()] in ("'", '"'))]
    if not found:
        return None
    return _hit(" ".join(m.group(1) for m in found), found[0].start() + 1)


def _hit(value: str, column: int) -> Hit | None:
    listed = sorted(set(_GFX.findall(value)))
    if not listed or _COMPUTED.search(value):
        return None
    return Hit(0, column, symbol=";".join(listed))


def _logical_lines(text: str, *, calls: bool) -> Iterator[tuple[list[tuple[int, int]], str]]:
    """Each statement of TEXT, comments dropped, with where each of its lines starts in it ((offset, line number));
    lines continued by a backslash, and (CALLS: CMake, Python) a call whose parentheses close on a later line, are
    joined."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        first = index
        joined = _uncommented(lines[index])
        starts = [(0, index + 1)]
        while index + 1 < len(lines) and index - first < 30 and (
                joined.endswith("\\") or calls and joined.count("(") > joined.count(")")):
            index += 1
            joined = joined.rstrip("\\") + " "
            starts.append((len(joined), index + 1))
            joined += _uncommented(lines[index])
        index += 1
        yield starts, joined


def _uncommented(line: str) -> str:
    """LINE without a trailing `#` comment (CMake, shell, Makefile, Dockerfile, Python); a `#` inside a word (an
    anchor in a URL, ${#list[@]}) stays."""
    match = re.search(r"(?:^|[\s);])#", line)
    return (line[: match.start()] if match else line).rstrip()
