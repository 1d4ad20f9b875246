"""Uses of a library's C++ namespaces (`cutlass::`, `namespace cute`), found on tokens in every file: where a
macro it cannot expand confuses tree-sitter (`_CCCL_HOST_DEVICE T f(const thrust::...)`), the tree loses them."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate import tokenscan
from migrate.matchers import Hit, register
from migrate.parse import Document


def _validate(params: Mapping[str, Any]) -> None:
    if not _identifiers(params.get("namespaces")):
        raise ValueError("cuda-namespace needs 'namespaces': a non-empty list of identifiers")
    for key in ("members", "using"):
        if key in params and not _identifiers(params[key]):
            raise ValueError(f"'{key}' must be a non-empty list of identifiers")
    if "include" in params:
        try:
            re.compile(params["include"])
        except (re.error, TypeError) as exc:
            raise ValueError(f"bad 'include' regex: {exc}") from None


def _identifiers(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(n, str) and n.isidentifier() for n in value)


def _needles(params: Mapping[str, Any]) -> list[str]:
    return [*params["namespaces"], *params.get("using", ())]


@register("cuda-namespace", validate=_validate, needles=_needles, identifiers=lambda p: frozenset(_needles(p)))
def match_cuda_namespace(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line naming one of the namespaces as a scope (`ns::`, or `ns::member`) or defining it
    (`namespace ns`), a `using namespace` of the `using` names, or an #include path matching `include`."""
    lexed = tokenscan.lexed(doc, frozenset(_needles(params)))
    return tokenscan.namespace_hits(lexed, lexed.code, params)
