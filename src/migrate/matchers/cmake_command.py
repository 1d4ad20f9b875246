"""CMake commands and their arguments: enable_language(CUDA), find_package(CUDAToolkit), CUDA::cublas, ..."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register, require_flags
from migrate.matchers.manifest_common import check, compiled, needles
from migrate.parse import Document
from migrate.parse.manifest import CMAKE, Item, items


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("commands",), regexes=("args", "first_arg", "after", "unless_args", "unless_path"),
          required=("commands", "needles"))
    if "after" in params and "args" not in params:
        raise ValueError("cmake-command: 'after' goes with 'args'")
    require_flags(params, "block_end")


@register("cmake-command", validate=_validate, needles=lambda p: needles(p, None))
def match_cmake(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each call of a command in `commands` (any case); `first_arg` filters on its first argument and
    `args` fires once per argument matching it (whole-argument match); with `after`, only among the arguments that
    follow one matching `after` (the values after STRINGS or STREQUAL); `unless_args` skips a call any of whose
    arguments it matches (a list of backends that already names HIP); `unless_path` skips a file whose path it
    matches (a find module, whose job is the search itself); with `block_end`, an if() or elseif() that fires also
    fires where its branch ends (the next else()/elseif(), and the endif()), where a port adds the HIP branch."""
    if "unless_path" in params and compiled(params["unless_path"]).search(doc.source.relpath):
        return
    first = compiled(params["first_arg"]) if "first_arg" in params else None
    pattern = compiled(params["args"]) if "args" in params else None
    unless = compiled(params["unless_args"]) if "unless_args" in params else None
    commands = items(doc, CMAKE)
    for index, item in enumerate(commands):
        if item.name not in params["commands"]:
            continue
        if first is not None and not (item.args and first.fullmatch(item.args[0])):
            continue
        if unless is not None and any(unless.fullmatch(arg) for arg in item.args):
            continue
        if pattern is None:
            yield Hit(item.line, item.column, symbol=f"{item.name}({' '.join(item.args[:1])})")
            continue
        fired = [Hit(line, column, symbol=arg)
                 for arg, (line, column) in _candidates(item.args, item.positions, params.get("after"))
                 if any(pattern.fullmatch(part) for part in arg.split(";"))]  # "CUDA::cudart;Threads::Threads"
        yield from fired
        if fired and params.get("block_end") and item.name in ("if", "elseif"):
            for end in _branch_ends(commands, index):
                yield Hit(end.line, end.column, symbol=fired[0].symbol)


def _branch_ends(commands: list[Item], start: int) -> list[Item]:
    """Where the branch opened at `start` (an if() or elseif()) ends: the else()/elseif() that follows it, where
    ports insert elseif(USE_HIP), and the endif() that closes the block; none in a file cut short."""
    depth = 0
    ends: list[Item] = []
    for item in commands[start + 1:]:
        if item.name == "if":
            depth += 1
        elif depth == 0 and item.name in ("else", "elseif") and not ends:
            ends.append(item)
        elif item.name == "endif":
            if depth == 0:
                return [*ends, item]
            depth -= 1
    return []


def _candidates(args: tuple[str, ...], positions: tuple[tuple[int, int], ...],
                after: str | None) -> list[tuple[str, tuple[int, int]]]:
    """The arguments `args` is tried on: all, or those after the first one `after` matches."""
    placed = list(zip(args, positions))
    if after is None:
        return placed
    keyword = compiled(after)
    start = next((i + 1 for i, arg in enumerate(args) if keyword.fullmatch(arg)), len(args))
    return placed[start:]
