"""The CUDA -> HIP name map (rules/data/cuda_api_map.tsv) and header map (hip_headers.yaml), loaded once per process."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache

import yaml

from migrate.ruleset import data_path

LIBRARY_HEADERS = {
    "runtime": "hip/hip_runtime.h", "driver": "hip/hip_runtime.h", "device": "hip/hip_runtime.h",
    "rtc": "hip/hiprtc.h", "cublas": "hipblas/hipblas.h", "cub": "hipcub/hipcub.hpp", "cudnn": "miopen/miopen.h",
    "cufft": "hipfft/hipfft.h", "curand": "hiprand/hiprand.h", "cusolver": "hipsolver/hipsolver.h",
    "cusparse": "hipsparse/hipsparse.h", "cucomplex": "hip/hip_complex.h",
}


@dataclass(frozen=True)
class ApiEntry:
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


@cache
def api_map() -> dict[str, ApiEntry]:
    """CUDA name -> entry; where a name sits in two libraries, the first library (by file order) wins."""
    table: dict[str, ApiEntry] = {}
    with open(data_path("cuda_api_map.tsv"), newline="", encoding="utf-8") as handle:
        rows = csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t")
        for row in rows:
            entry = ApiEntry(**row)
            existing = table.get(entry.cuda_name)
            if existing is None or (not existing.has_hip and entry.has_hip):
                table[entry.cuda_name] = entry
    return table


def lookup(name: str) -> ApiEntry | None:
    return api_map().get(name)


@dataclass(frozen=True)
class HeaderMap:
    """CUDA -> HIP headers and namespaces (rules/data/hip_headers.yaml)."""

    headers: dict[str, str]
    prefixes: tuple[tuple[str, str], ...]
    namespaces: dict[str, str]

    def hip_header(self, name: str) -> str | None:
        if name in self.headers:
            return self.headers[name]
        return next((hip for prefix, hip in self.prefixes if name.startswith(prefix)), None)


@cache
def header_map() -> HeaderMap:
    """The header and namespace data, loaded once."""
    raw = yaml.safe_load(data_path("hip_headers.yaml").read_text(encoding="utf-8"))
    return HeaderMap(dict(raw["headers"]), tuple(raw.get("prefixes", {}).items()), dict(raw.get("namespaces", {})))
