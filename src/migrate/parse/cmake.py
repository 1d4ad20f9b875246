"""CMake: a command tokenizer (quoted, bracket and unquoted arguments; line and bracket comments)."""

from __future__ import annotations

import re

from migrate.lazyre import lazy_regex
from migrate.model import FileKind, SourceFile
from migrate.parse.document import ParseError, register
from migrate.parse.manifest import CMAKE, Item, ManifestDocument, Positions, arch_flag_items

_COMMAND = lazy_regex(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACKET = lazy_regex(r"\[(=*)\[")


def _skip_space_and_comments(text: str, i: int) -> int:
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text[i] == "#":
            bracket = _BRACKET.match(text, i + 1)
            if bracket:
                end = text.find(f"]{bracket.group(1)}]", bracket.end())
                if end < 0:
                    raise ParseError("unterminated bracket comment")
                i = end + len(bracket.group(1)) + 2
            else:
                end = text.find("\n", i)
                i = len(text) if end < 0 else end
        else:
            return i
    return i


def commands(text: str) -> list[tuple[str, int, list[tuple[str, int]]]]:
    """(command name, offset, [(argument, offset)]) for every command invocation; ParseError when unbalanced."""
    found = []
    i = _skip_space_and_comments(text, 0)
    while i < len(text):
        name = _COMMAND.match(text, i)
        if not name:
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            i = _skip_space_and_comments(text, i)
            continue
        j = _skip_space_and_comments(text, name.end())
        if j >= len(text) or text[j] != "(":
            i = _skip_space_and_comments(text, name.end())
            continue
        args, i = _arguments(text, j + 1, name.start())
        found.append((name.group().lower(), name.start(), args))
        i = _skip_space_and_comments(text, i)
    return found


def _arguments(text: str, i: int, start: int) -> tuple[list[tuple[str, int]], int]:
    args: list[tuple[str, int]] = []
    depth = 1
    while True:
        i = _skip_space_and_comments(text, i)
        if i >= len(text):
            raise ParseError(f"unterminated command starting at line {text.count(chr(10), 0, start) + 1}")
        char = text[i]
        if char == ")":
            depth -= 1
            i += 1
            if depth == 0:
                return args, i
        elif char == "(":
            depth += 1
            i += 1
        elif char == '"':
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise ParseError(f"unterminated string at line {text.count(chr(10), 0, i) + 1}")
            args.append((text[i + 1 : end], i + 1))
            i = end + 1
        elif _BRACKET.match(text, i):
            bracket = _BRACKET.match(text, i)
            assert bracket is not None
            end = text.find(f"]{bracket.group(1)}]", bracket.end())
            if end < 0:
                raise ParseError("unterminated bracket argument")
            args.append((text[bracket.end() : end], bracket.end()))
            i = end + len(bracket.group(1)) + 2
        else:
            match = re.compile(r'[^\s()#"]+').match(text, i)
            assert match is not None
            args.append((match.group(), i))
            i = match.end()


@register(FileKind.CMAKE)
def parse_cmake(source: SourceFile, text: str) -> ManifestDocument:
    """CMakeLists.txt / *.cmake: one item per command with its arguments and their positions."""
    positions = Positions(text)
    found: list[Item] = []
    for name, offset, args in commands(text):
        located = [positions.at(o) for _, o in args]
        found.append(
            Item(CMAKE, name, *positions.at(offset), value=" ".join(a for a, _ in args),
                 args=tuple(a for a, _ in args), positions=tuple(located))
        )
        words = [(w, *positions.at(o + m.start())) for a, o in args for m in re.finditer(r"\S+", a)
                 for w in [m.group()] if not (_BARE_ARCH.match(w) and _prose(a))]
        found.extend(arch_flag_items(words))
    doc = ManifestDocument(source=source, text=text, manifest=found)
    doc.guarded_ranges = hip_branches(found)
    return doc


def _prose(argument: str) -> bool:
    """ARGUMENT is a sentence, not a list of flags or architectures: a documentation string of an option or cache entry
    (`option(ARCH "Nvidia architecture, for example sm_70 ...")`, a project's `register_flag_optional(...)`), eight
    words and more, half of them plain words. A bare compute capability it names (sm_70) is an example in prose; a
    flag it names (-gencode) still reads as one: the option it documents sets what the flag receives."""
    words = argument.split()
    return len(words) >= 8 and 2 * sum(1 for word in words if _PLAIN_WORD.match(word)) >= len(words)


_PLAIN_WORD = lazy_regex(r"^\(?[A-Za-z]+[,.;:)]?$")
_BARE_ARCH = lazy_regex(r"^(?:sm|compute)_\d+[a-z]?$")


_HIP_CONDITION = lazy_regex(r"(?:^|_)(?:HIP|ROCM|AMD|HIPCC)(?:_|$)|^(?:hip|rocm)$|\bHIP\b", re.I)


def hip_branches(found: list[Item]) -> list[tuple[int, int]]:
    """Line ranges of if()/elseif()/else() chains that test HIP/ROCm (`if(USE_HIP)` ... `elseif(USE_CUDA)`):
    every branch of such a chain is the project's own CUDA/HIP split, like a `#ifdef USE_ROCM` in C++."""
    ranges = []
    stack: list[tuple[int, bool]] = []  # (first line, some condition of the chain tests HIP)
    for item in found:
        if item.kind != CMAKE:
            continue
        hip = any(_HIP_CONDITION.search(arg) for arg in item.args)
        if item.name == "if":
            stack.append((item.line, hip))
        elif item.name == "elseif" and stack:
            stack[-1] = (stack[-1][0], stack[-1][1] or hip)
        elif item.name == "endif" and stack:
            start, tested = stack.pop()
            if tested:
                ranges.append((start, item.line))
    return ranges
