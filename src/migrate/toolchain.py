"""The ROCm release a translation targets: --rocm, else the repository's `rocm` setting, else the installed toolchain's."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from migrate.engine_rules import engine_rules
from migrate.doctor import find_rocm, rocm_version_source
from migrate.tools import find_tool, run_tool

_MAJOR_MINOR = re.compile(r"(\d+)\.(\d+)")
_HIPCC_VERSION = re.compile(r"HIP version:\s*(\d+\.\d+)")
_TORCH_HIP = re.compile(r"""^hip\s*(?::[^=\n]*)?=\s*['"]([^'"]+)['"]""", re.M)
_TORCH_PACKAGE = (
    "import importlib.util as u\n"
    "s = u.find_spec('torch')\n"  # finds the package without importing it
    "print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')\n"
)
_PROBE_TIMEOUT = 20.0
_AMD = {"HIP_PLATFORM": "amd"}  # Debian's hipcc defaults to the NVIDIA platform when nvcc is installed


@dataclass(frozen=True)
class RocmTarget:
    """The ROCm release a translation is for ('' = the newest the knowledge base knows) and where it came from."""

    version: str
    source: str

    def describe(self) -> str:
        """'targets ROCm 5.2 (hipcc --version)', for the line every porting command prints."""
        if not self.version:
            return f"targets ROCm {engine_rules().default_rocm}, the newest release migrate knows ({self.source})"
        return f"targets ROCm {self.version} ({self.source})"


def choose_rocm(option: str | None, configured: str | None, config_file: str | None, *,
                hipcc: str | Path | None = None) -> RocmTarget:
    """--rocm (OPTION) wins, then the repository's `rocm` setting, then the installed toolchain, then the newest."""
    if option:
        return RocmTarget(option, "--rocm")
    if configured:
        where = Path(config_file).name if config_file else "the configuration"
        table = " [tool.migrate]" if where == "pyproject.toml" else ""
        return RocmTarget(configured, f"rocm = \"{configured}\" in {where}{table}")
    found = detect_installed(hipcc=hipcc)
    return found or RocmTarget("", "no ROCm toolchain found: hipcc, hipconfig, a ROCm install, a ROCm PyTorch")


def detect_installed(*, hipcc: str | Path | None = None, python: str | None = None) -> RocmTarget | None:
    """The release of the installed ROCm: hipcc --version, hipconfig --version, the install's version file, or
    the ROCm PyTorch's torch.version.hip (in PYTHON's environment if given); None when there is none."""
    probes: tuple[Callable[[], RocmTarget | None], ...] = (
        lambda: _from_hipcc(hipcc), _from_hipconfig, _from_install, lambda: _from_torch(python),
    )
    return next((found for probe in probes if (found := probe()) is not None), None)


def major_minor(text: str) -> str | None:
    """'5.2.21153-0' -> '5.2'; None when TEXT does not start with a release number."""
    found = _MAJOR_MINOR.match(text.strip())
    return f"{int(found.group(1))}.{int(found.group(2))}" if found else None


def _from_hipcc(explicit: str | Path | None) -> RocmTarget | None:
    compiler = find_tool("hipcc", explicit)
    if compiler is None:
        return None
    try:
        info = compiler.stat()
    except OSError:
        return None
    version = _hipcc_release(str(compiler), (info.st_ino, info.st_size, info.st_mtime_ns))
    source = "hipcc --version" if explicit is None else f"{compiler} --version"
    return RocmTarget(version, source) if version is not None else None


@cache
def _hipcc_release(compiler: str, stamp: tuple[int, int, int]) -> str | None:
    """The HIP release `COMPILER --version` prints ('' when it is not a release number; None when it prints none).
    Asked once per process for each compiler file (STAMP: its inode, size and time): Debian's hipcc takes a third of
    a second to answer, and a process that ports many trees asks for each."""
    run = run_tool([compiler, "--version"], env=_AMD, timeout=_PROBE_TIMEOUT)
    found = _HIPCC_VERSION.search(run.stdout.decode("utf-8", "replace"))
    return (major_minor(found.group(1)) or "") if found else None


def _from_hipconfig() -> RocmTarget | None:
    tool = find_tool("hipconfig")
    if tool is None:
        return None
    run = run_tool([tool, "--version"], env=_AMD, timeout=_PROBE_TIMEOUT)
    version = major_minor(run.stdout.decode("utf-8", "replace")) if run.ok else None
    return RocmTarget(version, "hipconfig --version") if version else None


def _from_install() -> RocmTarget | None:
    rocm = find_rocm(os.environ)
    if rocm is None:
        return None
    text, where = rocm_version_source(rocm)
    version = major_minor(text)
    return RocmTarget(version, where) if version else None


def _from_torch(python: str | None) -> RocmTarget | None:
    """torch.version.hip read from torch/version.py, never by importing torch (slow, and it may crash): in PYTHON's
    environment if given, else in this interpreter's, else in that of the `python3` on PATH."""
    package = _torch_package_of(python) if python else _torch_package_here() or _torch_package_of(_other_python())
    if package is None:
        return None
    version_file = package / "version.py"
    try:
        found = _TORCH_HIP.search(version_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    version = major_minor(found.group(1)) if found else None
    return RocmTarget(version, f"torch.version.hip in {version_file}") if version else None


def _torch_package_here() -> Path | None:
    spec = importlib.util.find_spec("torch")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def _other_python() -> str | None:
    """The `python3` on PATH when it is not this interpreter (migrate may live in a virtualenv of its own)."""
    found = shutil.which("python3")
    return found if found and not _same_file(found, sys.executable) else None


def _torch_package_of(python: str | None) -> Path | None:
    if python is None:
        return None
    run = run_tool([python, "-c", _TORCH_PACKAGE], timeout=_PROBE_TIMEOUT)
    text = run.stdout.decode("utf-8", "replace").strip()
    return Path(text) if run.ok and text else None


def _same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False
