"""Token-level matching of vendored C/C++/CUDA code: a few regex passes, no tree-sitter parse.

Vendored and bundled library trees (third_party/, a bundled CUTLASS) are counted once per rule by the risk
model, so they need to say which rules fire, not the structure around each use. The lexer skips comments
and strings, and reports the few things a rule can decide on tokens: CUDA API names, #include paths, asm
templates, `name::` scopes, `__global__` and `<<<`. docs/performance.md lists what is lost."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from migrate.apimap import api_map, api_names, header_map
from migrate.matchers import Hit
from migrate.matchers.cuda_api import _message, _names, _suggestion
from migrate.matchers.cuda_asm import _STRING, _compiled, _joined
from migrate.matchers.cuda_include import _wanted as _wanted_header
from migrate.model import Rule
from migrate.parse.cuda import longest_match, names_pattern
from migrate.preproc import tests_hip

_IDENT = re.compile(r"[A-Za-z_]\w*")
_NAMESPACE_QUERY = re.compile(r'^\s*\(\(namespace_identifier\) @hit \(#(?:eq|any-of)\? @hit((?:\s*"\w+")+)\)\)\s*$')
_KERNEL_QUERY = re.compile(r'^\s*\(function_definition "__global__"')
_LAUNCH_QUERY = re.compile(r"\(kernel_call_syntax\)")


@dataclass(frozen=True)
class Lexed:
    """What the lexer found in one file's code (never inside comments or strings)."""

    words: list[tuple[str, int]]  # (name, offset) of every interesting identifier
    includes: list[tuple[str, int]]  # (header, offset of the path)
    asm: list[tuple[str, int]]  # (template source, offset of the asm keyword)
    launches: list[int]  # offsets of <<<
    defined: frozenset[str]  # macro names the file #defines
    guarded: list[tuple[int, int]]  # line ranges of #if blocks that test a HIP macro
    lines: _Lines

    def point(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        return self.lines.point(offset)


# Comments and strings: every branch starts with a literal character, so the regex engine skips to candidates.
_SKIPPED = re.compile(
    r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|R"(?P<delim>[^()\\\s"]{0,16})\([\s\S]*?\)(?P=delim)"'
    r'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n]){1,8}\''
)
_DIRECTIVE = re.compile(
    r"#[ \t]*(?:include[ \t]*(?P<include>[<\"][^>\"\n]*[>\"])|define[ \t]+(?P<define>[A-Za-z_]\w*)"
    r"|(?P<cond>ifdef|ifndef|if|elifdef|elifndef|elif|else|endif)\b(?P<rest>[^\n]*))"
)
_ASM = re.compile(
    r'(?:asm|__asm__|__asm)\s*(?:(?:volatile|__volatile__|goto|inline)\s*)*\(\s*((?:"(?:\\.|[^"\\])*"\s*)+)'
)


@cache
def _words(words: frozenset[str]) -> re.Pattern[str]:
    """WORDS, longest first; the left word boundary is checked by the caller (a leading \\b would stop the
    engine from skipping ahead to the first characters of the words)."""
    return re.compile(f"(?:{longest_match(set(words))})\\b")


class _Code:
    """Which offsets of a text are code: outside the comments and string literals."""

    def __init__(self, text: str) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for match in _SKIPPED.finditer(text):
            self.starts.append(match.start())
            self.ends.append(match.end())

    def __contains__(self, offset: int) -> bool:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index < 0 or self.ends[index] <= offset


def lex(text: str, words: frozenset[str]) -> Lexed:
    """The interesting parts of TEXT's code, from a few regex passes that each skip ahead in C."""
    code = _Code(text)
    found = [
        (m.group(), m.start()) for m in _words(words).finditer(text)
        if m.start() in code and (m.start() == 0 or not _is_word_char(text[m.start() - 1]))
    ]
    includes: list[tuple[str, int]] = []
    defined: set[str] = set()
    conditionals = _Conditionals()
    counter = _Lines(text)
    for match in _DIRECTIVE.finditer(text):
        start = match.start()
        if start not in code or text[text.rfind("\n", 0, start) + 1 : start].strip():
            continue
        if match.group("include"):
            includes.append((match.group("include")[1:-1].strip(), match.start("include")))
        elif match.group("define"):
            defined.add(match.group("define"))
        else:
            conditionals.directive(match.group("cond"), match.group("rest"), counter.line(start))
    asm = [
        (m.group(1), m.start()) for m in _ASM.finditer(text)
        if m.start() in code and (m.start() == 0 or not _is_word_char(text[m.start() - 1]))
        and not _is_asm_label(text, m)
    ]
    launches = [m.start() for m in re.finditer("<<<", text) if m.start() in code]
    return Lexed(found, includes, asm, launches, frozenset(defined), conditionals.ranges, counter)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


class _Lines:
    """1-based line numbers of offsets, counted incrementally (offsets mostly come in order)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.number = 1

    def line(self, offset: int) -> int:
        if offset < self.offset:
            self.offset, self.number = 0, 1
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
        hip = any(tests_hip(word) for word in _IDENT.findall(rest))
        if name.startswith("if"):
            self.stack.append([line, hip])
        elif name.startswith("el") and name != "else" and self.stack:
            self.stack[-1][1] = self.stack[-1][1] or hip
        elif name == "endif" and self.stack:
            start, hip_branch = self.stack.pop()
            if hip_branch:
                self.ranges.append((start, line))


TokenMatcher = Callable[[Lexed, str, Mapping[str, Any]], Iterator[Hit]]


def _api_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    names = _names(frozenset(params["libraries"]), params["with_hip"])
    for word, offset in lexed.words:
        entry = names.get(word)
        if entry is None or word in lexed.defined or _member_or_scoped(text, offset):
            continue
        line, column = lexed.point(offset)
        yield Hit(line, column, hip=_suggestion(entry), message=_message(entry), symbol=entry.cuda_name)


def _member_or_scoped(text: str, offset: int) -> bool:
    """`x.name`, `p->name` and `ns::name` are not the C API's names (`::name`, the global one, is)."""
    before = text[max(0, offset - 64) : offset].rstrip()
    if before.endswith((".", "->")):
        return True
    if not before.endswith("::"):
        return False
    scope = before[:-2].rstrip()
    return bool(scope) and (_is_word_char(scope[-1]) or scope[-1] == ">")


def _include_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    for name, offset in lexed.includes:
        if _wanted_header(name, params["headers"]):
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
    pattern = _compiled(_joined(params["pattern"]))
    for code, offset in lexed.asm:
        template = " ".join(_STRING.findall(code)).replace("\\n", "\n").replace("\\t", "\t")
        if pattern.search(template):
            yield Hit(*lexed.point(offset))


def _query_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    source = params["query"]
    namespaces = _namespaces(source)
    if namespaces:
        yield from _scope_hits(lexed, text, namespaces)
    elif _KERNEL_QUERY.match(source):
        yield from _once_per_line(lexed, (o for w, o in lexed.words if w == "__global__"), "__global__")
    elif _LAUNCH_QUERY.search(source) and params.get("where", "any") != "device":
        yield from _once_per_line(lexed, lexed.launches, None)


def _scope_hits(lexed: Lexed, text: str, namespaces: frozenset[str]) -> Iterator[Hit]:
    """`ns::` and `namespace ns`: the places tree-sitter would call a namespace_identifier."""
    seen: set[int] = set()
    for word, offset in lexed.words:
        if word not in namespaces:
            continue
        after = text[offset + len(word) : offset + len(word) + 8].lstrip()
        if after.startswith("::") or text[max(0, offset - 16) : offset].rstrip().endswith("namespace"):
            line, column = lexed.point(offset)
            if line not in seen:
                seen.add(line)
                yield Hit(line, column, symbol=word)


def _once_per_line(lexed: Lexed, offsets: Any, symbol: str | None) -> Iterator[Hit]:
    seen: set[int] = set()
    for offset in offsets:
        line, column = lexed.point(offset)
        if line not in seen:
            seen.add(line)
            yield Hit(line, column, symbol=symbol)


@cache
def _namespaces(query_source: str) -> frozenset[str]:
    match = _NAMESPACE_QUERY.match(query_source)
    return frozenset(re.findall(r'"(\w+)"', match.group(1))) if match else frozenset()


_TOKEN_MATCHERS: dict[str, TokenMatcher] = {
    "cuda-api": _api_hits,
    "cuda-include": _include_hits,
    "inline-asm": _asm_hits,
    "cuda-query": _query_hits,
}


def token_matcher(rule: Rule) -> TokenMatcher | None:
    """The token-level form of RULE, or None when the rule needs the tree (it does not run on vendored code)."""
    name = rule.match["matcher"]
    if name == "cuda-query" and not _query_decidable(rule.match):
        return None
    return _TOKEN_MATCHERS.get(name)


def _query_decidable(params: Mapping[str, Any]) -> bool:
    source = params["query"]
    launch = bool(_LAUNCH_QUERY.search(source)) and params.get("where", "any") != "device"
    return bool(_namespaces(source)) or bool(_KERNEL_QUERY.match(source)) or launch


@cache
def interesting_words(rules: tuple[Rule, ...]) -> frozenset[str]:
    """Every identifier one of RULES looks at on the token level."""
    words: set[str] = set()
    for rule in rules:
        if rule.match["matcher"] == "cuda-api":
            words.update(_names(frozenset(rule.match["libraries"]), rule.match["with_hip"]))
        elif rule.match["matcher"] == "cuda-query":
            words.update(_namespaces(rule.match["query"]))
            if _KERNEL_QUERY.match(rule.match["query"]):
                words.add("__global__")
    return frozenset(words)


def token_rules(rules: tuple[Rule, ...]) -> tuple[tuple[Rule, TokenMatcher], ...]:
    """The rules of RULES that run on tokens, with their token matchers."""
    found = []
    for rule in rules:
        matcher = token_matcher(rule)
        if matcher is not None:
            found.append((rule, matcher))
    return tuple(found)


def warm(words: frozenset[str] | None) -> None:
    """Compile the regex of the CUDA API names, and the lexer for WORDS, now: forked workers then share them."""
    names_pattern(api_names())
    if words is not None:
        _words(words)
