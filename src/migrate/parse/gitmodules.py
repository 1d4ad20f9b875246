""".gitmodules: each submodule's URL as a package item, read as text (git config syntax; git never runs)."""

from __future__ import annotations

import re

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import PACKAGE, Item, ManifestDocument

_SECTION = re.compile(r"^\s*\[\s*submodule\s+\"((?:[^\"\\]|\\.)*)\"\s*\]")
_OTHER_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.I)
_ESCAPE = re.compile(r"\\(.)")


def _value(raw: str) -> str:
    """A git config value: comments cut outside quotes, quotes removed, escapes resolved."""
    out, quoted, i = [], False, 0
    while i < len(raw):
        char = raw[i]
        if char == "\\" and i + 1 < len(raw):
            out.append({"n": "\n", "t": "\t"}.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        i += 1
    return "".join(out).strip()


def repository_name(url: str) -> str:
    """`https://github.com/NVIDIA/cutlass.git` -> `cutlass`; `git@github.com:org/x` -> `x`."""
    last = re.split(r"[/:]", url.rstrip("/"))[-1]
    return last.removesuffix(".git").lower()


def submodule_items(text: str) -> list[Item]:
    """One item per submodule URL: name = the repository's name, url = the URL, args = (submodule, its name)."""
    found: list[Item] = []
    section: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _SECTION.match(line)
        if header:
            section = _ESCAPE.sub(r"\1", header.group(1))
            continue
        if _OTHER_SECTION.match(line):
            section = None
            continue
        url = _URL.match(line)
        if url and section is not None:
            value = _value(url.group(1))
            if value:
                found.append(Item(PACKAGE, repository_name(value), number, line.index(url.group(1)) + 1,
                                  value=value, args=("submodule", section), url=value))
    return found


@register(FileKind.GITMODULES)
def parse_gitmodules(source: SourceFile, text: str) -> ManifestDocument:
    """A .gitmodules file: the URL of each submodule."""
    return ManifestDocument(source=source, text=text, manifest=submodule_items(text))
