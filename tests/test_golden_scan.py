"""End to end: each fixture repo, committed to a fresh git repo, scans to its golden JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli

from conftest import EXPECTED, REPOS, check_golden

REPO_NAMES = sorted(p.name for p in REPOS.iterdir() if p.is_dir())


def scan_json(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.chdir(repo.parent)
    result = CliRunner().invoke(cli, ["scan", repo.name, "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("name", REPO_NAMES)
def test_golden_json(name: str, make_repo, monkeypatch: pytest.MonkeyPatch, update_golden: bool) -> None:
    output = scan_json(make_repo(name), monkeypatch)
    check_golden(output, EXPECTED / f"{name}.json", update_golden)


def test_output_is_deterministic_and_sorted(make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo("cuda-extension")
    first = scan_json(repo, monkeypatch)
    assert scan_json(repo, monkeypatch, "--jobs", "2") == first
    findings = json.loads(first)["findings"]
    keys = [(f["path"], f["line"], f["column"], f["rule"]) for f in findings]
    assert keys == sorted(keys)
    assert all(not f["path"].startswith("/") and "\\" not in f["path"] for f in findings)


def test_targets_are_echoed(make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads(scan_json(make_repo("pytorch-trainer"), monkeypatch, "--target", "gfx942,gfx1100"))
    assert data["targets"] == ["gfx942", "gfx1100"]
    assert data["schema"] == "rocm-migrate/scan/1"
