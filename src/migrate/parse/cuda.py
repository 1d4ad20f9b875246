"""CUDA, C and C++ through the tree-sitter-cuda grammar (a superset of C++ that knows CUDA)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from typing import Any, TypeVar

import tree_sitter
import tree_sitter_cuda

from migrate.alternation import longest_match
from migrate.model import FileKind, SourceFile
from migrate.parse.document import Document, register
from migrate.parse.lexer import DEVICE_MACRO, Lexed, lex

_IDENT = re.compile(r"[A-Za-z_]\w*")
_WORD = re.compile(rb"[A-Za-z_]\w*")
_LITERAL = re.compile(rb'"(?:\\.|[^"\\])*"|//.*|/\*.*?\*/', re.S)  # strings and comments in a macro body
_CODE_IDENTIFIERS = frozenset({"identifier", "type_identifier", "namespace_identifier"})


@cache
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_cuda.language())


@cache
def query(source: str) -> tree_sitter.Query:
    """A compiled tree-sitter query (compiled once per process)."""
    return tree_sitter.Query(language(), source)


INCLUDES = "(preproc_include path: (_) @path) @include"  # each #include, with its path


def captures(node: tree_sitter.Node, query_source: str) -> dict[str, list[tree_sitter.Node]]:
    cursor = tree_sitter.QueryCursor(query(query_source))
    return cursor.captures(node)


Groups = dict[str, list[tree_sitter.Node]]
T = TypeVar("T")
_REGISTERED: dict[str, None] = {}  # an ordered set: the queries documents run in one pass per bundle
# Of those, the rules' own (cuda-query): a bundle apart from the matchers' queries. A rule's query is asked in few
# files (those its code test passes), and each pattern costs every pass its share: on CUTLASS + CCCL's 353 files that ask
# for a query, one bundle of all 41 queries costs 1.1 CPU s, the matchers' 27 in 306 of them and the rules' 14 in 63, 0.7.
_FROM_RULES: dict[str, None] = {}
# The first few documents a process parses run each query alone when they are small: compiling the bundle costs
# ~0.15 s, more than their passes (`check` of a few files), while a large document's passes cost more than it
# (a pass per query over a 3 MB header: 33 s against 8 s).
_BUNDLE_FROM = 5  # documents
_ALONE_BELOW = 16_384  # characters
_parsed = 0  # the documents this process has parsed


_TYPE_PARAMETERS = frozenset({"type_parameter_declaration", "optional_type_parameter_declaration"})


def template_type_parameters(template: tree_sitter.Node) -> frozenset[str]:
    """The names of a template_declaration's type parameters (`typename T`, `class U = int`)."""
    listed = template.child_by_field_name("parameters")
    if listed is None:
        return frozenset()
    return frozenset((name.text or b"").decode() for parameter in listed.named_children
                     if parameter.type in _TYPE_PARAMETERS
                     for name in parameter.named_children if name.type == "type_identifier")


def register_query(source: str, *, from_rule: bool = False) -> str:
    """Add a query to the bundle that runs in one pass over each document that asks for one of its queries (a rule's
    query, FROM_RULE, to the rules' bundle); returns SOURCE (for constants)."""
    _REGISTERED.setdefault(source, None)
    if from_rule:
        _FROM_RULES.setdefault(source, None)
    return source


def _tier(from_rules: bool) -> tuple[str, ...]:
    """The registered queries of one bundle: the rules' (FROM_RULES), or the matchers'."""
    key = (len(_REGISTERED), len(_FROM_RULES), from_rules)
    found = _TIERS.get(key)
    if found is None:
        found = _TIERS[key] = tuple(s for s in _REGISTERED if (s in _FROM_RULES) == from_rules)
    return found


_TIERS: dict[tuple[int, int, bool], tuple[str, ...]] = {}  # by the registries' sizes (they only grow)


@dataclass(frozen=True, eq=False)
class _Bundle:
    """Registered queries compiled as one, and which of its patterns came from which query."""

    query: tree_sitter.Query
    patterns: dict[str, tuple[int, ...]]


_BUNDLES: dict[tuple[str, ...], _Bundle] = {}  # by the registered queries it holds
# Each registered query a small document of a process ran alone, by the group it was compiled in: the queries its
# document expected (CudaDocument.expect) compile together when the first of them is asked for, one analysis
# instead of one each (tree-sitter's floor is ~10 ms a query for this grammar: 16 warp queries cost 0.25 s
# apart, 0.09 s together)
_GROUPS: dict[str, _Bundle] = {}


def _bundle(sources: tuple[str, ...]) -> _Bundle:
    found = _BUNDLES.get(sources)
    if found is None:
        found = _BUNDLES[sources] = _compiled(sources, ())
    return found


def _compiled(sources: tuple[str, ...], disabled: tuple[str, ...]) -> _Bundle:
    every = sources + disabled
    combined = tree_sitter.Query(language(), "\n".join(every))
    starts, offset = [], 0
    for source in every:
        starts.append(offset)
        offset += len(source.encode("utf-8")) + 1
    owners: dict[str, list[int]] = {source: [] for source in every}
    for index in range(combined.pattern_count):
        owners[every[bisect.bisect_right(starts, combined.start_byte_for_pattern(index)) - 1]].append(index)
    for source in disabled:
        for index in owners.pop(source):
            combined.disable_pattern(index)
    return _Bundle(combined, {source: tuple(indices) for source, indices in owners.items()})


def warm_bundle() -> None:
    """Compile the bundles of the queries registered so far now (~0.1 s each): forked workers then share them instead
    of each compiling its own."""
    for from_rules in (False, True):
        if _tier(from_rules):
            _bundle(_tier(from_rules))


def check_queries(bundled: Collection[str], alone: Collection[str]) -> None:
    """Compile BUNDLED, rules' queries that join the rules' bundle, and ALONE, queries that run by themselves, in one
    with the rules' queries registered so far, then register BUNDLED and keep the result as their bundle, ALONE's
    patterns disabled, and compile the matchers' bundle: one compile tells that every rule's query is valid and
    leaves the bundles compiled (tree-sitter takes at least ~10 ms for any query of this grammar: the rules' 17
    queries cost 0.40 s compiled apart, 0.18 s together). Raises what tree-sitter raises for a bad query among them
    (and registers none)."""
    sources = tuple(dict.fromkeys([*_tier(True), *(s for s in bundled if s not in _REGISTERED or s in _FROM_RULES)]))
    compiled = _compiled(sources, tuple(dict.fromkeys(s for s in alone if s not in sources)))
    for source in bundled:
        register_query(source, from_rule=source not in _REGISTERED or source in _FROM_RULES)
    _BUNDLES[_tier(True)] = compiled
    if _tier(False):
        _bundle(_tier(False))


def _first_start(groups: Groups) -> int:
    return min(nodes[0].start_byte for nodes in groups.values() if nodes)


@dataclass(frozen=True)
class Token:
    """An identifier in code (never in a comment or string), with its 1-based position."""

    name: str
    line: int
    column: int
    node_type: str
    start_byte: int
    end_byte: int


# Where a name is declared (functions, variables, macros, types): (the node around the name, the field the name fills
# there) -> the name's node types. Read at the few places a name occurs, not by a tree-sitter query of these shapes:
# compiling one costs 60-100 ms, more than the rest of a `check` of ten files.
_DECLARING: dict[tuple[str, str], frozenset[str]] = {
    ("preproc_def", "name"): frozenset({"identifier"}),
    ("preproc_function_def", "name"): frozenset({"identifier"}),
    ("function_declarator", "declarator"): frozenset({"identifier", "field_identifier"}),
    ("init_declarator", "declarator"): frozenset({"identifier"}),
    ("declaration", "declarator"): frozenset({"identifier"}),
    ("parameter_declaration", "declarator"): frozenset({"identifier"}),
    ("field_declaration", "declarator"): frozenset({"field_identifier"}),
    ("alias_declaration", "name"): frozenset({"type_identifier"}),
    ("type_definition", "declarator"): frozenset({"type_identifier"}),
    ("struct_specifier", "name"): frozenset({"type_identifier"}),  # with a body
    ("class_specifier", "name"): frozenset({"type_identifier"}),  # with a body
    ("enumerator", "name"): frozenset({"identifier"}),
}
# A name one node deeper: (the node around it, its field) -> (the nodes around that one, their field): `f` of
# `ns::f(...)`, `p` of `int *p` (a parameter or an initialised variable)
_DECLARING_WRAPPED: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("qualified_identifier", "name"): (frozenset({"function_declarator"}), "declarator"),
    ("pointer_declarator", "declarator"): (frozenset({"parameter_declaration", "init_declarator"}), "declarator"),
}
_DECLARING_PARENTS = frozenset(parent for parent, _ in [*_DECLARING, *_DECLARING_WRAPPED])
_SCOPED = "(qualified_identifier scope: (_) name: [(identifier) (type_identifier)] @name)"  # the port's, not bundled
_MACRO_NAMES = register_query(
    "[(preproc_def name: (identifier) @name) (preproc_function_def name: (identifier) @name)]"
)
_FUNCTION_TYPES = ("function_definition", "lambda_expression")
_FUNCTIONS = register_query(f"[{' '.join(f'({t})' for t in _FUNCTION_TYPES)}] @fn")
_MACROS = register_query("(preproc_def name: (identifier) @name value: (preproc_arg) @value)")
COMPAT_NAMES_QUERY, MACROS_QUERY = _MACRO_NAMES, _MACROS  # behind compat_names and macros: for a matcher's expect()
CUDA_QUALIFIERS = frozenset({"__global__", "__device__", "__host__"})


def _of_types(root: tree_sitter.Node, types: Collection[str]) -> list[tree_sitter.Node]:
    """The nodes of TYPES under ROOT (itself included), in source order (a node before the nodes inside it)."""
    found = []
    cursor = root.walk()
    while True:
        node = cursor.node
        if node is not None and node.type in types:
            found.append(node)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


@dataclass(frozen=True)
class Function:
    """A function (or lambda) definition: its byte span and the CUDA execution-space qualifiers it carries."""

    start_byte: int
    end_byte: int
    qualifiers: frozenset[str]

    @property
    def is_device(self) -> bool:
        """Compiled for the GPU: __global__ or __device__ (with or without __host__)."""
        return bool(self.qualifiers & {"__global__", "__device__"})


@dataclass
class CudaDocument(Document):
    """A C/C++/CUDA file with its tree-sitter tree and cached indexes for matchers."""

    _query_cache: dict[str, Groups] = field(default_factory=dict, repr=False)
    _declared: dict[str, bool] = field(default_factory=dict, repr=False)  # by name: whether the file declares it
    _bundle_cache: dict[tree_sitter.Query, dict[int, list[Groups]]] = field(default_factory=dict, repr=False)
    _expected: dict[str, None] = field(default_factory=dict, repr=False)  # an ordered set: queries its rules will ask
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)
    lexed: Lexed | None = field(default=None, repr=False)  # the lexer's pass, once made (the scan's, or lexed_for's)

    @property
    def root(self) -> tree_sitter.Node:
        return self.tree.root_node  # type: ignore[no-any-return]

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A value derived once per document and shared by the rules of one matcher."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[no-any-return]

    def captures(self, query_source: str) -> Groups:
        """Captures of a query over the whole file, by capture name, each list in source order."""
        found = self._query_cache.get(query_source)
        if found is None:
            found = self._query_cache[query_source] = self._gathered(query_source)
        return found

    def matches(self, query_source: str) -> list[Groups]:
        """The capture groups of each match of a query, in source order (registered queries share one pass)."""
        if query_source not in _REGISTERED:
            cursor = tree_sitter.QueryCursor(query(query_source))
            return [groups for _, groups in cursor.matches(self.root)]
        per_pattern = self._bundled(query_source)
        if len(per_pattern) == 1:
            return per_pattern[0]
        return sorted((g for groups in per_pattern for g in groups), key=_first_start)

    def _bundled(self, query_source: str) -> list[list[Groups]]:
        """The matches of each pattern of a registered query, from the one pass of the bundle (or, for one of the
        first small documents of a process, from a pass of the group it was compiled in, unless the bundle is compiled
        already)."""
        bundle = self._group(query_source) if self._alone() else _bundle(_tier(query_source in _FROM_RULES))
        results = self._passed(bundle.query)
        return [results.get(index, []) for index in bundle.patterns[query_source]]

    def expect(self, sources: Collection[str]) -> None:
        """Note registered queries the rules about to run on this document will ask for (matchers call it before
        their first query): a small document that runs its queries alone compiles them together."""
        for source in sources:
            if source in _REGISTERED:
                self._expected.setdefault(source, None)

    def _group(self, query_source: str) -> _Bundle:
        """The compiled group that holds QUERY_SOURCE; on a first ask, compiled with the expected queries not yet
        compiled in a group (a later document's pass of a group runs patterns it did not ask for: a small cost on a
        small document, next to ~10 ms a compile)."""
        found = _GROUPS.get(query_source)
        if found is None:
            sources = tuple(dict.fromkeys([query_source, *(s for s in self._expected if s not in _GROUPS)]))
            found = _compiled(sources, ())
            _GROUPS.update(dict.fromkeys(sources, found))
        return found

    def _alone(self) -> bool:
        """One of the first small documents of a process, the matchers' bundle not compiled yet: its queries run
        alone."""
        return _tier(False) not in _BUNDLES and _parsed < _BUNDLE_FROM and len(self.text) < _ALONE_BELOW

    def _passed(self, compiled: tree_sitter.Query) -> dict[int, list[Groups]]:
        results = self._bundle_cache.get(compiled)
        if results is None:
            results = self._bundle_cache[compiled] = self._run(compiled)
        return results

    def _run(self, combined: tree_sitter.Query) -> dict[int, list[Groups]]:
        results: dict[int, list[Groups]] = {}
        for index, groups in tree_sitter.QueryCursor(combined).matches(self.root):
            results.setdefault(index, []).append(groups)
        return results

    def _gathered(self, query_source: str) -> Groups:
        if query_source not in _REGISTERED:
            return captures(self.root, query_source)
        found: Groups = {}
        for pattern in self._bundled(query_source):
            for groups in pattern:
                for name, nodes in groups.items():
                    found.setdefault(name, []).extend(nodes)
        for name, nodes in found.items():
            found[name] = sorted(dict.fromkeys(nodes), key=lambda n: n.start_byte)
        return found

    @cached_property
    def macros(self) -> dict[str, str]:
        """Object-like macros the file defines: name -> body (the last definition wins)."""
        found = {}
        for groups in self.matches(_MACROS):
            found[self.node_text(groups["name"][0])] = self.node_text(groups["value"][0]).strip()
        return found

    @cached_property
    def functions(self) -> list[Function]:
        """Every function and lambda definition, in source order, with its CUDA qualifiers."""
        # a small document running its queries alone walks its tree instead: compiling even this one query costs
        # ~10 ms (a `check` of a few files), walking a 16 KB tree ~0.6 ms; both give the nodes in source order
        nodes = _of_types(self.root, _FUNCTION_TYPES) if self._alone() else self.captures(_FUNCTIONS).get("fn", [])
        found = (Function(n.start_byte, n.end_byte, self._qualifiers(n)) for n in nodes)
        return sorted(found, key=lambda f: f.start_byte)

    def enclosing_function(self, offset: int) -> Function | None:
        """The innermost function definition around a byte offset."""
        index = self._enclosing_index(offset)
        return self.functions[index] if index >= 0 else None

    def outermost_function(self, offset: int) -> Function | None:
        """The outermost function definition around a byte offset: the real function when tree-sitter took a
        statement macro with a block (`CUDA_KERNEL_LOOP(i, n) { ... }`) for a function nested in it."""
        index = self._enclosing_index(offset)
        while index >= 0 and self._parents[index] >= 0:
            index = self._parents[index]
        return self.functions[index] if index >= 0 else None

    def in_device_code(self, offset: int) -> bool:
        """True inside a __global__ or __device__ function, a __device__ lambda, or any lambda within them."""
        index = self._enclosing_index(offset)
        return index >= 0 and self._device_code[index]

    def _enclosing_index(self, offset: int) -> int:
        index = bisect.bisect_right(self._function_starts, offset) - 1
        while index >= 0 and self.functions[index].end_byte <= offset:
            index = self._parents[index]
        return index

    @cached_property
    def _function_starts(self) -> list[int]:
        return [f.start_byte for f in self.functions]

    @cached_property
    def _parents(self) -> list[int]:
        """For each function, the index of the function that contains it (-1 at file level)."""
        parents: list[int] = []
        stack: list[int] = []
        for index, function in enumerate(self.functions):
            while stack and self.functions[stack[-1]].end_byte <= function.start_byte:
                stack.pop()
            parents.append(stack[-1] if stack else -1)
            stack.append(index)
        return parents

    @cached_property
    def _device_code(self) -> list[bool]:
        """For each function, whether its body is device code, itself or through a function around it."""
        flags: list[bool] = []
        for function, parent in zip(self.functions, self._parents):
            flags.append(function.is_device or (parent >= 0 and flags[parent]))
        return flags

    def is_guarded(self, line: int) -> bool:
        """True when the line sits in an #if block that tests a HIP macro: the lexer's ranges, the same whether the
        file is parsed or not (a bisection: a file of thousands of HIP branches asks it for each hit)."""
        return self.in_ranges(self.lexed_for(frozenset()).guarded, line)

    def lexed_for(self, words: frozenset[str]) -> Lexed:
        """The lexer's pass over this file for WORDS: the scan's own when it lexed the file first, else made now."""
        found = self.lexed
        if found is None or not (words is found.searched or _within(words, found.searched)):
            found = self.lexed = lex(self.text, words | found.searched if found else words)
        return found

    def byte_offset(self, offset: int) -> int:
        """The byte offset of a character offset (the tree counts bytes, the lexer characters)."""
        return offset if self._ascii else len(self.text[:offset].encode("utf-8"))

    @cached_property
    def _ascii(self) -> bool:
        return self.text.isascii()

    def point(self, offset: int) -> tuple[int, int]:
        """1-based (line, byte column) of a byte offset."""
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    @cached_property
    def _line_starts(self) -> list[int]:
        return [0, *(m.end() for m in re.finditer(rb"\n", self.data))]

    def _qualifiers(self, node: tree_sitter.Node) -> frozenset[str]:
        found = set()
        for child in node.children:
            if child.type in CUDA_QUALIFIERS:
                found.add(child.type)
            elif child.type in ("type_identifier", "identifier", "ERROR"):
                found.update(self._qualifier_words(self.node_text(child)))
        return frozenset(found)

    def _qualifier_words(self, text: str) -> set[str]:
        words = set()
        for word in _IDENT.findall(text):
            if word in CUDA_QUALIFIERS:
                words.add(word)
            elif word in self.macros:
                words.update(CUDA_QUALIFIERS.intersection(_IDENT.findall(self.macros[word])))
            elif DEVICE_MACRO.search(word):
                words.add("__device__")
        return words

    @cached_property
    def data(self) -> bytes:
        return self.text.encode("utf-8")

    def node_text(self, node: tree_sitter.Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def tokens_named(self, names: Collection[str]) -> list[Token]:
        """Uses of NAMES as identifiers in code (macro bodies included; never comments, strings or members).

        Candidates come from one regex of NAMES over the bytes (compiled once per collection of names) and are
        confirmed against the tree, so the cost follows the few names present rather than every identifier."""
        pattern = self._names_regex(names)
        if pattern is None:
            return []
        data, found = self.data, []
        for match in pattern.finditer(data):
            start = match.start()
            if start and data[start - 1] in _WORD_BYTES:
                continue  # the tail of a longer identifier
            token = self._confirmed(match.group().decode(), start, match.end())
            if token is not None:
                found.append(token)
        return found

    def _names_regex(self, names: Collection[str]) -> re.Pattern[bytes] | None:
        """The one regex of NAMES once compiled, or once this process has searched them in a few files; before
        that, a regex of the names present in this file (checking a few files does not pay the compile)."""
        key = _names_key(names)
        if key in _NAME_PATTERNS:
            return _NAME_PATTERNS[key]
        _NAME_USES[key] = _NAME_USES.get(key, 0) + 1
        if _NAME_USES[key] > _COMPILE_AFTER:
            return names_pattern(key)
        words = self._words
        present = [w for w in words if w in names] if len(words) < len(names) else words.intersection(names)
        if not present:
            return None
        return re.compile(b"|".join(re.escape(n.encode()) for n in sorted(present, key=len, reverse=True)) + rb"\b")

    @cached_property
    def _words(self) -> frozenset[str]:
        return frozenset(w.decode() for w in set(_WORD.findall(self.data)))

    def _confirmed(self, name: str, start: int, end: int) -> Token | None:
        node = self.root.descendant_for_byte_range(start, end)
        if node is None:
            return None
        if node.type in _CODE_IDENTIFIERS and node.start_byte == start and node.end_byte == end:
            return Token(name, node.start_point.row + 1, node.start_point.column + 1, node.type, start, end)
        if node.type == "preproc_arg" and self._macro_code(node)[start - node.start_byte : end - node.start_byte] == name.encode():
            line, column = self.point(start)
            return Token(name, line, column, "macro", start, end)
        return None

    def _macro_code(self, node: tree_sitter.Node) -> bytes:
        """A macro body with its strings and comments blanked out (cached per macro)."""
        return self.memo(f"macro:{node.start_byte}", lambda: _LITERAL.sub(
            lambda m: b" " * len(m.group()), self.data[node.start_byte : node.end_byte]))

    @cached_property
    def scoped_offsets(self) -> frozenset[int]:
        """Start bytes of names qualified by a namespace or class (`mylib::cudaMalloc`): not the C API's names."""
        return frozenset(n.start_byte for n in self.captures(_SCOPED).get("name", []))

    @cached_property
    def compat_names(self) -> frozenset[str]:
        """Macros defined inside a HIP guard (`#define __shfl_xor_sync(...) __shfl_xor(...)`): a compat layer."""
        names = self.captures(_MACRO_NAMES).get("name", [])
        return frozenset(self.node_text(n) for n in names if self.is_guarded(n.start_point.row + 1))

    def declares(self, name: str) -> bool:
        """Whether the file itself declares NAME (a function, variable, macro or type): one of the places the
        identifier occurs declares it."""
        found = self._declared.get(name)
        if found is None:
            found = self._declared[name] = name.isidentifier() and any(
                _is_declaration(node) for node in self._identifiers_at(_whole_word(name).finditer(self.data)))
        return found

    def _identifiers_at(self, matches: Iterator[re.Match[bytes]]) -> Iterator[tree_sitter.Node]:
        """The tree's identifier nodes that span exactly the MATCHES (never a comment, string or macro body)."""
        for match in matches:
            node = self.root.descendant_for_byte_range(match.start(), match.end())
            if node is not None and node.start_byte == match.start() and node.end_byte == match.end():
                yield node


_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NAME_PATTERNS: dict[frozenset[str], re.Pattern[bytes] | None] = {}
_NAME_USES: dict[frozenset[str], int] = {}
_COMPILE_AFTER = 16  # files searched for a collection of names before its one regex is compiled


def _whole_word(name: str) -> re.Pattern[bytes]:
    return re.compile(rb"(?<!\w)" + re.escape(name.encode()) + rb"(?!\w)")


def _is_declaration(node: tree_sitter.Node) -> bool:
    """Whether an identifier node is the name a declaration declares (_DECLARING's shapes)."""
    parent = node.parent
    if parent is None or parent.type not in _DECLARING_PARENTS:
        return False
    filled = _field_of(parent, node)
    if node.type in _DECLARING.get((parent.type, filled), ()):
        return parent.type not in ("struct_specifier", "class_specifier") or parent.child_by_field_name("body") is not None
    wrapped = _DECLARING_WRAPPED.get((parent.type, filled)) if node.type == "identifier" else None
    if wrapped is None:
        return False
    outer, outer_field = wrapped
    around = parent.parent
    return around is not None and around.type in outer and _field_of(around, parent) == outer_field


def _field_of(parent: tree_sitter.Node, child: tree_sitter.Node) -> str:
    """The field of PARENT that CHILD fills ('' if none)."""
    for index, node in enumerate(parent.children):
        if node == child:
            return parent.field_name_for_child(index) or ""
    return ""


def _names_key(names: Collection[str]) -> frozenset[str]:
    """The cache key of a collection of names: callers pass a frozenset they keep (its hash is computed once);
    anything else is turned into one."""
    return names if isinstance(names, frozenset) else frozenset(names)


def names_pattern(names: Collection[str]) -> re.Pattern[bytes] | None:
    """A longest-match regex of NAMES ending at a word boundary (the caller checks the start); None if empty."""
    key = _names_key(names)
    if key not in _NAME_PATTERNS:
        words = {n for n in key if n.isascii()}
        _NAME_PATTERNS[key] = re.compile(longest_match(words).encode() + rb"\b") if words else None
    return _NAME_PATTERNS[key]


@lru_cache(maxsize=256)
def _within(words: frozenset[str], searched: frozenset[str]) -> bool:
    """WORDS <= SEARCHED, asked once per pair of sets: a rule's names are a subset of the scan's ~8,400 words, and
    each parsed file's rules ask again (a frozenset keeps its hash, so the cache's key costs no walk of the names)."""
    return words <= searched


@register(FileKind.CUDA, FileKind.CPP, FileKind.C)
def parse_cuda(source: SourceFile, text: str) -> CudaDocument:
    """Parse C, C++ or CUDA source. tree-sitter recovers from syntax errors (macro-heavy code has many):
    the parts it could not place still yield tokens, so a file is never refused for them."""
    global _parsed
    _parsed += 1
    parser = tree_sitter.Parser(language())
    tree = parser.parse(text.encode("utf-8"))
    return CudaDocument(source=source, text=text, tree=tree)
