"""CUDA runtime, driver, device and library names, looked up in the CUDA -> HIP map."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from migrate.apimap import ApiEntry, api_map, api_names
from migrate.matchers import Hit, register
from migrate.parse import Document
from migrate.parse.cuda import CudaDocument, Token

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


def _wanted(entry: ApiEntry, libraries: frozenset[str], with_hip: bool | str) -> bool:
    if entry.library not in libraries:
        return False
    if with_hip == "any":
        return entry.is_rename or not entry.has_hip
    return entry.is_rename if with_hip else not entry.has_hip


@cache
def _names(libraries: frozenset[str], with_hip: bool | str) -> dict[str, ApiEntry]:
    return {name: e for name, e in api_map().items() if _wanted(e, libraries, with_hip)}


def _needles(params: Mapping[str, Any]) -> list[str]:
    names = _names(frozenset(params["libraries"]), params["with_hip"])
    return sorted({name[:_NEEDLE_LENGTH] for name in names})


@register("cuda-api", validate=_validate, needles=_needles)
def match_cuda_api(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each use of a CUDA API name: a rename (with_hip) or a name HIP lacks (not with_hip)."""
    if not isinstance(doc, CudaDocument):
        return
    libraries, with_hip = frozenset(params["libraries"]), params["with_hip"]
    for token, entry in doc.memo("cuda-api", lambda: _api_tokens(doc)):
        if _wanted(entry, libraries, with_hip):
            yield Hit(token.line, token.column, hip=_suggestion(entry), message=_message(entry), symbol=entry.cuda_name)


def _api_tokens(doc: CudaDocument) -> list[tuple[Token, ApiEntry]]:
    """The file's uses of known CUDA names, less the names the file declares or qualifies itself."""
    table = api_map()
    declared, scoped = doc.declared_names, doc.scoped_offsets
    found = []
    for token in doc.tokens_named(api_names()):
        if token.name not in declared and token.start_byte not in scoped:
            found.append((token, table[token.name]))
    return found


def _suggestion(entry: ApiEntry) -> str | None:
    if entry.has_hip:
        return entry.hip_name
    return entry.roc_name or None


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
