"""Hardening, git: a scanned or ported repository's git configuration never runs a command (issue 10, #9, #23)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings
from migrate.scan import scan

from conftest import GIT_ENV, git, init_repo

KERNEL = "void f(float** p) { cudaMalloc(p, 4); }\n"


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "k.cu").write_text(KERNEL)
    (root / ".gitattributes").write_text("*.cu filter=evil diff=evil\n")
    init_repo(root)
    (root / "k.cu").write_text(KERNEL + "void g() { cudaFree(0); }\n")  # a change for --diff-base and git diff
    return root


def _evidence(report: str) -> list[str]:
    return sorted({f["evidence"] for f in json.loads(report)["findings"]})


def _arm(root: Path, marker: Path) -> None:
    """Every way a repository's own git config can run a command when git reads or writes it."""
    hooks = root / "evil-hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "pre-commit", "commit-msg", "post-commit", "reference-transaction", "post-index-change"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    settings = {
        "core.fsmonitor": f"touch {marker}; false",
        "core.hooksPath": str(hooks),
        "diff.external": f"sh -c 'touch {marker}'",
        "diff.evil.textconv": f"sh -c 'touch {marker}; cat \"$0\"'",
        "diff.evil.command": f"sh -c 'touch {marker}'",
        "filter.evil.clean": f"sh -c 'touch {marker}; cat'",
        "filter.evil.smudge": f"sh -c 'touch {marker}; cat'",
        "filter.evil.required": "true",
        "core.pager": f"sh -c 'touch {marker}; cat'",
        "gpg.program": f"sh -c 'touch {marker}'",
        "commit.gpgSign": "true",
    }
    for key, value in settings.items():
        git(root, "config", key, value)


def _armed(tmp_path: Path) -> tuple[Path, Path]:
    root = _repo(tmp_path)
    marker = tmp_path / "PWNED"
    _arm(root, marker)
    return root, marker


def test_scan_runs_nothing_from_the_repository_config(tmp_path: Path) -> None:
    root, marker = _armed(tmp_path)
    result = CliRunner().invoke(cli, ["scan", str(root), "--no-cache", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"k.cu"' in result.stdout
    assert not marker.exists()


def test_scan_of_a_subdirectory_runs_nothing(tmp_path: Path) -> None:
    root, marker = _armed(tmp_path)
    (root / "sub").mkdir()
    (root / "sub" / "s.cu").write_text(KERNEL)
    result = CliRunner().invoke(cli, ["scan", str(root / "sub"), "--no-cache", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert not marker.exists()


def test_diff_base_runs_nothing(tmp_path: Path) -> None:
    root, marker = _armed(tmp_path)
    result = CliRunner().invoke(cli, ["scan", str(root), "--no-cache", "--diff-base", "HEAD", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert _evidence(result.stdout) == ["void g() { cudaFree(0); }"]
    assert not marker.exists()


@pytest.mark.slow
def test_apply_runs_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git(root, "commit", "-q", "-am", "second")
    marker = tmp_path / "PWNED"
    _arm(root, marker)
    for args in (["--dry-run"], []):
        result = CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin", "--strategy", "fork", *args])
        assert result.exit_code == 0, result.output
        assert not marker.exists(), args
    assert "hipMalloc" in git(root, "show", "rocm-port:k.cu")


def test_check_work_tree_lookup_runs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, marker = _armed(tmp_path)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "k.cu", "--fail-on", "blocker"])
    assert result.exit_code == 0, result.output
    assert not marker.exists()


def test_system_config_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    marker = tmp_path / "PWNED"
    system = tmp_path / "gitconfig"
    system.write_text(f"[core]\n\tfsmonitor = touch {marker}; false\n")
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(system))
    result = CliRunner().invoke(cli, ["scan", str(root), "--no-cache", "--diff-base", "HEAD"])
    assert result.exit_code == 0, result.output
    assert not marker.exists()


def test_gitpython_is_not_a_dependency() -> None:
    project = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert "gitpython" not in project.lower()


# -- --diff-base with names git would quote (#23): fail closed -------------------------------------------------------

ODD_NAMES = ['q"\u00e9.cu', "tab\there.cu", "new\nline.cu", "\u00e9t\u00e9 space.cu"]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_diff_base_keeps_findings_in_quoted_names(tmp_path: Path, name: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / name).write_text("// nothing yet\n")
    init_repo(root)
    (root / name).write_text("// nothing yet\nvoid f(float** p) { cudaMalloc(p, 4); }\n")
    result = CliRunner().invoke(cli, ["scan", str(root), "--no-cache", "--diff-base", "HEAD", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert _evidence(result.stdout) == ["void f(float** p) { cudaMalloc(p, 4); }"]


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS file systems refuse non-UTF-8 names")
def test_diff_base_keeps_findings_in_non_utf8_names(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    raw = os.fsencode(root) + b"/caf\xe9.cu"
    with open(raw, "w") as handle:
        handle.write("// nothing yet\n")
    init_repo(root)
    with open(raw, "a") as handle:
        handle.write("void f(float** p) { cudaMalloc(p, 4); }\n")
    result = scan(root, Settings(diff_base="HEAD", jobs=1))
    assert [(f.path, f.line) for f in result.findings if "cudaMalloc" in f.evidence] == [("caf\udce9.cu", 2)]

