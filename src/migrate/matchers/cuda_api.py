"""CUDA runtime, driver, device and library names, looked up in the CUDA -> HIP map; decided on the lexer's tokens in
every C/C++ file, so a parse changes nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from migrate.apimap import ApiEntry, api_map, api_names, column, entry_at
from migrate.matchers import Hit, register
from migrate.matchers.cuda_common import in_directive
from migrate.parse.cuda import CudaDocument
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed, has_whole_word, is_word_char

_NEEDLE_LENGTH = 4


def _validate(params: Mapping[str, Any]) -> None:
    libraries = params.get("libraries")
    if not isinstance(libraries, list) or not libraries:
        raise ValueError("cuda-api needs a non-empty 'libraries' list")
    known = {e.library for e in api_map().values()}
    unknown = set(libraries) - known
    if unknown:
        raise ValueError(f"unknown libraries: {', '.join(sorted(unknown))}")
    if params.get("with_hip") not in (True, False, "any"):
        raise ValueError("cuda-api needs 'with_hip': true (renames), false (no HIP equivalent) or any")
    declared = params.get("hip_declares", {})
    if not isinstance(declared, dict) or not all(isinstance(v, str) and v for v in declared.values()):
        raise ValueError("cuda-api 'hip_declares' maps CUDA names to the HIP name HIP declares for them")
    missing = set(declared) - set(api_names())
    if missing:
        raise ValueError(f"hip_declares names the CUDA map lacks: {', '.join(sorted(missing))}")


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted({name[:_NEEDLE_LENGTH] for name in _rule_names(params)})


def _identifiers(params: Mapping[str, Any]) -> frozenset[str]:
    return _name_set(*_key(params))


def _rule_names(params: Mapping[str, Any]) -> dict[str, int]:
    """The rule's names: the map's, with the names HIP declares though the map has no HIP name for them (the
    rule's `hip_declares`) moved from the no-HIP-name rule to the renames."""
    return _names_of(*_key(params))


def _key(params: Mapping[str, Any]) -> tuple[frozenset[str], bool | str, frozenset[tuple[str, str]]]:
    return frozenset(params["libraries"]), params["with_hip"], frozenset(params.get("hip_declares", {}).items())


@cache
def _name_set(
    libraries: frozenset[str], with_hip: bool | str, hip_declares: frozenset[tuple[str, str]]
) -> frozenset[str]:
    """The rule's names as one set object per rule: the lexer's caches compare their word sets by identity first."""
    return frozenset(_names_of(libraries, with_hip, hip_declares))


def api_hits(lexed: Lexed, text: str, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each use of one of the rule's API names in code, not a name the file declares itself nor a member."""
    names = _rule_names(params)
    renamed: Mapping[str, str] = params.get("hip_declares", {})
    declared: frozenset[str] | None = None
    for offset, word in lexed.places(names):
        index = names[word]
        if declared is None:
            declared = lexed.memo("cuda-api:declared", lambda: _declared(lexed))
        if word in declared or _member_or_scoped(lexed.code, offset):
            continue
        line, place = lexed.point(offset)
        entry = entry_at(index)
        if word in renamed:
            yield Hit(line, place, hip=renamed[word], message=_declared_message(entry, renamed[word]), symbol=word)
        else:
            yield Hit(line, place, hip=_suggestion(entry), message=_message(entry), symbol=entry.cuda_name)


@register("cuda-api", validate=_validate, needles=_needles, identifiers=_identifiers, tokens=api_hits)
def match_cuda_api(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each use of a CUDA API name in code: a rename (with_hip) or a name HIP lacks (not with_hip)."""
    if not isinstance(doc, CudaDocument):
        return iter(())
    return api_hits(doc.lexed_for(_identifiers(params)), doc.text, params)


def _declared(lexed: Lexed) -> frozenset[str]:
    """The API names this file declares itself (a wrapper `cudaError_t cudaMalloc(...)`, a `#define`), as their
    neighbours show: every use of them is the file's own, not the CUDA API."""
    table = api_names()
    enums = has_whole_word(lexed.code, "enum")
    found = set(lexed.defined)
    for word, offset in lexed.words:
        if (word in table and word not in found and not in_directive(lexed.code, offset)
                and _may_declare(lexed.code, offset, offset + len(word), enums)):
            found.add(word)
    return frozenset(found)


# Words before an API name that leave it a use, not the name a declaration introduces.
_USE_AFTER = frozenset({
    "return", "case", "else", "do", "throw", "new", "delete", "sizeof", "typename", "typedef", "co_return",
    "co_yield", "co_await", "goto", "const", "volatile", "static", "extern", "inline", "constexpr", "unsigned",
    "signed", "virtual", "explicit", "friend", "mutable", "register", "thread_local", "template", "decltype",
    "alignof", "noexcept", "operator", "__host__", "__device__", "__global__", "__forceinline__", "__inline__",
    "__noinline__", "public", "private", "protected", "struct", "class", "union", "enum", "__shared__",
    "__constant__", "__managed__", "__restrict__", "if", "ifdef", "ifndef", "elif", "endif", "undef", "pragma",
    "error",
})


_MACRO_NAME = re.compile(r"_*[A-Z][A-Z0-9_]{2,}")  # CUTLASS_HOST_DEVICE cudaError_t f(): a qualifier macro


_PREVIOUS_WORD = re.compile(r"([A-Za-z_]\w*)\s*$")


def _may_declare(code: str, start: int, end: int, enums: bool) -> bool:
    """Whether the name at START..END may be one a declaration introduces (or a label), judged by its neighbours."""
    before = code[max(0, start - 64) : start].rstrip()
    if before[before.rfind("\n") + 1 :].lstrip().startswith("#"):
        before = ""  # the line before is a directive: NAME starts a statement
    after = code[end : end + 64].lstrip()[:3]
    previous = before[-1:]
    if before.endswith("::"):
        return False  # `ns::name` or `::name`: a use
    if after[:1] in ("*", "&", "<") or (after[:1] and is_word_char(after[0])) or after.startswith("::"):
        return False  # a type (`cudaError_t err`, `cudaStream_t* s`) or a scope: what follows is declared
    if after.startswith(":") and not after.startswith("::") and previous in ("", ";", "{", "}", ":"):
        return True  # a label
    if is_word_char(previous):
        word = _PREVIOUS_WORD.search(before)
        name = word.group(1) if word else ""
        if name in ("struct", "class", "union", "enum"):
            return after.startswith(("{", ":"))
        return name not in _USE_AFTER and not _MACRO_NAME.fullmatch(name)
    if previous == ">" and re.search(r"template\s*<[^;{}]*>$", before):
        return False
    if previous in ("*", "&", ">"):
        rest = before[:-1].rstrip()
        return bool(rest) and (is_word_char(rest[-1]) or rest[-1] in ">*&")
    if previous == "}":
        return after[:1] in (";", ",", "=", "[")  # typedef struct {...} NAME;
    if previous in ("{", ","):
        if after.startswith("=") and not after.startswith("=="):
            return True
        return enums and after[:1] in (",", "}") and _in_enum_body(code, start)
    return False


def _in_enum_body(code: str, offset: int) -> bool:
    """OFFSET is directly inside the braces of an `enum ... {`."""
    depth = 0
    for index in range(offset - 1, max(-1, offset - 4096), -1):
        char = code[index]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                return char == "{" and re.search(r"\benum\b[^;{}()]*$", code[max(0, index - 200) : index]) is not None
            depth -= 1
    return False


def _member_or_scoped(code: str, offset: int) -> bool:
    """`x.name`, `p->name` and `ns::name` are not the C API's names; `::name`, the global one, is, and so is
    `MACRO ::name` (a blank before `::`: tree-sitter reads the word as a macro, not as a scope)."""
    before = code[max(0, offset - 64) : offset].rstrip()
    if before.endswith("->") and before[:-2].rstrip().endswith(")"):
        return False  # `(...) -> cudaError_t`: a trailing return type
    if before.endswith((".", "->")):
        return True
    if not before.endswith("::"):
        return False
    scope = before[:-2]
    return bool(scope) and (is_word_char(scope[-1]) or scope[-1] == ">")


_RENAME, _SAME, _NONE = 0, 1, 2  # an entry's HIP name: another name, the CUDA name itself, none
_KINDS = {True: (_RENAME,), False: (_NONE,), "any": (_RENAME, _NONE)}  # the kinds each `with_hip` selects


@cache
def _names_of(libraries: frozenset[str], with_hip: bool | str,
              hip_declares: frozenset[tuple[str, str]] = frozenset()) -> dict[str, int]:
    """The rule's names, each with the index of its entry in the map (made when the name is found); a name in
    HIP_DECLARES counts as a rename, whatever the map's HIP column says."""
    wanted, grouped, declared = _KINDS[with_hip], _by_library(), {name for name, _ in hip_declares}
    return {name: i for library in sorted(libraries) for name, i, kind in grouped.get(library, ())
            if (_RENAME if name in declared else kind) in wanted}


@cache
def _by_library() -> dict[str, list[tuple[str, int, int]]]:
    """The map's names by library, with their entry's index and the kind of their HIP name: each rule reads a few
    libraries of the map's ~9,000 names (made once, where each rule's selection tested every entry again: ~8 ms in
    `check`)."""
    grouped: dict[str, list[tuple[str, int, int]]] = {}
    for index, (library, name, hip) in enumerate(zip(column("library"), column("cuda_name"), column("hip_name"))):
        kind = _NONE if not hip else _SAME if hip == name else _RENAME
        grouped.setdefault(library, []).append((name, index, kind))
    return grouped


def _suggestion(entry: ApiEntry) -> str | None:
    if entry.has_hip:
        return entry.hip_name
    return entry.roc_name or None


def _declared_message(entry: ApiEntry, hip_name: str) -> str:
    return (f"{entry.cuda_name} is {hip_name} in HIP (the HIPIFY tables, snapshot 2024-10, give no HIP name; the HIP "
            f"headers declare it): a mechanical rename.")


def _message(entry: ApiEntry) -> str:
    status = f" ({entry.status})" if entry.status else ""
    note = f"; {entry.note}" if entry.note else ""
    if entry.has_hip:
        return f"{entry.cuda_name} is {entry.hip_name} in HIP{status}{note}: a mechanical rename."
    native = f"; the ROCm library has {entry.roc_name}" if entry.roc_name else ""
    return (
        f"{entry.cuda_name} ({entry.library}: {entry.section}) has no HIP name in the HIPIFY tables "
        f"(snapshot 2024-10){status}{native}{note}: check your ROCm release's headers, else rewrite this use."
    )
