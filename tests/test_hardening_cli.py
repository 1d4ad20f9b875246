"""Hardening, running: a repository's config cannot exhaust the machine, the hook never fails open on a
directory or reads outside the repository, and Ctrl-C ends a parallel scan cleanly (issue 10, items 4, 16, 19, 27)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings, load_settings
from migrate.scan import scan, worker_count

from conftest import init_repo

CUDA_CALL = "void f(float** p) { cudaMalloc(p, 4); }\n"
BLOCKER = 'void g() { asm("mov.u32 %0, %%laneid;"); }\n'


def cores() -> int:
    return len(os.sched_getaffinity(0))


@pytest.mark.parametrize("jobs", [300, 2**63 - 1])
def test_jobs_from_a_repository_config_is_capped_to_the_cores(tmp_path: Path, jobs: int) -> None:
    (tmp_path / ".migrate.toml").write_text(f"jobs = {jobs}\n")
    settings = load_settings(tmp_path, {"no_cache": True})
    assert settings.jobs == jobs
    assert worker_count(settings) == cores()
    assert worker_count(Settings(jobs=0)) == cores()
    assert worker_count(Settings(jobs=1)) == 1


def test_a_huge_jobs_setting_still_scans(tmp_path: Path) -> None:
    for index in range(70):  # enough for the process pool
        (tmp_path / f"k{index}.cu").write_text(CUDA_CALL)
    (tmp_path / ".migrate.toml").write_text(f"jobs = {2**63 - 1}\n")
    result = scan(tmp_path, load_settings(tmp_path, {"no_cache": True}))
    assert len(result.findings) == 70


def test_check_of_a_directory_checks_the_files_in_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(BLOCKER)
    (tmp_path / "other.cu").write_text(BLOCKER)
    init_repo(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "src"])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("src/k.cu:1:")
    assert "other.cu" not in result.stdout
    result = CliRunner().invoke(cli, ["check", "--no-cache", "."])
    assert result.exit_code == 1 and "other.cu:1:" in result.stdout


def test_check_refuses_a_file_outside_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "file.cu").write_text(BLOCKER)
    (repo / "linked").symlink_to(tmp_path / "outside")
    init_repo(repo)
    monkeypatch.chdir(repo)
    for name in ("../outside/file.cu", "linked/file.cu", "linked/../../outside/file.cu"):
        result = CliRunner().invoke(cli, ["check", "--no-cache", name])
        assert result.exit_code == 2, (name, result.output)
        assert result.stderr == f"migrate: error: file is outside the scanned directory: {name}\n"


@pytest.mark.slow
def test_ctrl_c_during_a_parallel_scan_exits_130_without_tracebacks(tmp_path: Path) -> None:
    body = "".join(f"void f{n}(float** p) {{ cudaMalloc(p, {n}); }}\n" for n in range(200))
    for index in range(600):
        (tmp_path / f"k{index}.cu").write_text(body)
    executable = shutil.which("migrate", path=str(Path(sys.executable).parent))
    assert executable
    process = subprocess.Popen([executable, "scan", ".", "-j", "2", "--no-cache", "--format", "json"], cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=_as_a_shell_starts_it)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_children(process.pid)) < 2:
        time.sleep(0.1)  # wait until the workers run
    assert len(_children(process.pid)) >= 2, "the pool did not start"
    time.sleep(0.5)
    os.killpg(process.pid, signal.SIGINT)  # a terminal sends Ctrl-C to the whole foreground group
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr == "migrate: interrupted\n"


def _as_a_shell_starts_it() -> None:
    """Ctrl-C at its default and not blocked, whatever this test process inherited or an earlier test left: a child
    inherits both, and an ignored SIGINT would let the scan run to its end."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
