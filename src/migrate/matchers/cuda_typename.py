"""Dependent names written without the `typename` or `template` clang needs: a dependent type used as a temporary
(`Ktraits::BlockLoadT(smem).Load(...)` in a template over Ktraits: "missing 'typename' prior to dependent type name"),
and a member template of a dependent class called with template arguments (`Sums<N, 4>::dispatch<M>(...)`, or
`BlockReduce<T, N>(storage).Sum<V>(...)` on a temporary: "use 'template' keyword to treat 'dispatch' as a dependent
template name"). nvcc accepts both; clang (hipcc) stops."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import tree_sitter

from migrate.lazyre import lazy_regex
from migrate.matchers import Code, CodeTest, Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument, register_query, template_type_parameters
from migrate.parse.lexer import is_word_char

# `P::NAME(args).member`: a temporary of the type P::NAME, then a member of it (the CUB/hipCUB idiom)
_TEMPORARIES = """
(field_expression argument: (call_expression
  function: (qualified_identifier scope: (namespace_identifier) @scope name: (identifier) @name)) @call)
"""
# `Scope<...>::NAME<...>(args)` or `P::NAME<...>(args)`, without `::template`
_MEMBER_TEMPLATE_CALLS = """
(call_expression function: (qualified_identifier scope: [(template_type) (namespace_identifier)] @scope
  name: (template_function name: (identifier) @name)) @call)
"""
# `Class<...>(args).NAME<...>(...)`: a member template called on a temporary of a class template, without `.template`
_TEMPORARY_MEMBER_TEMPLATE_CALLS = """
(call_expression function: (field_expression
  argument: (call_expression function: [(template_function arguments: (template_argument_list) @scope)
                                        (qualified_identifier name: (template_function
                                          arguments: (template_argument_list) @scope))])
  field: (template_method name: (field_identifier) @name)) @call)
"""
register_query(_TEMPORARIES)
register_query(_MEMBER_TEMPLATE_CALLS)
register_query(_TEMPORARY_MEMBER_TEMPLATE_CALLS)
# A type by its name: CUB's collectives (BlockLoad, WarpReduce, ...) or a member type named ...T (BlockLoadT);
# `Traits::make(x).run()` calls a static member function, which needs no `typename`.
_TYPE_NAME = lazy_regex(r"^(?:Block|Warp|Device)[A-Z]\w*$|^[A-Z]\w*T$")
_MAYBE = lazy_regex(r"::\s*(?:(?:Block|Warp|Device)[A-Z]\w*|[A-Z]\w*T)\s*\([^;()]*\)\s*\.")
# a type parameter's spelling: T, Ktraits, Kernel_traits (not a macro namespace such as FLASH_NAMESPACE)
_MAYBE_MEMBER_TEMPLATE = lazy_regex(
    r">\s*::\s*\w+\s*<[^;{}]*>\s*\(|\b(?:[A-Z]|[A-Z]\w*[a-z]\w*)\s*::\s*\w+\s*<[^;{}]*>\s*\("
    r"|\)\s*\.\s*[A-Za-z_]\w*\s*<[^;{}()]*>\s*\("
)
_WRITTEN_TEMPLATE = lazy_regex(r"(?:\.|->)\s*template\b")
_NAMES = lazy_regex(r"[A-Za-z_]\w*")


def _maybe_temporary(code: Code) -> bool:
    """A template and a `::NAME(` with a type-like NAME: what the query and _TYPE_NAME need."""
    return "template" in code.text and _MAYBE.search(code.text) is not None


def _candidates(params: Mapping[str, Any]) -> CodeTest:
    return _maybe_temporary


def _all_parameters(template: tree_sitter.Node) -> set[str]:
    """The names of every parameter of TEMPLATE, types and values (`typename T`, `int N`, `int N = 4`)."""
    listed = template.child_by_field_name("parameters")
    if listed is None:
        return set()
    names = set()
    for parameter in listed.named_children:
        name = parameter.child_by_field_name("declarator") or parameter.child_by_field_name("name")
        if name is None:
            name = next((c for c in parameter.named_children if c.type == "type_identifier"), None)
        if name is not None and name.type in ("identifier", "type_identifier"):
            names.add((name.text or b"").decode())
    return names


def _dependent(node: tree_sitter.Node, scope: str) -> bool:
    """Whether SCOPE is a type parameter of a template around NODE."""
    return _enclosing(node, lambda template: scope in template_type_parameters(template))


def _depends_on_parameters(node: tree_sitter.Node, words: set[str]) -> bool:
    """Whether one of WORDS is a parameter (type or value) of a template around NODE."""
    return _enclosing(node, lambda template: not words.isdisjoint(_all_parameters(template)))


def _enclosing(node: tree_sitter.Node, test: Callable[[tree_sitter.Node], bool]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "template_declaration" and test(parent):
            return True
        parent = parent.parent
    return False


@register("dependent-type-temporary", needles=lambda p: ["template"], candidates=_candidates)
def match_dependent_temporary(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each `P::NAME(args).member` where P is a type parameter of an enclosing template and NAME names a type."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    doc.expect((_TEMPORARIES,))  # now, before any rule's first query runs (the scan iterates the hits later)
    return _dependent_temporaries(doc)


def _dependent_temporaries(doc: CudaDocument) -> Iterator[Hit]:
    seen: set[int] = set()
    for groups in doc.matches(_TEMPORARIES):
        call, name, scope = groups["call"][0], doc.node_text(groups["name"][0]), doc.node_text(groups["scope"][0])
        line = call.start_point.row + 1
        written = doc.data[max(0, call.start_byte - 40) : call.start_byte].rstrip().endswith(b"typename")
        shaped = call.parent is not None and _MAYBE.search(doc.node_text(call.parent)) is not None  # as the test
        if line not in seen and not written and shaped and _TYPE_NAME.match(name) and _dependent(call, scope):
            seen.add(line)
            yield Hit(line, call.start_point.column + 1, symbol=f"{scope}::{name}")


def _maybe_member_template(code: Code) -> bool:
    """A template and a `>::NAME<...>(`, `Upper::NAME<...>(` or `).NAME<...>(` call: what the member-template
    queries need, as _MAYBE_MEMBER_TEMPLATE finds them. Searched from each `::NAME<` (a regex led by a word
    boundary tries every position of the text, and a file of CUTLASS has hundreds of thousands)."""
    text = code.text
    if "template" not in text:
        return False
    if _MAYBE_TEMPORARY_CALL.search(text):
        return True
    return any(_scoped_by_template(text, m.start()) and _CALL_AFTER_ARGUMENTS.match(text, m.end())
               for m in _SCOPED_TEMPLATE.finditer(text))


_MAYBE_TEMPORARY_CALL = lazy_regex(r"\)\s*\.\s*[A-Za-z_]\w*\s*<[^;{}()]*>\s*\(")
_SCOPED_TEMPLATE = lazy_regex(r"::\s*\w+\s*<")
_CALL_AFTER_ARGUMENTS = lazy_regex(r"[^;{}]*>\s*\(")


def _scoped_by_template(text: str, colons: int) -> bool:
    """The `::` at COLONS follows a `>` or a word with an upper-case first letter that is one letter long or has a
    lower-case one (_MAYBE_MEMBER_TEMPLATE's `>` and its word after a boundary, blanks between)."""
    end = colons
    while end and text[end - 1].isspace():
        end -= 1
    if not end:
        return False
    if text[end - 1] == ">":
        return True
    start = end
    while start and is_word_char(text[start - 1]):
        start -= 1
    if start == end or not "A" <= text[start] <= "Z":
        return False
    return end - start == 1 or any("a" <= char <= "z" for char in text[start + 1 : end])


@register("dependent-member-template", needles=lambda p: ["template"], candidates=lambda p: _maybe_member_template)
def match_dependent_member_template(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each `Scope<...>::NAME<...>(args)` whose scope's template arguments name a parameter of an enclosing template
    (or `P::NAME<...>(args)` with P a type parameter), written without `::template`; and each
    `Class<...>(args).NAME<...>(...)` whose class's template arguments name one, written without `.template`."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    doc.expect((_MEMBER_TEMPLATE_CALLS, _TEMPORARY_MEMBER_TEMPLATE_CALLS))
    return _member_template_calls(doc)


def _member_template_calls(doc: CudaDocument) -> Iterator[Hit]:
    seen: set[int] = set()
    for groups in doc.matches(_MEMBER_TEMPLATE_CALLS):
        call, scope = groups["call"][0], groups["scope"][0]
        line = call.start_point.row + 1
        whole = call.parent if call.parent is not None else call  # @call is the function: its parent the call
        if line in seen or not _MAYBE_MEMBER_TEMPLATE.search(doc.node_text(whole)):  # as the candidates' test
            continue
        if scope.type == "template_type":
            arguments = scope.child_by_field_name("arguments")
            words = set(_NAMES.findall(doc.node_text(arguments))) if arguments is not None else set()
            dependent = bool(words) and _depends_on_parameters(call, words)
        else:
            dependent = _dependent(call, doc.node_text(scope))
        if dependent:
            seen.add(line)
            yield Hit(line, call.start_point.column + 1, symbol=doc.node_text(groups["name"][0]))
    yield from _temporary_member_templates(doc, seen)


def _temporary_member_templates(doc: CudaDocument, seen: set[int]) -> Iterator[Hit]:
    """`BlockReduce<T, N>(storage).Sum<V>(...)` in a template over T or N: at the member's name, once per line."""
    for groups in doc.matches(_TEMPORARY_MEMBER_TEMPLATE_CALLS):
        field, name = groups["call"][0], groups["name"][0]
        line = name.start_point.row + 1
        whole, temporary = field.parent or field, field.child_by_field_name("argument")
        if line in seen or temporary is None or not _MAYBE_MEMBER_TEMPLATE.search(doc.node_text(whole)):
            continue  # the regex as the candidates' test
        between = doc.data[temporary.end_byte : name.start_byte].decode(errors="replace")
        words = set(_NAMES.findall(doc.node_text(groups["scope"][0])))
        if not _WRITTEN_TEMPLATE.search(between) and words and _depends_on_parameters(field, words):
            seen.add(line)
            yield Hit(line, name.start_point.column + 1, symbol=doc.node_text(name))
