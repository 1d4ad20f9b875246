"""Structural facts a manifest parser reports: compose GPU runtime, k8s GPU resources, CUDAExtension, ..."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.apimap import api_names
from migrate.matchers import Hit, register, require_flags
from migrate.matchers.manifest_common import check, needles, search
from migrate.parse import Document
from migrate.parse.manifest import FACT, items

FACTS = (
    "nvcc-arch-flag", "cuda-extension", "cuda-home-gate", "container-runtime", "gpu-reservation-driver",
    "gpu-resource", "ci-action", "pixi-cuda-requirement", "cmake-cuda-define", "requirements-include", "cog-gpu",
    "cog-cuda",
    "deepstream-infer", "tensorrt-engine-file", "triton-backend", "ci-runner", "attention-switch", "rust-nvcc-build",
    "msbuild-cuda-build", "msbuild-cuda-library", "matlab-cuda-mex", "matlab-gpu-array", "bazel-cuda-build",
    "cgo-include", "cgo-call",
    "ptx-text", "make-cuda-source", "cuda-fortran-code", "cuda-fortran-library", "openacc-directive",
    "cython-include", "cython-call", "cython-cimport", "cython-dlopen",
    "julia-package", "julia-cuda-code", "julia-cuda-warp", "julia-nvvm-intrinsic", "rust-ptx-build", "rust-nvptx-code",
    "rust-nvidia-smi", "rust-ptx-load", "rust-nvcc-run", "autoconf-switch", "autoconf-check",
)


def _validate(params: Mapping[str, Any]) -> None:
    check(params, regexes=("value",), required=("fact", "needles"))
    require_flags(params, "or_cuda_api")
    if params["fact"] not in FACTS:
        raise ValueError(f"manifest-fact: unknown fact '{params['fact']}' (known: {', '.join(FACTS)})")


@register("manifest-fact", validate=_validate, needles=lambda p: needles(p, None))
def match_fact(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each fact of kind `fact` whose value matches `value`, when given; with `or_cuda_api`, one whose value is a
    CUDA name of HIPIFY's tables (rules/data/cuda_api_map.tsv) passes too."""
    or_api = params.get("or_cuda_api", False)
    for item in items(doc, FACT):
        if item.name == params["fact"] and (search(params, "value", item.value) or (or_api and item.value in api_names())):
            yield Hit(item.line, item.column, end_line=item.end_line or None, symbol=f"{item.name}:{item.value}")
