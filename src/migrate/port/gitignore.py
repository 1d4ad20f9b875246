"""The `.gitignore` lines of a PyTorch-extension port: a ROCm torch hipifies the CUDA sources beside themselves at
build time (torch.utils.hipify: `k.cu` -> `k.hip`, `k.cuh` -> `k_hip.cuh`, `cuda/` -> `hip/`), and those outputs are
build products, not sources."""

from __future__ import annotations

import fnmatch
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from migrate.bounded import Refused, read_bytes
from migrate.model import SourceFile
from migrate.port.plan import FileChange

GITIGNORE = ".gitignore"
HEADING = "# written by a ROCm PyTorch build (torch.utils.hipify), not sources"
_LIMIT = 1 << 20
_CUDA_SUFFIXES = frozenset({".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".cxx", ".inl"})
_RENAMES = (("cuda", "hip"), ("CUDA", "HIP"), ("THC", "THH"))  # torch.utils.hipify's get_hip_file_path


def hipify_ignores(root: Path, kernels: Sequence[SourceFile]) -> FileChange | None:
    """The repository root's .gitignore with the patterns of hipify's outputs for KERNELS that it lacks, or None
    (nothing to add, no CUDA sources, or a .gitignore that is not a regular file). A pattern that would hide a file
    the repository has (its own HIP sources) is left out."""
    sources = [s.relpath for s in kernels if not s.vendored and PurePosixPath(s.relpath).suffix in _CUDA_SUFFIXES]
    if not sources:
        return None
    existing = [s.relpath for s in kernels]
    patterns = [p for p in _patterns(sources) if not _hides(p, existing, root)]
    path = root / GITIGNORE
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        old = None
    else:
        if not stat.S_ISREG(mode):
            return None
        try:
            old = read_bytes(path, limit=_LIMIT)
        except (OSError, Refused):
            return None
    present = set() if old is None else {line.strip() for line in old.decode("utf-8", "replace").splitlines()}
    missing = [p for p in patterns if p not in present]
    if not missing:
        return None
    head = b"" if not old else old if old.endswith(b"\n") else old + b"\n"
    text = "\n".join([HEADING, *missing]) + "\n"
    new = head + (b"\n" if head else b"") + text.encode()
    return FileChange(GITIGNORE, old, new, reason="ignore what a ROCm torch's hipify writes beside the CUDA sources")


def _patterns(sources: Iterable[str]) -> list[str]:
    """`*.hip` and `*_hip.*` for the renamed files, and each directory hipify renames (`csrc/cuda` -> `/csrc/hip/`),
    in the order first met."""
    found = ["*.hip", "*_hip.*"]
    for relpath in sorted(sources):
        directory = PurePosixPath(relpath).parent.as_posix()
        renamed = _renamed(directory)
        if renamed != directory and directory != ".":
            pattern = f"/{_first_renamed(directory, renamed)}/"
            if pattern not in found:
                found.append(pattern)
        stem = PurePosixPath(relpath).stem
        if _renamed(stem) != stem and PurePosixPath(relpath).suffix != ".cu" and renamed == directory:
            output = PurePosixPath(directory, _renamed(stem) + PurePosixPath(relpath).suffix).as_posix()
            pattern = "/" + output.removeprefix("./")
            if pattern not in found and not fnmatch.fnmatch(PurePosixPath(output).name, "*_hip.*"):
                found.append(pattern)
    return found


def _renamed(text: str) -> str:
    for cuda, hip in _RENAMES:
        text = text.replace(cuda, hip)
    return text


def _first_renamed(directory: str, renamed: str) -> str:
    """The shallowest directory of RENAMED that differs from DIRECTORY's (all hipify's outputs are below it)."""
    parts, new = directory.split("/"), renamed.split("/")
    for index, (old_part, new_part) in enumerate(zip(parts, new)):
        if old_part != new_part:
            return "/".join(new[: index + 1])
    return renamed


def _hides(pattern: str, relpaths: Sequence[str], root: Path) -> bool:
    """PATTERN would hide a file the repository has."""
    if pattern.startswith("/"):
        return (root / pattern.strip("/")).exists()
    return any(fnmatch.fnmatch(PurePosixPath(p).name, pattern) for p in relpaths)
