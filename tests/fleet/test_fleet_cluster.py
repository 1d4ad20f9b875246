"""The fleet on a real Dask LocalCluster (issue 23): every repository audited once even when a worker is killed
in the middle; a clone error, a hang and hostile content reported, not fatal; a killed `migrate fleet` resumes
with nothing lost and nothing repeated; --since tells what changed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import pytest

from migrate.fleet.model import Job
from migrate.fleet.runner import Counts, Plan, run_fleet
from migrate.fleet.sources import read_sources
from migrate.fleet.store import Store

from conftest import GIT_ENV, ROOT, git
from fleet_helpers import HOSTILE_NAME, commit_file, fixture_fleet, hostile_repo, silent_server

pytestmark = pytest.mark.slow
distributed = pytest.importorskip("distributed")
DEFAULTS = Job(source="", targets=("gfx942",), timeout=120.0, memory=2 << 30)
MIGRATE = [sys.executable, "-c", "from migrate.cli import main; main()"]


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


class Transitions(distributed.diagnostics.plugin.SchedulerPlugin):  # type: ignore[misc]
    """What the scheduler saw of each task: how often it started on a worker, how often it finished."""

    def __init__(self) -> None:
        self.started: Counter[str] = Counter()
        self.finished: Counter[str] = Counter()

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if finish == "processing":
            self.started[str(key)] += 1
        elif finish == "memory":
            self.finished[str(key)] += 1


def repo_key(task: str) -> str:
    """The job key of a task key (audit-JOBKEY-RUNTOKEN)."""
    return task.split("-")[1]


def test_a_killed_worker_loses_nothing_and_nothing_runs_twice(tmp_path: Path) -> None:
    with silent_server() as stalled:
        lines = fixture_fleet(tmp_path, 8)
        unclonable = (tmp_path / "no-such-repo").as_uri()
        hostile = hostile_repo(tmp_path / "hostile")
        listed = tmp_path / "fleet.yaml"
        listed.write_text(json.dumps({"repositories": [
            *lines, unclonable, str(hostile), {"source": stalled, "timeout": 4, "name": "stalled"}]}))
        jobs = read_sources(listed, DEFAULTS).jobs
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                      memory_limit=0) as cluster, distributed.Client(cluster) as client:
            seen = Transitions()
            cluster.scheduler.add_plugin(seen, name="transitions")
            killed: list[str] = []

            def kill_a_busy_worker(counts: Counts, _outcome: object) -> None:
                if killed or counts.done < 2:
                    return
                busy = [address for address, keys in client.processing().items() if keys]
                if busy:
                    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                    killed.append(repo_key(str(client.processing()[busy[0]][0])))
                    os.kill(pid, signal.SIGKILL)

            done = run_fleet(Plan(jobs, tmp_path / "out", scheduler=cluster.scheduler_address),
                             progress=kill_a_busy_worker)
    assert killed, "no worker was busy to be killed"
    statuses = {o.name: (o.status, o.reason) for o in done.outcomes}
    assert len(done.outcomes) == len(jobs) == 11 and done.audited == 11
    assert statuses["no-such-repo"][0] == "failed" and "does not appear to be a git repository" in statuses["no-such-repo"][1]
    assert statuses["stalled"] == ("failed", "timed out after 4 s")
    assert statuses[HOSTILE_NAME][0] == "done"
    assert sum(status == "done" for status, _ in statuses.values()) == 9
    finished = Counter(repo_key(task) for task, count in seen.finished.items() for _ in range(count))
    assert finished == Counter({job.key: 1 for job in jobs})  # every repository finished exactly once
    assert seen.started[next(t for t in seen.started if repo_key(t) == killed[0])] >= 2  # the killed one ran again
    store = Store(tmp_path / "out" / "fleet.db", readonly=True)
    assert set(store.outcomes()) == {job.key for job in jobs}
    page = (tmp_path / "out" / "fleet.html").read_text()
    assert "\x1b" not in page and "<img" not in page and page.count("<script") == 1
    for outcome in done.outcomes:
        assert (tmp_path / "out" / "repos" / outcome.slug / "report.html").is_file() == (outcome.status == "done")


def _fleet(*args: str, **options: Any) -> subprocess.Popen[str]:
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.Popen([*MIGRATE, "fleet", *args], env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **options)


def _stored(db: Path) -> dict[str, tuple[int, float]]:
    """key -> (run, finished) of each stored result, read as another process would."""
    if not db.exists():
        return {}
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as connection:
        try:
            return {key: (run, at) for key, run, at in connection.execute("SELECT key, run, finished FROM results")}
        except sqlite3.OperationalError:
            return {}


def test_a_killed_fleet_run_resumes_with_nothing_lost_and_nothing_repeated(tmp_path: Path) -> None:
    listed = tmp_path / "repos.txt"
    listed.write_text("\n".join(fixture_fleet(tmp_path, 8)) + "\n")
    out, db = tmp_path / "out", tmp_path / "out" / "fleet.db"
    first = _fleet(str(listed), "--out", str(out), "--workers", "2", "--no-cache", start_new_session=True)
    deadline = time.monotonic() + 240
    while len(_stored(db)) < 3 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    descendants = psutil.Process(first.pid).children(recursive=True)
    os.killpg(first.pid, signal.SIGKILL)  # the run, its scheduler and its workers, at once
    first.communicate()
    before = _stored(db)
    assert 3 <= len(before) < 8, "the run was not killed in the middle"
    _gone, alive = psutil.wait_procs(descendants, timeout=15)
    assert alive == [], [p.cmdline() for p in alive]  # no job outlives its killed worker
    assert not (out / "fleet.html").exists()

    second = _fleet(str(listed), "--out", str(out), "--workers", "2", "--no-cache")
    output, errors = second.communicate(timeout=300)
    assert second.returncode == 0, errors
    after = _stored(db)
    assert len(after) == 8 and all(after[key] == before[key] for key in before)  # nothing lost, nothing redone
    assert {run for key, (run, _) in after.items() if key not in before} == {2}
    assert f"8 repositories: 8 audited, 0 failed" in output and f"({8 - len(before)} this run, {len(before)} from the store)" in output
    assert errors.count("\n") == 8 - len(before)  # one line per repository audited by this run (stderr is no terminal)
    data = json.loads((out / "fleet.json").read_text())
    assert [r["status"] for r in data["repositories"]] == ["done"] * 8
    assert all((out / r["report"]).is_file() for r in data["repositories"])


def test_since_reports_new_blockers_and_repositories_that_became_ready(tmp_path: Path) -> None:
    lines = fixture_fleet(tmp_path, 8)
    ported = tmp_path / "repos" / "ported-residual"
    trainer = tmp_path / "repos" / "pytorch-trainer"
    ptx = '__global__ void lane(int* out) {\n  int id;\n  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));\n  out[0] = id;\n}\n'
    commit_file(ported, "src/gpu/lane_ptx.cu", ptx, "a PTX lane id")
    listed = tmp_path / "repos.txt"
    listed.write_text("\n".join(lines) + "\n")
    first = _fleet(str(listed), "--out", str(tmp_path / "may"), "--workers", "2")
    assert first.wait(timeout=300) == 0, first.communicate()[1]
    git(ported, "rm", "-q", "src/gpu/lane_ptx.cu")
    git(ported, "commit", "-q", "-m", "port the lane id")
    commit_file(trainer, "csrc/lane.cu", ptx, "a PTX lane id")
    second = _fleet(str(listed), "--out", str(tmp_path / "june"), "--workers", "2", "--since", str(tmp_path / "may" / "fleet.db"))
    output, errors = second.communicate(timeout=300)
    assert second.returncode == 0, errors
    assert f"since {tmp_path / 'may' / 'fleet.db'}: 1 became ROCm-ready, 1 have new blockers" in output
    since = json.loads((tmp_path / "june" / "fleet.json").read_text())["since"]
    assert since["became_ready"] == [ported.as_uri()]
    assert since["new_blockers"] == [{"source": trainer.as_uri(), "blockers": [{"rule": "inline-ptx", "path": "csrc/lane.cu"}]}]
