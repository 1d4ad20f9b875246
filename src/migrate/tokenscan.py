"""C/C++/CUDA on tokens: a few regex passes over a file, no tree-sitter parse.

The lexer blanks comments, string literals and #include paths, then finds what rules can decide without the tree:
the identifiers they look for (CUDA API names, namespaces, macros compared), #include paths, #define names,
HIP-guarded #if blocks, asm statements, `<<<` and, when asked, the brace blocks that are device code. Those rules
(cuda-api, cuda-include, inline-asm, cuda-namespace, cuda-compare, cuda-kernel) read this pass in every file,
parsed or not, so a parse changes none of their findings. The rules
that need the tree give a test on the code (their matcher's `candidates`): a first-party file is parsed only when
one passes (`Plan.needing_tree`). Vendored code is never parsed: there the tree rules do not run
(docs/performance.md)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from typing import Any, TypeVar

from migrate import matchers, preproc
from migrate.apimap import ApiEntry, api_map, header_map
from migrate.matchers import Code, CodeTest, Hit
from migrate.model import Rule
from migrate.parse import Document
from migrate.parse.cuda import DEVICE_MACRO, longest_match

_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Lexed:
    """What the lexer found in one file's code (never inside comments or strings)."""

    words: list[tuple[str, int]]  # (name, offset) of every interesting identifier
    includes: list[tuple[str, int]]  # (header, offset of the path)
    asm: list[tuple[str, int]]  # (template source, offset of the asm keyword)
    launches: list[int]  # offsets of <<<
    defined: frozenset[str]  # macro names the file #defines
    guarded: list[tuple[int, int]]  # line ranges of #if blocks that test a HIP macro
    directives: tuple[preproc.Directive, ...]  # the conditional, #define and #undef lines (preproc.directive_at)
    lines: _Lines
    code: str  # the text with comments, string literals and #include paths blanked (same offsets and lines)
    searched: frozenset[str]  # the words looked for

    def point(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        return self.lines.point(offset)

    @cached_property
    def blocks(self) -> list[tuple[int, int, bool]]:
        """(start, end, device) of each brace block: its head (the code since the statement before it) makes it
        device code when it carries __global__ / __device__ or a macro for them; a block inside one is device code
        too, as the tree's functions and lambdas are."""
        found: list[tuple[int, int, bool]] = []
        stack: list[tuple[int, bool]] = []
        code = self.code
        brace = -1  # the brace before: a head is searched back for `;` only that far, never to the file's start
        for match in _BRACES.finditer(code):
            start = match.start()
            if code[start] == "{":
                head = code[max(code.rfind(";", brace + 1, start), brace) + 1 : start]
                outer = stack[-1][1] if stack else False
                stack.append((start, outer or ("(" in head and self._device_head(head))))
            elif stack:
                opened, device = stack.pop()
                found.append((opened, start, device))
            brace = start
        return found

    def _device_head(self, head: str) -> bool:
        """The words before the head's first `(` (return type and qualifiers, as the tree reads them) name
        __global__ or __device__, or a macro for them."""
        for word in _IDENT.findall(head[: head.find("(")]):
            if word in ("__global__", "__device__") or DEVICE_MACRO.search(word):
                return True
            if word in self.defined and _DEVICE_QUALIFIER.search(self._macro_body(word)):
                return True
        return False

    def _macro_body(self, name: str) -> str:
        """_macro_body of NAME in the code, found once per name (a head per block asks again)."""
        bodies = self._macro_bodies
        if name not in bodies:
            bodies[name] = _macro_body(self.code, name)
        return bodies[name]

    @cached_property
    def _macro_bodies(self) -> dict[str, str]:
        return {}

    def in_device_code(self, offset: int) -> bool:
        """Inside a block whose head (or an enclosing one's) is a device function's or lambda's."""
        starts, device = self._device_runs
        return device[bisect.bisect_right(starts, offset) - 1]

    @cached_property
    def _device_runs(self) -> tuple[list[int], list[bool]]:
        """Where device code starts and stops: (offsets, whether the offsets from each one on up to the next are
        device code). The blocks nest, and a block inside a device block is device code itself, so the innermost
        block around an offset decides; one bisection a question instead of a walk over every block."""
        starts, device = [0], [False]
        open_blocks: list[tuple[int, bool]] = []  # (end, device) of the blocks around the current offset
        for start, end, inside in sorted(self.blocks):
            while open_blocks and open_blocks[-1][0] <= start:
                starts.append(open_blocks.pop()[0])
                device.append(open_blocks[-1][1] if open_blocks else False)
            starts.append(start + 1)
            device.append(inside)
            open_blocks.append((end, inside))
        while open_blocks:
            starts.append(open_blocks.pop()[0])
            device.append(open_blocks[-1][1] if open_blocks else False)
        return starts, device

    @cached_property
    def declared(self) -> frozenset[str]:
        """The API names this file declares itself (a wrapper `cudaError_t cudaMalloc(...)`, a `#define`), as
        their neighbours show: every use of them is the file's own, not the CUDA API."""
        table = api_map()
        enums = re.search(r"\benum\b", self.code) is not None
        found = set(self.defined)
        for word, offset in self.words:
            if (word in table and word not in found and not _in_directive(self.code, offset)
                    and _may_declare(self.code, offset, offset + len(word), enums)):
                found.add(word)
        return frozenset(found)


# Comments, strings and #include paths: every branch starts with a literal character, so the regex engine skips
# to candidates.
_SKIPPED = re.compile(
    r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|R"(?P<delim>[^()\\\s]{0,16})\([\s\S]*?\)(?P=delim)"'
    r'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n]){1,8}\'|#[ \t]*include[ \t]*(?P<include>[<"][^>"\n]*[>"])'
)
_DIRECTIVE = re.compile(r"#[ \t]*(?P<keyword>define|undef|ifdef|ifndef|if|elifdef|elifndef|elif|else|endif)\b")
_DEFINED_NAME = re.compile(r"[ \t]+([A-Za-z_]\w*)")
_GAP = r"(?:\s|\\\n|//[^\n]*|/\*[\s\S]*?\*/)*"  # blanks, line continuations and comments
_ASM = re.compile(
    rf"(?:asm|__asm__|__asm){_GAP}(?:(?:volatile|__volatile__|goto|inline){_GAP})*\({_GAP}"
    rf'((?:(?:R"(?P<delim>[^()\\\s]{{0,16}})\([\s\S]*?\)(?P=delim)"|"(?:\\.|[^"\\])*"){_GAP})+)'
)


def _words(words: frozenset[str]) -> re.Pattern[str]:
    """WORDS, longest first; the left word boundary is checked by the caller (a leading \\b would stop the
    engine from skipping ahead to the first characters of the words). Compiled once per process."""
    if words not in _WORD_PATTERNS:
        _WORD_PATTERNS[words] = re.compile(f"(?:{longest_match(set(words))})\\b")
    return _WORD_PATTERNS[words]


def _found_words(code: str, words: frozenset[str]) -> list[tuple[str, int]]:
    """(word, offset) of each of WORDS in CODE. One longest-match regex of the words once it is compiled (in the
    parent before the workers start) or once this process has lexed a few files; before that, every identifier
    looked up in WORDS (compiling ~8,000 names costs 0.2 s, more than `migrate check` on a few files)."""
    pattern = _WORD_PATTERNS.get(words)
    if pattern is None:
        _LEXED[words] = _LEXED.get(words, 0) + 1
        if _LEXED[words] <= _COMPILE_AFTER:
            return [(m.group(), m.start()) for m in _IDENT.finditer(code) if m.group() in words]
        pattern = _words(words)
    return [(m.group(), m.start()) for m in pattern.finditer(code)
            if m.start() == 0 or not _is_word_char(code[m.start() - 1])]


_WORD_PATTERNS: dict[frozenset[str], re.Pattern[str]] = {}
_LEXED: dict[frozenset[str], int] = {}
_COMPILE_AFTER = 32  # files lexed for a set of words before its regex is compiled


def _code_view(text: str) -> tuple[str, list[tuple[str, int]]]:
    """TEXT with its comments, string literals and #include paths blanked (newlines kept), and the includes."""
    includes: list[tuple[str, int]] = []

    def blank(match: re.Match[str]) -> str:
        skipped = match.group()
        if match.group("include") is not None:
            start = match.start()
            if not text[text.rfind("\n", 0, start) + 1 : start].strip():
                includes.append((match.group("include")[1:-1].strip(), match.start("include")))
        return " " * len(skipped) if "\n" not in skipped else _NOT_NEWLINE.sub(" ", skipped)

    return _SKIPPED.sub(blank, text), includes


_NOT_NEWLINE = re.compile(r"[^\n]")
_BRACES = re.compile(r"[{}]")
_PARENS = re.compile(r"[()]")
_DEVICE_QUALIFIER = re.compile(r"\b(?:__device__|__global__)\b")


def _macro_body(code: str, name: str) -> str:
    """The body of `#define NAME body` in CODE (its first line), or ''."""
    match = re.search(rf"#[ \t]*define[ \t]+{re.escape(name)}\b([^\n]*)", code)
    return match.group(1) if match else ""


def lex(text: str, words: frozenset[str]) -> Lexed:
    """The interesting parts of TEXT's code, from a few regex passes that each skip ahead in C."""
    code, includes = _code_view(text)
    found = _found_words(code, words)
    defined: set[str] = set()
    conditionals = _Conditionals()
    counter = _Lines(text)
    directives = []
    for match in _DIRECTIVE.finditer(code):
        start = match.start()
        line_start = code.rfind("\n", 0, start) + 1
        if code[line_start:start].strip():
            continue
        keyword, line = match.group("keyword"), counter.line(start)
        if (directive := preproc.directive_at(text, line_start, line)) is not None:
            directives.append(directive)
        if keyword == "define":
            if name := _DEFINED_NAME.match(code, match.end()):
                defined.add(name.group(1))
        elif keyword != "undef":
            conditionals.directive(keyword, code[match.end() : code.find("\n", match.end()) % (len(code) + 1)], line)
    asm = []
    for start in _asm_keywords(code):
        statement = _ASM.match(text, start)
        if statement and not _is_asm_label(text, statement):
            asm.append((statement.group(1), start))
    launches = [m.start() for m in re.finditer("<<<", code)]
    return Lexed(found, includes, asm, launches, frozenset(defined), conditionals.ranges, tuple(directives), counter,
                 code, words)


def _asm_keywords(code: str) -> Iterator[int]:
    """Offsets of the words asm, __asm and __asm__ (found by plain search: a regex of them stops at every `a`)."""
    start = code.find("asm")
    while start != -1:
        begin = start - 2 if code.startswith("__", start - 2) else start
        end = start + 3 + (2 if code.startswith("__", start + 3) and begin < start else 0)
        if (begin == 0 or not _is_word_char(code[begin - 1])) and (end == len(code) or not _is_word_char(code[end])):
            yield begin
        start = code.find("asm", start + 3)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


class _Lines:
    """1-based line numbers of offsets, counted incrementally (offsets mostly come in order)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.number = 1

    def line(self, offset: int) -> int:
        if offset < self.offset:  # counted back from where we are: a kernel's end, then the next kernel's start
            self.number -= self.text.count("\n", offset, self.offset)
        else:
            self.number += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.number

    def point(self, offset: int) -> tuple[int, int]:
        line = self.line(offset)
        return line, offset - self.text.rfind("\n", 0, offset)


class _Conditionals:
    """The #if / #elif / #endif nesting, giving the line ranges of blocks any branch of which tests a HIP macro."""

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []  # [start line, tests a HIP macro]
        self.ranges: list[tuple[int, int]] = []

    def directive(self, name: str, rest: str, line: int) -> None:
        hip = any(preproc.tests_hip(word) for word in _IDENT.findall(rest))
        if name.startswith("if"):
            self.stack.append([line, hip])
        elif name.startswith("el") and name != "else" and self.stack:
            self.stack[-1][1] = self.stack[-1][1] or hip
        elif name == "endif" and self.stack:
            start, hip_branch = self.stack.pop()
            if hip_branch:
                self.ranges.append((start, line))


TokenMatcher = Callable[[Lexed, str, Mapping[str, Any]], Iterator[Hit]]

# Words before an API name that leave it a use, not the name a declaration introduces.
_USE_AFTER = frozenset({
    "return", "case", "else", "do", "throw", "new", "delete", "sizeof", "typename", "typedef", "co_return",
    "co_yield", "co_await", "goto", "const", "volatile", "static", "extern", "inline", "constexpr", "unsigned",
    "signed", "virtual", "explicit", "friend", "mutable", "register", "thread_local", "template", "decltype",
    "alignof", "noexcept", "operator", "__host__", "__device__", "__global__", "__forceinline__", "__inline__",
    "__noinline__", "public", "private", "protected", "struct", "class", "union", "enum", "__shared__",
    "__constant__", "__managed__", "__restrict__", "if", "ifdef", "ifndef", "elif", "endif", "undef", "pragma",
    "error",
})
_MACRO_NAME = re.compile(r"_*[A-Z][A-Z0-9_]{2,}")  # CUTLASS_HOST_DEVICE cudaError_t f(): a qualifier macro
_PREVIOUS_WORD = re.compile(r"([A-Za-z_]\w*)\s*$")


def _may_declare(code: str, start: int, end: int, enums: bool) -> bool:
    """Whether the name at START..END may be one a declaration introduces (or a label), judged by its neighbours."""
    before = code[max(0, start - 64) : start].rstrip()
    if before[before.rfind("\n") + 1 :].lstrip().startswith("#"):
        before = ""  # the line before is a directive: NAME starts a statement
    after = code[end : end + 64].lstrip()[:3]
    previous = before[-1:]
    if before.endswith("::"):
        return False  # `ns::name` or `::name`: a use
    if after[:1] in ("*", "&", "<") or (after[:1] and _is_word_char(after[0])) or after.startswith("::"):
        return False  # a type (`cudaError_t err`, `cudaStream_t* s`) or a scope: what follows is declared
    if after.startswith(":") and not after.startswith("::") and previous in ("", ";", "{", "}", ":"):
        return True  # a label
    if _is_word_char(previous):
        word = _PREVIOUS_WORD.search(before)
        name = word.group(1) if word else ""
        if name in ("struct", "class", "union", "enum"):
            return after.startswith(("{", ":"))
        return name not in _USE_AFTER and not _MACRO_NAME.fullmatch(name)
    if previous == ">" and re.search(r"template\s*<[^;{}]*>$", before):
        return False
    if previous in ("*", "&", ">"):
        rest = before[:-1].rstrip()
        return bool(rest) and (_is_word_char(rest[-1]) or rest[-1] in ">*&")
    if previous == "}":
        return after[:1] in (";", ",", "=", "[")  # typedef struct {...} NAME;
    if previous in ("{", ","):
        if after.startswith("=") and not after.startswith("=="):
            return True
        return enums and after[:1] in (",", "}") and _in_enum_body(code, start)
    return False


def _in_enum_body(code: str, offset: int) -> bool:
    """OFFSET is directly inside the braces of an `enum ... {`."""
    depth = 0
    for index in range(offset - 1, max(-1, offset - 4096), -1):
        char = code[index]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                return char == "{" and re.search(r"\benum\b[^;{}()]*$", code[max(0, index - 200) : index]) is not None
            depth -= 1
    return False


def api_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    names = api_names_of(frozenset(params["libraries"]), params["with_hip"])
    for word, offset in lexed.words:
        entry = names.get(word)
        if entry is None or word in lexed.declared or _member_or_scoped(lexed.code, offset):
            continue
        line, column = lexed.point(offset)
        yield Hit(line, column, hip=_suggestion(entry), message=_message(entry), symbol=entry.cuda_name)


def _member_or_scoped(code: str, offset: int) -> bool:
    """`x.name`, `p->name` and `ns::name` are not the C API's names; `::name`, the global one, is, and so is
    `MACRO ::name` (a blank before `::`: tree-sitter reads the word as a macro, not as a scope)."""
    before = code[max(0, offset - 64) : offset].rstrip()
    if before.endswith("->") and before[:-2].rstrip().endswith(")"):
        return False  # `(...) -> cudaError_t`: a trailing return type
    if before.endswith((".", "->")):
        return True
    if not before.endswith("::"):
        return False
    scope = before[:-2]
    return bool(scope) and (_is_word_char(scope[-1]) or scope[-1] == ">")


def include_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    names, prefixes = _headers(tuple(params["headers"]))
    for name, offset in lexed.includes:
        if name in names or name.startswith(prefixes):
            hip = header_map().hip_header(name)
            line, column = lexed.point(offset)
            yield Hit(line, column, hip=f"#include <{hip}>" if hip else None, symbol=name)


def _is_asm_label(text: str, match: re.Match[str]) -> bool:
    """`int f(int x) __asm("llvm.amdgcn...");` names a declaration's symbol (Composable Kernel binds LLVM
    intrinsics this way): one word after a declarator's `)`, never `volatile`, unlike an asm statement."""
    before = match.start() - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    template = match.group(1).strip()
    return (before >= 0 and text[before] == ")" and "volatile" not in match.group(0)
            and template.count('"') == 2 and not any(c.isspace() for c in template[1:-1]))


def _asm_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    pattern = asm_pattern(params["pattern"])
    for code, offset in lexed.asm:
        if pattern.search(_template(code)):
            yield Hit(*lexed.point(offset))


def asm_statements(lexed: Lexed) -> Iterator[tuple[int, str]]:
    """(offset, template) of each asm statement in the code (macro bodies included)."""
    for code, offset in lexed.asm:
        yield offset, _template(code)


def _template(code: str) -> str:
    return " ".join(_STRING.findall(code)).replace("\\n", "\n").replace("\\t", "\t")


def namespace_hits(lexed: Lexed, code: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The rule's namespaces as a scope (`ns::`, or only `ns::member` for the given members) or defined
    (`namespace ns`), `using namespace` of the given names, and #include paths matching its `include`: once per line."""
    namespaces, members = frozenset(params["namespaces"]), params.get("members")
    using = frozenset(params.get("using", ()))
    places: list[tuple[int, str]] = []
    for word, offset in lexed.words:
        if word not in namespaces and word not in using:
            continue
        end = offset + len(word)
        used = _scoped_member(code, end, members) if members else _scope_or_definition(code, offset, end)
        if word in namespaces and used:
            places.append((offset, word))
        elif word in using and code[max(0, offset - 32) : offset].split()[-2:] == ["using", "namespace"]:
            places.append((offset, word))
    if params.get("include"):
        places.extend((offset, f"<{path}>") for path, offset in lexed.includes if _included(params["include"], path))
    seen: set[int] = set()
    for offset, symbol in sorted(places):
        line, column = lexed.point(offset)
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, symbol=symbol)


_COMPARISON_AFTER = re.compile(
    r"[ \t]*(<=|>=|==|!=|<(?![<=])|>(?![>=]))[ \t]*(\(*[ \t]*[-!]?[ \t]*[A-Za-z_0-9]\w*)"
)
_COMPARISON_BEFORE = re.compile(r"([A-Za-z_0-9]\w*\)*)([ \t]*)(<=|>=|==|!=|<|>)[ \t]*$")


def compare_hits(lexed: Lexed, code: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """A comparison (< <= > >= == !=) with one of the rule's names as an operand, in code or in an #if / #elif
    condition (a #define body is not an expression yet): once per line, at the comparison's left operand. With
    `uses: true`, instead each line of code (no directive) that uses one of the names as a value, not compared."""
    if params.get("uses"):
        yield from _value_hits(lexed, code, frozenset(params["names"]))
        return
    names = frozenset(params["names"])
    seen: set[int] = set()
    for word, offset in lexed.words:
        if word not in names or not _expression_context(code, offset):
            continue
        place = _comparison(code, offset, offset + len(word))
        if place is None:
            continue
        start, symbol = place
        line, column = lexed.point(start)
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, symbol=" ".join(symbol.split()))


def _value_hits(lexed: Lexed, code: str, names: frozenset[str]) -> Iterator[Hit]:
    """Each line of code (outside directives, so `#ifdef NAME` and `defined(NAME)` stay quiet) where one of NAMES is
    used as a value: returned, assigned, printed or computed with, not compared (the comparison rule's place)."""
    seen: set[int] = set()
    for word, offset in lexed.words:
        if word not in names or _in_directive(code, offset) or _comparison(code, offset, offset + len(word)):
            continue
        line, column = lexed.point(offset)
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, symbol=word)


def _comparison(code: str, start: int, end: int) -> tuple[int, str] | None:
    """(offset of the left operand, the comparison's text) when the name at START..END is compared."""
    after = _COMPARISON_AFTER.match(code, end)
    if after and not (after.group(1) == ">" and code[after.end(1) :].lstrip().startswith("::")):
        return start, code[start : after.end()]
    before = _COMPARISON_BEFORE.search(code, max(0, start - 80), start)
    if before is None or before.end() != start:
        return None
    if before.group(3) == "<" and not before.group(2) and code[start - 1] == "<":
        return None  # Foo<NAME: a template argument
    if code[before.start() - 1 : before.start()] in (".", ":", ">") or code[before.start(3) - 1] in "<>-=!":
        return None  # a member, a scoped name, or part of <<, >>, ->, <=>
    return before.start(), code[before.start() : end]


def _expression_context(code: str, offset: int) -> bool:
    """Code, or the condition of an #if / #elif; not another directive."""
    head = _directive_head(code, offset)
    return not head.startswith("#") or re.match(r"#\s*(?:if|elif)\b", head) is not None


def _in_directive(code: str, offset: int) -> bool:
    return _directive_head(code, offset).startswith("#")


def _directive_head(code: str, offset: int) -> str:
    """The logical line (followed back across line continuations) up to OFFSET, without leading blanks."""
    line_start = code.rfind("\n", 0, offset) + 1
    if line_start > 1 and code[line_start - 2] == "\\":
        line_start = _per_text(code, _logical_starts).get(line_start, line_start)
    return code[line_start:offset].lstrip()


def _logical_starts(code: str) -> dict[int, int]:
    """The start of every line that continues another, to the start of its logical line: a #define continued over
    20,000 lines is walked once, not once per word in it."""
    starts: dict[int, int] = {}
    for match in _CONTINUATION.finditer(code):
        line_start = code.rfind("\n", 0, match.start()) + 1
        starts[match.end()] = starts.get(line_start, line_start)
    return starts


_CONTINUATION = re.compile(r"\\\n")
_Table = TypeVar("_Table")
_TEXTS: list[tuple[str, dict[object, Any]]] = []  # the last two texts asked about, with their tables


def _per_text(text: str, build: Callable[[str], _Table]) -> _Table:
    """BUILD(TEXT), made once per text: a file's rules ask about its code and its text, each many times."""
    tables = next((kept for seen, kept in _TEXTS if seen is text), None)
    if tables is None:
        tables = {}
        _TEXTS[:] = [(text, tables), *_TEXTS[:1]]
    if build not in tables:
        tables[build] = build(text)
    return tables[build]  # type: ignore[no-any-return]


@lru_cache(maxsize=65536)
def _included(pattern: str, path: str) -> bool:
    """PATTERN (a rule's regex of #include paths) finds PATH: a tree includes the same headers thousands of times."""
    return _regex(pattern).search(path) is not None


def _scope_or_definition(code: str, start: int, end: int) -> bool:
    return code[end : end + 8].lstrip().startswith("::") or _defines_namespace(code, start)


def _scoped_member(code: str, end: int, members: list[str]) -> bool:
    """`ns::member` written without blanks (as the rule's query compared the qualified name's text)."""
    if not code.startswith("::", end):
        return False
    name = _IDENT.match(code, end + 2)
    return name is not None and any(name.group().startswith(m) if m.endswith("_") else name.group() == m
                                    for m in members)


def _defines_namespace(code: str, offset: int) -> bool:
    """`namespace ns` (a definition); `using namespace ns;` names no namespace_identifier in the tree."""
    before = code[max(0, offset - 32) : offset].split()
    return before[-1:] == ["namespace"] and before[-2:-1] != ["using"]


def lexed(doc: Document, words: frozenset[str]) -> Lexed:
    """The lexer's pass over a document for WORDS: the scan's own when it lexed the file first, else made now."""
    found: Lexed | None = doc.lexed
    if found is None or not (words is found.searched or words <= found.searched):
        found = doc.lexed = lex(doc.text, words | found.searched if found else words)
    return found


def kernel_hits(lexed: Lexed, code: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """`form: definition`: each __global__ function defined (with a body), at its name; `form: launch`: each
    `<<<` call, at its callee, in host or device code (`where`). Once per line; never in a #define."""
    if params["form"] == "definition":
        places = _kernel_definitions(lexed, code)
    else:
        where = params.get("where", "any")
        places = (
            (_name_before(code, offset), _call_end(code, offset)) for offset in lexed.launches
            if where == "any" or lexed.in_device_code(offset) == (where == "device")
        )
    seen: set[int] = set()
    for place, end in places:
        if place is None:
            continue
        line, column = lexed.point(place[0])
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, end_line=lexed.point(end)[0], symbol=" ".join(place[1].split()) or None)


def _call_end(code: str, launch: int) -> int:
    """The offset of the `)` closing the arguments of the launch whose `<<<` is at LAUNCH (else of `>>>`)."""
    found = _per_text(code, _chevrons)
    next_chevrons = bisect.bisect_left(found, launch)
    if next_chevrons == len(found):
        return launch
    chevrons = found[next_chevrons]
    ends = _per_text(code, _argument_ends)
    if chevrons not in ends:  # every `<<<` before the same `>>>` asks again
        ends[chevrons] = _arguments_end(code, chevrons)
    return ends[chevrons]


def _arguments_end(code: str, chevrons: int) -> int:
    """The offset of the `)` closing the arguments after the `>>>` at CHEVRONS (else CHEVRONS)."""
    index = chevrons + 3
    while index < len(code) and code[index].isspace():
        index += 1
    if index == len(code) or code[index] != "(":
        return chevrons
    close = _per_text(code, _closing_parens).get(index, -1)
    return close if index < close < index + 20000 else chevrons


def _argument_ends(_code: str) -> dict[int, int]:
    """Filled by _call_end: the end of the launch arguments after each `>>>`."""
    return {}


def _chevrons(code: str) -> list[int]:
    """Every offset where `>>>` starts (overlapping ones too, as str.find sees them), in order."""
    found, start = [], code.find(">>>")
    while start != -1:
        found.append(start)
        start = code.find(">>>", start + 1)
    return found


def _closing_parens(code: str) -> dict[int, int]:
    """Each `(` that is closed, to its `)`: one pass for the arguments of every launch."""
    closing: dict[int, int] = {}
    opened: list[int] = []
    for match in _PARENS.finditer(code):
        if match.group() == "(":
            opened.append(match.start())
        elif opened:
            closing[opened.pop()] = match.start()
    return closing


_NOT_A_NAME = frozenset({"__launch_bounds__", "__attribute__", "alignas", "__declspec", "decltype", "noexcept",
                         "__cluster_dims__", "__maxnreg__"})


def _kernel_definitions(lexed: Lexed, code: str) -> Iterator[tuple[tuple[int, str] | None, int]]:
    """(name, offset) of the kernel each `__global__` defines; one in the head of the one before belongs to the
    same declaration (and is not read again: a head of 20,000 `__global__` words is read once)."""
    head_end = -1
    for word, offset in lexed.words:
        if word == "__global__" and offset >= head_end:
            name, head_end = _kernel_name(code, offset)
            yield name, offset


def _kernel_name(code: str, offset: int) -> tuple[tuple[int, str] | None, int]:
    """(start, text) of the name of the function the `__global__` at OFFSET qualifies, when a body follows: the
    last top-level `(...)` group of its head that follows a name (not __launch_bounds__ and the like); and the
    offset where its head ends."""
    if _in_directive(code, offset):
        return None, offset  # `#define KERNEL __global__`: not a function until the macro is used
    found = None
    depth = 0
    end = min(len(code), offset + 20000)
    for index in range(offset, end):
        char = code[index]
        if char == "(":
            if depth == 0:
                name = _name_before(code, index)
                if name is not None and name[1].split("<")[0].split("::")[-1].strip() not in _NOT_A_NAME:
                    found = name
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and char in "{;}":
            return (found if char == "{" else None), index  # a body, or only a declaration
    return None, end


def _name_before(code: str, offset: int) -> tuple[int, str] | None:
    """The (possibly qualified, possibly templated) name that ends right before OFFSET: `ns::kernel<T>`."""
    index = _blank_before(code, offset)
    end = index
    while True:
        if index > 0 and code[index - 1] == ">":
            index = _template_start(code, index - 1)
            if index < 0:
                return None
            index = _blank_before(code, index)
        word_end = index
        while index > 0 and _is_word_char(code[index - 1]):
            index -= 1
        if index == word_end or code[index].isdigit():
            return None
        before = index
        while before > 0 and code[before - 1] in " \t":
            before -= 1
        if code[before - 2 : before] != "::" or before < 2:
            return index, code[index:end]
        index = before - 2
        while index > 0 and code[index - 1] in " \t":
            index -= 1
        if index == 0 or not (_is_word_char(code[index - 1]) or code[index - 1] == ">"):
            return before - 2, code[before - 2 : end]  # `::kernel`: the global one


def _blank_before(code: str, offset: int) -> int:
    """OFFSET moved back over blanks and line continuations."""
    while offset > 0 and (code[offset - 1].isspace() or code[offset - 1] == "\\"):
        offset -= 1
    return offset


def _template_start(code: str, close: int) -> int:
    """The offset of the `<` that the `>` at CLOSE ends, or -1."""
    depth = 0
    for index in range(close, max(-1, close - 2000), -1):
        char = code[index]
        if char == ">":
            depth += 1
        elif char == "<":
            depth -= 1
            if depth == 0:
                return index
        elif char in ";{}":
            return -1
    return -1


_TOKEN_MATCHERS: dict[str, TokenMatcher] = {
    "cuda-api": api_hits,
    "cuda-include": include_hits,
    "inline-asm": _asm_hits,
    "cuda-kernel": kernel_hits,
    "cuda-namespace": namespace_hits,
    "cuda-compare": compare_hits,
}


@dataclass(frozen=True)
class Plan:
    """How one file kind's rules run on tokens: the words the lexer looks for, the rules decided on tokens, and
    for each rule that needs the tree, the test its file's code must pass for it to fire."""

    words: frozenset[str]
    token_rules: tuple[tuple[Rule, TokenMatcher], ...]
    tree_rules: tuple[tuple[Rule, CodeTest], ...]
    device_asm: tuple[tuple[Rule, re.Pattern[str]], ...]  # inline-asm rules that also look at device code

    def needing_tree(self, lexed: Lexed) -> tuple[Rule, ...]:
        """The rules that must run on a first-party file's tree: those with a candidate in its code, and the
        device-code asm rules when it has asm they do not recognise (the tokens do not show device code)."""
        code = Code(lexed.code, [path for path, _ in lexed.includes], frozenset(word for word, _ in lexed.words))
        found = [rule for rule, test in self.tree_rules if test(code)]
        templates = [_template(source) for source, _ in lexed.asm]
        found.extend(rule for rule, pattern in self.device_asm
                     if any(unknown_device_asm(t) and not pattern.search(t) for t in templates))
        return tuple(found)


def plan(rules: tuple[Rule, ...]) -> Plan:
    """The token plan of RULES (made once per ruleset and kind): the lexer looks for the identifiers every rule's
    matcher declares (`identifiers=`), for the token rules and for the tree rules' code tests alike."""
    tests = []
    identifiers: set[str] = set()
    for rule in rules:
        matcher = matchers.get(rule.match["matcher"])
        identifiers.update(matcher.identifiers(rule.match) if matcher and matcher.identifiers else ())
        if token_matcher(rule) is None:
            tests.append((rule, matcher.candidates(rule.match) if matcher and matcher.candidates else _always))
    device_asm = tuple((r, asm_pattern(r.match["pattern"])) for r in rules
                       if r.match["matcher"] == "inline-asm" and r.match.get("device_code"))
    kept = tuple((r, m) for r in rules if (m := token_matcher(r)) is not None)
    words = frozenset(identifiers)
    # One object per set of words: the regex cache and Lexed.searched compare sets of ~8,000 names, which costs
    # 30 µs a file unless they are the same object.
    return Plan(_SAME_WORDS.setdefault(words, words), kept, tuple(tests), device_asm)


_SAME_WORDS: dict[frozenset[str], frozenset[str]] = {}


def _always(_code: Code) -> bool:
    return True


def token_matcher(rule: Rule) -> TokenMatcher | None:
    """The token-level form of RULE, or None when the rule needs the tree (it does not run on vendored code)."""
    return _TOKEN_MATCHERS.get(rule.match["matcher"])


def warm(words: frozenset[str]) -> None:
    """Compile the lexer's regex for WORDS now: forked workers then share it."""
    _words(words)


# --- what the cuda-api, cuda-include and inline-asm matchers decide, on tokens in every file

def _wanted(entry: ApiEntry, libraries: frozenset[str], with_hip: bool | str) -> bool:
    if entry.library not in libraries:
        return False
    if with_hip == "any":
        return entry.is_rename or not entry.has_hip
    return entry.is_rename if with_hip else not entry.has_hip


@cache
def api_names_of(libraries: frozenset[str], with_hip: bool | str) -> dict[str, ApiEntry]:
    return {name: e for name, e in api_map().items() if _wanted(e, libraries, with_hip)}


@cache
def api_name_set(libraries: frozenset[str], with_hip: bool | str) -> frozenset[str]:
    return frozenset(api_names_of(libraries, with_hip))


def _suggestion(entry: ApiEntry) -> str | None:
    if entry.has_hip:
        return entry.hip_name
    return entry.roc_name or None


def _message(entry: ApiEntry) -> str:
    status = f" ({entry.status})" if entry.status else ""
    note = f"; {entry.note}" if entry.note else ""
    if entry.has_hip:
        return f"{entry.cuda_name} is {entry.hip_name} in HIP{status}{note}: a mechanical rename."
    native = f"; the ROCm library has {entry.roc_name}" if entry.roc_name else ""
    return (
        f"{entry.cuda_name} ({entry.library}: {entry.section}) has no HIP name in the HIPIFY tables "
        f"(snapshot 2024-10){status}{native}{note}: check your ROCm release's headers, else rewrite this use."
    )


@cache
def _headers(headers: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """A cuda-include rule's headers: (exact names, prefixes), from names and prefixes ending in `/` or `*`."""
    prefixes = tuple(h.rstrip("*") for h in headers if h.endswith(("/", "*")))
    return frozenset(h for h in headers if not h.endswith(("/", "*"))), prefixes


_STRING = re.compile(r'"((?:\\.|[^"\\])*)"')
# AMD GCN/CDNA mnemonics (s_nop, v_add_f32, ds_swizzle_b32, ...): already-ported asm, not PTX.
_GCN = re.compile(r"^\s*(?:s|v|ds|buffer|global|flat|scratch|exp)_[a-z0-9_]+\b")


def asm_pattern(pattern: str | list[str]) -> re.Pattern[str]:
    """An inline-asm rule's pattern (a regex or a list of them), compiled once."""
    return _regex(pattern if isinstance(pattern, str) else "|".join(f"(?:{p})" for p in pattern))


@cache
def _regex(source: str) -> re.Pattern[str]:
    return re.compile(source)


def unknown_device_asm(template: str) -> bool:
    """Non-empty asm that is not recognisably AMD's: in CUDA device code it can only be PTX."""
    return bool(template.strip()) and _GCN.match(template) is None
