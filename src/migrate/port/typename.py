"""The `typename` clang requires and nvcc does without: in a template, `Traits::BlockLoadT(storage).Load(...)` (a
dependent type used as a functional cast) compiles with nvcc, while clang stops at "missing 'typename' prior to
dependent type name"; `typename Traits::BlockLoadT(storage)` means the same to both compilers."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import tree_sitter

from migrate.parse.cuda import CudaDocument, template_type_parameters
from migrate.port.branches import Edit

# a member type: `using NAME =`, `typedef ... NAME;`, `struct NAME {` / `class NAME :`
_TYPE_DECLARATION = re.compile(
    r"\busing\s+(\w+)\s*=|\btypedef\b[^;{}()]*?\b(\w+)\s*;|\b(?:struct|class)\s+(\w+)\s*(?:final\s*)?[:{]")
_CAST = re.compile(r"\b\w+\s*::\s*(\w+)\s*\(")
# NAME declared as a function or a variable: specifiers or a return type right before it
_NOT_A_TYPE = (r"\b(?:static|inline|constexpr|virtual|void|bool|int|auto|float|double|unsigned|__device__|__host__|"
               r"__forceinline__)\b[^;{{}}()=]*[\s*&]{name}\s*[(;=]")


@dataclass(frozen=True)
class TypeNames:
    """The names a repository declares as (member) types and never as a function, that some file uses as
    `X::NAME(...)`: the candidates for a `typename`."""

    names: frozenset[str] = frozenset()

    def may_need(self, text: str) -> bool:
        """Whether TEXT has an `X::NAME(` with one of the names (a cheap test before the parse)."""
        return bool(self.names) and "template" in text and any(m.group(1) in self.names for m in _CAST.finditer(text))


def type_names(texts: Mapping[str, str]) -> TypeNames:
    """The TypeNames of a repository's C/C++/CUDA sources (path -> text)."""
    used = {m.group(1) for text in texts.values() if "::" in text for m in _CAST.finditer(text)}
    if not used:
        return TypeNames()
    declared = {name for text in texts.values() for m in _TYPE_DECLARATION.finditer(text) for name in m.groups() if name}
    candidates = used & declared
    return TypeNames(frozenset(name for name in candidates if not any(
        re.search(_NOT_A_TYPE.format(name=re.escape(name)), text) for text in texts.values() if name in text)))


def typename_edits(doc: CudaDocument, names: TypeNames) -> list[Edit]:
    """`typename ` before each `P::NAME(` in a template whose type parameter is P and NAME is one of NAMES."""
    if not names.may_need(doc.text):
        return []
    return [Edit(node.start_byte, node.start_byte, "typename ") for node in _casts(doc.root, names.names, frozenset())
            if not doc.data[: node.start_byte].rstrip().endswith(b"typename")]


def _casts(node: tree_sitter.Node, names: frozenset[str], parameters: frozenset[str]) -> Iterator[tree_sitter.Node]:
    """Qualified names `P::NAME` called like functions, where P is a type parameter of an enclosing template."""
    if node.type == "template_declaration":
        parameters = parameters | template_type_parameters(node)
    if node.type == "call_expression" and parameters:
        function = node.child_by_field_name("function")
        if function is not None and function.type == "qualified_identifier" and _dependent(function, names, parameters):
            yield function
    for child in node.children:
        yield from _casts(child, names, parameters)


def _dependent(qualified: tree_sitter.Node, names: frozenset[str], parameters: frozenset[str]) -> bool:
    scope = qualified.child_by_field_name("scope")
    name = qualified.child_by_field_name("name")
    return (scope is not None and name is not None and scope.type in ("namespace_identifier", "type_identifier")
            and (scope.text or b"").decode() in parameters and name.type == "identifier"
            and (name.text or b"").decode() in names)
