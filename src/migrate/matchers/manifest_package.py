"""Dependencies by name (pip, conda, setup.py, pyproject, Pipfile, pip installs in shell and docs)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check, compiled, literal_prefixes, name_matches, needles, search
from migrate.parse import Document
from migrate.parse.manifest import INDEX, PACKAGE, items

_ECOSYSTEMS = ("any", "pip", "conda")


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("names", "exclude"), regexes=("local", "extras", "url", "unless_index"), required=("names",))
    if params.get("ecosystem", "any") not in _ECOSYSTEMS:
        raise ValueError(f"manifest-package: 'ecosystem' must be one of {', '.join(_ECOSYSTEMS)}")


# a requirements file may only include the file that names the package (-r / -c, followed by the parser)
_INCLUDES = ["-r ", "--requirement", "-c ", "--constraint"]


def _needles(params: Mapping[str, Any]) -> list[str] | None:
    found = needles(params, literal_prefixes(params["names"]))
    return None if found is None else [*found, *_INCLUDES]


@register("manifest-package", validate=_validate, needles=_needles)
def match_package(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each dependency whose name matches `names` (globs) and, when given, its local version, extras or URL."""
    if "unless_index" in params and any(search(params, "unless_index", i.name) for i in items(doc, INDEX)):
        return
    ecosystem = params.get("ecosystem", "any")
    for item in items(doc, PACKAGE):
        is_conda = item.args[:1] == ("conda",)
        if ecosystem != "any" and (ecosystem == "conda") != is_conda:
            continue
        if not name_matches(item.name, params["names"]) or name_matches(item.name, params.get("exclude", [])):
            continue
        if "local" in params and not compiled(params["local"]).search(item.local):
            continue
        if "extras" in params and not any(compiled(params["extras"]).search(e) for e in item.args):
            continue
        if "url" in params and not compiled(params["url"]).search(item.url):
            continue
        yield Hit(item.line, item.column, symbol=item.name)
