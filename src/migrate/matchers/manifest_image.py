"""Container images: Dockerfile FROM, compose and Kubernetes `image:`, CI `container:`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check, compiled, needles, search
from migrate.parse import Document
from migrate.parse.manifest import IMAGE, items


def _validate(params: Mapping[str, Any]) -> None:
    check(params, regexes=("image", "exclude"), required=("image", "needles"))


@register("manifest-image", validate=_validate, needles=lambda p: needles(p, None))
def match_image(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each image reference matching `image` and not `exclude`."""
    exclude = compiled(params["exclude"]) if "exclude" in params else None
    for item in items(doc, IMAGE):
        if search(params, "image", item.name) and not (exclude and exclude.search(item.name)):
            yield Hit(item.line, item.column, symbol=item.name)
