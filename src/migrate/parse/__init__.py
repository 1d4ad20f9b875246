"""Read a discovered file and parse it with the parser registered for its kind; failures become Skipped."""

from __future__ import annotations

# Each parser module registers itself for its file kinds as it is imported.
from migrate.parse import cmake, cuda, docker, gitmodules, inferconfig, makefile, markdown  # noqa: F401
from migrate.parse import pyproject, python, requirements, setup_py, shell, yamlfiles  # noqa: F401
from migrate.model import Skipped, SourceFile
from migrate.parse.document import Document, ParseError, parser_for, read_text

__all__ = ["Document", "ParseError", "parse", "read_text"]


def parse(source: SourceFile, text: str | None = None) -> Document | Skipped:
    """Parse one file with the parser registered for its kind."""
    try:
        if text is None:
            text = read_text(source)
        return parser_for(source.kind)(source, text)
    except ParseError as exc:
        return Skipped(source.relpath, str(exc))
    except (RecursionError, MemoryError):
        return Skipped(source.relpath, "too deeply nested to parse")
