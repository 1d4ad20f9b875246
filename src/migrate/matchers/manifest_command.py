"""Commands in shell scripts, RUN lines, Makefile recipes, CI steps and README code blocks."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check, compiled, needles
from migrate.parse import Document
from migrate.parse.manifest import COMMAND, items


_POSITIONS = ("any", "last")


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("tools", "subcommands"), regexes=("args", "value", "unless_line"), required=("tools",))
    if params.get("position", "any") not in _POSITIONS:
        raise ValueError(f"manifest-command: 'position' must be one of {', '.join(_POSITIONS)}")


@register("manifest-command", validate=_validate, needles=lambda p: needles(p, list(p["tools"])))
def match_command(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each run of a tool in `tools` (after `subcommands`, if given); with `args`, each argument matching it (or,
    with `position: last`, the last argument only: the destination of cp, mv, install); `unless_line` skips a run
    whose line it matches (a recipe line that only prints the variable); with `value`, an option's value must match
    it (`--opt=VALUE` or `--opt VALUE`; a bare `--opt`, followed by no value, is a flag that is on)."""
    subcommands = params.get("subcommands")
    pattern = compiled(params["args"]) if "args" in params else None
    unless = compiled(params["unless_line"]) if "unless_line" in params else None
    for item in items(doc, COMMAND):
        if item.name not in params["tools"]:
            continue
        if unless is not None and item.line <= len(doc.lines) and unless.search(doc.lines[item.line - 1]):
            continue
        if subcommands and not set(item.args) & set(subcommands):
            continue
        if pattern is None:
            yield Hit(item.line, item.column, symbol=item.name)
            continue
        placed = list(zip(item.args, item.positions))
        value = compiled(params["value"]) if "value" in params else None
        first = len(placed) - 1 if params.get("position") == "last" else 0
        for index, (arg, (line, column)) in enumerate(placed[first:], start=first):
            if pattern.search(arg) and (value is None or _valued(arg, item.args[index + 1:index + 2], value)):
                yield Hit(line, column, symbol=f"{item.name} {arg}")


def _valued(arg: str, rest: Sequence[str], value: re.Pattern[str]) -> bool:
    """True when option ARG's value (after `=`, else the next argument unless that is another option) matches
    VALUE; a bare flag, with no value after it, is on and counts as matching."""
    if "=" in arg:
        return value.search(arg.split("=", 1)[1]) is not None
    if not rest or rest[0].startswith("-"):
        return True
    return value.search(rest[0]) is not None
