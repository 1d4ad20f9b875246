"""Baselines: fingerprints survive line shifts; a new finding, even a copy of an accepted one, is caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate import baseline
from migrate.cli import cli
from migrate.config import Settings
from migrate.errors import InputError
from migrate.scan import scan

KERNEL = "void f(float* p) {\n  cudnnHandle_t h;\n  cudaMalloc(&p, 4);\n}\n"


@pytest.fixture(autouse=True)
def _cache_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def prints(root: Path) -> set[str]:
    return {p for _, p in baseline.fingerprints(scan(root, Settings(jobs=1)).findings)}


def test_fingerprints_survive_a_line_shift_and_reindentation(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    before = prints(tmp_path)
    (tmp_path / "k.cu").write_text("// a new header comment\n\n#define N 4\n" + KERNEL.replace("  cudnn", "      cudnn"))
    assert prints(tmp_path) == before
    assert len(before) == 2


def test_a_copy_of_an_accepted_line_is_new(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    known = frozenset(prints(tmp_path))
    (tmp_path / "k.cu").write_text(KERNEL + "void g() {\n  cudnnHandle_t other;\n  cudnnHandle_t h;\n}\n")
    new = baseline.new_findings(scan(tmp_path, Settings(jobs=1)).findings, known)
    assert [(f.rule, f.line, f.evidence) for f in new] == [
        ("cudnn-api", 6, "cudnnHandle_t other;"), ("cudnn-api", 7, "cudnnHandle_t h;"),
    ]


def test_same_rule_and_evidence_in_another_file_is_new(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    known = frozenset(prints(tmp_path))
    (tmp_path / "copy.cu").write_text(KERNEL)
    new = baseline.new_findings(scan(tmp_path, Settings(jobs=1)).findings, known)
    assert {f.path for f in new} == {"copy.cu"}


def test_baseline_file_is_deterministic_json(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    findings = scan(tmp_path, Settings(jobs=1)).findings
    text = baseline.render(findings)
    assert text == baseline.render(reversed(findings))
    data = json.loads(text)
    assert data["schema"] == baseline.SCHEMA
    assert [(e["rule"], e["path"], e["line"]) for e in data["findings"]] == [
        ("cudnn-api", "k.cu", 2), ("cuda-runtime-api", "k.cu", 3),
    ]
    (tmp_path / "b.json").write_text(text)
    assert baseline.load(tmp_path / "b.json") == frozenset(prints(tmp_path))


@pytest.mark.parametrize("content", [None, "{not json", '{"schema": "other", "findings": []}'])
def test_unusable_baseline_is_an_input_error(tmp_path: Path, content: str | None) -> None:
    if content is not None:
        (tmp_path / "b.json").write_text(content)
    with pytest.raises(InputError, match="b.json"):
        baseline.load(tmp_path / "b.json")


def test_baseline_command_then_scan_with_baseline(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    runner = CliRunner()
    made = runner.invoke(cli, ["baseline", str(tmp_path)])
    assert made.exit_code == 0, made.output
    assert made.stdout == f"recorded 2 finding(s) in {tmp_path / '.migrate-baseline.json'}\n"
    (tmp_path / "k.cu").write_text("\n\n" + KERNEL + "void g() { cudnnTensorDescriptor_t d; }\n")
    args = ["scan", str(tmp_path), "--format", "json", "--fail-on", "high"]
    result = runner.invoke(cli, [*args, "--baseline", str(tmp_path / ".migrate-baseline.json")])
    assert result.exit_code == 1
    assert [(f["rule"], f["line"]) for f in json.loads(result.stdout)["findings"]] == [("cudnn-api", 7)]
    assert len(json.loads(runner.invoke(cli, args).stdout)["findings"]) == 3  # scan ignores it unless asked
    missing = runner.invoke(cli, [*args, "--baseline", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "baseline file not found" in missing.stderr
