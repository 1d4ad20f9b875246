"""A dependent type used as a temporary without `typename` (`Ktraits::BlockLoadT(smem).Load(...)` in a template over
Ktraits): nvcc accepts it, clang (hipcc) stops at "missing 'typename' prior to dependent type name"."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import tree_sitter

from migrate.matchers import Code, CodeTest, Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument, register_query

# `P::NAME(args).member`: a temporary of the type P::NAME, then a member of it (the CUB/hipCUB idiom)
_TEMPORARIES = """
(field_expression argument: (call_expression
  function: (qualified_identifier scope: (namespace_identifier) @scope name: (identifier) @name)) @call)
"""
register_query(_TEMPORARIES)
# A type by its name: CUB's collectives (BlockLoad, WarpReduce, ...) or a member type named ...T (BlockLoadT);
# `Traits::make(x).run()` calls a static member function, which needs no `typename`.
_TYPE_NAME = re.compile(r"^(?:Block|Warp|Device)[A-Z]\w*$|^[A-Z]\w*T$")
_MAYBE = re.compile(r"::\s*(?:(?:Block|Warp|Device)[A-Z]\w*|[A-Z]\w*T)\s*\(")
_TYPE_PARAMETERS = frozenset({"type_parameter_declaration", "optional_type_parameter_declaration"})


def _maybe_temporary(code: Code) -> bool:
    """A template and a `::NAME(` with a type-like NAME: what the query and _TYPE_NAME need."""
    return "template" in code.text and _MAYBE.search(code.text) is not None


def _candidates(params: Mapping[str, Any]) -> CodeTest:
    return _maybe_temporary


def _type_parameters(template: tree_sitter.Node) -> set[str]:
    listed = template.child_by_field_name("parameters")
    if listed is None:
        return set()
    return {(name.text or b"").decode() for parameter in listed.named_children if parameter.type in _TYPE_PARAMETERS
            for name in parameter.named_children if name.type == "type_identifier"}


def _dependent(node: tree_sitter.Node, scope: str) -> bool:
    """Whether SCOPE is a type parameter of a template around NODE."""
    parent = node.parent
    while parent is not None:
        if parent.type == "template_declaration" and scope in _type_parameters(parent):
            return True
        parent = parent.parent
    return False


@register("dependent-type-temporary", needles=lambda p: ["template"], candidates=_candidates)
def match_dependent_temporary(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each `P::NAME(args).member` where P is a type parameter of an enclosing template and NAME names a type."""
    if not isinstance(doc, CudaDocument):
        return
    seen: set[int] = set()
    for groups in doc.matches(_TEMPORARIES):
        call, name, scope = groups["call"][0], doc.node_text(groups["name"][0]), doc.node_text(groups["scope"][0])
        line = call.start_point.row + 1
        written = doc.data[max(0, call.start_byte - 40) : call.start_byte].rstrip().endswith(b"typename")
        if line not in seen and not written and _TYPE_NAME.match(name) and _dependent(call, scope):
            seen.add(line)
            yield Hit(line, call.start_point.column + 1, symbol=f"{scope}::{name}")
