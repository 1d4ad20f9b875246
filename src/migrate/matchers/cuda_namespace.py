"""Uses of a library's C++ namespaces (`cutlass::`, `namespace cute`), found on tokens in every file: where a
macro it cannot expand confuses tree-sitter (`_CCCL_HOST_DEVICE T f(const thrust::...)`), the tree loses them."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from itertools import repeat
from typing import Any

from migrate.matchers import Hit, new_hit, register
from migrate.model import Severity
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed


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
    if "unused_include" in params:
        if "include" not in params:
            raise ValueError("'unused_include' needs 'include'")
        Severity.parse(str(params["unused_include"]))  # a severity label, or ValueError


def _identifiers(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(n, str) and n.isidentifier() for n in value)


def _needles(params: Mapping[str, Any]) -> list[str]:
    return [*params["namespaces"], *params.get("using", ())]


def _text_needles(params: Mapping[str, Any]) -> list[str]:
    """The needles of the file's text: for a rule with `include`, `include` too (its regex finds #include paths that
    need not name the namespaces: `<mma.h>` for `nvcuda`)."""
    return [*_needles(params), "include"] if "include" in params else _needles(params)


def namespace_hits(lexed: Lexed, code: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """The rule's namespaces as a scope (`ns::`, or only `ns::member` for the given members) or defined
    (`namespace ns`), `using namespace` of the given names, and #include paths matching its `include`: once per line."""
    namespaces, members = frozenset(params["namespaces"]), params.get("members")
    using = frozenset(params.get("using", ()))
    places: list[tuple[int, str]] = []
    found = lexed.offsets
    member = _member_regex(tuple(members)) if members else None
    for word in namespaces | using:
        offsets = found.get(word)
        if offsets is None:
            continue
        if word in using:
            kept = [offset for offset in offsets if _named_or_used(code, offset, word, word in namespaces, member)]
        else:
            kept = _scopes(code, offsets, len(word), member)
        places.extend(zip(kept, repeat(word)))
    used = bool(places)
    if params.get("include"):
        places.extend((offset, f"<{path}>") for path, offset in lexed.includes if _included(params["include"], path))
    hits = _first_per_line(lexed.lines.text, sorted(places))
    if used or "unused_include" not in params:
        yield from hits
        return
    # the header is included and nothing of it is used in this file: a line to delete, not a port of the API
    severity = Severity.parse(str(params["unused_include"]))
    for hit in hits:
        yield Hit(hit.line, hit.column, severity=severity, symbol=hit.symbol, note=_UNUSED)


_UNUSED = ("This file includes the header and uses nothing of its API: on ROCm, where the header does not exist, "
           "drop the include (or keep it under a CUDA-only guard).")


def _first_per_line(text: str, places: list[tuple[int, str]]) -> Iterator[Hit]:
    """A hit at the first of PLACES (in the order of TEXT) on each line: a namespace is often named many times on
    one line, so the lines are counted from one hit's line to the next, not from each place."""
    line, line_end = 1, 0
    for offset, symbol in places:
        if offset < line_end:
            continue
        line += text.count("\n", line_end, offset)
        line_end = text.find("\n", offset) % (len(text) + 1)
        yield new_hit(line, offset - text.rfind("\n", 0, offset), symbol)


@register("cuda-namespace", validate=_validate, needles=_text_needles, identifiers=lambda p: frozenset(_needles(p)),
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


def _scopes(code: str, offsets: list[int], size: int, member: re.Pattern[str] | None) -> list[int]:
    """Those of OFFSETS (of a namespace's name, SIZE long) where the name is a scope (of one of the members the
    MEMBER pattern matches, when the rule gives members) or defined."""
    if member is not None:
        return [offset for offset in offsets if member.match(code, offset + size)]
    return [offset for offset in offsets
            if code.startswith("::", offset + size) or _scope_or_definition(code, offset, offset + size)]


def _named_or_used(code: str, offset: int, word: str, named: bool, member: re.Pattern[str] | None) -> bool:
    """WORD at OFFSET is a namespace the rule NAMED, used as _scopes takes it, or a `using namespace` of it."""
    if named and _scopes(code, [offset], len(word), member):
        return True
    return code[max(0, offset - 32) : offset].split()[-2:] == ["using", "namespace"]


@cache
def _member_regex(members: tuple[str, ...]) -> re.Pattern[str]:
    """`ns::member` written without blanks (as the rule's query compared the qualified name's text), where `ns` ends:
    one of a rule's MEMBERS, a whole identifier, or one starting with a prefix among them (those ending in `_`)."""
    names = "|".join(m for m in members if not m.endswith("_")) or "(?!)"
    prefixes = "|".join(m for m in members if m.endswith("_")) or "(?!)"
    return re.compile(rf"::(?:(?:{names})(?!\w)|(?:{prefixes}))")


def _defines_namespace(code: str, offset: int) -> bool:
    """`namespace ns` (a definition); `using namespace ns;` names no namespace_identifier in the tree."""
    before = code[max(0, offset - 32) : offset].split()
    return before[-1:] == ["namespace"] and before[-2:-1] != ["using"]


@cache
def _regex(source: str) -> re.Pattern[str]:
    return re.compile(source)
