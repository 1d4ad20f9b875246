"""A CUDA document's functions: walked from the tree for the first small documents of a process, from the query
bundle after; the same either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.model import FileKind
from migrate.parse import cuda

from conftest import parse_file

CODE = """\
namespace ops {
template <typename T>
__device__ T twice(T x) { return x + x; }

struct Scale {
  __host__ __device__ float apply(float v) const { return v * 2.0f; }
};

__global__ void kernel(float* out) {
  auto body = [&](int i) {
    auto inner = [](float v) { return v; };
    out[i] = inner(twice(out[i]));
  };
  body(threadIdx.x);
}
}  // namespace ops

void host(float* out) { kernel<<<1, 32>>>(out); }
"""


def _spans(document: cuda.CudaDocument) -> list[tuple[int, frozenset[str]]]:
    return [(function.start_byte, function.qualifiers) for function in document.functions]


def test_a_small_first_document_walks_its_tree_and_finds_what_the_bundle_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cuda, "_BUNDLES", {})
    monkeypatch.setattr(cuda, "_parsed", 0)
    walked = parse_file(tmp_path, "walked.cu", FileKind.CUDA, CODE)
    assert isinstance(walked, cuda.CudaDocument) and walked._alone()
    monkeypatch.setattr(cuda, "_parsed", cuda._BUNDLE_FROM)
    queried = parse_file(tmp_path, "queried.cu", FileKind.CUDA, CODE)
    assert isinstance(queried, cuda.CudaDocument) and not queried._alone()

    device, both = frozenset({"__device__"}), frozenset({"__host__", "__device__"})
    expected = [
        (CODE.index("__device__ T twice"), device),
        (CODE.index("__host__ __device__ float"), both),
        (CODE.index("__global__ void kernel"), frozenset({"__global__"})),
        (CODE.index("[&](int i)"), frozenset()),
        (CODE.index("[](float v)"), frozenset()),
        (CODE.index("void host"), frozenset()),
    ]
    assert _spans(walked) == _spans(queried) == expected
    assert walked.in_device_code(CODE.index("out[i] =")) and not walked.in_device_code(CODE.index("kernel<<<"))
