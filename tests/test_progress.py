"""The scan's progress bar: drawn on stderr when it is a terminal (a real pseudo-terminal here), never into a pipe."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pty = pytest.importorskip("pty")  # POSIX only

FILES = 600  # the bar is drawn from 500 files on


def _tree(root: Path) -> Path:
    """FILES small Python files, one CUDA call each."""
    for index in range(FILES):
        folder = root / f"pkg{index % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{index}.py").write_text(f"import torch\nx{index} = torch.cuda.is_available()\n")
    return root


def _command(root: Path, report: Path) -> list[str]:
    executable = shutil.which("migrate", path=str(Path(sys.executable).parent))
    assert executable
    return [executable, "scan", str(root), "--no-cache", "--jobs", "1", "--format", "json", "--output", str(report)]


def _stderr_on_terminal(command: list[str]) -> str:
    """What COMMAND writes to its stderr when that is a terminal (stdout goes to a pipe)."""
    leader, follower = pty.openpty()
    seen: list[bytes] = []

    def drain() -> None:  # a full terminal buffer would stop the scan: read as it writes
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other end closed (EIO on Linux)
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=follower, env=env, timeout=300, check=False)
    os.close(follower)
    reader.join(timeout=10)
    os.close(leader)
    assert done.returncode == 0
    return b"".join(seen).decode("utf-8", "replace")


@pytest.mark.slow
def test_a_long_scan_draws_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    command = _command(_tree(tmp_path / "repo"), tmp_path / "report.json")
    shown = _stderr_on_terminal(command)
    assert "scanning" in shown
    assert f"/{FILES}" in shown  # done / total


@pytest.mark.slow
def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    command = _command(_tree(tmp_path / "repo"), tmp_path / "report.json")
    env = {**os.environ, "FORCE_COLOR": "1"}  # CI logs often ask for colour; a bar would still be noise there
    done = subprocess.run(command, capture_output=True, env=env, timeout=300, check=False)
    assert done.returncode == 0
    assert b"scanning" not in done.stderr
    assert b"\x1b[" not in done.stderr  # no cursor movement or colour either
