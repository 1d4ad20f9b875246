"""One fleet job in its own process (issue 23): a local checkout or a shallow, hardened clone, scanned with the
cache into the same verdict `migrate scan` gives; a clone error, a hang, a memory cap and hostile content are
failed or done outcomes with their reason, never a crash; a job whose worker dies ends too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.fleet.isolate import audit
from migrate.fleet.model import Job, ScanOptions, unpack

from conftest import GIT_ENV, git
from fleet_helpers import commit_file, fixture_repo, hostile_repo, silent_server

pytestmark = pytest.mark.slow  # each test starts real job processes (and git, a server, a second Python)
NO_CACHE = ScanOptions(no_cache=True)


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def run_job(job: Job, options: ScanOptions = NO_CACHE):  # type: ignore[no-untyped-def]
    return unpack(audit(job, options))


def scan_json(path: Path) -> dict:
    done = CliRunner().invoke(cli, ["scan", str(path), "--format", "json", "--no-cache", "--target", "gfx942,gfx1100"])
    return json.loads(done.output)


def test_a_local_checkout_gets_the_verdict_and_reports_of_migrate_scan(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path, "cuda-extension")
    job = Job(source=str(repo), name="cuda-extension", targets=("gfx942", "gfx1100"))
    outcome, reports = run_job(job)
    summary = scan_json(repo)["summary"]
    assert (outcome.status, outcome.reason) == ("done", "")
    assert (outcome.verdict, outcome.score, outcome.rocm_status) == (summary["verdict"], summary["risk_score"],
                                                                      summary["rocm_status"]["level"])
    assert [(t.target, t.verdict, t.blockers) for t in outcome.targets] == [
        (t["target"], t["verdict"], t["blockers"]) for t in summary["per_target"]]
    assert outcome.top_blockers[0].severity == "blocker" and outcome.top_blockers[0].category == "inline-ptx"
    assert ("inline-ptx", 2) in outcome.families and outcome.commit == git(repo, "rev-parse", "HEAD").strip()
    assert json.loads(reports["json"])["summary"]["verdict"] == summary["verdict"]
    assert reports["html"].startswith("<!DOCTYPE html>") and outcome.peak_mb > 0 and outcome.seconds > 0


def test_a_file_url_is_cloned_shallow_at_its_ref_and_the_clone_removed(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path, "pytorch-trainer")
    first = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "tag", "v1")
    second = commit_file(repo, "kernel.cu", "__global__ void k() { asm(\"exit;\"); }\n", "add a kernel")
    clones = tmp_path / "clones"
    options = replace(NO_CACHE, clone_dir=str(clones))
    at_head, _ = run_job(Job(source=repo.as_uri(), name="trainer", remote=True), options)
    at_tag, _ = run_job(Job(source=repo.as_uri(), ref="v1", name="trainer", remote=True), options)
    at_commit, _ = run_job(Job(source=repo.as_uri(), ref=first, name="trainer", remote=True), options)
    assert (at_head.commit, at_tag.commit, at_commit.commit) == (second, first, first)
    assert at_head.top_blockers and not at_tag.top_blockers  # the kernel is in HEAD only
    assert list(clones.iterdir()) == []


def test_a_repository_that_cannot_be_cloned_is_a_failed_outcome(tmp_path: Path) -> None:
    job = Job(source=(tmp_path / "missing").as_uri(), name="missing", remote=True)
    outcome, reports = run_job(job, replace(NO_CACHE, clone_dir=str(tmp_path / "clones")))
    assert (outcome.status, reports) == ("failed", {})
    assert outcome.reason.startswith("git could not fetch HEAD: fatal:") and "does not appear to be a git repository" in outcome.reason
    gone, _ = run_job(Job(source=str(tmp_path / "nowhere"), name="nowhere"))
    assert (gone.status, gone.reason) == ("failed", f"no such directory: {tmp_path / 'nowhere'}")


def test_a_clone_that_hangs_times_out_and_takes_git_with_it(tmp_path: Path) -> None:
    with silent_server() as url:
        started = time.monotonic()
        job = Job(source=url, name="stalled", remote=True, timeout=3.0)
        outcome, _ = run_job(job, replace(NO_CACHE, clone_dir=str(tmp_path / "clones")))
        took = time.monotonic() - started
    assert (outcome.status, outcome.reason) == ("failed", "timed out after 3 s")
    assert 3.0 <= took < 10.0
    assert not [p for p in psutil.process_iter(["cmdline"]) if url in " ".join(p.info["cmdline"] or ())]


def test_a_scan_past_its_memory_cap_is_a_failed_outcome(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path, "cutlass-kernels")
    outcome, _ = run_job(Job(source=str(repo), name="cutlass", memory=32 << 20))
    assert outcome.status == "failed" and outcome.reason == "reached the memory cap of 32 MiB"


def test_hostile_content_is_audited_and_escaped(tmp_path: Path) -> None:
    repo = hostile_repo(tmp_path)
    outcome, reports = run_job(Job(source=str(repo), name=repo.name))
    assert outcome.status == "done" and outcome.top_blockers[0].category == "inline-ptx"
    assert outcome.top_blockers[0].where == "csrc/k\x1b[2J\nnew line.cu:2"  # data as the scan's JSON holds it
    assert "<img" not in reports["html"] and "\x1b" not in reports["html"]
    clone, _ = run_job(Job(source=repo.as_uri(), name=repo.name, remote=True),
                       replace(NO_CACHE, clone_dir=str(tmp_path / "clones")))
    assert clone.status == "done" and clone.top_blockers == outcome.top_blockers


def test_the_clone_runs_no_hook_no_filter_and_no_submodule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "post-merge", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    user_config = tmp_path / "gitconfig"  # what a user's own config (or a hostile environment) could hold
    user_config.write_text(f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = touch {marker}\n"
                           f"[filter \"evil\"]\n\tsmudge = tee {marker}\n\trequired = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    inner = fixture_repo(tmp_path, "hip-ported")
    repo = fixture_repo(tmp_path, "pytorch-trainer")
    (repo / ".gitattributes").write_text("*.py filter=evil\n")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", inner.as_uri(), "third_party/inner")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "filter and submodule")
    clones = tmp_path / "clones"
    outcome, reports = run_job(Job(source=repo.as_uri(), name="trainer", remote=True),
                               replace(NO_CACHE, clone_dir=str(clones)))
    assert outcome.status == "done", outcome.reason
    assert not marker.exists()
    scanned = {f["path"] for f in json.loads(reports["json"])["findings"]}
    assert scanned and not any(p.startswith("third_party/inner/") for p in scanned)


def test_a_job_whose_worker_dies_ends_with_everything_it_started(tmp_path: Path) -> None:
    """A second process stands in for a Dask worker: killed, its job (and the job's git) must not live on."""
    with silent_server() as url:
        code = ("import sys; from migrate.fleet.isolate import audit; from migrate.fleet.model import Job, ScanOptions; "
                f"audit(Job(source={url!r}, name='stalled', remote=True, timeout=300), "
                f"ScanOptions(clone_dir={str(tmp_path / 'clones')!r}))")
        worker = subprocess.Popen([sys.executable, "-c", code])
        try:
            deadline = time.monotonic() + 30
            descendants: list[psutil.Process] = []
            while time.monotonic() < deadline and not any("fetch" in " ".join(p.cmdline()) for p in descendants):
                time.sleep(0.2)
                descendants = _descendants(worker.pid)
            assert descendants, "the job never started"
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()
            gone, alive = psutil.wait_procs(descendants, timeout=10)
            assert alive == [], [p.cmdline() for p in alive]
        finally:
            worker.kill()


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def test_a_single_repository_scan_never_imports_the_fleet_engine(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path, "cuda-extension")
    code = ("import sys; from click.testing import CliRunner; from migrate.cli import cli; "
            f"done = CliRunner().invoke(cli, ['scan', {str(repo)!r}, '--no-cache']); "
            "assert done.exit_code == 0, done.output; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('distributed', 'dask') or m.startswith('migrate.fleet')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
