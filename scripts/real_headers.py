"""Unpack the real C++ headers the extension tests compile against, from the wheels pip fetches, into a directory.

    python scripts/real_headers.py [DEST]      # default .venv/real-headers

- DEST/torch/include: PyTorch's headers from the CPU wheel, fetched with --no-index so that only a wheel already
  on this disk (pip's find-links) is taken: from PyPI, torch==2.13.0 for Linux is the multi-GB CUDA build.
- DEST/cuda-libs/include: cuBLAS, cuSPARSE and cuSOLVER's headers (ATen/cuda/CUDAContext.h includes them), from
  NVIDIA's wheels, only when nvcc's own toolkit has none.

Only the headers are kept: an importable CPU torch beside migrate would change what `migrate verify` compiles
against. Prints one line per part and exits 0 even when a part cannot be had (the tests then skip, or fail where
MIGRATE_REQUIRE_TOOLS is set).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

TORCH = "torch==2.13.0"
CUDA_LIBRARIES = ("nvidia-cublas==13.1.1.3", "nvidia-cusparse==12.6.3.3", "nvidia-cusolver==12.0.4.66")
NEEDED_FROM_LIBRARIES = ("cublas_v2.h", "cublasLt.h", "cusparse.h", "cusolverDn.h")


def main() -> int:
    dest = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / ".venv" / "real-headers")
    torch_include = dest / "torch" / "include"
    if not (torch_include / "torch" / "extension.h").is_file():
        print(_unpack([TORCH, "--no-index"], "torch/include/", dest / "torch", "PyTorch"))
    if _toolkit_has_libraries():
        print("CUDA library headers: nvcc's toolkit has them")
    elif not (dest / "cuda-libs" / "include" / "cublas_v2.h").is_file():
        print(_unpack(list(CUDA_LIBRARIES), "/include/", dest / "cuda-libs" / "include", "cuBLAS/cuSPARSE/cuSOLVER",
                      flatten=True))
    return 0


def _unpack(requirements: list[str], inside: str, target: Path, label: str, *, flatten: bool = False) -> str:
    """pip download REQUIREMENTS, then extract the members whose path contains INSIDE into TARGET."""
    with tempfile.TemporaryDirectory(prefix="real-headers-") as tmp:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check",
                               "-d", tmp, *requirements], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"{label} headers: not fetched ({_last_error(done.stderr)})"
        shutil.rmtree(target, ignore_errors=True)
        count = sum(_extract(wheel, inside, target, flatten) for wheel in sorted(Path(tmp).glob("*.whl")))
    return f"{label} headers: {count} files in {target}"


def _extract(wheel: Path, inside: str, target: Path, flatten: bool) -> int:
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.infolist() if inside in m.filename and not m.is_dir()]
        for member in members:
            relative = member.filename.split(inside, 1)[1] if flatten else member.filename.split("/", 1)[1]
            out = target / relative
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(archive.read(member))
    return len(members)


def _toolkit_has_libraries() -> bool:
    nvcc = shutil.which("nvcc")
    include = Path(nvcc).resolve().parent.parent / "include" if nvcc else None
    return include is not None and all((include / name).is_file() for name in NEEDED_FROM_LIBRARIES)


def _last_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("WARNING: Location")]
    return lines[-1].strip() if lines else "pip failed"


if __name__ == "__main__":
    sys.exit(main())
