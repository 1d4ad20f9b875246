"""Package index URLs and channels: --index-url / --extra-index-url / -f, uv and Poetry sources, conda channels."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check, needles, search
from migrate.parse import Document
from migrate.parse.manifest import INDEX, items


def _validate(params: Mapping[str, Any]) -> None:
    check(params, regexes=("url", "option"), required=("url", "needles"))


@register("manifest-index", validate=_validate, needles=lambda p: needles(p, None))
def match_index(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each index URL or channel matching `url` (and `option`: --index-url, conda-channel, uv-index, ...)."""
    for item in items(doc, INDEX):
        if search(params, "url", item.name) and search(params, "option", item.value):
            yield Hit(item.line, item.column, symbol=item.name)
