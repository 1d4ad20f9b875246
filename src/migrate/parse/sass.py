"""SASS listings and assembler sources (.sass, .cuasm): read as plain text, their lines are the instructions."""

from __future__ import annotations

from migrate.model import FileKind, SourceFile
from migrate.parse.document import Document, register


@register(FileKind.SASS)
def parse_sass(source: SourceFile, text: str) -> Document:
    """A SASS file: its text; a matcher tells NVIDIA instructions from a stylesheet of the same suffix."""
    return Document(source=source, text=text)
