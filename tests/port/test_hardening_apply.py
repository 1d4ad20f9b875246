"""Hardening, apply: the port never takes over files it does not own, lands where the parser says, and leaves
nothing behind when it fails or is interrupted (issue 10: #2, #3, #10, #12, #17, #20, #29)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.port import apply as apply_module
from migrate import writer
from migrate.port.apply import ApplyError, plan_port, write_port
from migrate.cli import cli
from migrate.config import Settings
from migrate.port.plan import PortOptions
from migrate.port.translate import Engine

from conftest import GIT_ENV, git, init_repo

KERNEL = "void f(float** p) { cudaMalloc(p, 4); }\n"
BUILTIN = ["--engine", "builtin", "--strategy", "fork"]  # the writer is tested on the fork: every source changes


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def _apply(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["apply", str(root), *BUILTIN, *args])


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    return init_repo(root)


def _state(root: Path) -> tuple[str, str, str, dict[str, bytes]]:
    """HEAD, branches, index and every file: what a failed apply must leave as it found it."""
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(root).parts}
    return (git(root, "symbolic-ref", "HEAD"), git(root, "branch", "--list"), git(root, "ls-files", "-s"), files)


# -- #2: untracked and ignored files are not the port's ----------------------------------------------------------


def test_untracked_source_is_refused_by_name_and_kept(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"README": "hi\n"})
    (root / "wip.cu").write_text(KERNEL)
    before = _state(root)
    result = _apply(root)
    assert result.exit_code == 2
    assert "wip.cu" in result.stderr and "not tracked by git" in result.stderr
    assert _state(root) == before


def test_ignored_source_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path, {".gitignore": "scratch/\n", "k.cu": KERNEL})
    (root / "scratch").mkdir()
    (root / "scratch" / "w.cu").write_text(KERNEL)
    before = _state(root)
    result = _apply(root / "scratch")
    assert result.exit_code == 2 and "w.cu" in result.stderr and "not tracked by git" in result.stderr
    assert _state(root) == before
    assert (root / "scratch" / "w.cu").read_text() == KERNEL


@pytest.mark.parametrize("existing", ["Dockerfile.rocm", "requirements-rocm.txt"])
def test_untracked_side_file_target_is_refused(tmp_path: Path, existing: str) -> None:
    root = _repo(tmp_path, {"Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n",
                            "requirements.txt": "torch==2.3.1+cu121\n"})
    (root / existing).write_text("# my own notes\n")
    result = _apply(root)
    assert result.exit_code == 2 and existing in result.stderr
    assert (root / existing).read_text() == "# my own notes\n"
    assert git(root, "branch", "--list").split() == ["*", "main"]


def test_untracked_file_survives_the_documented_undo(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"README": "hi\n", "k.cu": KERNEL})
    (root / "notes.txt").write_text("mine\n")
    assert _apply(root).exit_code == 0
    git(root, "checkout", "-q", "-")
    assert (root / "notes.txt").read_text() == "mine\n" and (root / "k.cu").read_text() == KERNEL


def test_repository_without_a_commit_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "k.cu").write_text(KERNEL)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "k.cu")
    result = _apply(root)
    assert result.exit_code == 2 and "no commit yet" in result.stderr
    assert (root / "k.cu").read_text() == KERNEL
    assert git(root, "branch", "--list") == ""


# -- #10: a subdirectory of a work tree is part of it ---------------------------------------------------------------


def test_apply_on_a_subdirectory_commits_on_the_repository(tmp_path: Path) -> None:
    root = _repo(tmp_path, {".gitignore": "*.log\ngen.cu\n", "lib/k.cu": KERNEL, "other/o.cu": KERNEL})
    (root / "lib" / "run.log").write_text("cudaMalloc\n")
    (root / "lib" / "gen.cu").write_text(KERNEL)
    result = _apply(root / "lib")
    assert result.exit_code == 0, result.output
    assert git(root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "rocm-port"
    assert git(root, "diff", "--name-only", "main", "rocm-port").split() == ["lib/k.cu"]
    assert git(root, "status", "--porcelain") == ""
    assert (root / "lib" / "run.log").read_text() == "cudaMalloc\n" and (root / "lib" / "gen.cu").read_text() == KERNEL


# -- #3: Python fixes land where the parser says, and the result still parses -------------------------------------


@pytest.mark.parametrize("odd", ["\x0c", "\u2028", "\x1c", "\x85"])
def test_python_fix_lands_on_the_parsers_line(tmp_path: Path, odd: str) -> None:
    source = f"import torch\nx = 1  # {odd}\nif torch.version.cuda:\n    pass\n"
    root = _repo(tmp_path, {"t.py": source})
    assert _apply(root).exit_code == 0
    fixed = (root / "t.py").read_text()
    assert fixed == source.replace("if torch.version.cuda:", "if (torch.version.cuda or torch.version.hip):")
    compile(fixed, "t.py", "exec")


def test_an_edit_that_would_not_parse_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"t.py": "import torch\nif torch.version.cuda:\n    pass\n"})
    plan = plan_port(root, Settings(max_file_size=1 << 20), PortOptions(Engine("builtin")))
    [change] = plan.changes
    broken = apply_module.FileChange(change.relpath, change.old, b"if (:\n", reason=change.reason)
    with pytest.raises(ApplyError, match="t.py would no longer parse"):
        write_port(apply_module.Plan(root, plan.engine, (broken,)))
    assert (root / "t.py").read_bytes() == change.old


# -- #17, #12: a failed or interrupted apply leaves nothing behind ------------------------------------------------


def _many(tmp_path: Path) -> Path:
    return _repo(tmp_path, {f"src/k{i}.cu": KERNEL for i in range(6)} | {"src/new/Makefile": "all:\n\tnvcc -o k k.cu\n"})


def _failing_replace(monkeypatch: pytest.MonkeyPatch, error: BaseException, at: int = 3) -> None:
    real = writer.replace
    calls: list[Path] = []

    def flaky(tmp: Path, target: Path) -> None:
        calls.append(target)
        if len(calls) == at:
            raise error
        real(tmp, target)

    monkeypatch.setattr(writer, "replace", flaky)


def test_failed_apply_leaves_no_branch_and_a_rerun_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _many(tmp_path)
    before = _state(root)
    _failing_replace(monkeypatch, OSError(28, "No space left on device", "x"))
    result = _apply(root)
    assert result.exit_code == 2
    assert "rolled back" in result.stderr and "No space left on device" in result.stderr
    assert _state(root) == before
    assert not list(root.rglob("*.migrate-tmp"))
    monkeypatch.undo()
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    assert _apply(root).exit_code == 0
    assert git(root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "rocm-port"


def test_read_only_directory_leaves_no_branch(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    root = _many(tmp_path)
    before = _state(root)
    (root / "src").chmod(0o555)
    try:
        result = _apply(root)
    finally:
        (root / "src").chmod(0o755)
    assert result.exit_code == 2 and _state(root) == before


def test_ctrl_c_rolls_back_and_exits_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _many(tmp_path)
    before = _state(root)
    _failing_replace(monkeypatch, KeyboardInterrupt())
    result = _apply(root)
    assert result.exit_code == 130
    assert "interrupted" in result.stderr and "rolled back" in result.stderr
    assert _state(root) == before
    assert not list(root.rglob("*.migrate-tmp")) and not (root / "src" / "new" / "Makefile.rocm").exists()


@pytest.mark.slow
@pytest.mark.parametrize("at", [2, 7])  # while writing, and after the last file (at git add / commit)
def test_sigterm_rolls_back_and_exits_130(tmp_path: Path, at: int) -> None:
    root = _many(tmp_path)
    before = _state(root)
    program = (
        "import os, signal, sys\n"
        "from migrate import writer\n"
        "real, calls = writer.replace, []\n"
        "def replace(tmp, target):\n"
        "    calls.append(target)\n"
        "    real(tmp, target)\n"
        f"    if len(calls) == {at}:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "writer.replace = replace\n"
        "from migrate.cli import main\n"
        "sys.argv = ['migrate', 'apply', sys.argv[1], '--engine', 'builtin']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", program, str(root)], capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, timeout=120)
    assert done.returncode == 130, done.stderr
    assert "rolled back" in done.stderr and "Traceback" not in done.stderr
    assert _state(root) == before
    assert not list(root.rglob("*.migrate-tmp"))


def test_interrupt_outside_git_restores_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "plain"
    for i in range(4):
        (root / f"k{i}.cu").parent.mkdir(parents=True, exist_ok=True)
        (root / f"k{i}.cu").write_text(KERNEL)
    _failing_replace(monkeypatch, KeyboardInterrupt())
    result = _apply(root, "--sources-only")
    assert result.exit_code == 130 and "rolled back" in result.stderr
    assert all((root / f"k{i}.cu").read_text() == KERNEL for i in range(4))


# -- #20: compare before replace -------------------------------------------------------------------------------------


def test_file_edited_after_the_plan_is_not_overwritten(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"a.cu": KERNEL, "b.cu": KERNEL})
    plan = plan_port(root, Settings(max_file_size=1 << 20),
                     PortOptions(Engine("builtin"), side_files=False, strategy="fork"))
    (root / "b.cu").write_text(KERNEL + "// saved meanwhile\n")
    git(root, "commit", "-qam", "edit")
    with pytest.raises(ApplyError, match="b.cu changed since the plan"):
        write_port(plan)
    assert (root / "b.cu").read_text() == KERNEL + "// saved meanwhile\n" and (root / "a.cu").read_text() == KERNEL
    assert git(root, "branch", "--list").split() == ["*", "main"]


def test_file_deleted_after_the_plan_is_not_recreated(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"a.cu": KERNEL, "b.cu": KERNEL})
    plan = plan_port(root, Settings(max_file_size=1 << 20),
                     PortOptions(Engine("builtin"), side_files=False, strategy="fork"))
    git(root, "rm", "-q", "b.cu")
    git(root, "commit", "-qm", "gone")
    with pytest.raises(ApplyError, match="b.cu changed since the plan"):
        write_port(plan)
    assert not (root / "b.cu").exists() and (root / "a.cu").read_text() == KERNEL


def test_new_file_that_appeared_after_the_plan_is_not_overwritten(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    plan = plan_port(root, Settings(max_file_size=1 << 20), PortOptions(Engine("builtin")))
    assert [c.relpath for c in plan.changes] == ["Dockerfile.rocm"]
    (root / "Dockerfile.rocm").write_text("# mine\n")
    with pytest.raises(ApplyError, match="Dockerfile.rocm changed since the plan"):
        write_port(plan)
    assert (root / "Dockerfile.rocm").read_text() == "# mine\n"


# -- #29: CR-only line endings ---------------------------------------------------------------------------------------


def test_dry_run_diff_of_cr_only_file_passes_git_apply(tmp_path: Path) -> None:
    crlf = b"#include <cuda_runtime.h>\rvoid f(float **p) {\r  cudaMalloc(p, 4);\r}\r"
    root = tmp_path / "repo"
    root.mkdir()
    (root / "cr.cu").write_bytes(crlf)
    (root / "mixed.cu").write_bytes(b"// a\r\n" + crlf + b"int x;")
    init_repo(root)
    result = _apply(root, "--dry-run", "--sources-only")
    assert result.exit_code == 0, result.output
    patch = tmp_path / "p.diff"
    patch.write_bytes(result.stdout_bytes)
    git(root, "apply", "--check", str(patch))
    git(root, "apply", str(patch))
    assert (root / "cr.cu").read_bytes() == crlf.replace(b"cuda_runtime.h", b"hip/hip_runtime.h").replace(
        b"cudaMalloc", b"hipMalloc")


def test_failed_out_dir_copy_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _many(tmp_path)
    out = tmp_path / "ported"
    out.mkdir()
    _failing_replace(monkeypatch, OSError(28, "No space left on device", "x"))
    result = _apply(root, "--out-dir", str(out))
    assert result.exit_code == 2 and "No space left on device" in result.stderr
    assert list(out.iterdir()) == []
