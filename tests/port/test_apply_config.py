"""`migrate apply` honours the repository's [tool.migrate]: excluded files and disabled rules steer nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings, load_settings
from migrate.port.apply import plan_port
from migrate.port.plan import PortOptions
from migrate.port.translate import Engine

from conftest import GIT_ENV, git, init_repo

WARP_HEADER = "#pragma once\nconstexpr int WARP_SIZE = 32;\n\n__device__ inline int lane_of(int tid) { return tid % WARP_SIZE; }\n"
REDUCE = ("__global__ void sum(float* x) {\n  float v = x[threadIdx.x];\n  v += __shfl_down_sync(0xffffffff, v, 16);\n"
          "  x[threadIdx.x] = v;\n}\n")
CONFIG = '[tool.migrate]\nexclude = ["legacy/"]\ndisable = ["warp-size-constant"]\n'


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _project(root: Path, config: str) -> Path:
    """A warp-size constant (its rule may be disabled), a shuffle the port guards, and the same shuffle in legacy/."""
    (root / "kernels").mkdir(parents=True)
    (root / "legacy").mkdir()
    (root / "kernels" / "warp.cuh").write_text(WARP_HEADER)
    (root / "kernels" / "sum.cu").write_text(REDUCE)
    (root / "legacy" / "sum.cu").write_text(REDUCE)
    (root / "pyproject.toml").write_text(config)
    return init_repo(root)


def _changed(root: Path, settings: Settings) -> list[str]:
    plan = plan_port(root, settings, PortOptions(Engine("builtin")))
    return [change.relpath for change in plan.changes]


def test_the_port_follows_the_settings_it_is_given(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", CONFIG)
    assert _changed(root, Settings()) == ["kernels/sum.cu", "kernels/warp.cuh", "legacy/sum.cu"]
    assert _changed(root, load_settings(root, {"no_cache": True})) == ["kernels/sum.cu"]


def test_apply_leaves_excluded_files_and_disabled_rules_alone(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", CONFIG)
    result = CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin"])
    assert result.exit_code == 0, result.output
    assert "wrote 1 file(s) on branch rocm-port" in result.output
    assert git(root, "diff", "--name-only", "main", "rocm-port").split() == ["kernels/sum.cu"]
    assert (root / "kernels" / "warp.cuh").read_text() == WARP_HEADER
    assert (root / "legacy" / "sum.cu").read_text() == REDUCE
    assert "__shfl_down(v, 16, 32)" in (root / "kernels" / "sum.cu").read_text()


def test_dry_run_shows_the_same_configured_port(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", CONFIG)
    result = CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert [line for line in result.output.splitlines() if line.startswith("diff --git")] == [
        "diff --git a/kernels/sum.cu b/kernels/sum.cu"]


def test_a_disabled_rule_that_does_not_exist_is_a_config_error(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", '[tool.migrate]\ndisable = ["warp-size-constnat"]\n')
    result = CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin", "--dry-run"])
    assert result.exit_code == 2
    assert "disable: unknown rule id(s): warp-size-constnat" in result.output
