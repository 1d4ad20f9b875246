"""Hardening, round two (issue 20): the git state a port starts from and leaves behind (a repository git refuses,
edits in the ported files, a second run, a killed run, an operation under way, odd branch names), --out-dir
paths that cannot be made, and what `check` reads when git runs it as a hook."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.writer import remove_tree, stage

from conftest import GIT_ENV, git, init_repo
from test_hardening_apply import _repo, _state  # a committed repo from a dict; HEAD, branches, index, files

KERNEL = "void f(float** p) { cudaMalloc(p, 4); }\n"
PORTED = "#include <hip/hip_runtime.h>\nvoid f(float** p) { hipMalloc(p, 4); }\n"
PTX = '__device__ int lane() { int x; asm("mov.u32 %0, %%laneid;" : "=r"(x)); return x; }\n'
BUILTIN = ["--engine", "builtin", "--strategy", "fork", "--sources-only"]
MIGRATE = [sys.executable, "-c", "from migrate.cli import main; main()"]
# migrate apply in a second process, stopped at one point of its write phase: after the Nth file is renamed
# into place (N = files + 1: after the commit) it pauses until a flag file appears, or sends itself a signal.
HOOKED = """
import os, signal, sys, time
from migrate import writer
from migrate.port import apply
root, action, at, flags, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
real_replace, real_commit, calls = writer.replace, apply._commit, []
def reached():
    calls.append(1)
    if len(calls) != at:
        return
    if action == "pause":
        open(os.path.join(flags, "ready"), "w").close()
        while not os.path.exists(os.path.join(flags, "go")):
            time.sleep(0.01)
    else:
        os.kill(os.getpid(), getattr(signal, action))
def replace(tmp, target):
    real_replace(tmp, target)
    reached()
def commit(*args):
    real_commit(*args)
    reached()
writer.replace, apply._commit = replace, commit
from migrate.cli import main
sys.argv = ["migrate", "apply", root, "--engine", "builtin", "--strategy", "fork", "--sources-only", *extra]
main()
"""


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GIT_INDEX_FILE", raising=False)


def _apply(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["apply", str(root), *BUILTIN, *args])


def _kernels(tmp_path: Path, count: int = 4) -> Path:
    return _repo(tmp_path, {"README": "hi\n", **{f"k{i}.cu": KERNEL for i in range(count)}})


def _hooked(root: Path, action: str, at: int, flags: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", HOOKED, str(root), action, str(at), str(flags), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **GIT_ENV})


def _temps(root: Path) -> list[Path]:
    return list(root.rglob("*.migrate-tmp"))


# -- D1: a .git that git refuses is a refusal, never a plain directory --------------------------------------------


def _with_untracked_work(tmp_path: Path) -> Path:
    root = _repo(tmp_path, {"a.cu": KERNEL})
    (root / "wip.cu").write_text("void w() { cudaFree(0); }\n")
    return root


def test_repository_with_dubious_ownership_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("handing the repository to another user needs root")
    root = _with_untracked_work(tmp_path)
    subprocess.run(["chown", "-R", "nobody", str(root)], check=True)
    before = {p.name: p.read_bytes() for p in root.glob("*.cu")}
    result = _apply(root)
    assert result.exit_code == 2, result.output
    assert "git will not open it: detected dubious ownership" in result.stderr
    assert f"git config --global --add safe.directory {root}" in result.stderr and "nothing was written" in result.stderr
    assert {p.name: p.read_bytes() for p in root.glob("*.cu")} == before


def test_repository_without_git_on_path_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _with_untracked_work(tmp_path)
    before = {p.name: p.read_bytes() for p in root.glob("*.cu")}
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    result = _apply(root)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1] == (
        f"migrate: error: {root} is a git repository ({root / '.git'}), but git is not installed (not found on "
        "PATH): without git there is no branch to go back to, so nothing was written; install git, or use "
        "--out-dir DIR for a ported copy")
    assert {p.name: p.read_bytes() for p in root.glob("*.cu")} == before


# -- D17, D18: a work tree elsewhere, an operation under way -------------------------------------------------------


def test_work_tree_elsewhere_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"a.cu": KERNEL})
    (tmp_path / "elsewhere").mkdir()
    git(root, "config", "core.worktree", str(tmp_path / "elsewhere"))
    result = _apply(root, "--allow-dirty")
    assert result.exit_code == 2, result.output
    assert f"git places the work tree of {root} at {tmp_path / 'elsewhere'} (core.worktree" in result.stderr
    assert git(root, "for-each-ref", "--format=%(refname)") == "refs/heads/main\n"
    assert (root / "a.cu").read_text() == KERNEL


def _conflicted(tmp_path: Path, operation: str) -> Path:
    root = _repo(tmp_path, {"a.cu": KERNEL, "b.cu": KERNEL})
    git(root, "checkout", "-q", "-b", "other")
    (root / "a.cu").write_text(KERNEL + "// theirs\n")
    git(root, "commit", "-qam", "theirs")
    git(root, "checkout", "-q", "main")
    (root / "a.cu").write_text(KERNEL + "// ours\n")
    git(root, "commit", "-qam", "ours")
    command = {"merge": ["merge", "other"], "rebase": ["rebase", "other"], "cherry-pick": ["cherry-pick", "other"],
               "unmerged": ["merge", "other"]}[operation]
    stopped = subprocess.run(["git", *command], cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True)
    assert stopped.returncode != 0 and "<<<<<<<" in (root / "a.cu").read_text()
    if operation == "unmerged":
        (root / ".git" / "MERGE_HEAD").unlink()
    return root


@pytest.mark.parametrize(("operation", "said"), [
    ("merge", "in the middle of a merge"), ("rebase", "in the middle of a rebase"),
    ("cherry-pick", "in the middle of a cherry-pick"), ("unmerged", "1 file(s) have unresolved conflicts: a.cu")])
def test_operation_under_way_is_refused(tmp_path: Path, operation: str, said: str) -> None:
    root = _conflicted(tmp_path, operation)
    conflicted = (root / "a.cu").read_bytes()
    branches = git(root, "for-each-ref", "--format=%(refname)")
    result = _apply(root, "--allow-dirty")
    assert result.exit_code == 2, result.output
    assert said in result.stderr and "nothing was written" in result.stderr
    assert git(root, "for-each-ref", "--format=%(refname)") == branches
    assert (root / "a.cu").read_bytes() == conflicted and (root / "b.cu").read_text() == KERNEL


# -- D21: --allow-dirty never takes an edit away ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["staged", "unstaged", "staged and unstaged"])
def test_edits_in_a_ported_file_are_refused_even_with_allow_dirty(tmp_path: Path, kind: str) -> None:
    root = _kernels(tmp_path, 2)
    (root / "k1.cu").write_text(KERNEL + "void mine() {}\n")
    if kind != "unstaged":
        git(root, "add", "k1.cu")
    if kind == "staged and unstaged":
        (root / "k1.cu").write_text(KERNEL + "void mine() { cudaFree(0); }\n")
    before = _state(root)
    result = _apply(root, "--allow-dirty")
    assert result.exit_code == 2, result.output
    assert f"1 file(s) the port would rewrite have uncommitted edits: k1.cu ({kind})" in result.stderr
    assert _state(root) == before


def test_allow_dirty_keeps_edits_in_files_the_port_does_not_rewrite(tmp_path: Path) -> None:
    root = _kernels(tmp_path, 1)
    (root / "notes.txt").write_text("staged\n")
    git(root, "add", "notes.txt")
    (root / "README").write_text("unstaged edit\n")
    result = _apply(root, "--allow-dirty")
    assert result.exit_code == 0, result.output
    assert git(root, "show", "--name-only", "--format=", "rocm-port").split() == ["k0.cu"]
    git(root, "checkout", "-q", "-")
    assert git(root, "status", "--porcelain") == " M README\nA  notes.txt\n"
    assert (root / "README").read_text() == "unstaged edit\n" and (root / "k0.cu").read_text() == KERNEL


# -- D24: branch names ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["HEAD", "refs/heads/x", "@{-1}", "-", "a..b"])
def test_branch_name_is_checked_as_git_branch_checks_it(tmp_path: Path, name: str) -> None:
    root = _kernels(tmp_path, 1)
    git(root, "checkout", "-q", "-b", "earlier")
    git(root, "checkout", "-q", "main")
    result = _apply(root, "--branch", name)
    assert result.exit_code == 2, result.output
    assert f"--branch {name!r} is not a valid git branch name" in result.stderr
    assert git(root, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/earlier", "refs/heads/main"]


# -- D7: one apply at a time -------------------------------------------------------------------------------------------


def _wait_for(flag: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the first apply never reached its write phase"
        time.sleep(0.01)


@pytest.mark.slow
def test_second_apply_is_refused_while_the_first_writes(tmp_path: Path) -> None:
    root = _kernels(tmp_path, 3)
    first = _hooked(root, "pause", 1, tmp_path)
    try:
        _wait_for(tmp_path / "ready", first)
        second = _apply(root)
        lock = root / ".git" / "migrate-apply.lock"
        assert second.exit_code == 2, second.output
        assert second.stderr.strip().splitlines()[-1] == (
            f"migrate: error: another migrate apply (pid {first.pid}) is writing to this repository (lock {lock} "
            "is held); wait for it to finish, then run apply again")
    finally:
        (tmp_path / "go").touch()
        _, stderr = first.communicate(timeout=60)
    assert first.returncode == 0, stderr
    assert git(root, "diff", "--name-only", "main", "rocm-port").split() == ["k0.cu", "k1.cu", "k2.cu"]
    assert git(root, "status", "--porcelain") == "" and not lock.exists()


# -- D16: SIGHUP rolls back; the run after a SIGKILL says what happened and undoes it ---------------------------------


@pytest.mark.slow
def test_sighup_rolls_back_like_sigterm(tmp_path: Path) -> None:
    root = _kernels(tmp_path)
    before = _state(root)
    done = _hooked(root, "SIGHUP", 2, tmp_path)
    _, stderr = done.communicate(timeout=60)
    assert done.returncode == 130, stderr
    assert "interrupted; rolled back: 2 file(s) restored, back on main, branch rocm-port removed" in stderr
    assert _state(root) == before and not _temps(root)


@pytest.mark.slow
def test_run_after_a_sigkill_while_writing_rolls_it_back(tmp_path: Path) -> None:
    root = _kernels(tmp_path)
    (root / "README").write_text("my unstaged edit\n")
    before = _state(root)
    killed = _hooked(root, "SIGKILL", 2, tmp_path, "--allow-dirty")
    killed.communicate(timeout=60)
    assert killed.returncode == -9
    assert len(_temps(root)) == 2 and git(root, "symbolic-ref", "--short", "HEAD").strip() == "rocm-port"
    again = _apply(root, "--allow-dirty")
    assert again.exit_code == 2, again.output
    assert again.stderr.strip().splitlines()[-1] == (
        f"migrate: error: a previous migrate apply (pid {killed.pid}) was killed while writing branch rocm-port; "
        "now rolled back: 2 file(s) restored, 2 temp file(s) removed, back on main, branch rocm-port removed; "
        "run apply again")
    assert _state(root) == before and not _temps(root)
    assert _apply(root, "--allow-dirty").exit_code == 0
    assert git(root, "show", "rocm-port:k3.cu") == PORTED and (root / "README").read_text() == "my unstaged edit\n"


@pytest.mark.slow
def test_run_after_a_sigkill_past_the_commit_says_where_the_port_is(tmp_path: Path) -> None:
    root = _kernels(tmp_path)
    killed = _hooked(root, "SIGKILL", 5, tmp_path)  # four files renamed, then the commit
    killed.communicate(timeout=60)
    assert killed.returncode == -9
    commit = git(root, "rev-parse", "--short=12", "rocm-port").strip()
    again = _apply(root)
    assert again.exit_code == 2, again.output
    assert again.stderr.strip().splitlines()[-1] == (
        f"migrate: error: a previous migrate apply (pid {killed.pid}) was killed after it committed the port on "
        f"branch rocm-port ({commit}); nothing to undo, 0 temp file(s) removed; `git switch main` goes back to "
        "where it started")
    assert git(root, "status", "--porcelain") == "" and git(root, "show", "rocm-port:k0.cu") == PORTED
    assert not (root / ".git" / "migrate-apply.lock").exists()


def test_planted_journal_touches_nothing_outside_the_tree(tmp_path: Path) -> None:
    """A repository handed to us may come with a lock file in its git directory: its paths are not trusted."""
    root = _kernels(tmp_path, 1)
    outside = tmp_path / "outside.cu"
    outside.write_text(KERNEL)
    (root / "link").symlink_to(tmp_path, target_is_directory=True)
    digest = hashlib.sha256(KERNEL.encode()).hexdigest()
    files = [["../outside.cu", False, digest], ["link/outside.cu", False, digest], [str(outside), False, digest]]
    journal = {"pid": 1, "branch": "x\x1b[2J", "head": git(root, "rev-parse", "HEAD").strip(), "ref": None,
               "files": files}
    (root / ".git" / "migrate-apply.lock").write_text(json.dumps(journal))
    result = _apply(root)
    assert result.exit_code == 2, result.output
    assert "killed while writing branch x\\x1b[2J; now rolled back: 0 file(s) restored" in result.stderr
    assert outside.read_text() == KERNEL and "\x1b" not in result.stderr
    assert _apply(root).exit_code == 0


# -- D12, D13, D14: --out-dir and stdout ------------------------------------------------------------------------------


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A temp dir on tmpfs where there is one: removing 1,100 nested directories from a busy disk takes seconds."""
    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path / "scratch"
    base.mkdir(exist_ok=True)
    yield base
    remove_tree(base)


def _deep_repo(base: Path, depth: int) -> Path:
    """A committed repository with one kernel DEPTH directories down."""
    root = base / "deep"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):  # made relative to a descriptor: no path the test builds grows with the depth
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = below
    with os.fdopen(os.open("k.cu", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as handle:
        handle.write(KERNEL)
    os.close(fd)
    return init_repo(root)


def test_out_dir_of_a_very_deep_tree(scratch: Path) -> None:
    source = _deep_repo(scratch, 1100)
    result = _apply(source, "--out-dir", str(scratch / "ported"))
    assert result.exit_code == 0, result.output
    assert (scratch / "ported" / ("d/" * 1100 + "k.cu")).read_text() == PORTED


def test_writer_makes_and_removes_a_very_deep_tree(scratch: Path) -> None:
    deepest = scratch.joinpath("top", *["d"] * 1100)
    stage(deepest / "k.cu", b"x")  # its parents first, without recursion (translate --out-dir writes this way)
    (deepest / "link").symlink_to(scratch)
    assert sorted(p.name.endswith(".migrate-tmp") for p in deepest.iterdir()) == [False, True]
    remove_tree(scratch / "top")
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize(("out_dir", "reason"), [
    ("/proc/self/x", "No such file or directory"), ("/sys/x", "Operation not permitted"),
    ("{tmp}/file/x", "Not a directory"), ("{tmp}/read-only/x", "Permission denied")])
def test_out_dir_that_cannot_be_made_is_one_line(tmp_path: Path, out_dir: str, reason: str) -> None:
    if out_dir.startswith("/sys") and os.access("/sys", os.W_OK) and os.geteuid() != 0:
        pytest.skip("/sys is writable here")
    if "read-only" in out_dir and os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    root = _kernels(tmp_path, 1)
    (tmp_path / "file").write_text("")
    (tmp_path / "read-only").mkdir(mode=0o555)
    target = out_dir.format(tmp=tmp_path)
    for command in (["apply", str(root), *BUILTIN], ["translate", str(root), "--engine", "builtin"]):
        result = CliRunner().invoke(cli, [*command, "--out-dir", target])
        assert result.exit_code == 2, result.output
        assert result.stderr.strip().splitlines()[-1] == f"migrate: error: cannot create --out-dir {target}: {reason}"


def test_dry_run_with_stdout_closed_is_one_line(tmp_path: Path) -> None:
    root = _kernels(tmp_path, 1)
    done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *MIGRATE, "apply", str(root), "--dry-run", *BUILTIN],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "migrate: error: stdout is closed: --dry-run has nowhere to print the diff"


# -- D22: check as a plain git hook judges what is committed ------------------------------------------------------


def _hooked_repo(tmp_path: Path) -> Path:
    root = _repo(tmp_path, {"clean.cu": "int main() { return 0; }\n"})
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexec {' '.join(map(str, MIGRATE[:2]))} '{MIGRATE[2]}' check --no-cache\n")
    hook.chmod(0o755)
    return root


def _commit(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-qm", "change"], cwd=root, env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_plain_hook_refuses_a_staged_finding_hidden_by_an_unstaged_clean_up(tmp_path: Path) -> None:
    root = _hooked_repo(tmp_path)
    (root / "lane.cu").write_text(PTX)
    git(root, "add", "lane.cu")
    (root / "lane.cu").write_text("// moved to HIP intrinsics\n")  # the clean-up, not staged
    refused = _commit(root)
    assert refused.returncode != 0, refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == (
        "migrate: error: 1 checked file(s) have unstaged changes, and git runs check as a hook on what is staged: "
        "lane.cu; stage them, or stash them (git stash --keep-index) before committing, or run check through the "
        "pre-commit framework, which stashes them for its hooks")
    assert git(root, "rev-list", "--count", "HEAD").strip() == "1"
    git(root, "add", "lane.cu")
    committed = _commit(root)
    assert committed.returncode == 0, committed.stderr
    assert git(root, "show", "HEAD:lane.cu") == "// moved to HIP intrinsics\n"


def test_check_by_hand_reads_the_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _hooked_repo(tmp_path)
    (root / "lane.cu").write_text("// nothing yet\n")
    git(root, "add", "lane.cu")
    (root / "lane.cu").write_text(PTX)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "lane.cu"])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("lane.cu:1:32: inline-ptx ")

