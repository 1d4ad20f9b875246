"""External tools (hipify-clang, hipify-perl, hipcc) located and run as data, never as a traceback."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TIMEOUT = 600.0
EXIT_NOT_FOUND = 127
EXIT_TIMEOUT = 124


@dataclass(frozen=True)
class ToolRun:
    """One run of an external tool: what was run and what came back."""

    command: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def describe(self) -> str:
        """A one-line account of a failed run: the tool, its exit code and its last error line."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        detail = next((line for line in reversed(lines) if "error" in line.lower()), lines[-1] if lines else "")
        name = Path(self.command[0]).name if self.command else "tool"
        return f"{name} exited with {self.returncode}" + (f": {detail.strip()}" if detail else "")


def search_dirs() -> list[Path]:
    """Where tools are looked for after PATH: $ROCM_PATH/bin, then /opt/rocm/bin."""
    dirs = []
    rocm = os.environ.get("ROCM_PATH")
    if rocm:
        dirs.append(Path(rocm) / "bin")
    dirs.append(Path("/opt/rocm/bin"))
    return dirs


def find_tool(name: str, explicit: str | Path | None = None) -> Path | None:
    """The tool's executable: an explicit path if given (and usable), else PATH, $ROCM_PATH/bin, /opt/rocm/bin."""
    if explicit is not None:
        path = Path(explicit)
        return path if path.is_file() and os.access(path, os.X_OK) else None
    import shutil  # here: with bz2 and lzma, a cost to every `migrate check`, which runs git without looking for it

    found = shutil.which(name)
    if found:
        return Path(found)
    for directory in search_dirs():
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_tool(
    command: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    unset: Sequence[str] = (),
    stdin: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ToolRun:
    """Run COMMAND and return its outcome; a missing executable or a time-out is an outcome too.
    ENV is added to the environment after removing the UNSET variables; STDIN is fed to the tool."""
    argv = tuple(str(part) for part in command)
    full_env = {**{k: v for k, v in os.environ.items() if k not in unset}, **(env or {})} if env or unset else None
    try:
        done = subprocess.run(argv, cwd=cwd, env=full_env, capture_output=True, timeout=timeout, check=False,
                              input=stdin, stdin=subprocess.DEVNULL if stdin is None else None)
    except FileNotFoundError:
        return ToolRun(argv, EXIT_NOT_FOUND, b"", f"{argv[0]}: command not found")
    except PermissionError as exc:
        return ToolRun(argv, EXIT_NOT_FOUND, b"", f"{argv[0]}: {exc.strerror}")
    except subprocess.TimeoutExpired:
        return ToolRun(argv, EXIT_TIMEOUT, b"", f"{argv[0]}: timed out after {timeout:.0f}s")
    return ToolRun(argv, done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))
