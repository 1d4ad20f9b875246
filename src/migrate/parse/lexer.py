"""The C/C++/CUDA lexer: a few regex passes over a file, no tree-sitter parse.

It blanks comments, string literals and #include paths, then finds what rules can decide without the tree: the
identifiers they look for (CUDA API names, namespaces, macros compared), #include paths, #define names, HIP-guarded
#if blocks, asm statements, `<<<` and, when asked, the brace blocks that are device code. The token-level matchers
(their `tokens` hook) read this pass in every C/C++ file, parsed or not; the scan reads the ROCm evidence and the
preprocessor lines of a file from it too."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from ahocorasick_rs import AhoCorasick, MatchKind

from migrate import preproc
from migrate.lazyre import lazy_regex

_IDENT = re.compile(r"[A-Za-z_]\w*")
# Qualifier macros such as C10_HOST_DEVICE, CUTLASS_DEVICE, DEVICE_INLINE, __DEVICE__ stand for __device__.
DEVICE_MACRO = re.compile(r"(?:^|_)(?:DEVICE|GLOBAL)(?:_|$)")
_Value = TypeVar("_Value")


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
    branches: tuple[tuple[int, str], ...]  # (offset, keyword) of each #if / #ifdef / #elif / #else / #endif
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
        branches: list[tuple[list[tuple[int, bool]], list[tuple[int, bool]] | None]] = []
        code = self.code
        brace = -1  # the brace before: a head is searched back for `;` only that far, never to the file's start
        # a file without #else / #elif has nothing to set aside: braces alone (most files)
        pending = list(self.branches) if any(k.startswith("el") for _, k in self.branches) else []
        pending.reverse()  # popped from the end, in the order of the code
        for match in _BRACES.finditer(code):
            start = match.start()
            while pending and pending[-1][0] < start:
                stack = _branch(branches, stack, pending.pop()[1])
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
        __global__ or __device__, or a macro for them. The last of them is the name of the function or of the
        #define (`CHECK_DEVICE(a, b)`, `#define SWITCH_GLOBAL(...) case s: {`), never a qualifier: a name that
        only looks like a qualifier macro (DEVICE_MACRO) does not make its body device code."""
        words = _IDENT.findall(head[: head.find("(")])
        for index, word in enumerate(words):
            if word in ("__global__", "__device__") or (index < len(words) - 1 and DEVICE_MACRO.search(word)):
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
    def templates(self) -> list[tuple[int, str]]:
        """(offset of the asm keyword, template) of each asm statement, its string literals joined."""
        return [(offset, _template(source)) for source, offset in self.asm]

    def places(self, names: Container[str]) -> list[tuple[int, str]]:
        """(offset, word) of each of NAMES the lexer found, in the order of the code: a rule reads the file's few
        distinct words, not every word found for every rule."""
        offsets = self.offsets
        return sorted([(offset, word) for word in offsets if word in names for offset in offsets[word]])

    @cached_property
    def offsets(self) -> dict[str, list[int]]:
        """The offsets of each word found, in the order of the code."""
        found: dict[str, list[int]] = {}
        for word, offset in self.words:
            found.setdefault(word, []).append(offset)
        return found

    def memo(self, key: str, compute: Callable[[], _Value]) -> _Value:
        """COMPUTE(), made once per pass: what a matcher derives from it for every rule (the names a file declares)."""
        memos = self._memos
        if key not in memos:
            memos[key] = compute()
        return memos[key]  # type: ignore[no-any-return]

    @cached_property
    def _memos(self) -> dict[str, Any]:
        return {}


# Comments, strings and #include paths: every branch starts with a literal character, so the regex engine skips
# to candidates. A block comment runs to the first `*/` (or the end), a string to its first unescaped quote, each
# spelled as runs of one character class (`[^*]*`, `[^"\\\n]*`) that the engine consumes in one loop: a lazy
# `[\s\S]*?` or an alternation per character costs twice as much.
_SKIPPED = re.compile(
    r'//[^\n]*|/\*[^*]*(?:\*+[^*/][^*]*)*(?:\*+/|\**\Z)|R"(?P<delim>[^()\\\s]{0,16})\([\s\S]*?\)(?P=delim)"'
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|\'(?:\\.|[^\'\\\n]){1,8}\'|#[ \t]*include[ \t]*(?P<include>[<"][^>"\n]*[>"])'
)

# What _code_view blanks: _SKIPPED with a run of line comments on consecutive lines, each led only by spaces, taken
# as one match (a callback per match is most of the blanking's cost; blanked, the run is what blanking each comment
# gives, as the newlines and the spaces between them are kept).
_BLANKED = re.compile(r"//[^\n]*(?:\n *//[^\n]*)*|" + _SKIPPED.pattern.removeprefix(r"//[^\n]*|"))


_DIRECTIVE = re.compile(r"#[ \t]*(?P<keyword>define|undef|ifdef|ifndef|if|elifdef|elifndef|elif|else|endif)\b")


_DEFINED_NAME = re.compile(r"[ \t]+([A-Za-z_]\w*)")


_GAP = r"(?:\s|\\\n|//[^\n]*|/\*[\s\S]*?\*/)*"  # blanks, line continuations and comments


_ASM = lazy_regex(
    rf"(?:asm|__asm__|__asm){_GAP}(?:(?:volatile|__volatile__|goto|inline){_GAP})*\({_GAP}"
    rf'((?:(?:R"(?P<delim>[^()\\\s]{{0,16}})\([\s\S]*?\)(?P=delim)"|"(?:\\.|[^"\\])*"){_GAP})+)'
)


def _found_words(code: str, words: frozenset[str]) -> list[tuple[str, int]]:
    """(word, offset) of each of WORDS in CODE: matched by the automaton of the words once it is built (in the
    parent before the workers start) or once this process has lexed a few files; before that, looked up (building
    it for ~8,000 names costs 0.05 s, more than the lexing of a few files that `migrate check` is given)."""
    if words not in _AUTOMATA:
        _LEXED[words] = _LEXED.get(words, 0) + 1
        if _LEXED[words] <= _BUILD_AFTER:
            return looked_up(code, words)
    return matched(code, words)


def looked_up(code: str, words: frozenset[str]) -> list[tuple[str, int]]:
    """(word, offset) of each identifier of CODE that is one of WORDS."""
    return [(m.group(), m.start()) for m in _IDENT.finditer(code) if m.group() in words]


def matched(code: str, words: frozenset[str]) -> list[tuple[str, int]]:
    """What looked_up finds, by one pass of an Aho-Corasick automaton of WORDS: at each place the longest word that
    starts there, kept when it is a whole identifier (the words are identifiers, so no shorter one could be)."""
    automaton, names = _automaton(words)
    end = len(code)
    return [(names[index], start) for index, start, stop in automaton.find_matches_as_indexes(code)
            if (start == 0 or not ((c := code[start - 1]).isalnum() or c == "_"))  # is_word_char, inlined
            and (stop == end or not ((c := code[stop]).isalnum() or c == "_"))]


def _automaton(words: frozenset[str]) -> tuple[AhoCorasick, list[str]]:
    """The leftmost-longest automaton of WORDS and the words by index, built once per process."""
    if words not in _AUTOMATA:
        names = sorted(words)
        _AUTOMATA[words] = AhoCorasick(names, matchkind=MatchKind.LeftmostLongest), names
    return _AUTOMATA[words]


_AUTOMATA: dict[frozenset[str], tuple[AhoCorasick, list[str]]] = {}


_LEXED: dict[frozenset[str], int] = {}


_BUILD_AFTER = 32  # files lexed for a set of words before its automaton is built


def _code_view(text: str) -> tuple[str, list[tuple[str, int]]]:
    """TEXT with its comments, string literals and #include paths blanked (newlines kept), and the includes."""
    includes: list[tuple[str, int]] = []

    def blank(match: re.Match[str]) -> str:
        skipped = match.group()
        if skipped[0] == "#":  # only the #include branch starts with it
            start = match.start()
            if not text[text.rfind("\n", 0, start) + 1 : start].strip():
                includes.append((match.group("include")[1:-1].strip(), match.start("include")))
        if "\n" not in skipped:
            return " " * len(skipped)
        return "\n".join([" " * len(line) for line in skipped.split("\n")])

    return _BLANKED.sub(blank, text), includes


# Only the first branch of an #if / #else counts its braces, as a compiler that takes that branch does (a function
# head written twice, `#if A` / `f(int a) {` / `#else` / `f(long a) {` / `#endif`, opens one block, not two that
# never close).
_BRACES = re.compile(r"[{}]")


def _branch(
    branches: list[tuple[list[tuple[int, bool]], list[tuple[int, bool]] | None]],
    stack: list[tuple[int, bool]],
    keyword: str,
) -> list[tuple[int, bool]]:
    """The open blocks after one conditional directive: an #if remembers them; a later branch starts again from
    them, its first branch's kept aside; #endif goes on from where the first branch left them."""
    if keyword.startswith("if"):
        branches.append((list(stack), None))
    elif keyword == "endif":
        if branches:
            at_if, first = branches.pop()
            return stack if first is None else first
    elif branches:
        at_if, first = branches[-1]
        branches[-1] = (at_if, list(stack) if first is None else first)
        return list(at_if)
    return stack


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
    branches: list[tuple[int, str]] = []
    for match in _DIRECTIVE.finditer(code):
        start = match.start()
        line_start = code.rfind("\n", 0, start) + 1
        if code[line_start:start].strip():
            continue
        keyword, line = match.group("keyword"), counter.line(start)
        if (directive := preproc.directive_at(text, line_start, line)) is not None:
            directives.append(directive)
        if keyword not in ("define", "undef"):
            branches.append((start, keyword))
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
    return Lexed(found, includes, asm, launches, frozenset(defined), conditionals.ranges, tuple(directives),
                 tuple(branches), counter, code, words)


def _asm_keywords(code: str) -> Iterator[int]:
    """Offsets of the words asm, __asm and __asm__ (found by plain search: a regex of them stops at every `a`)."""
    start = code.find("asm")
    while start != -1:
        begin = start - 2 if code.startswith("__", start - 2) else start
        end = start + 3 + (2 if code.startswith("__", start + 3) and begin < start else 0)
        if (begin == 0 or not is_word_char(code[begin - 1])) and (end == len(code) or not is_word_char(code[end])):
            yield begin
        start = code.find("asm", start + 3)


def in_string_literal(text: str, code: str, offset: int) -> bool:
    """Whether OFFSET of TEXT lies in a string literal (not a comment); CODE is TEXT as the lexer blanked it. The
    blanked stretch around OFFSET is read again from its first character, where a literal or a comment starts."""
    if not code[offset].isspace():
        return False
    start = window = offset
    while start == window and window:  # back to the code before the stretch, a window at a time
        window = max(0, window - 4096)
        start = window + len(code[window:start].rstrip())
    for match in _SKIPPED.finditer(text, start):
        if match.start() > offset:
            return False
        if match.end() > offset:
            return match.group()[0] in "\"R"
    return False


def has_whole_word(code: str, word: str) -> bool:
    """WORD occurs in CODE as a whole word, as the regex \\bWORD\\b would find it (by plain search: a regex led
    by \\b tries every position of the text)."""
    start = code.find(word)
    while start != -1:
        end = start + len(word)
        if (start == 0 or not is_word_char(code[start - 1])) and (end == len(code) or not is_word_char(code[end])):
            return True
        start = code.find(word, start + 1)
    return False


def is_word_char(char: str) -> bool:
    """A character of a C identifier (or of a number)."""
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


def _is_asm_label(text: str, match: re.Match[str]) -> bool:
    """`int f(int x) __asm("llvm.amdgcn...");` names a declaration's symbol (Composable Kernel binds LLVM
    intrinsics this way): one word after a declarator's `)`, never `volatile`, unlike an asm statement."""
    before = match.start() - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    template = match.group(1).strip()
    return (before >= 0 and text[before] == ")" and "volatile" not in match.group(0)
            and template.count('"') == 2 and not any(c.isspace() for c in template[1:-1]))


def instruction_offset(text: str, offset: int, pattern: re.Pattern[str]) -> int:
    """The offset of the first PATTERN match in the string literals of the asm statement whose keyword is at OFFSET
    of TEXT when it is on a later line (the line a reader names for a multi-line block: its instruction, not
    `asm volatile(`), else OFFSET."""
    statement = _ASM.match(text, offset)
    if statement is None or (found := pattern.search(statement.group(1))) is None:
        return offset
    instruction = statement.start(1) + found.start()
    return instruction if "\n" in text[offset:instruction] else offset


def _template(code: str) -> str:
    return " ".join(_STRING.findall(code)).replace("\\n", "\n").replace("\\t", "\t")


_STRING = lazy_regex(r'"((?:\\.|[^"\\])*)"')


def warm(words: frozenset[str]) -> None:
    """Build the lexer's automaton of WORDS now: forked workers then share it."""
    _automaton(words)
