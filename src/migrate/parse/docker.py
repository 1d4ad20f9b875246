"""Dockerfiles: instructions with continuations; base images, ENV/ARG, and the shell inside RUN."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from migrate.model import FileKind, SourceFile
from migrate.parse.document import ParseError, register
from migrate.parse.manifest import ENV, IMAGE, Item, ManifestDocument, Positions
from migrate.parse.shell import INDEX_VARIABLES, index_values, shell_items

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)(\s+|$)")
_ESCAPE_DIRECTIVE = re.compile(r"^#\s*escape\s*=\s*(\S)\s*$", re.IGNORECASE)
_HEREDOC = re.compile(r"<<-?[\"']?([A-Za-z_]\w*)[\"']?")
_ENV_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)=(\"(?:\\.|[^\"])*\"|'[^']*'|\S*)")


@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction: keyword, argument text (comment lines removed) and where each char came from."""

    keyword: str
    text: str
    offsets: tuple[int, ...]  # file offset of each character of text


def instructions(text: str) -> Iterator[Instruction]:
    """The instructions of a Dockerfile; a continuation at end of file is a ParseError."""
    escape = "\\"
    lines = text.splitlines(keepends=True)
    offset = 0
    current: list[tuple[str, int]] = []
    heredoc: tuple[str, list[tuple[str, int]]] | None = None
    for number, line in enumerate(lines):
        start, offset = offset, offset + len(line)
        stripped = line.strip()
        if heredoc is not None:
            if stripped == heredoc[0]:
                yield _heredoc_body(heredoc[1])
                heredoc = None
            else:
                heredoc[1].append((line, start))
            continue
        directive = _ESCAPE_DIRECTIVE.match(stripped) if not current and number < 5 else None
        if directive:
            escape = directive.group(1)
        if stripped.startswith("#") or (not stripped and current):
            continue  # comment lines vanish, even inside a continued instruction
        if not stripped:
            continue
        current.append((line, start))
        if line.rstrip("\r\n").rstrip().endswith(escape):
            continue
        instruction = _instruction(current, escape)
        yield instruction
        current = []
        marker = _HEREDOC.search(instruction.text) if instruction.keyword == "RUN" else None
        if marker:
            heredoc = (marker.group(1), [])
    if current:
        raise ParseError(f"dangling line continuation at end of file (instruction at line {_line_of(text, current)})")


def _heredoc_body(parts: list[tuple[str, int]]) -> Instruction:
    """A RUN heredoc's body (RUN <<EOF ... EOF) as shell, each character mapped back to the file."""
    text = "".join(line for line, _ in parts)
    offsets = tuple(start + i for line, start in parts for i in range(len(line)))
    return Instruction("RUN", text, offsets)


def _line_of(text: str, parts: list[tuple[str, int]]) -> int:
    return text.count("\n", 0, parts[0][1]) + 1


def _instruction(parts: list[tuple[str, int]], escape: str) -> Instruction:
    chars: list[str] = []
    offsets: list[int] = []
    for line, start in parts:
        body = line.rstrip("\r\n")
        if body.rstrip().endswith(escape):
            body = body.rstrip()[:-1] + " "
        chars.extend(body + "\n")
        offsets.extend(range(start, start + len(body) + 1))
    joined = "".join(chars)
    match = _INSTRUCTION.match(joined)
    keyword = match.group(1).upper() if match else ""
    skip = match.end() if match else 0
    return Instruction(keyword, joined[skip:].replace("\n", " ").rstrip() + "\n", tuple(offsets[skip:]))


def instruction_items(instruction: Instruction, positions: Positions) -> Iterator[Item]:
    def origin(offset: int) -> tuple[int, int]:
        return positions.at(instruction.offsets[min(offset, len(instruction.offsets) - 1)])

    text = instruction.text
    if instruction.keyword == "FROM":
        words = [(m.group(), m.start()) for m in re.finditer(r"\S+", text)]
        images = [(w, o) for w, o in words if not w.startswith("--")]
        if images:
            yield Item(IMAGE, images[0][0], *origin(images[0][1]))
    elif instruction.keyword == "RUN":
        yield from shell_items(_run_command(text), origin) if not text.lstrip().startswith("[") else _exec(text, origin)
    elif instruction.keyword in ("ENV", "ARG"):
        yield from _assignments(text, origin)


def _run_command(text: str) -> str:
    """RUN's shell text with BuildKit flags (--mount=..., --network=...) blanked out."""
    return re.sub(r"^(\s*)((?:--\S+\s+)*)", lambda m: m.group(1) + " " * len(m.group(2)), text)


def _exec(text: str, origin: Callable[[int], tuple[int, int]]) -> Iterator[Item]:
    try:
        argv = json.loads(text)
    except json.JSONDecodeError:
        return
    if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
        command = argv[2] if argv[:2] in (["/bin/sh", "-c"], ["sh", "-c"], ["bash", "-c"]) and len(argv) > 2 else ""
        yield from shell_items(command, lambda _offset: origin(0)) if command else iter(())


def _assignments(text: str, origin: Callable[[int], tuple[int, int]]) -> Iterator[Item]:
    pairs = list(_ENV_PAIR.finditer(text))
    if pairs:
        for pair in pairs:
            yield Item(ENV, pair.group(1), *origin(pair.start()), value=pair.group(2).strip("\"'"))
            if pair.group(1) in INDEX_VARIABLES:
                yield from index_values(pair.group(1), pair.group(2), origin(pair.start()))
        return
    legacy = re.match(r"\s*(\S+)(?:\s+(.*))?", text)  # ENV NAME value (the old form)
    if legacy:
        yield Item(ENV, legacy.group(1), *origin(legacy.start(1)), value=(legacy.group(2) or "").strip())
        if legacy.group(1) in INDEX_VARIABLES and legacy.group(2):
            gap = " " * (legacy.start(2) - legacy.end(1) - 1)  # the value's place after NAME and its spaces
            yield from index_values(legacy.group(1), gap + legacy.group(2), origin(legacy.start(1)))


_ARG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class _Default:
    """An ARG's default value (its own references expanded) and where it is spelled."""

    value: str
    line: int
    column: int


def _close(text: str, start: int) -> int:
    """The index of the `}` closing the `${` whose body starts at `start` (nested `${...}` skipped), or -1."""
    depth = 1
    for index in range(start, len(text)):
        if text.startswith("${", index):
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _substitute(text: str, defaults: dict[str, _Default]) -> str:
    """Docker's ARG expansion: $NAME, ${NAME}, ${NAME:-word} (word when unset) and ${NAME:+word} (word when set);
    an unknown NAME stays as written, and `+` takes its word, the image a CUDA variant of the build names, except
    where the ARG's default is empty (`ARG ARCH=` then `FROM nvidia/cuda${ARCH:+-$ARCH}:...`: no suffix)."""
    out, index = [], 0
    while index < len(text):
        name = _ARG_NAME.match(text, index + 2) if text.startswith("${", index) else None
        end = _close(text, index + 2) if name else -1
        if name and end > 0:
            rest, known = text[name.end():end], defaults.get(name.group())
            if rest[:2] in (":-", ":+") or rest[:1] in ("-", "+"):
                word = _substitute(rest.lstrip(":")[1:].strip("\"'"), defaults)
                if rest.lstrip(":")[0] == "+":  # an ARG defaulting to empty (`ARG ARCH=`) takes no `:+` word
                    out.append("" if known is not None and not known.value and rest[0] == ":" else word)
                else:
                    out.append(word if known is None or not known.value else known.value)
            else:
                out.append(known.value if known is not None and not rest else text[index:end + 1])
            index = end + 1
            continue
        bare = _ARG_NAME.match(text, index + 1) if text[index] == "$" else None
        if bare and bare.group() in defaults:
            out.append(defaults[bare.group()].value)
            index = bare.end()
            continue
        out.append(text[index])
        index += 1
    return "".join(out)


def _expand(image: Item, defaults: dict[str, _Default]) -> Item:
    """FROM ${BASE} with ARG BASE=nvidia/cuda:... names the default image, reported where the ARG spells it when
    the whole image comes from one ARG (the line a port edits); FROM text of its own keeps the FROM line."""
    expanded = _substitute(image.name, defaults)
    if expanded == image.name:
        return image
    whole = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", image.name)
    spelled = defaults.get(whole.group(1)) if whole else None
    if spelled is not None and spelled.value == expanded:
        return Item(IMAGE, expanded, spelled.line, spelled.column, value=image.name)
    return Item(IMAGE, expanded, image.line, image.column, value=image.name)


@register(FileKind.DOCKERFILE)
def parse_dockerfile(source: SourceFile, text: str) -> ManifestDocument:
    """A Dockerfile: base images (ARG defaults expanded), ENV/ARG, and every command inside RUN."""
    positions = Positions(text)
    defaults: dict[str, _Default] = {}
    found: list[Item] = []
    for instruction in instructions(text):
        for item in instruction_items(instruction, positions):
            if instruction.keyword == "ARG" and item.kind == ENV and item.name not in defaults:
                defaults[item.name] = _Default(_substitute(item.value, defaults), item.line, item.column)
            image = _expand(item, defaults) if item.kind == IMAGE else item
            if image.kind != IMAGE or all((i.kind, i.line, i.name) != (IMAGE, image.line, image.name) for i in found):
                found.append(image)
    return ManifestDocument(source=source, text=text, manifest=found)
