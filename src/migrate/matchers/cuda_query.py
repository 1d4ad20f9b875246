"""A tree-sitter query over C/C++/CUDA code, written in the rule: each `@hit` capture fires (once per line); `if_code`
and `unless_code` regexes on the file's code (comments and strings blanked) say in which files it runs at all.
A query joins the one pass every parsed file makes; with `alone: true` it runs by itself, and only in the files its
code test passes: for a rare finding whose patterns match many ordinary nodes (`a.b == c`, `auto x = f()`)."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from migrate import preproc
from migrate.lazyre import lazy_regex
from migrate.matchers import Code, CodeTest, Hit, RuleInvalid, register, require_flags
from migrate.matchers.cuda_common import StringPlaces
from migrate.matchers.cuda_compare import chains
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument, check_queries, query, register_query

_WHERE = ("any", "device", "host")


def _validate(params: Mapping[str, Any]) -> None:
    source = params.get("query")
    if not isinstance(source, str) or not source.strip():
        raise ValueError("cuda-query needs a 'query' string")
    if "hit" not in _capture_names(source):  # the query itself is compiled with the others (_validate_together)
        raise ValueError("cuda-query needs a capture named @hit")
    if params.get("where", "any") not in _WHERE:
        raise ValueError(f"'where' must be one of {', '.join(_WHERE)}")
    validate_code_tests(params)
    require_flags(params, "alone", "hipcc_compiles")
    if params.get("branch_ends") and "directives" not in params:
        raise ValueError("'branch_ends' needs 'directives'")
    if "directives" in params:
        try:
            re.compile(params["directives"])
        except (re.error, TypeError) as exc:
            raise ValueError(f"bad 'directives' regex {params.get('directives')!r}: {exc}") from None


def _capture_names(source: str) -> set[str]:
    """The names of a query's captures (`@name` outside its strings and comments)."""
    return set(_CAPTURE.findall(_QUERY_LITERAL.sub(" ", source)))


_QUERY_LITERAL = lazy_regex(r'"(?:\\.|[^"\\])*"|;[^\n]*')  # a string or a comment in a tree-sitter query
_CAPTURE = lazy_regex(r"@([\w.-]+)")


def _validate_together(rules: Sequence[Mapping[str, Any]]) -> None:
    """Compile every rule's query at once, the scan's bundle among them, and register those that join it
    (parse.cuda.check_queries); where that fails, each alone, to name the bad one."""
    alone = [params["query"] for params in rules if params.get("alone")]
    try:
        check_queries([params["query"] for params in rules if not params.get("alone")], alone)
    except Exception as together:  # tree-sitter raises QueryError (or NameError/SyntaxError in older bindings)
        for index, params in enumerate(rules):
            try:
                query(params["query"])
            except Exception as exc:
                raise RuleInvalid(index, f"bad tree-sitter query: {exc}") from None
        raise RuleInvalid(0, f"the rules' tree-sitter queries do not compile together: {together}") from None


def _prepare(rules: Sequence[Mapping[str, Any]]) -> None:
    """Register the queries that join the bundle (for rules read back from the cache; _validate_together registered
    them when the rules were read in this process)."""
    for params in rules:
        if not params.get("alone"):
            register_query(params["query"], from_rule=True)


def validate_code_tests(params: Mapping[str, Any]) -> None:
    """Check the parameters that decide in which files a rule runs: needles, code, includes, if_code, unless_code,
    identifiers."""
    needles = params.get("needles")
    if needles is not None and not (isinstance(needles, list) and all(isinstance(n, str) and n for n in needles)):
        raise ValueError("'needles' must be a list of non-empty strings")
    for key in ("code", "includes"):
        patterns = params.get(key)
        if patterns is None:
            continue
        if not isinstance(patterns, list) or not patterns or not all(isinstance(c, str) for c in patterns) or needles is None:
            raise ValueError(f"'{key}' must be a list of regexes, with 'needles'")
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"bad '{key}' regex {pattern!r}: {exc}") from None
    for key in ("if_code", "unless_code"):
        if key in params:
            try:
                re.compile(params[key])
            except (re.error, TypeError) as exc:
                raise ValueError(f"bad '{key}' regex {params[key]!r}: {exc}") from None
    names = params.get("identifiers")
    if names is not None and not (isinstance(names, list) and names and all(isinstance(n, str) and n.isidentifier()
                                                                             for n in names)):
        raise ValueError("'identifiers' must be a list of C identifiers")


def query_needles(params: Mapping[str, Any]) -> list[str] | None:
    """The rule's `needles`, or None (the rule runs on every file)."""
    needles = params.get("needles")
    return list(needles) if needles is not None else None


def code_candidates(params: Mapping[str, Any]) -> CodeTest:
    """Whether the query may match: an `includes` regex finds an #include path, or one of the `identifiers` is in
    the code and then one of the `code` regexes (else a needle) is found in the code or in an `#include <path>`
    line. Each regex should start with a literal: the search then runs in C."""
    needles = tuple(params.get("needles") or ())
    sources = tuple(params.get("code") or ())
    includes = tuple(re.compile(p) for p in params.get("includes") or ())
    names = frozenset(params.get("identifiers") or ())
    found = _regex_finder(sources) if sources else _string_finder(needles)

    def test(code: Code) -> bool:
        if not needles:
            return True
        if includes and any(p.search(path) for p in includes for path in code.includes):
            return True
        if names and names.isdisjoint(code.words):
            return False
        return found(code.with_includes)

    if "if_code" not in params and "unless_code" not in params:
        return test
    applies = _file_test(params)
    return lambda code: test(code) and applies(code.text)  # the file tests last: they read the whole code


def _regex_finder(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether one of the regexes PATTERNS finds something in a text (searched as strings when each is one)."""
    if all(re.escape(p) == p for p in patterns):
        return _string_finder(patterns)
    by_prefix: dict[str, list[re.Pattern[str]]] = {}
    by_folded: dict[str, list[re.Pattern[str]]] = {}  # regexes that ignore case, by their prefix in lower case
    whole: list[re.Pattern[str]] = []  # regexes with no prefix known: searched from every position
    for source in patterns:
        pattern, prefix = re.compile(source), literal_prefix(source)
        lower = "" if prefix else folded_prefix(source)  # a case-sensitive prefix rules out (?i): not parsed again
        if prefix:
            by_prefix.setdefault(prefix, []).append(pattern)
        elif lower:
            by_folded.setdefault(lower, []).append(pattern)
        else:
            whole.append(pattern)
    places = _CODE_STRINGS.places_of(by_prefix) if by_prefix else None
    folded_places = _CODE_FOLDED.folded_places_of(by_folded) if by_folded else None
    folding = [pattern for patterns in by_folded.values() for pattern in patterns]

    def found(text: str) -> bool:
        # a match starts where its regex's literal prefix does: tried there only, every rule's prefixes found in
        # one pass over the text (not a search of the whole text for each regex); a regex that ignores case, where
        # the text's lower case holds its prefix in lower case
        if places is not None and _matched_at(by_prefix, places(text), text):
            return True
        if folded_places is not None:
            where = folded_places(text)
            if where is None:  # a character that folds to ASCII (K, ı, ...): the regexes themselves
                if any(pattern.search(text) for pattern in folding):
                    return True
            elif _matched_at(by_folded, where, text):
                return True
        return any(pattern.search(text) for pattern in whole)

    return found


def _matched_at(by_prefix: dict[str, list[re.Pattern[str]]], places: dict[str, list[int]], text: str) -> bool:
    """One of the regexes of BY_PREFIX matches TEXT at one of the PLACES of its prefix."""
    for prefix, starts in places.items():
        for pattern in by_prefix[prefix]:
            if any(pattern.match(text, start) for start in starts):
                return True
    return False


def literal_prefix(pattern: str) -> str:
    """The characters every match of PATTERN starts with (case-sensitive, "" when none are known)."""
    parsed = _PARSER.parse(pattern)
    if parsed.state.flags & re.IGNORECASE:
        return ""
    return _leading_literals(parsed)


def folded_prefix(pattern: str) -> str:
    """For a PATTERN that ignores case as a whole (`(?i)...`), the ASCII characters every match starts with, in lower
    case: a match's first characters are them in any case, or one of the four beyond ASCII that fold to ASCII letters
    (casefold.py); "" for a case-sensitive PATTERN, or when none are known."""
    parsed = _PARSER.parse(pattern)
    if not parsed.state.flags & re.IGNORECASE:
        return ""
    prefix = _leading_literals(parsed)
    ascii_prefix = prefix[: next((i for i, char in enumerate(prefix) if not char.isascii()), len(prefix))]
    return ascii_prefix.lower()


def _leading_literals(parsed: Any) -> str:
    """The literals PARSED starts with, after zero-width tests only (`\\b`, `^`, lookarounds): a match starts where
    they do, and the tests see the text before it (`pattern.match(text, start)` as a search's try at START)."""
    prefix = []
    for op, av in parsed.data:
        if op.name == "LITERAL":
            prefix.append(chr(av))
        elif prefix or op.name not in _ZERO_WIDTH:
            break
    return "".join(prefix)


_ZERO_WIDTH = frozenset({"AT", "ASSERT", "ASSERT_NOT"})


def prefix_search(pattern: str, text: str) -> bool:
    """Whether the regex PATTERN finds something in TEXT, tried only where its literal prefix occurs (re takes a
    prefix only from a regex's very start: past a `\\b` or a lookbehind it tries every position of TEXT)."""
    compiled, prefix = _prefixed(pattern)
    if not prefix:
        return compiled.search(text) is not None
    start = text.find(prefix)
    while start >= 0:
        if compiled.match(text, start) is not None:
            return True
        start = text.find(prefix, start + 1)
    return False


@lru_cache(maxsize=None)
def _prefixed(pattern: str) -> tuple[re.Pattern[str], str]:
    return re.compile(pattern), literal_prefix(pattern)


_PARSER: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")


def _string_finder(strings: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether one of STRINGS is in a text: for several, from one pass per text of an automaton of every rule's
    (a search per string reads a file once for each: tensorrt-cpp has 17)."""
    if len(strings) > 1:
        return _CODE_STRINGS.any_of(strings)
    return lambda text: any(s in text for s in strings)


_CODE_STRINGS = StringPlaces()  # the strings and regex prefixes the rules' code tests look for
_CODE_FOLDED = StringPlaces()  # the prefixes of their regexes that ignore case, in lower case


def _file_test(params: Mapping[str, Any]) -> Callable[[str], bool]:
    """Whether the rule runs on a file with this code: `if_code` found in it, `unless_code` not."""
    wanted = re.compile(params["if_code"]) if "if_code" in params else None
    unwanted = re.compile(params["unless_code"]) if "unless_code" in params else None
    return lambda code: (wanted is None or wanted.search(code) is not None) and (
        unwanted is None or unwanted.search(code) is None)


@register("cuda-query", validate=_validate, needles=query_needles, candidates=code_candidates,
          identifiers=lambda p: frozenset(p.get("identifiers") or ()), validate_together=_validate_together,
          prepare=_prepare)
def match_cuda_query(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line holding an @hit capture of the rule's query, in host code, device code or anywhere."""
    if not isinstance(doc, CudaDocument) or not runs_on(doc, params):
        return iter(())
    doc.expect((params["query"],))  # now, before any rule's first query runs (the scan iterates the hits later)
    return _query_hits(doc, params)


def _query_hits(doc: CudaDocument, params: Mapping[str, Any]) -> Iterator[Hit]:
    nodes = sorted(doc.captures(params["query"]).get("hit", []), key=lambda n: n.start_byte)
    hits = list(hits_on_lines(doc, nodes, params.get("where", "any")))
    if params.get("hipcc_compiles"):
        skipped = hipcc_skips(doc)
        hits = [hit for hit in hits if not any(first <= hit.line <= last for first, last in skipped)]
    if "directives" in params:
        seen = {hit.line for hit in hits}
        for hit in _directive_hits(doc, params["directives"], bool(params.get("branch_ends"))):
            if hit.line not in seen:
                seen.add(hit.line)
                hits.append(hit)
        hits.sort(key=lambda hit: (hit.line, hit.column))
    yield from hits


_TESTS = frozenset({"if", "ifdef", "ifndef", "elif"})
# hipcc defines no __CUDA_ARCH__ (host and device pass): a branch that needs it defined is one hipcc never compiles
_NO_ARCH: preproc.Table = {"__CUDA_ARCH__": preproc.Macro(preproc.UNDEFINED, True)}


def hipcc_skips(doc: CudaDocument) -> tuple[tuple[int, int], ...]:
    """The line ranges a HIP build of DOC never compiles: HIP guards, and `#if defined(__CUDA_ARCH__) && ...` or
    `#if !defined(__CUDA_ARCH__) || ... #else` branches (a rule's `hipcc_compiles: true` drops hits there)."""
    return preproc.run(doc.lexed_for(frozenset()).directives, _NO_ARCH).dead


def _directive_hits(doc: CudaDocument, pattern: str, ends: bool) -> Iterator[Hit]:
    """Each #if/#ifdef/#elif whose condition the rule's `directives` regex finds and that tree-sitter left out of
    the tree (an ERROR node): a directive inside an initializer list or a parameter list (zfp's table of
    compressors per backend, LightGBM's `#ifdef USE_CUDA` parameters), which no query reaches. With `branch_ends`,
    also the #elif / #else / #endif lines after such a test in its chain: where a port adds its HIP branch."""
    found = re.compile(pattern)
    lexed = doc.lexed_for(frozenset())
    tests = {d.line: m.group(0) for d in lexed.directives if d.keyword in _TESTS and (m := found.search(d.argument))}
    if not tests:
        return
    lines = doc.lines
    for line, symbol in tests.items():
        text = lines[line - 1] if line <= len(lines) else ""
        column = len(text) - len(text.lstrip())
        if not _in_tree(doc, line - 1, column):
            yield Hit(line, column + 1, symbol=symbol)
    if ends:
        for chain in chains(lexed.directives):
            first = next((index for index, (line, _) in enumerate(chain) if line in tests), None)
            for line, keyword in chain[first + 1 :] if first is not None else ():
                yield Hit(line, 1, symbol=f"#{keyword}")


def _in_tree(doc: CudaDocument, row: int, column: int) -> bool:
    """Whether the directive starting at ROW, COLUMN is a preprocessor node of the tree."""
    node = doc.root.descendant_for_point_range((row, column), (row, column))
    while node is not None:
        if node.type.startswith("preproc_") and node.start_point.row == row:
            return True
        if node.type == "ERROR":
            return False
        node = node.parent
    return False


def runs_on(doc: CudaDocument, params: Mapping[str, Any]) -> bool:
    """Whether the rule's `if_code` and `unless_code` tests let it run on this file."""
    return ("if_code" not in params and "unless_code" not in params) or _file_test(params)(doc.lexed_for(frozenset()).code)


def hits_on_lines(doc: CudaDocument, nodes: Iterable[Any], where: str = "any") -> Iterator[Hit]:
    """A hit for the first of NODES (in source order) on each line, in host code, device code or anywhere."""
    seen: set[int] = set()
    for node in nodes:
        line = node.start_point.row + 1
        if line in seen or (where != "any" and doc.in_device_code(node.start_byte) != (where == "device")):
            continue
        seen.add(line)
        yield Hit(line, node.start_point.column + 1, end_line=node.end_point.row + 1, symbol=_symbol(doc, node))


def _symbol(doc: CudaDocument, node: Any) -> str | None:
    text = doc.node_text(node)
    return text if len(text) <= 80 and "\n" not in text else None
