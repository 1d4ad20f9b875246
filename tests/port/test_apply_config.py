"""`migrate apply` honours the repository's [tool.migrate]: excluded files and disabled rules steer nothing, its rule
folders and severities load and are checked, its targets, release and size limit shape the port, and what the port
would overwrite it reads only through the bounded reader."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings, load_settings
from migrate.port.apply import plan_port
from migrate.port.plan import PortOptions
from migrate.port.translate import Engine

from conftest import GIT_ENV, USER_RULE, git, init_repo

WARP_HEADER = "#pragma once\nconstexpr int WARP_SIZE = 32;\n\n__device__ inline int lane_of(int tid) { return tid % WARP_SIZE; }\n"
REDUCE = ("__global__ void sum(float* x) {\n  float v = x[threadIdx.x];\n  v += __shfl_down_sync(0xffffffff, v, 16);\n"
          "  x[threadIdx.x] = v;\n}\n")
CONFIG = '[tool.migrate]\nexclude = ["legacy/"]\ndisable = ["warp-size-constant"]\n'
TEAM = ('[tool.migrate]\nexclude = ["legacy/"]\ndisable = ["warp-size-constant", "team-gpu-wrappers"]\n'
        'rule-dirs = ["team-rules"]\n[tool.migrate.severity]\ncudnn-api = "blocker"\n')
KERNEL = ("#include <cuda_runtime.h>\n__global__ void k(float *x) { x[threadIdx.x] = 1; }\n"
          "int main() { float *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaDeviceSynchronize(); return 0; }\n")
MAKEFILE = "NVCC ?= nvcc\napp: kern.cu\n\t$(NVCC) -O2 -gencode arch=compute_80,code=sm_80 -o $@ $< -lcudart\n"
BUILD = '[tool.migrate]\ntargets = ["gfx90a", "gfx1100"]\nrocm = "6.2"\nmax-file-size = 4096\n'


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


def _team_project(root: Path, config: str, *, category: str = "other") -> Path:
    """The project above with a rule folder of the team's own."""
    (root / "team-rules").mkdir(parents=True)
    (root / "team-rules" / "team.yaml").write_text(
        USER_RULE.format(severity="medium").replace("category: other", f"category: {category}"))
    return _project(root, config)


def _diffed(output: str) -> list[str]:
    return [line.split(" b/")[1] for line in output.splitlines() if line.startswith("diff --git")]


def test_apply_loads_the_repositorys_rule_folders_and_severities(tmp_path: Path) -> None:
    root = _team_project(tmp_path / "proj", TEAM)
    result = CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert _diffed(result.stdout) == ["kernels/sum.cu"]


@pytest.mark.parametrize(("config", "category", "message"), [
    (TEAM.replace('rule-dirs = ["team-rules"]\n', ""), "other",
     "pyproject.toml: disable: unknown rule id(s): team-gpu-wrappers"),  # the team's rule id exists only in its folder
    (TEAM.replace("cudnn-api =", "cudnn-apii ="), "other", "pyproject.toml: severity: unknown rule id(s): cudnn-apii"),
    (TEAM, "nope", "team.yaml: rule team-gpu-wrappers: unknown category 'nope'"),
])
def test_apply_checks_the_rule_folders_and_severities_as_a_scan_does(tmp_path: Path, config: str, category: str,
                                                                     message: str) -> None:
    root = _team_project(tmp_path / "proj", config, category=category)
    for args in (["--dry-run"], []):
        result = CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin", *args])
        assert result.exit_code == 2, result.output
        last = result.stderr.splitlines()[-1]
        assert last.startswith("migrate: error: ") and message in last
        assert "Traceback" not in result.stderr
    assert git(root, "branch", "--list").split() == ["*", "main"]


def _make_project(root: Path) -> Path:
    """A Make project, with a source larger than its configured size limit."""
    root.mkdir(parents=True)
    (root / "kern.cu").write_text(KERNEL)
    (root / "big.cu").write_text(KERNEL + "// " + "x" * 5000 + "\n")
    (root / "Makefile").write_text(MAKEFILE)
    (root / "pyproject.toml").write_text(BUILD)
    return init_repo(root)


def test_apply_builds_for_the_repositorys_targets_release_and_size_limit(tmp_path: Path) -> None:
    root = _make_project(tmp_path / "proj")
    result = CliRunner().invoke(cli, ["apply", str(root), "--engine", "builtin"])
    assert result.exit_code == 0, result.output
    release = 'engine: builtin; targets ROCm 6.2 (rocm = "6.2" in pyproject.toml [tool.migrate])'
    assert result.stderr.splitlines()[0] == release
    assert "big.cu: skipped: larger than the size limit (5," in result.stderr
    written = git(root, "diff", "--name-only", "main", "rocm-port").split()
    assert written == ["Makefile.rocm", "cuda_hip_compat.h", "kern.cu"]
    assert "--offload-arch=gfx90a --offload-arch=gfx1100" in (root / "Makefile.rocm").read_text()
    assert (root / "big.cu").read_text().startswith("#include <cuda_runtime.h>\n")


def test_a_fifo_where_the_port_would_write_is_left_alone_and_named(tmp_path: Path) -> None:
    """An unbounded read of the FIFO would wait for a writer for ever; the bounded reader refuses it at once. A real
    second process, so that a read that blocks fails on the time-out instead of holding the test run."""
    root = _make_project(tmp_path / "proj")
    os.mkfifo(root / "Makefile.rocm")
    migrate = shutil.which("migrate", path=str(Path(sys.executable).parent))
    assert migrate is not None
    done = subprocess.run([migrate, "apply", ".", "--engine", "builtin", "--dry-run"], cwd=root, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    assert ("Makefile.rocm:1:1: medium: Makefile.rocm exists and is not a file migrate reads (not a regular file): "
            "not written; move it and re-run [side-file-exists]") in done.stderr.splitlines()
    assert _diffed(done.stdout) == ["cuda_hip_compat.h", "kern.cu"]
