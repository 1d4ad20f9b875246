"""Bazel BUILD files, Starlark macros (.bzl) and .bazelrc option files: where a target is built for CUDA only,
through the toolchain that TensorFlow, XLA and rules_cuda configure (`if_cuda(...)`, `if_cuda_is_configured(...)`,
`@local_config_cuda//` labels, `-DGOOGLE_CUDA=1`, `-nvcc_options=` copts; in a .bazelrc the CUDA crosstool, the
`--action_env CUDA_TOOLKIT_PATH=...` / `TF_CUDA_COMPUTE_CAPABILITIES` settings and `--define=using_cuda=true`).
A file that already names the ROCm side (`if_rocm`, `if_cuda_or_rocm`, `if_gpu_is_configured`,
`@local_config_rocm//`, `TENSORFLOW_USE_ROCM`, `TF_NEED_ROCM=1`, `using_rocm=true`) yields nothing: its GPU build
has a ROCm path."""

from __future__ import annotations

import re
from collections.abc import Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import as_spaces, register
from migrate.parse.manifest import FACT, Item, ManifestDocument, Positions

# a docstring or a `#` comment (blanked), or a one-line string (kept, labels and copts are strings): a `#` inside a
# string is not a comment
_TOKEN = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#[^\n]*',
                    re.S)
# the CUDA-only select helpers, the CUDA toolchain's labels, the define that turns TensorFlow's GPU kernels on and
# nvcc options passed through the crosstool wrapper; rules_cuda's rules and labels (`load("@rules_cuda//cuda:defs.bzl",
# "cuda_library")`, `cuda_library(...)`: nvcc or clang for NVIDIA only); the CUDA toolkit's own libraries imported by
# file (`cc_import(static_library = "lib64/libcudart_static.a")`, a repository rule over /usr/local/cuda/lib64); and a
# .bazelrc's settings for that toolchain: the CUDA toolkit, cuDNN and compute capabilities handed to its configure
# rule, and the defines that select nvcc
_CUDA_BUILD = re.compile(
    r"\bif_cuda(?:_is_configured)?\s*\(|@local_config_cuda//|\bGOOGLE_CUDA=1\b|-nvcc_options=[\w=-]+"
    r"|@rules_cuda//|^[ \t]*cuda_(?:library|binary|test|objects)\s*\("
    r"|\blib(?:cudart|cuda|cublas|cublasLt|cufft|curand|cusparse|cusolver|nvrtc|cudnn)(?:_static)?\.(?:a|so)\b"
    r"|--(?:action|repo)_env[= ]+(?:TF_|HERMETIC_)?(?:CUDA|CUDNN|NEED_CUDA)\w*|--define[= ]+using_cuda\w*=true", re.M)
# the ROCm side of the same toolchain: a file that names it builds for both
_ROCM_SIDE = re.compile(
    r"\bif_rocm(?:_is_configured)?\s*\(|\bif_cuda_or_rocm\s*\(|\bif_gpu_is_configured\s*\(|@local_config_rocm//"
    r"|\bTENSORFLOW_USE_ROCM\b|\brocm_copts\s*\(|\bTF_NEED_ROCM=1\b|--define[= ]+using_rocm\w*=true")


def _blank_comment(match: re.Match[str]) -> str:
    text = match.group()
    return as_spaces(text) if text.startswith(("#", '"""', "'''")) else text


def bazel_items(text: str) -> Iterator[Item]:
    """The CUDA-only build facts of a BUILD or .bzl file, in the order they appear (none when it has a ROCm side)."""
    if "cuda" not in text and "CUDA" not in text:
        return
    code = _TOKEN.sub(_blank_comment, text)
    if _ROCM_SIDE.search(code):
        return
    positions = Positions(code)
    lines: set[int] = set()
    for match in _CUDA_BUILD.finditer(code):  # one per line: `if_cuda(["-DGOOGLE_CUDA=1"])` is one setting
        line, column = positions.at(match.start())
        if line not in lines:
            lines.add(line)
            yield Item(FACT, "bazel-cuda-build", line, column, value=match.group())


@register(FileKind.BAZEL)
def parse_bazel(source: SourceFile, text: str) -> ManifestDocument:
    """A BUILD, .bzl or .bazelrc file reduced to its CUDA-only build facts."""
    return ManifestDocument(source=source, text=text, manifest=list(bazel_items(text)))
