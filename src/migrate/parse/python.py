"""Python through the stdlib `ast`: comments vanish, strings and docstrings are known nodes."""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from functools import cached_property

from migrate.model import FileKind, SourceFile
from migrate.parse import Document, ParseError, register


@dataclass
class PythonDocument(Document):
    """A Python module with its syntax tree and the import aliases needed to resolve names."""

    @property
    def module(self) -> ast.Module:
        return self.tree  # type: ignore[no-any-return]

    @cached_property
    def nodes(self) -> list[ast.AST]:
        return list(ast.walk(self.module))

    @cached_property
    def parents(self) -> dict[ast.AST, ast.AST]:
        found: dict[ast.AST, ast.AST] = {}
        for node in self.nodes:
            for child in ast.iter_child_nodes(node):
                found[child] = node
        return found

    @cached_property
    def aliases(self) -> dict[str, str]:
        """Local name -> dotted name it was imported as (`th` -> `torch`, `F` -> `torch.nn.functional`)."""
        table: dict[str, str] = {}
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    table[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    table[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return table

    def dotted(self, node: ast.AST) -> str | None:
        """`th.cuda.is_available` -> `torch.cuda.is_available` when `th` is torch; None if not a name chain."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    @cached_property
    def docstrings(self) -> frozenset[int]:
        """ids of the string constants that are docstrings (never matched)."""
        found = set()
        for node in self.nodes:
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    found.add(id(body[0].value))
        return frozenset(found)

    def enclosing(self, node: ast.AST, *types: type) -> ast.AST | None:
        """The nearest ancestor of one of TYPES."""
        current = self.parents.get(node)
        while current is not None and not isinstance(current, types):
            current = self.parents.get(current)
        return current


@register(FileKind.PYTHON)
def parse_python(source: SourceFile, text: str) -> PythonDocument:
    """Parse a Python module; a syntax error becomes the skip reason."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=source.relpath)
    except SyntaxError as exc:
        raise ParseError(f"Python syntax error at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise ParseError(f"cannot parse as Python: {exc}") from None
    return PythonDocument(source=source, text=text, tree=tree)
