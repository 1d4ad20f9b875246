"""CUDA, C and C++ through the tree-sitter-cuda grammar (a superset of C++ that knows CUDA)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

import tree_sitter
import tree_sitter_cuda

from migrate.model import FileKind, SourceFile
from migrate.parse import Document, ParseError, register

HIP_GUARD_MACROS = frozenset(
    {
        "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__",
        "__HIP__", "__HIPCC__", "__HIP_DEVICE_COMPILE__", "USE_ROCM", "USE_HIP", "WITH_HIP", "WITH_ROCM",
        "__HIP_ROCclr__", "HIP_PLATFORM_AMD", "ROCM_PLATFORM", "__HIPCC_RTC__", "GGML_USE_HIP", "GGML_USE_HIPBLAS",
    }
)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_STRING_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//.*|/\*.*?\*/', re.S)
_MAX_ERROR_SHARE = 0.5


@cache
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_cuda.language())


@cache
def query(source: str) -> tree_sitter.Query:
    """A compiled tree-sitter query (compiled once per process)."""
    return tree_sitter.Query(language(), source)


def captures(node: tree_sitter.Node, query_source: str) -> dict[str, list[tree_sitter.Node]]:
    cursor = tree_sitter.QueryCursor(query(query_source))
    return cursor.captures(node)


@dataclass(frozen=True)
class Token:
    """An identifier in code (never in a comment or string), with its 1-based position."""

    name: str
    line: int
    column: int
    node_type: str
    start_byte: int
    end_byte: int


_IDENTIFIERS = """
(identifier) @id
(type_identifier) @id
(namespace_identifier) @id
(preproc_arg) @macro
(preproc_function_def name: (identifier) @defined)
(preproc_def name: (identifier) @defined)
(function_declarator declarator: (identifier) @defined)
(function_declarator declarator: (qualified_identifier name: (identifier) @defined))
(init_declarator declarator: (identifier) @defined)
(declaration declarator: (identifier) @defined)
(parameter_declaration declarator: (identifier) @defined)
(parameter_declaration declarator: (pointer_declarator declarator: (identifier) @defined))
(init_declarator declarator: (pointer_declarator declarator: (identifier) @defined))
(field_declaration declarator: (field_identifier) @defined)
(struct_specifier name: (type_identifier) @defined body: (_))
(class_specifier name: (type_identifier) @defined body: (_))
(type_definition declarator: (type_identifier) @defined)
(enumerator name: (identifier) @defined)
"""
_CONDITIONALS = "[(preproc_if) (preproc_ifdef) (preproc_elif) (preproc_elifdef)] @cond"


@dataclass
class CudaDocument(Document):
    """A C/C++/CUDA file with its tree-sitter tree and cached indexes for matchers."""

    @property
    def root(self) -> tree_sitter.Node:
        return self.tree.root_node  # type: ignore[no-any-return]

    @cached_property
    def data(self) -> bytes:
        return self.text.encode("utf-8")

    def node_text(self, node: tree_sitter.Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    @cached_property
    def _captured(self) -> dict[str, list[tree_sitter.Node]]:
        return captures(self.root, _IDENTIFIERS)

    @cached_property
    def tokens(self) -> list[Token]:
        """Every identifier in code, including those inside macro bodies, in source order."""
        found = [_token(self.node_text(n), n) for n in self._captured.get("id", [])]
        for node in self._captured.get("macro", []):
            found.extend(self._macro_tokens(node))
        found.sort(key=lambda t: t.start_byte)
        return found

    @cached_property
    def declared_names(self) -> frozenset[str]:
        """Names the file itself declares (functions, variables, macros, types)."""
        return frozenset(self.node_text(n) for n in self._captured.get("defined", []))

    def _macro_tokens(self, node: tree_sitter.Node) -> Iterator[Token]:
        body = self.node_text(node)
        code = _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group()), body)
        prefix = self.data[: node.start_byte].decode("utf-8", "replace")
        for match in _IDENT.finditer(code):
            offset = len(body[: match.start()].encode("utf-8"))
            line = node.start_point.row + 1 + body.count("\n", 0, match.start())
            line_start = prefix.rfind("\n") + 1 if line == node.start_point.row + 1 else None
            if line_start is not None:
                column = len(prefix) - line_start + match.start() + 1
            else:
                column = match.start() - body.rfind("\n", 0, match.start())
            start = node.start_byte + offset
            yield Token(match.group(), line, column, "macro", start, start + len(match.group().encode()))


def _token(name: str, node: tree_sitter.Node) -> Token:
    return Token(name, node.start_point.row + 1, node.start_point.column + 1, node.type, node.start_byte, node.end_byte)


def _guarded_ranges(doc: CudaDocument) -> list[tuple[int, int]]:
    """Line ranges of preprocessor conditionals (every branch) that test a HIP/ROCm macro."""
    ranges = []
    for node in captures(doc.root, _CONDITIONALS).get("cond", []):
        condition = node.child_by_field_name("condition") or node.child_by_field_name("name")
        if condition is None:
            continue
        words = set(_IDENT.findall(doc.node_text(condition)))
        if words & HIP_GUARD_MACROS:
            top = node
            while top.type in ("preproc_elif", "preproc_elifdef") and top.parent is not None:
                top = top.parent
            ranges.append((top.start_point.row + 1, top.end_point.row + 1))
    return ranges


def _error_share(tree: Any, size: int) -> float:
    if not tree.root_node.has_error or size == 0:
        return 0.0
    errors = captures(tree.root_node, "(ERROR) @e").get("e", [])
    covered = sum(n.end_byte - n.start_byte for n in errors if n.parent is None or n.parent.type != "ERROR")
    return covered / size


@register(FileKind.CUDA, FileKind.CPP, FileKind.C)
def parse_cuda(source: SourceFile, text: str) -> CudaDocument:
    """Parse C, C++ or CUDA source; a file that is mostly unparsable is refused."""
    parser = tree_sitter.Parser(language())
    data = text.encode("utf-8")
    tree = parser.parse(data)
    if _error_share(tree, len(data)) > _MAX_ERROR_SHARE:
        raise ParseError("could not parse as C/C++/CUDA (mostly syntax errors)")
    doc = CudaDocument(source=source, text=text, tree=tree)
    doc.guarded_ranges = _guarded_ranges(doc)
    return doc
