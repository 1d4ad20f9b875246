"""build.rs, a Rust package's build script: its string literals (never its comments) as build words, linked
libraries, environment reads, and where it drives nvcc."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from migrate.lazyre import lazy_regex
from migrate.model import FileKind, SourceFile
from migrate.parse.document import as_spaces, nested_comment_end, register
from migrate.parse.manifest import ENV, FACT, Item, ManifestDocument, Positions, arch_flag_items

Word = tuple[str, int, int]  # a word, its line and column


@dataclass(frozen=True)
class Literal:
    """A string literal: its value (simple escapes decoded) and where its text starts (after the opening quote)."""

    value: str
    start: int  # offset of the first character inside the quotes
    end: int  # offset just past the closing quote


@dataclass
class RustDocument(ManifestDocument):
    """A build script: its code with comments and literals blanked, its build words and linked libraries."""

    code: str = ""
    # build words: the option lists of a script that drives nvcc, and the paths it names or links from
    words: list[Word] = field(default_factory=list)
    links: list[Word] = field(default_factory=list)  # libraries of `cargo:rustc-link-lib=[KIND=]NAME`


_RAW_START = re.compile(r"(?:b|c)?r(#*)\"")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def lex(text: str) -> tuple[str, list[Literal]]:
    """TEXT with comments and string literals blanked (newlines kept), and its string literals."""
    code: list[str] = []
    literals: list[Literal] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = nested_comment_end(text, i, "/*", "*/")
        elif char == '"' or (char in "bc" and text.startswith('"', i + 1) and not _word_before(text, i)):
            quote = i if char == '"' else i + 1
            end, value = _quoted(text, quote)
            literals.append(Literal(value, quote + 1, end))
        elif char in "bcr" and not _word_before(text, i) and (raw := _RAW_START.match(text, i)):
            closing = '"' + raw.group(1)
            stop = text.find(closing, raw.end())
            end = n if stop < 0 else stop + len(closing)
            literals.append(Literal(text[raw.end() : stop if stop >= 0 else n], raw.end(), end))
        elif char == "'":
            end = _char_literal_end(text, i)
        else:
            code.append(char)
            i += 1
            continue
        code.append(as_spaces(text[i:end]))
        i = end
    return "".join(code), literals


def _word_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def _quoted(text: str, quote: int) -> tuple[int, str]:
    """Past the closing quote of the literal opened at QUOTE, and its value."""
    value: list[str] = []
    i = quote + 1
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            escaped = text[i + 1]
            if escaped == "\n":  # a line continuation: the newline and the next line's indent are dropped
                i += 2
                while i < len(text) and text[i] in " \t\n\r":
                    i += 1
                continue
            value.append(_ESCAPES.get(escaped, "\\" + escaped))
            i += 2
            continue
        if char == '"':
            return i + 1, "".join(value)
        value.append(char)
        i += 1
    return len(text), "".join(value)


def _char_literal_end(text: str, i: int) -> int:
    """Past a char literal ('a', '\\n', '\\u{1F600}'), or past the quote alone for a lifetime ('a, 'static)."""
    if text.startswith("\\", i + 1):
        close = text.find("'", i + 3)
        return i + 1 if close < 0 or close - i > 12 else close + 1
    if i + 2 < len(text) and text[i + 2] == "'":
        return i + 3
    return i + 1


# Where a build script drives nvcc: a CUDA kernel builder crate, the cc crate's CUDA mode, or nvcc run directly.
_NVCC_DRIVERS = lazy_regex(r"\b(?P<crate>bindgen_cuda|cudaforge)\s*::|\.\s*cuda\s*\(\s*true\s*\)")
# Rust-CUDA's cuda_builder: compiles a Rust crate to PTX through NVIDIA's libNVVM (no nvcc, no AMD target)
_PTX_BUILDER = lazy_regex(r"\bcuda_builder\s*::|\bCudaBuilder\s*::\s*new\b")
_COMMAND_NEW = lazy_regex(r"\bCommand\s*::\s*new\s*\(\s*$")
# the which crate looking nvcc up on PATH (`which::which("nvcc")`, `which("nvcc")`): the script finds nvcc to run it
_WHICH = lazy_regex(r"\bwhich\s*\(\s*$")
_NVCC_PROGRAM = lazy_regex(r"^(?:\S*/)?nvcc(?:\.exe)?$")
_ENV_CALL = lazy_regex(r"(?:\benv\s*::\s*var(?:_os)?|\bvar(?:_os)?|\boption_env\s*!|\benv\s*!)\s*\(\s*$")
_ENV_NAME = lazy_regex(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")  # a literal that is a variable's name (CUDA_PATH, not "A")
_RERUN_ENV = lazy_regex(r"cargo::?rerun-if-env-changed=(?P<name>[A-Za-z_]\w*)")
_LINK_LIB = lazy_regex(r"cargo::?rustc-link-lib=(?:[\w+-]+(?::[\w,+-]*)?=)?(?P<name>[\w.+-]+)")
_LINK_SEARCH = lazy_regex(r"cargo::?rustc-link-search=(?:(?:native|dependency|crate|framework|all)=)?(?P<path>/\S+)")
_PATH = lazy_regex(r"^/[\w.+-]+(?:/[\w.+-]*)*$")
_WORD = lazy_regex(r"\S+")
_ARCH_VALUE = lazy_regex(r"^(?:sm|compute)_\d+[a-z]?$")
_PLACEHOLDER = lazy_regex(r"\{[\w:.]*\}")


def _before(code: str, literal: Literal, width: int = 48) -> str:
    """The code just before LITERAL's opening quote (on its line)."""
    quote = literal.start - 1
    start = max(0, quote - width)
    return code[start:quote].rsplit("\n", 1)[-1]


def nvcc_runs(code: str, literals: list[Literal], where: Positions, fact: str) -> Iterator[Item]:
    """A FACT per place Rust code runs nvcc (`Command::new("nvcc")`) or looks it up on PATH (`which("nvcc")`)."""
    for literal in literals:
        if _NVCC_PROGRAM.match(literal.value):
            before = _before(code, literal)
            if _COMMAND_NEW.search(before):
                yield Item(FACT, fact, *where.at(literal.start), value="nvcc")
            elif _WHICH.search(before):
                yield Item(FACT, fact, *where.at(literal.start), value="which")


def nvcc_facts(code: str, literals: list[Literal], where: Positions) -> list[Item]:
    """A fact per place the script drives nvcc."""
    found = [Item(FACT, "rust-nvcc-build", *where.at(match.start()), value=match.group("crate") or "cc-cuda")
             for match in _NVCC_DRIVERS.finditer(code)]
    found.extend(nvcc_runs(code, literals, where, "rust-nvcc-build"))
    return sorted(found, key=lambda item: (item.line, item.column))


def nvcc_option_facts(literals: list[Literal], where: Positions) -> tuple[list[Word], list[Item]]:
    """The option words of a file that drives nvcc (its option-list literals and lone architecture literals), and
    the architecture-flag facts among them."""
    options = sorted([*_option_words(literals, where), *_arch_values(literals, where)],
                     key=lambda word: (word[1], word[2]))
    return options, list(_arch_facts(options))


def _option_words(literals: list[Literal], where: Positions) -> Iterator[Word]:
    """The words of each literal that is an option list ("-O3 --use_fast_math"): never a message."""
    for literal in literals:
        words = list(_WORD.finditer(literal.value))
        if words and all(w.group().startswith("-") for w in words) and "\n" not in literal.value:
            line, column = where.at(literal.start)
            yield from ((w.group(), line, column + w.start()) for w in words)


def _arch_values(literals: list[Literal], where: Positions) -> Iterator[Word]:
    """A literal that is an architecture alone (`let arch = "compute_86";` later formatted into `-arch={}`)."""
    for literal in literals:
        if _ARCH_VALUE.match(literal.value):
            yield (literal.value, *where.at(literal.start))


def _arch_facts(words: list[Word]) -> Iterator[Item]:
    """nvcc architecture flags, a format placeholder (`-arch=sm_{cap}`) read as the variable it is."""
    spelled = [(_PLACEHOLDER.sub(lambda m: "$" + m.group(), w), line, column) for w, line, column in words]
    originals = {(line, column): w for w, line, column in words}
    for item in arch_flag_items(spelled):
        yield replace(item, value=originals.get((item.line, item.column), item.value))


def _env_reads(code: str, literals: list[Literal], where: Positions) -> Iterator[Item]:
    """The variables a build script reads: `env::var("X")`, `option_env!("X")`, a list of names it tries in turn
    (`["CUDA_HOME", "CUDA_PATH"]`), and `cargo:rerun-if-env-changed=X`."""
    for literal in literals:
        rerun = _RERUN_ENV.search(literal.value)
        if rerun:
            yield Item(ENV, rerun.group("name"), *where.at(literal.start + rerun.start("name")))
        elif _ENV_NAME.match(literal.value) or (
                literal.value.isidentifier() and _ENV_CALL.search(_before(code, literal))):
            yield Item(ENV, literal.value, *where.at(literal.start))


def _paths(literals: list[Literal], where: Positions) -> Iterator[Word]:
    """Absolute paths: a literal that is one (`"/usr/local/cuda"`), or a `cargo:rustc-link-search=` directory."""
    for literal in literals:
        search = _LINK_SEARCH.search(literal.value)
        if search:
            yield (search.group("path"), *where.at(literal.start + search.start("path")))
        elif _PATH.match(literal.value):
            yield (literal.value, *where.at(literal.start))


def _links(literals: list[Literal], where: Positions) -> Iterator[Word]:
    for literal in literals:
        for match in _LINK_LIB.finditer(literal.value):
            yield (match.group("name"), *where.at(literal.start + match.start("name")))


@register(FileKind.RUST_BUILD)
def parse_build_script(source: SourceFile, text: str) -> RustDocument:
    """build.rs: nvcc drivers, PTX builders, option words and arch flags (where it drives nvcc), paths, env reads,
    linked libraries."""
    code, literals = lex(text)
    where = Positions(text)
    facts = nvcc_facts(code, literals, where)
    options, arch = nvcc_option_facts(literals, where) if facts else ([], [])
    ptx = [Item(FACT, "rust-ptx-build", *where.at(m.start()), value="cuda_builder") for m in _PTX_BUILDER.finditer(code)]
    manifest = [*facts, *ptx, *arch, *_env_reads(code, literals, where)]
    words = sorted([*options, *_paths(literals, where)], key=lambda word: (word[1], word[2]))
    return RustDocument(source=source, text=text, manifest=manifest, code=code, words=words,
                        links=list(_links(literals, where)))
