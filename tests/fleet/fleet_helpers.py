"""Helpers for the fleet tests: real git repositories in temp dirs, a server that never answers, hostile content."""

from __future__ import annotations

import os
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import REPOS, git, init_repo

FIXTURE_REPOS = ("cmake-hpc", "cuda-extension", "cutlass-kernels", "hip-ported", "manifests-demo", "ported-residual",
                 "pytorch-trainer", "sample-collection")
HOSTILE_NAME = "evil-\x1b]0;owned\x07\x1b[31m<img src=x onerror=alert(1)>"


def fixture_repo(base: Path, name: str) -> Path:
    """A committed git repository copied from fixtures/repos/NAME."""
    target = base / name
    shutil.copytree(REPOS / name, target, symlinks=True)
    return init_repo(target)


def fixture_fleet(base: Path, count: int = 8) -> list[str]:
    """COUNT fixture repositories as source lines: the first half local paths, the rest file:// URLs."""
    lines = []
    for index, name in enumerate(FIXTURE_REPOS[:count]):
        repo = fixture_repo(base / "repos", name)
        lines.append(str(repo) if index < count // 2 else repo.as_uri())
    return lines


def hostile_repo(base: Path) -> Path:
    """A repository whose own name and file names carry escape sequences, markup, newlines and bytes that are not
    UTF-8, and whose code carries escape sequences too."""
    root = base / HOSTILE_NAME
    (root / "csrc").mkdir(parents=True)
    (root / "csrc" / "k\x1b[2J\nnew line.cu").write_text(
        "__global__ void k(float* p) {\n  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(p[0]));  // \x1b[31m\n}\n")
    (root / "csrc").joinpath("<img src=x onerror=alert(2)>.cu").write_text("void g() { cudaDeviceSynchronize(); }\n")
    raw = os.fsencode(root / "csrc") + b"/bad-\xff\xfe.cu"
    with open(raw, "w", encoding="utf-8") as handle:
        handle.write("void h() { cudaFree(0); }\n")
    return init_repo(root)


@contextmanager
def silent_server() -> Iterator[str]:
    """An HTTP URL on the loopback whose server accepts connections and never answers: a clone there hangs."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/team/stalled.git"
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        listener.close()


def commit_file(repo: Path, name: str, text: str, message: str) -> str:
    """Write NAME in REPO, commit it, return the commit id."""
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()
