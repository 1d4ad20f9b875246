"""pip requirements and constraints files, read the way pip reads them (via `packaging`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from migrate.discover import classify
from migrate.model import FileKind, SourceFile
from migrate.parse.document import ParseError, register
from migrate.parse.manifest import COMMAND, FACT, INDEX, LOCATION, Item, ManifestDocument, location_items, requirement_item

_COMMENT = re.compile(r"(^|\s)#.*$")
_OPTION = re.compile(r"^(-[a-zA-Z]|--[a-z-]+)(?:[=\s]\s*(\S.*))?$")
_INDEX_OPTIONS = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links"})
_INCLUDE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint"})
_TRAILING_OPTIONS = re.compile(r"\s+--(?:hash|global-option|config-settings|install-option)[=\s]\S+")
# an index given after a requirement on its line (environment.yml pip lists, README install lines)
_TRAILING_INDEX = re.compile(r"\s+(-f|--find-links|-i|--index-url|--extra-index-url)(?:=|\s+)(\S+)")
_MAX_INCLUDE_DEPTH = 5
# pip reads a line with a path separator that is no requirement as a path (pip's _looks_like_path).
_LOCAL_PATH = re.compile(r"^[\w.-]+/[^\s;:@]*(?:\s|$)")
# pip splits the environment marker off a URL requirement at a ';' with white space on one side (a bare ';' may be
# part of the URL): `https://host/pkg-1.0+cu121-py3-none-any.whl; platform_system == "Linux"`
_URL_MARKER = re.compile(r"(?:\s+;|;\s).*$")


def logical_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, column, text) of each requirement line: comments removed, continuations joined."""
    pending: list[str] = []
    start = 0
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        line = _COMMENT.sub("", raw)
        if not pending:
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        joined = " ".join([*pending, line]).strip()
        pending = []
        if joined:
            first = lines[start - 1]
            yield start, len(first) - len(first.lstrip()) + 1, joined
    if pending and " ".join(pending).strip():
        first = lines[start - 1]
        yield start, len(first) - len(first.lstrip()) + 1, " ".join(pending).strip()


def requirement_items(text: str, *, base: Path | None = None, root: Path | None = None,
                      seen: frozenset[Path] = frozenset(), problems: list[str] | None = None) -> list[Item]:
    """The packages, index URLs and includes of a requirements file. A line pip rejects is a ParseError, or
    (given PROBLEMS) is left out and described there."""
    found: list[Item] = []
    for line, column, content in logical_lines(text):
        option = _OPTION.match(content)
        if option:
            found.extend(_option_items(option.group(1), option.group(2) or "", line, column, base, root, seen))
            continue
        content = _TRAILING_OPTIONS.sub("", content)
        for index in _TRAILING_INDEX.finditer(content):  # `torch-scatter -f https://data.pyg.org/whl/torch-2.5.0+cu124.html`
            found.append(Item(INDEX, index.group(2), line, column + index.start(2), value=index.group(1)))
        content = _TRAILING_INDEX.sub("", content)
        if LOCATION.match(content):
            content = _URL_MARKER.sub("", content)
            if not content.split("#", 1)[0].endswith(".whl"):
                found.extend(location_items(content, line, column))
                continue
        if _LOCAL_PATH.match(content):  # pip installs a local directory (submodules/simple-knn): no name, a tree
            found.append(_local_install(content.split()[0], line, column))
            continue
        try:
            item = requirement_item(content, line, column)
        except ValueError as exc:
            if problems is None:
                raise ParseError(f"line {line}: invalid requirement {content!r}: {exc}") from None
            problems.append(f"line {line} skipped: invalid requirement {content!r}: {exc}")
            continue
        if item is not None:
            found.append(item)
    return found


def _local_install(path: str, line: int, column: int) -> Item:
    """A local directory on a requirement line, as the `pip install PATH` it amounts to (a command item, so the
    rules about installing a source tree the repository may not hold read it as they read a README's command)."""
    return Item(COMMAND, "pip", line, column, value=f"install {path}", args=("install", path),
                positions=((line, column), (line, column)))


def _option_items(option: str, value: str, line: int, column: int, base: Path | None, root: Path | None,
                  seen: frozenset[Path]) -> list[Item]:
    value = value.strip()
    if option in _INDEX_OPTIONS and value:
        return [Item(INDEX, value, line, column + len(option) + 1, value=option)]
    if option in ("-e", "--editable"):
        return location_items(value, line, column)
    if option in _INCLUDE_OPTIONS and value:
        return [Item(FACT, "requirements-include", line, column, value=value), *_included(value, line, column, base,
                                                                                          root, seen)]
    return []


def _included(name: str, line: int, column: int, base: Path | None, root: Path | None,
              seen: frozenset[Path]) -> list[Item]:
    """Packages of an included file that discovery would not read itself, located at the include line."""
    if base is None or root is None or "://" in name or len(seen) >= _MAX_INCLUDE_DEPTH:
        return []
    path = (base / name).resolve()
    try:
        relpath = path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return []
    if path in seen or classify(relpath) == FileKind.REQUIREMENTS or not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
        nested = requirement_items(text, base=path.parent, root=root, seen=seen | {path})
    except (OSError, UnicodeDecodeError, ParseError):
        return []
    where = str(PurePosixPath(relpath))
    return [Item(i.kind, i.name, line, column, value=f"{i.value} (from {where})", args=i.args, local=i.local,
                 url=i.url) for i in nested if i.kind not in (FACT, COMMAND)]  # a tree is relative to its own file


def repository_root(source: SourceFile) -> Path:
    """The scanned root, from a file's absolute path and its relative path."""
    depth = len(PurePosixPath(source.relpath).parts)
    return source.path.parents[depth - 1]


@register(FileKind.REQUIREMENTS)
def parse_requirements(source: SourceFile, text: str) -> ManifestDocument:
    """A requirements or constraints file, following -r/-c includes that discovery does not read."""
    seen = frozenset({source.path.resolve()})
    problems: list[str] = []
    found = requirement_items(text, base=source.path.parent, root=repository_root(source), seen=seen,
                              problems=problems)
    return ManifestDocument(source=source, text=text, manifest=found, problems=problems)
