"""Uses of a few exact names in C/C++/CUDA code, found by a byte search confirmed on the tree (no query pattern)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import Hit, names_in, register, require_flags
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument


_CALL = re.compile(rb"(?:\s|\\\n)*\(")  # an argument list after the name, across line continuations


def _validate(params: Mapping[str, Any]) -> None:
    names = params.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ValueError("cuda-names needs 'names': a non-empty list of identifiers")
    if params.get("where", "any") not in ("any", "host", "device"):
        raise ValueError("cuda-names 'where' must be host, device or any")
    require_flags(params, "called")
    if "unless_include" in params:
        try:
            re.compile(params["unless_include"])
        except (re.error, TypeError) as exc:
            raise ValueError(f"cuda-names: bad 'unless_include' regex: {exc}") from None


@register("cuda-names", validate=_validate, needles=lambda p: list(p["names"]),
          candidates=lambda p: names_in(frozenset(p["names"])), identifiers=lambda p: frozenset(p["names"]))
def match_cuda_names(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line using one of `names` as an identifier in code (not in comments, strings or as a member, nor a name
    the file declares itself), in host code, device code or anywhere (`where`); with `called`, only uses followed
    by an argument list (a call or a function-like macro's use, not an alias such as `#define NEW OLD`). With
    `unless_include`, nothing in a file that includes a header matching it (the include's own rule decides there)."""
    if not isinstance(doc, CudaDocument) or _includes(doc, params.get("unless_include")):
        return
    seen: set[int] = set()
    where = params.get("where", "any")
    called = params.get("called", False)
    for token in doc.tokens_named(params["names"]):
        if where != "any" and doc.in_device_code(token.start_byte) != (where == "device"):
            continue
        if called and not _CALL.match(doc.data, token.end_byte):
            continue
        if token.line not in seen and not doc.declares(token.name):
            seen.add(token.line)
            yield Hit(token.line, token.column, symbol=token.name)


def _includes(doc: CudaDocument, pattern: str | None) -> bool:
    """The file has an #include whose path PATTERN finds."""
    return pattern is not None and any(re.search(pattern, path) for path, _ in doc.lexed_for(frozenset()).includes)
