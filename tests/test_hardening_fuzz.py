"""Hardening, fuzz: random bytes, names and nesting never make scan or check trace back or exit 3 (issue 10).

A seeded generator (reproducible: the seed is in the test id) builds small trees of odd file names (bytes
that are not UTF-8, terminal escapes, rich markup, spaces) holding random bytes, fragments of real
manifests and sources, deep nesting and long lines; each is scanned in every format (cold, then warm
from the cache: the same report) and checked as the hook would."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli

from conftest import init_repo

SEEDS = range(12)
_NAME_PARTS = ["a", "k", "é", "[red]", "[/b]", "\x1b[2J", " ", "-", "\u202e", "x" * 40, "%", "\\", "'", '"', "\t"]
_SUFFIXES = [".cu", ".cuh", ".py", ".cpp", ".h", ".yaml", ".yml", ".txt", ".toml", ".cmake", ".sh", ".md", ""]
_SPECIAL = ["requirements.txt", "pyproject.toml", "Dockerfile", "CMakeLists.txt", "docker-compose.yml",
            "environment.yml", "setup.py", "Makefile", "setup.cfg", "Pipfile"]
_FRAGMENTS = [
    "void f(float** p) { cudaMalloc(p, 4); }\n", "__global__ void k() { __shfl_down_sync(0xffffffff, 1, 16); }\n",
    'asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));\n', "#include <cuda_runtime.h>\n", "#if defined(__HIP__)\n",
    "import torch\nassert torch.version.cuda\n", "x = torch.cuda.is_available()\n", "flash-attn==2.5.0\n",
    "--extra-index-url https://download.pytorch.org/whl/cu121\n", "torch ; ; (\n", "[tool.migrate]\njobs = 99999\n",
    "[project\n", "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n", "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
    "services:\n  app:\n    image: nvidia/cuda\n    runtime: nvidia\n", "find_package(CUDA)\n", "\0\0\0", "\r", "\x0c",
    "\u2028", "- " * 30 + "\n", "(" * 150 + "\n", "[" * 300 + "\n", "{" * 500 + "\n", "# migrate: ignore[\n",
    "```cuda\ncudaMalloc(p, 4);\n```\n",
]


def _name(rng: random.Random) -> bytes:
    if rng.random() < 0.2:
        return rng.choice(_SPECIAL).encode()
    text = "".join(rng.choice(_NAME_PARTS) for _ in range(rng.randint(1, 3))).replace("/", "_")
    raw = text.encode("utf-8") + rng.choice(_SUFFIXES).encode()
    if rng.random() < 0.3:
        raw = bytes([rng.randint(0x80, 0xFF)]) + raw  # not UTF-8
    return raw


def _content(rng: random.Random) -> bytes:
    parts = []
    for _ in range(rng.randint(0, 8)):
        roll = rng.random()
        if roll < 0.6:
            parts.append(rng.choice(_FRAGMENTS).encode())
        elif roll < 0.8:
            parts.append(bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 64))))
        elif roll < 0.9:
            parts.append(b"x = " + b"-" * rng.randint(100, 8000) + b"1\n")
        else:
            parts.append(b"int a = 0; " * rng.randint(50, 1200) + b"cudaMalloc(p, 4);\n")
    return b"".join(parts)


def build(root: Path, seed: int) -> list[bytes]:
    """A random tree under ROOT; the relative names of its files."""
    rng = random.Random(seed)
    base = os.fsencode(root)
    made = []
    for _ in range(rng.randint(3, 14)):
        parts = [_name(rng).replace(b".", b"_") or b"d" for _ in range(rng.choice([0, 0, 1, 2, 4, 40]))]
        directory = os.path.join(base, *parts) if parts else base
        name = _name(rng)
        path = os.path.join(directory, name)
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError:  # a file of that name is already there
            continue
        if os.path.isdir(path):
            continue
        with open(path, "wb") as handle:
            handle.write(_content(rng))
        made.append(os.path.relpath(path, base))
    return made


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("seed", SEEDS)
def test_scan_never_fails_on_random_trees(tmp_path: Path, seed: int) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    build(root, seed)
    cache = str(tmp_path / "cache")
    for fmt in ("json", "sarif", "terminal", "md", "html"):
        cold = _run("scan", str(root), "--format", fmt, "--cache-dir", cache, "-j", "1")
        assert cold[0] in (0, 1, 2), cold
        assert "internal error" not in cold[2] and "Traceback" not in cold[2], cold[2]
        if cold[0] == 2:  # a random [tool.migrate] may be invalid: a one-line error, the same each time
            assert cold[2].startswith("migrate: error: ") and cold[2].count("\n") == 1
            return
        cold[1].encode("utf-8")
        if fmt in ("json", "sarif"):
            json.loads(cold[1])
        if fmt == "terminal":
            assert "\x1b" not in cold[1]
        warm = _run("scan", str(root), "--format", fmt, "--cache-dir", cache, "-j", "1")
        assert warm[:2] == cold[:2], "a warm scan reports what the cold one did"


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_check_never_fails_on_random_trees(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    made = build(root, seed)
    init_repo(root)
    monkeypatch.chdir(root)
    for names in ([os.fsdecode(n) for n in made], []):
        code, out, err = _run("check", "--no-cache", "--fail-on", "info", *names)
        assert code in (0, 1, 2), err
        assert "internal error" not in err and "Traceback" not in err, err
        if code == 2:
            assert err.startswith("migrate: error: ") and err.count("\n") == 1
        assert "\x1b" not in out
        out.encode("utf-8")
