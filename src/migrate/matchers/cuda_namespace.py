"""Uses of a library's C++ namespaces (`cutlass::`, `namespace cute`), found on tokens in every file: where a
macro it cannot expand confuses tree-sitter (`_CCCL_HOST_DEVICE T f(const thrust::...)`), the tree loses them."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from typing import Any

from migrate.matchers import Hit, register
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed

_IDENT = re.compile(r"[A-Za-z_]\w*")


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


def namespace_hits(lexed: Lexed, code: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The rule's namespaces as a scope (`ns::`, or only `ns::member` for the given members) or defined
    (`namespace ns`), `using namespace` of the given names, and #include paths matching its `include`: once per line."""
    namespaces, members = frozenset(params["namespaces"]), params.get("members")
    using = frozenset(params.get("using", ()))
    places: list[tuple[int, str]] = []
    found = lexed.memo("offsets", lambda: _offsets(lexed))
    scoped = _members(tuple(members)) if members else None
    for word in namespaces | using:
        for offset in found.get(word, ()):
            end = offset + len(word)
            used = _scoped_member(code, end, scoped) if scoped else _scope_or_definition(code, offset, end)
            if word in namespaces and used:
                places.append((offset, word))
            elif word in using and code[max(0, offset - 32) : offset].split()[-2:] == ["using", "namespace"]:
                places.append((offset, word))
    if params.get("include"):
        places.extend((offset, f"<{path}>") for path, offset in lexed.includes if _included(params["include"], path))
    seen: set[int] = set()
    lines = lexed.lines
    for offset, symbol in sorted(places):
        line = lines.line(offset)
        if line not in seen:  # the column (as Lexed.point gives it) only for the first place on a line
            seen.add(line)
            yield Hit(line, offset - lines.text.rfind("\n", 0, offset), symbol=symbol)


@register("cuda-namespace", validate=_validate, needles=_needles, identifiers=lambda p: frozenset(_needles(p)),
          tokens=namespace_hits)
def match_cuda_namespace(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each line naming one of the namespaces as a scope (`ns::`, or `ns::member`) or defining it
    (`namespace ns`), a `using namespace` of the `using` names, or an #include path matching `include`."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    lexed = doc.lexed_for(frozenset(_needles(params)))
    return namespace_hits(lexed, lexed.code, params)


@lru_cache(maxsize=65536)
def _included(pattern: str, path: str) -> bool:
    """PATTERN (a rule's regex of #include paths) finds PATH: a tree includes the same headers thousands of times."""
    return _regex(pattern).search(path) is not None


def _scope_or_definition(code: str, start: int, end: int) -> bool:
    return (code.startswith("::", end) or code[end : end + 8].lstrip().startswith("::")
            or _defines_namespace(code, start))


def _offsets(lexed: Lexed) -> dict[str, list[int]]:
    """The offsets of each word the lexer found (a file's namespace rules each read only their own words)."""
    found: dict[str, list[int]] = {}
    for word, offset in lexed.words:
        found.setdefault(word, []).append(offset)
    return found


def _scoped_member(code: str, end: int, members: tuple[frozenset[str], tuple[str, ...]]) -> bool:
    """`ns::member` written without blanks (as the rule's query compared the qualified name's text): one of the
    MEMBERS (names, and prefixes written with a trailing `_`)."""
    if not code.startswith("::", end):
        return False
    name = _IDENT.match(code, end + 2)
    if name is None:
        return False
    names, prefixes = members
    return name.group() in names or name.group().startswith(prefixes)


@cache
def _members(members: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """A rule's `members`: the whole names, and the prefixes (those ending in `_`)."""
    return frozenset(m for m in members if not m.endswith("_")), tuple(m for m in members if m.endswith("_"))


def _defines_namespace(code: str, offset: int) -> bool:
    """`namespace ns` (a definition); `using namespace ns;` names no namespace_identifier in the tree."""
    before = code[max(0, offset - 32) : offset].split()
    return before[-1:] == ["namespace"] and before[-2:-1] != ["using"]


@cache
def _regex(source: str) -> re.Pattern[str]:
    return re.compile(source)
