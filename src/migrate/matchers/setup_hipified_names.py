"""Two sources of one PyTorch extension that PyTorch's hipify renames to the same object: `X.cpp` and `X_cuda.cu`
both become `X_hip.*` (torch/utils/hipify/hipify_python.py, get_hip_file_path), so the ROCm build compiles two
files to one `X_hip.o`."""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from migrate.bounded import read_text
from migrate.matchers import CodeTest, Hit, register
from migrate.model import Severity
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
_NEEDLES = [".cu'", '.cu"']


def _validate(params: Mapping[str, Any]) -> None:
    unknown = set(params) - {"matcher"}
    if unknown:
        raise ValueError(f"hipified-name-clash: unknown keys {sorted(unknown)}")


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """A setup file naming a .cu source whose name says cuda (the one hipify renames to say hip)."""
    return lambda code: any(n in code.text for n in _NEEDLES) and ("cuda" in code.text or "CUDA" in code.text)


def _hip_names(path: str) -> tuple[str, str]:
    """(CUDA object stem, hipified object stem) of a source path: hipify turns cuda/CUDA into hip/HIP in the
    folder and the name, a .cu into .hip, and adds `_hip` to a name it would otherwise leave as it is."""
    folder, name = posixpath.split(path)
    root, ext = posixpath.splitext(name)
    hip_folder = folder.replace("cuda", "hip").replace("CUDA", "HIP")
    hip_root = root.replace("cuda", "hip").replace("CUDA", "HIP")
    if ext != ".cu" and hip_folder == folder and hip_root == root:
        hip_root += "_hip"
    return posixpath.join(folder, root), posixpath.join(hip_folder, hip_root)


def _sources(doc: PythonDocument) -> list[tuple[str, ast.Constant]]:
    found = []
    for node in doc.nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in doc.docstrings:
            value = node.value.strip()
            if value.endswith(_SOURCE_SUFFIXES) and " " not in value and "*" not in value:
                found.append((value.replace("\\", "/"), node))
    return found


@register("hipified-name-clash", validate=_validate, needles=lambda params: list(_NEEDLES), candidates=_code_test)
def match_hipified_clash(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each .cu source whose hipified object name is also another listed source's (names distinct on CUDA)."""
    if not isinstance(doc, PythonDocument):
        return
    sources = _sources(doc)
    hosts: dict[str, list[tuple[str, str]]] = {}
    for path, _node in sources:
        if not path.endswith(".cu"):
            cuda, hip = _hip_names(path)
            hosts.setdefault(hip, []).append((cuda, path))
    for path, node in sources:
        if path.endswith(".cu"):
            cuda, hip = _hip_names(path)
            clash = next((other for other_cuda, other in hosts.get(hip, []) if other_cuda != cuda), None)
            if clash is None:
                continue
            # medium where the binding holds a CUDA name (hipify rewrites it, so renames it); low where it holds
            # none or was not found: hipify still renames it when it rewrites an include of a header it hipified
            changed = _hipify_changes(doc, clash)
            note = f"`{clash}` and `{path}` both become `{posixpath.basename(hip)}` objects on ROCm."
            if not changed:
                note += (f" `{clash}` {'holds no CUDA name' if changed is False else 'was not found'}: it clashes"
                         " only if hipify rewrites it (an #include of a header that hipify renames).")
            yield Hit(node.lineno, node.col_offset + 1, symbol=posixpath.basename(path),
                      severity=None if changed else Severity.LOW, note=note)


# What hipify rewrites in a binding: a CUDA API name (cudaStream_t, CUDA_VERSION, cublasHandle_t), a CUDA or THC
# header (<cuda_runtime.h>, <THC/THC.h>, <c10/cuda/CUDAGuard.h>), PyTorch's CUDA namespace and types
# (at::cuda::, getCurrentCUDAStream, CUDAGuard), a warp intrinsic. Not a project's own `_cuda` suffix
# (`linear_forward_cuda`, `CHECK_CUDA`, `x.is_cuda()`), which hipify leaves: ROCm's apex keeps `fused_dense.cpp`
# next to `fused_dense_cuda.cu` for that reason.
_CUDA_WORD = re.compile(
    r"\b(?:cuda[A-Z_]\w*|CUDA_\w+|cu(?:blas|blasLt|rand|dnn|sparse|fft|solver)[A-Z_]\w*|THC\w*)"
    r"|[<\"/](?:cuda|THC)[\w/]*\.h|/cuda/|\b(?:at|c10)::cuda::|CUDA(?:Guard|Stream|Event|Context)|__shfl|__syncwarp"
)
_MAX_LOOKUPS = 2000  # files looked at under the setup file's folder for a source named in a module-relative path


_MAX_BINDING_BYTES = 4_000_000


def _hipify_changes(doc: Document, source: str) -> bool | None:
    """Whether hipify rewrites SOURCE (a path as the setup file names it): it holds a CUDA name. None where the
    file is not found in the repository (a path built from a module name is looked up by its ending under the setup
    file's folder) or is not a regular file of a readable size."""
    base = doc.source.path.parent
    direct = base / source
    found = direct if direct.is_file() else next(_ending_with(base, source), None)
    root = doc.source.path.parents[len(PurePosixPath(doc.source.relpath).parts) - 1]
    if found is None or not found.resolve().is_relative_to(root.resolve()):
        return None
    text = read_text(found, limit=_MAX_BINDING_BYTES)
    return None if text is None else _CUDA_WORD.search(text) is not None


def _ending_with(base: Path, source: str) -> Iterator[Path]:
    name = posixpath.basename(source)
    for looked, candidate in enumerate(base.rglob(name)):
        if looked >= _MAX_LOOKUPS:
            return
        if candidate.as_posix().endswith("/" + source.lstrip("./")) and candidate.is_file():
            yield candidate
