"""Hardening, output: file names and other data from a repository reach every report, the terminal and
the hook's output escaped, in valid UTF-8, without a crash (issue 10, items 13, 14, 18, 28, 31)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli

from conftest import git, init_repo

CUDA_CALL = "void f(float** p) { cudaMalloc(p, 4); }\n"
NON_UTF8 = b"caf\xe9.cu"


def migrate(*args: str, cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    executable = shutil.which("migrate", path=str(Path(sys.executable).parent))
    assert executable
    env = {**os.environ, "LC_ALL": "C.UTF-8", "HOME": str(cwd)}
    return subprocess.run([executable, *args], cwd=cwd, capture_output=True, env=env, timeout=120, **kwargs)


@pytest.fixture
def odd_repo(tmp_path: Path) -> Path:
    """A plain directory with a CUDA call in a file whose name is not UTF-8."""
    repo = tmp_path / "repo"
    repo.mkdir()
    with open(os.path.join(os.fsencode(repo), NON_UTF8), "w") as handle:
        handle.write(CUDA_CALL)
    return repo


@pytest.mark.slow
def test_json_on_stdout_is_valid_utf8_with_the_name_escaped(odd_repo: Path) -> None:
    done = migrate("scan", ".", "--format", "json", "--no-cache", cwd=odd_repo)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.decode("utf-8"))
    assert {f["path"] for f in data["findings"]} == {"caf\\xe9.cu"}


@pytest.mark.slow
def test_sarif_encodes_the_name_bytes_in_the_uri(odd_repo: Path) -> None:
    done = migrate("scan", ".", "--format", "sarif", "--no-cache", cwd=odd_repo)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout.decode("utf-8"))["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"caf%E9.cu"}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["out.json", "out.sarif", "out.md", "out.html", "out.txt"])
def test_every_report_file_is_written(odd_repo: Path, tmp_path: Path, name: str) -> None:
    done = migrate("scan", ".", "--no-cache", "--report", str(tmp_path / name), cwd=odd_repo)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / name).read_text(encoding="utf-8")
    assert any(shown in text for shown in ("caf\\xe9.cu", "caf\\\\xe9.cu", "caf%E9.cu"))  # text, JSON, URI
    done = migrate("scan", ".", "--no-cache", "-o", str(tmp_path / ("o-" + name)), "--format", "md", cwd=odd_repo)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_baseline_of_an_odd_name_is_written_and_honoured(odd_repo: Path) -> None:
    done = migrate("baseline", ".", "--no-cache", cwd=odd_repo)
    assert done.returncode == 0, done.stderr
    json.loads((odd_repo / ".migrate-baseline.json").read_text(encoding="utf-8"))
    done = migrate("scan", ".", "--no-cache", "--format", "json", "--baseline", ".migrate-baseline.json", cwd=odd_repo)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["findings"] == []


def test_rich_markup_in_file_names_is_shown_as_is(tmp_path: Path) -> None:
    (tmp_path / "[").mkdir()  # the file `b].cu` in the directory `[`: the path reads `[/b].cu`
    for name in ("[/b].cu", "[red]x.cu"):
        (tmp_path / name).write_text(CUDA_CALL)
    (tmp_path / "[bold]skipped.cu").write_bytes(b"\xff\xfe" * 16 + b" not utf-8")  # mostly not ASCII: no source
    result = CliRunner().invoke(cli, ["scan", str(tmp_path), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "[red]x.cu" in result.stdout
    assert "[/b].cu" in result.stdout
    assert "[bold]skipped.cu: not UTF-8 text" in result.stdout


@pytest.mark.slow
def test_terminal_escapes_in_file_names_never_reach_the_terminal(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "x\x1b]0;owned\x07\x1b[2J.cu").write_text(CUDA_CALL)
    (repo / "bad\x1b[31m.py").write_bytes(b"\xff")
    scan = CliRunner().invoke(cli, ["scan", str(repo), "--no-cache"])
    assert scan.exit_code == 0
    assert "\x1b" not in scan.stdout and "x\\x1b]0;owned\\x07\\x1b[2J.cu" in scan.stdout
    for fmt in ("md", "html", "json", "sarif"):
        report = CliRunner().invoke(cli, ["scan", str(repo), "--no-cache", "--format", fmt])
        assert report.exit_code == 0 and "\x1b" not in report.stdout and "\x07" not in report.stdout, fmt
    init_repo(repo)
    (repo / "y\x1b[2J.cu").write_text("void g(){ asm(\"mov.u32 %0, %%laneid;\"); }\n" + CUDA_CALL)
    git(repo, "add", "-A")
    done = migrate("check", "--no-cache", "--fail-on", "info", "y\x1b[2J.cu", cwd=repo)
    assert done.returncode == 1, done.stderr
    assert b"\x1b" not in done.stdout and b"y\\x1b[2J.cu:" in done.stdout


@pytest.mark.slow
def test_closed_stdout_is_not_an_internal_error(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text(CUDA_CALL)
    executable = shutil.which("migrate", path=str(Path(sys.executable).parent))
    for command in (f"{executable} scan . --no-cache >&-", f"{executable} scan . --no-cache --format json >&-"):
        done = subprocess.run(["sh", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "internal error" not in done.stderr


@pytest.mark.slow
def test_broken_pipe_is_not_an_internal_error(tmp_path: Path) -> None:
    for index in range(300):
        (tmp_path / f"k{index}.cu").write_text(CUDA_CALL)
    executable = shutil.which("migrate", path=str(Path(sys.executable).parent))
    done = subprocess.run(["sh", "-c", f"{executable} scan . --no-cache --format json | head -c 10 >/dev/null"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_check_fail_on_info_names_the_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.cu").write_text(CUDA_CALL)
    init_repo(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--fail-on", "info", "a.cu"])
    assert result.exit_code == 1
    assert result.stderr.endswith(" at or above info\n")
