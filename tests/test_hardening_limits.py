"""Hardening, round two: what one crafted file or tree may cost a scan (issue 20: D4, D5, D19, D20). Per-line
work is linear, a whole scan has a time budget, findings per file and rule are capped, YAML counts what its
aliases add, and an invalid pyproject.toml is skipped, not scanned."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

import migrate.scan.pool
from migrate.cli import cli
from migrate.config import Settings, load_settings
from migrate.defaults import DEFAULT_TIME_BUDGET
from migrate.errors import ConfigError
from migrate.parse import ParseError
from migrate.parse.yamlfiles import MAX_EXPANDED_NODES, _bound_aliases
from migrate.scan import MAX_FINDINGS_PER_FILE, MAX_FINDINGS_PER_RULE, MAX_OCCURRENCES, scan

from conftest import init_repo

CUDA_CALL = "void f(float** p) { cudaMalloc(p, 4); }\n"
NOT_SCANNED = "not scanned: the scan ran out of its time budget"


def scan_json(path: Path, *args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(cli, ["scan", str(path), "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout), result.stderr


# --- D4: per-line work is linear ------------------------------------------------------------------------------

# Each shape was quadratic (or worse) in its size: at these sizes each took from 5 s to over a minute a file
# before; now each takes under a second. The scan runs in this process (one job), so its CPU time is measured:
# a loaded machine stretches the wall clock, not the work. The per-file budget (wall clock) stays well above it.
def _continued_define(lines: int) -> str:
    return "#define ALLOC_ALL(p) \\\n" + "  cudaFree(p[0]); \\\n" * lines + "  0\n"


SHAPES = {
    # the issue's reproduction: one #define continued over 20,000 lines, 420 KB
    "define.cu": (_continued_define(20_000), "cuda-runtime-api"),
    "guarded.cu": ("#ifdef __HIP_PLATFORM_AMD__\nhipFree(0);\n#else\ncudaFree(0);\n#endif\n" * 12_000, None),
    "launches.cu": ("".join(f"void h{i}() {{ k<<<1, 32>>>(x); }}\n" for i in range(6_000)), "cuda-kernel-launch"),
    "heads.cu": ("__global__ __global__ __global__ __global__ __global__ (\n" * 1_500 + CUDA_CALL, "cuda-runtime-api"),
    "nested.cu": ("#if CUDA_VERSION >= 11000\n" * 10_000 + "cudaFree(0);\n" + "#endif\n" * 10_000, "cuda-runtime-api"),
    ".github/workflows/ci.yml": (
        "jobs:\n  b:\n    steps:\n" + "".join(
            f"      - run: |\n          pip install torch{i} --index-url https://download.pytorch.org/whl/cu121\n"
            for i in range(1_500)), "pytorch-cuda-index"),
    "README.md": ("# x\n```bash\n" + "pip install torch --index-url https://download.pytorch.org/whl/cu121\n" * 2_000
                  + "```\n", "pytorch-cuda-index"),
    "requirements.txt": ("".join(f"torch=={i}.0+cu121\n" for i in range(10_000)), "torch-cuda-local-version"),
    "pyproject.toml": ("[project]\nname = 'x'\ndependencies = [\n" + "".join(
        f"  'torch=={i}+cu121',\n" for i in range(2_400)) + "]\n", "torch-cuda-local-version"),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_per_line_work_is_linear(tmp_path: Path, name: str) -> None:
    text, rule = SHAPES[name]
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    start = time.process_time()
    result = scan(tmp_path, Settings(jobs=1, max_file_size=10 << 20, file_time_budget=60.0))
    assert time.process_time() - start < 3.0
    assert result.skipped == () and result.files_scanned == 1
    if rule is not None:
        assert rule in {f.rule for f in result.findings}


def test_the_continued_define_is_the_issues_size(tmp_path: Path) -> None:
    assert 400_000 < len(_continued_define(20_000)) < 440_000 and _continued_define(20_000).count("\\\n") == 20_001


# --- D4: a budget for the whole scan ---------------------------------------------------------------------------


def test_time_budget_ends_with_a_partial_result(tmp_path: Path) -> None:
    for name in ("a.cu", "b.cu", "c.cu"):
        (tmp_path / name).write_text(CUDA_CALL)
    code, data, err = scan_json(tmp_path, "--no-cache", "--time-budget", "0.000001")
    assert code == 0
    assert {s["path"]: s["reason"][: len(NOT_SCANNED)] for s in data["skipped"]} == dict.fromkeys(
        ("a.cu", "b.cu", "c.cu"), NOT_SCANNED)
    assert data["summary"]["files_scanned"] == 0 and data["findings"] == []
    assert err.count("\n") == 1 and "3 file(s) not scanned" in err and "--time-budget" in err


def test_time_budget_stops_the_worker_pool(tmp_path: Path) -> None:
    for index in range(migrate.scan.pool.PARALLEL_FROM + 6):
        (tmp_path / f"k{index}.cu").write_text(CUDA_CALL)
    code, data, _ = scan_json(tmp_path, "--no-cache", "--jobs", "2", "--time-budget", "0.000001")
    assert code == 0 and data["summary"]["files_scanned"] == 0
    assert {s["reason"][: len(NOT_SCANNED)] for s in data["skipped"]} == {NOT_SCANNED}
    assert len(data["skipped"]) == migrate.scan.pool.PARALLEL_FROM + 6


def test_out_of_time_keeps_what_was_scanned_and_the_next_run_goes_on(tmp_path: Path) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    scan_json(repo, "--cache-dir", str(cache))  # a.cu's result is cached
    (repo / "b.cu").write_text(CUDA_CALL)
    _, data, _ = scan_json(repo, "--cache-dir", str(cache), "--time-budget", "0.000001")
    assert [f["path"] for f in data["findings"]] == ["a.cu"]
    assert [s["path"] for s in data["skipped"]] == ["b.cu"] and data["summary"]["files_scanned"] == 1
    _, again, err = scan_json(repo, "--cache-dir", str(cache))  # the partial report was not kept as the answer
    assert [f["path"] for f in again["findings"]] == ["a.cu", "b.cu"] and again["skipped"] == [] and err == ""


def test_terminal_report_says_the_scan_ran_out_of_time(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text(CUDA_CALL)
    result = CliRunner().invoke(cli, ["scan", str(tmp_path), "--no-cache", "--time-budget", "0.000001"])
    assert "1 file(s) not scanned: the scan ran out of its time budget" in result.stdout


def test_check_has_the_budget_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.cu").write_text(CUDA_CALL)
    monkeypatch.chdir(init_repo(tmp_path))
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--fail-on", "low", "--time-budget", "0.000001"])
    assert result.exit_code == 0 and "1 file(s) not scanned" in result.stderr


def test_a_repository_may_lower_the_budget_but_not_raise_it(tmp_path: Path) -> None:
    (tmp_path / ".migrate.toml").write_text("time-budget = 86400\n")
    assert load_settings(tmp_path, {}).time_budget == DEFAULT_TIME_BUDGET
    assert load_settings(tmp_path, {"time_budget": 86400.0}).time_budget == 86400.0  # the user's own option
    (tmp_path / ".migrate.toml").write_text("time-budget = 30\n")
    assert load_settings(tmp_path, {}).time_budget == 30.0
    (tmp_path / ".migrate.toml").write_text("time-budget = 0\n")
    with pytest.raises(ConfigError, match="time-budget: expected a positive number of seconds"):
        load_settings(tmp_path, {})


# --- D5: findings per file and rule are capped ------------------------------------------------------------------


def test_findings_of_one_rule_in_one_file_fold_past_the_cap(tmp_path: Path) -> None:
    calls = 5_000
    lines = ["void f(float** p) {"] + ["  cudaMalloc(p, 4); cudaMalloc(p, 8);"] * (calls // 2) + ["}"]
    (tmp_path / "many.cu").write_text("\n".join(lines) + "\n")
    findings = scan(tmp_path, Settings(jobs=1)).findings
    assert len(findings) == MAX_FINDINGS_PER_RULE
    folded = findings[-1]
    rest = calls - (MAX_FINDINGS_PER_RULE - 1)
    assert (folded.line, folded.column) == (2 + (MAX_FINDINGS_PER_RULE - 1) // 2, 21)  # the 1,000th call
    assert folded.message.endswith(f"({rest:,} places in this file past the first {MAX_FINDINGS_PER_RULE - 1:,} "
                                   f"findings of this rule, folded here; the first {MAX_OCCURRENCES:,} are listed.)")
    assert len(folded.occurrences) == MAX_OCCURRENCES
    assert (folded.occurrences[0].line, folded.occurrences[0].column) == (folded.line, folded.column)
    assert folded.occurrences[-1].evidence == "cudaMalloc(p, 4); cudaMalloc(p, 8);"


def test_findings_of_one_file_are_capped_across_rules(tmp_path: Path) -> None:
    calls = ("cudaMalloc", "cuMemAlloc", "cublasCreate", "cudnnCreate", "nvrtcCreateProgram")  # five rules
    body = "".join(f"  {name}(p);\n" for name in calls) * 1_200
    (tmp_path / "many.cu").write_text("#include <cuda_runtime.h>\n" * 1_200 + "void f(void* p) {\n" + body + "}\n")
    findings = scan(tmp_path, Settings(jobs=1)).findings
    assert len(findings) == MAX_FINDINGS_PER_FILE + 1  # five rules fill the file's room; the sixth gets one fold
    assert sum("folded here" in f.message for f in findings) == 6
    assert [f.rule for f in findings if f.line <= 1_200] == ["cuda-runtime-include"]


def test_once_per_file_findings_list_at_most_the_cap_of_places(tmp_path: Path) -> None:
    uses = MAX_OCCURRENCES + 500
    (tmp_path / "lib.cu").write_text("".join(f"thrust::device_vector<int> v{i};\n" for i in range(uses)))
    (finding,) = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.occurrences]
    assert len(finding.occurrences) == MAX_OCCURRENCES
    assert finding.message.endswith(f"({uses:,} places in this file; the first {MAX_OCCURRENCES:,} are listed.)")


def test_a_file_of_20000_calls_gives_a_small_report(tmp_path: Path) -> None:
    call = "cudaMalloc(0,0);"
    line = call * (9_990 // len(call))  # just under the minified-line limit, as in the issue
    (tmp_path / "blob.cu").write_text("void f(){\n" + "\n".join([line] * (20_000 // 624)) + "\n}\n")
    report = tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["scan", str(tmp_path), "--no-cache", "--format", "json", "-o", str(report)])
    assert result.exit_code == 0, result.output
    assert len(json.loads(report.read_text())["findings"]) == MAX_FINDINGS_PER_RULE
    assert report.stat().st_size < 1_000_000  # before: 11 MB, one finding per call


# --- D19: a long plain YAML list is not an alias bomb ------------------------------------------------------------


def _plain_list(items: int) -> list[yaml.Node]:
    """An environment.yml as the composer gives it: `dependencies:` with ITEMS plain scalars, no alias."""
    tag = "tag:yaml.org,2002:"
    packages = SequenceNode(tag + "seq", [ScalarNode(tag + "str", f"pkg{i}") for i in range(items)])
    return [MappingNode(tag + "map", [(ScalarNode(tag + "str", "dependencies"), packages)])]


def test_plain_nodes_do_not_count_as_alias_expansion() -> None:
    _bound_aliases(_plain_list(110_000))  # before: refused as expanding past 100,000 nodes


def test_aliases_still_count(tmp_path: Path) -> None:
    levels = ["a0: &a0 [" + ", ".join(["x"] * 10) + "]"]
    levels += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, 6)]
    with pytest.raises(ParseError, match=f"more than {MAX_EXPANDED_NODES:,} nodes"):
        _bound_aliases(list(yaml.compose_all("\n".join(levels) + "\n", Loader=yaml.SafeLoader)))


def test_an_environment_file_with_many_packages_is_scanned(tmp_path: Path) -> None:
    packages = "".join(f"  - pkg{i}=1.0\n" for i in range(3_000))
    (tmp_path / "environment.yml").write_text("name: x\ndependencies:\n  - cudatoolkit=11.8\n" + packages)
    result = scan(tmp_path, Settings(jobs=1))
    assert result.skipped == () and [f.rule for f in result.findings] == ["conda-cuda-package"]


# --- D20: an invalid pyproject.toml is skipped, not scanned ------------------------------------------------------


@pytest.mark.parametrize("text", ['[project\nname = "x"\n', '[project]\nname = "x"\nname = "y"\n'])
def test_an_invalid_pyproject_is_skipped_even_without_a_dependency(tmp_path: Path, text: str) -> None:
    (tmp_path / "a.cu").write_text(CUDA_CALL)
    (tmp_path / "pyproject.toml").write_text(text)
    result = scan(tmp_path, Settings(jobs=1))
    assert [s.path for s in result.skipped] == ["pyproject.toml"]
    assert result.skipped[0].reason.startswith("invalid TOML: ") and result.files_scanned == 1
