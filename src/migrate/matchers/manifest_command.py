"""Commands in shell scripts, RUN lines, Makefile recipes, CI steps and README code blocks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check, compiled, needles
from migrate.parse import Document
from migrate.parse.manifest import COMMAND, items


_POSITIONS = ("any", "last")


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("tools", "subcommands"), regexes=("args", "unless_line"), required=("tools",))
    if params.get("position", "any") not in _POSITIONS:
        raise ValueError(f"manifest-command: 'position' must be one of {', '.join(_POSITIONS)}")


@register("manifest-command", validate=_validate, needles=lambda p: needles(p, list(p["tools"])))
def match_command(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each run of a tool in `tools` (after `subcommands`, if given); with `args`, each argument matching it (or,
    with `position: last`, the last argument only: the destination of cp, mv, install); `unless_line` skips a run
    whose line it matches (a recipe line that only prints the variable)."""
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
        for arg, (line, column) in placed[-1:] if params.get("position") == "last" else placed:
            if pattern.search(arg):
                yield Hit(line, column, symbol=f"{item.name} {arg}")
