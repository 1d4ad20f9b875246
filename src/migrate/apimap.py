"""The CUDA -> HIP name map (cuda_api_map.tsv) and header map (hip_headers.yaml), loaded once (the builtin engine's
own rules: engine_rules.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from operator import itemgetter
from typing import NamedTuple

from migrate.data import load_yaml, table_rows

LIBRARY_HEADERS = {
    "runtime": "hip/hip_runtime.h", "driver": "hip/hip_runtime.h", "device": "hip/hip_runtime.h",
    "rtc": "hip/hiprtc.h", "cublas": "hipblas/hipblas.h", "cub": "hipcub/hipcub.hpp", "cudnn": "miopen/miopen.h",
    "cufft": "hipfft/hipfft.h", "curand": "hiprand/hiprand.h", "cusolver": "hipsolver/hipsolver.h",
    "cusparse": "hipsparse/hipsparse.h", "cucomplex": "hip/hip_complex.h",
}


class ApiEntry(NamedTuple):  # not a dataclass: every process that reads the map makes ~9,000, 3 times faster
    """One CUDA name: its library, its HIP name (empty: none), and the ROCm-native name if any."""

    library: str
    section: str
    cuda_name: str
    hip_name: str
    roc_name: str
    status: str
    note: str

    @property
    def has_hip(self) -> bool:
        return bool(self.hip_name)

    @property
    def is_rename(self) -> bool:
        return self.has_hip and self.hip_name != self.cuda_name


_COLUMNS = ("library", "section", "cuda_name", "hip_name", "roc_name", "status", "note")


_WIDTH = len(_COLUMNS)


@cache
def api_names() -> frozenset[str]:
    """Every CUDA name of the map, as one set kept for the process (the key of its compiled regex)."""
    return frozenset(column("cuda_name"))


@cache
def _flat() -> list[str]:
    return _HANDED[0] if _HANDED else entries_flat()


def column(name: str) -> list[str]:
    """One field (an ApiEntry field name) of every entry, in the map's order: a check's rules select names by
    library and kind from the columns, without making the ~9,000 entries (~5 ms)."""
    return _flat()[_COLUMNS.index(name) :: _WIDTH]


def entry_at(index: int) -> ApiEntry:
    """The map's INDEXth entry (in the order column() gives)."""
    return ApiEntry._make(_flat()[index * _WIDTH : (index + 1) * _WIDTH])


@cache
def api_map() -> dict[str, ApiEntry]:
    """CUDA name -> entry; where a name sits in two libraries, the first library (by file order) wins."""
    if _HANDED:
        fields = iter(_HANDED[0])
        return {entry.cuda_name: entry for entry in map(ApiEntry._make, zip(*[fields] * _WIDTH))}
    table: dict[str, ApiEntry] = {}
    rows = iter(table_rows("cuda_api_map.tsv"))
    header = next(rows)
    columns = itemgetter(*(header.index(column) for column in _COLUMNS))  # by name: the file may gain columns
    for row in rows:
        entry = ApiEntry._make(columns(row))
        existing = table.get(entry.cuda_name)
        if existing is None or (not existing.has_hip and entry.has_hip):
            table[entry.cuda_name] = entry
    return table


_HANDED: list[list[str]] = []  # the map's entries as the ruleset cache kept them (entries_flat), when it did


def entries_flat() -> list[str]:
    """The map's entries, field after field, in one list (each name's duplicates settled): the form the ruleset cache
    keeps, which a check reads back twice as fast as the TSV's rows."""
    return [value for entry in api_map().values() for value in entry]


def remember_entries(flat: list[str]) -> None:
    """Take the map from FLAT (what entries_flat gave) instead of reading cuda_api_map.tsv."""
    if not _HANDED:
        _HANDED.append(flat)


def lookup(name: str) -> ApiEntry | None:
    return api_map().get(name)


Version = tuple[int, ...]


@cache
def parse_version(text: str) -> Version:
    """'6.2' -> (6, 2); ValueError for anything that is not dotted numbers."""
    if not text or not all(part.isdigit() for part in text.split(".")):
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part) for part in text.split("."))


@dataclass(frozen=True)
class HeaderMap:
    """CUDA -> HIP headers and namespaces (rules/data/hip_headers.yaml)."""

    headers: dict[str, str]
    prefixes: tuple[tuple[str, str], ...]
    namespaces: dict[str, str]
    roc_headers: dict[str, str] = field(default_factory=dict)
    versioned: dict[str, tuple[Version, str]] = field(default_factory=dict)
    spellings: dict[str, str] = field(default_factory=dict)

    def hip_header(self, name: str, *, roc: bool = False, rocm: Version | None = None) -> str | None:
        """The header to include instead of NAME (None: not a CUDA header); with ROCM, as the translator writes it."""
        found = self.roc_headers.get(name) if roc else None
        if found is None:
            found = self.headers.get(name) or next((h for prefix, h in self.prefixes if name.startswith(prefix)), None)
        if found is not None and rocm is not None:
            found = self.spellings.get(found, found)
        return self.in_release(found, rocm) if found is not None and rocm is not None else found

    def in_release(self, header: str, rocm: Version) -> str:
        """HEADER as ROCm release ROCM names it (hip/hip_bf16.h is hip/hip_bfloat16.h before 6.0)."""
        if header in self.versioned:
            since, before = self.versioned[header]
            return header if rocm >= since else before
        return header


@cache
def header_map() -> HeaderMap:
    """The header and namespace data, loaded once."""
    raw = load_yaml("hip_headers.yaml")
    versioned = {k: (parse_version(str(v["since"])), str(v["before"])) for k, v in raw.get("versioned", {}).items()}
    return HeaderMap(
        dict(raw["headers"]), tuple(raw.get("prefixes", {}).items()), dict(raw.get("namespaces", {})),
        dict(raw.get("roc_headers", {})), versioned, dict(raw.get("spellings", {})),
    )
