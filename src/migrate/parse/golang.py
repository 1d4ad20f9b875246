"""Go sources: the CUDA a package binds through cgo (its preamble's #cgo flags, #include lines and CUDA calls, and
the C.name references of its code), and PTX text kept in its string literals. A Go file without cgo or PTX yields
nothing; comments other than a cgo preamble are never read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from migrate.lazyre import lazy_regex
from migrate.model import FileKind, SourceFile
from migrate.parse.document import as_spaces, register
from migrate.parse.manifest import FACT, Item, ManifestDocument, Positions

Word = tuple[str, int, int]  # a word, its line and column


@dataclass(frozen=True)
class Span:
    """A comment or a string literal: where it starts and ends, and where its text starts and ends."""

    start: int
    end: int
    inner_start: int
    inner_end: int


@dataclass
class GoDocument(ManifestDocument):
    """A Go file: its cgo flags (build words, linked libraries) and its facts (headers, C calls, PTX text)."""

    words: list[Word] = field(default_factory=list)  # the words of its #cgo CFLAGS / LDFLAGS lines
    links: list[Word] = field(default_factory=list)  # the -lNAME libraries of its #cgo LDFLAGS lines


_LEXEME = lazy_regex(r"//|/\*|[`\"']")  # where a comment or a literal may start
_IMPORT_C = lazy_regex(r"import\s*\"C\"")  # a literal prefix: fast; the word boundary is checked after
_CGO_FLAGS = re.compile(r"^[ \t]*#cgo\s+(?:[\w!,. ]+?\s+)?(?:CFLAGS|CPPFLAGS|CXXFLAGS|FFLAGS|LDFLAGS)\s*:(.*)$", re.M)
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]", re.M)
_WORD = re.compile(r"\S+")
# CUDA API names: driver (cuInit), runtime (cudaMalloc) and library calls (cublasSgemm, nvrtcCompileProgram, ...)
_CUDA_NAME = r"(?:cu|cuda|cublas(?:Lt)?|cufft|curand|cusparse|cusolver(?:Dn|Sp)?|cudnn|nvrtc|nvml|nccl|cuFile)[A-Z]\w*"
_C_REFERENCE = re.compile(rf"\bC\.({_CUDA_NAME})\b")
_PREAMBLE_CALL = re.compile(rf"\b({_CUDA_NAME})\s*\(")
# PTX as nvcc -ptx writes it: a .version directive and a .target naming an NVIDIA architecture
_PTX_TARGET = re.compile(r"^[ \t]*\.target[ \t]+((?:sm|compute)_\d+[a-z]?)", re.M)
_PTX_VERSION = re.compile(r"^[ \t]*\.version[ \t]+\d", re.M)


def lex(text: str) -> tuple[list[Span], list[Span]]:
    """The comments and the string literals (interpreted, raw and rune) of a Go source."""
    comments: list[Span] = []
    literals: list[Span] = []
    n = len(text)
    start = _LEXEME.search(text)
    while start is not None:
        i = start.start()
        char = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments.append(Span(i, end, i + 2, end))
        elif text.startswith("/*", i):
            stop = text.find("*/", i + 2)
            end = n if stop < 0 else stop + 2
            comments.append(Span(i, end, i + 2, stop if stop >= 0 else n))
        elif char == "`":
            stop = text.find("`", i + 1)
            end = n if stop < 0 else stop + 1
            literals.append(Span(i, end, i + 1, end - 1 if stop >= 0 else n))
        else:
            end = _quoted_end(text, i)
            literals.append(Span(i, end, i + 1, end - 1))
        start = _LEXEME.search(text, end)
    return comments, literals


def _quoted_end(text: str, start: int) -> int:
    """Offset just past the closing quote of the interpreted string or rune starting at START (its line's end if
    it has none)."""
    quote, i, n = text[start], start + 1, len(text)
    while i < n and text[i] != "\n":
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return i


def blanked(text: str, spans: list[Span]) -> str:
    """TEXT with SPANS blanked (newlines kept, offsets unchanged)."""
    parts: list[str] = []
    last = 0
    for span in spans:
        parts.append(text[last:span.start])
        parts.append(as_spaces(text[span.start:span.end]))
        last = span.end
    parts.append(text[last:])
    return "".join(parts)


def preambles(text: str, code: str, comments: list[Span]) -> list[Span]:
    """The cgo preambles: the comment group written right before each `import "C"` (no blank line between)."""
    found: list[Span] = []
    ends = {span.start + len(text[span.start:span.end].rstrip()): span for span in comments}
    for match in _imports_of_c(text, code):
        group: list[Span] = []
        end, newlines = _back(text, match.start())
        while newlines <= 1 and end in ends:
            group.append(ends[end])
            end, newlines = _back(text, ends[end].start)
        found.extend(reversed(group))
    return found


def _imports_of_c(text: str, code: str) -> list[re.Match[str]]:
    """Each `import "C"` of the code (its "C" is a literal, blanked in CODE; its keyword is not)."""
    return [match for match in _IMPORT_C.finditer(text)
            if code[match.start()] == "i" and (match.start() == 0 or not _word_char(text[match.start() - 1]))]


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _back(text: str, offset: int) -> tuple[int, int]:
    """Where the white space before OFFSET starts, and how many line breaks it holds."""
    newlines = 0
    while offset > 0 and text[offset - 1] in " \t\r\n":
        offset -= 1
        newlines += text[offset] == "\n"
    return offset, newlines


def _preamble_items(text: str, preamble: list[Span], where: Positions) -> Iterator[Item]:
    for span in preamble:
        body = text[span.inner_start:span.inner_end]
        for match in _INCLUDE.finditer(body):
            yield Item(FACT, "cgo-include", *where.at(span.inner_start + match.start(1)), value=match.group(1))
        for match in _PREAMBLE_CALL.finditer(body):
            yield Item(FACT, "cgo-call", *where.at(span.inner_start + match.start(1)), value=match.group(1))


def _flag_words(text: str, preamble: list[Span], where: Positions) -> Iterator[Word]:
    for span in preamble:
        body = text[span.inner_start:span.inner_end]
        for line in _CGO_FLAGS.finditer(body):
            for word in _WORD.finditer(line.group(1)):
                yield (word.group(), *where.at(span.inner_start + line.start(1) + word.start()))


def _ptx_texts(text: str, literals: list[Span], where: Positions) -> Iterator[Item]:
    """Each string literal that holds PTX, at its opening quote, with the architecture it targets."""
    for span in literals:
        body = text[span.inner_start:span.inner_end]
        if ".target" not in body:
            continue
        target = _PTX_TARGET.search(body)
        if target and _PTX_VERSION.search(body):
            yield Item(FACT, "ptx-text", *where.at(span.start), value=target.group(1))


@register(FileKind.GO)
def parse_go(source: SourceFile, text: str) -> GoDocument:
    """A Go file reduced to the CUDA it binds through cgo and the PTX it carries."""
    comments, literals = lex(text)
    where = Positions(text)
    found: list[Item] = list(_ptx_texts(text, literals, where))
    words: list[Word] = []
    code = blanked(text, sorted([*comments, *literals], key=lambda s: s.start)) if '"C"' in text else ""
    if code and _imports_of_c(text, code):
        preamble = preambles(text, code, comments)
        found.extend(_preamble_items(text, preamble, where))
        found.extend(Item(FACT, "cgo-call", *where.at(m.start(1)), value=m.group(1))
                     for m in _C_REFERENCE.finditer(code))
        words = list(_flag_words(text, preamble, where))
    links = [(word[2:], line, column) for word, line, column in words if word.startswith("-l") and len(word) > 2]
    return GoDocument(source=source, text=text, manifest=sorted(found, key=lambda i: (i.line, i.column)),
                      words=words, links=links)
