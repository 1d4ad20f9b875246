"""`migrate check` in real git repos: explicit files, baselines, --diff-base, and the pre-commit hook."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli

from conftest import ROOT, git, init_repo, require_tool

KERNEL = "void f(float* p) {\n  cudnnHandle_t h;\n  cudaMalloc(&p, 4);\n}\n"
NEW_CALL = "void g() {\n  cudnnCreate(0);\n}\n"
CUDNN_HANDLE = "cudnn-api cudnnHandle_t (cudnn: CUDNN Data types) has no HIP name in the HIPIFY tables"


@pytest.fixture(autouse=True)
def _cache_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed repo with one CUDA file (a high and a low finding) and one clean file; cwd inside it."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "k.cu").write_text(KERNEL)
    (root / "src" / "clean.cu").write_text("int main() { return 0; }\n")
    (root / "notes.txt").write_text("cudnnHandle_t in prose\n")
    init_repo(root)
    monkeypatch.chdir(root / "src")  # check finds the work tree from a subdirectory too
    return root


def check(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", *args])
    return result.exit_code, result.stdout, result.stderr


def test_all_tracked_files_by_default_compact_output(repo: Path) -> None:
    code, out, err = check()
    assert code == 1
    assert out.startswith(f"src/k.cu:2:3: {CUDNN_HANDLE}")
    assert out.count("\n") == 1  # the low cudaMalloc finding is below the default fail-on (high)
    assert err == "migrate: 1 new finding(s) at or above high\n"
    code, out, _ = check("--fail-on", "low")
    assert code == 1 and [line.split(" ")[0] for line in out.splitlines()] == ["src/k.cu:2:3:", "src/k.cu:3:3:"]


def test_only_the_given_files(repo: Path) -> None:
    assert check("clean.cu")[0] == 0
    assert check(str(repo / "src" / "k.cu"))[0] == 1
    assert check("../notes.txt", "clean.cu")[0] == 0  # a file type we don't read is no failure


def test_explicit_files_are_checked_even_when_excluded(repo: Path) -> None:
    (repo / ".migrate.toml").write_text('exclude = ["src/**"]\n')
    assert check()[0] == 0
    assert check("k.cu")[0] == 1


def test_config_fail_on_and_command_line_override(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.migrate]\nfail-on = "blocker"\n')
    assert check()[0] == 0
    assert check("--fail-on", "high")[0] == 1


def test_baseline_accepts_old_findings_and_catches_new_ones(repo: Path) -> None:
    made = CliRunner().invoke(cli, ["baseline", str(repo)])
    assert made.exit_code == 0, made.output
    assert check() == (0, "", "")
    (repo / "src" / "k.cu").write_text("#include <cstdio>\n\n" + KERNEL)  # shifted lines: still accepted
    assert check()[0] == 0
    (repo / "src" / "k.cu").write_text("#include <cstdio>\n\n" + KERNEL + NEW_CALL)
    code, out, err = check("k.cu")
    assert code == 1
    assert out.splitlines()[0].startswith("src/k.cu:8:3: cudnn-api cudnnCreate")
    assert len(out.splitlines()) == 1
    assert err == "migrate: 1 new finding(s) at or above high (2 more in the baseline)\n"


def test_diff_base_reports_only_changed_lines(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "src" / "k.cu").write_text("\n" + KERNEL + NEW_CALL)  # unstaged: a shift and a new call
    code, out, _ = check("--diff-base", base)
    assert code == 1 and [line.split(" ")[0] for line in out.splitlines()] == ["src/k.cu:7:3:"]
    git(repo, "add", "-A")  # staged counts the same
    assert check("--diff-base", base)[1] == out
    git(repo, "commit", "-q", "-m", "new call")
    assert check("--diff-base", "HEAD") == (0, "", "")
    assert check("--diff-base", "HEAD~1")[1] == out


def test_diff_base_follows_renames_and_untracked_files(repo: Path) -> None:
    git(repo, "mv", "src/k.cu", "src/kernels.cu")
    assert check("--diff-base", "HEAD")[0] == 0  # a pure rename adds no line
    (repo / "src" / "kernels.cu").write_text(KERNEL + NEW_CALL)
    code, out, _ = check("--diff-base", "HEAD")
    assert code == 1 and [line.split(" ")[0] for line in out.splitlines()] == ["src/kernels.cu:6:3:"]
    (repo / "src" / "extra.cu").write_text(KERNEL)  # untracked: every line is new
    assert [line.split(" ")[0] for line in check("--diff-base", "HEAD")[1].splitlines()] == [
        "src/extra.cu:2:3:", "src/kernels.cu:6:3:",
    ]


def test_diff_base_on_scan(repo: Path) -> None:
    (repo / "src" / "k.cu").write_text(KERNEL + NEW_CALL)
    result = CliRunner().invoke(cli, ["scan", str(repo), "--format", "json", "--diff-base", "HEAD"])
    assert result.exit_code == 0
    assert '"line": 6' in result.stdout and '"line": 2' not in result.stdout


def test_bad_diff_base_is_a_usage_error(repo: Path) -> None:
    code, _, err = check("--diff-base", "no-such-ref")
    assert code == 2
    assert err.startswith("migrate: error: --diff-base no-such-ref: no such commit")


def test_check_outside_git_uses_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    code, out, _ = check()
    assert code == 1 and out.startswith("k.cu:2:3: cudnn-api")


def test_importing_the_cli_stays_light() -> None:
    heavy = ["tree_sitter", "git", "rich", "jinja2", "yaml", "migrate.scan", "migrate.ruleset"]
    probe = f"import sys, migrate.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _hook_repo(tmp_path: Path) -> Path:
    """This project's installable files, committed to a fresh repo: try-repo sees exactly them."""
    copy = tmp_path / "hook-repo"
    copy.mkdir()
    for name in ("src", "rules", "pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, copy / name)
    return init_repo(copy)


def _pre_commit() -> str:
    beside = Path(sys.executable).parent / "pre-commit"  # the venv's, also when its bin/ is not on PATH
    return str(beside) if beside.exists() else require_tool("pre-commit")


@pytest.mark.slow
def test_pre_commit_hook_blocks_a_new_cuda_only_call(tmp_path: Path) -> None:
    pre_commit = _pre_commit()
    hook_repo = _hook_repo(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "clean.cu").write_text("int main() { return 0; }\n")
    (project / "old.cu").write_text(KERNEL)
    init_repo(project)
    assert CliRunner().invoke(cli, ["baseline", str(project)]).exit_code == 0
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pc-home"), "GIT_CONFIG_GLOBAL": os.devnull}

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        command = [pre_commit, "try-repo", str(hook_repo), "migrate", "--files", *files]
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600)

    passed = try_repo("clean.cu", "old.cu")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "rocm-migrate check" in passed.stdout and "Passed" in passed.stdout
    (project / "new.cu").write_text(NEW_CALL)
    git(project, "add", "new.cu")
    failed = try_repo("clean.cu", "old.cu", "new.cu")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "new.cu:2:3: cudnn-api cudnnCreate" in failed.stdout
    assert "old.cu:" not in failed.stdout  # accepted by the baseline
