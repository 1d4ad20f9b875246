"""Environment variables set (or read, in setup.py and shell) by Dockerfiles, compose, CI, shell, Makefiles."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check, literal_prefixes, name_matches, needles, search
from migrate.parse import Document
from migrate.parse.manifest import ENV, READ, items

# set: assignments (and setup.py reads); read: shell expansions ($NAME, ${NAME:-x}) outside echo/printf
_ACCESS = {"set": (ENV,), "read": (READ,), "any": (ENV, READ)}


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("names",), regexes=("value",), required=("names",))
    if params.get("access", "set") not in _ACCESS:
        raise ValueError(f"manifest-env: 'access' must be one of {', '.join(_ACCESS)}")


@register("manifest-env", validate=_validate, needles=lambda p: needles(p, literal_prefixes(p["names"])))
def match_env(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each variable set (or, by `access`, read) whose name matches `names` (globs) and whose value matches
    `value`, when given."""
    for kind in _ACCESS[params.get("access", "set")]:
        for item in items(doc, kind):
            if name_matches(item.name, params["names"]) and search(params, "value", item.value):
                yield Hit(item.line, item.column, symbol=item.name)
