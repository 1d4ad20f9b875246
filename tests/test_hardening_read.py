"""Hardening, reading: every file, tree, config and rule file an untrusted repository holds is read
within bounds; what cannot be read is a skipped entry or a one-line error, never a crash (issue 10)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.parse.document import LONG_LINE, _has_long_line

from conftest import init_repo

CUDA_CALL = "void f(float** p) { cudaMalloc(p, 4); }\n"
TORCH_CHECK = "import torch\nok = torch.version.cuda is not None\n"


def run_scan(path: Path, *args: str) -> tuple[int, dict | None, str]:
    result = CliRunner().invoke(cli, ["scan", str(path), "--format", "json", "--no-cache", *args])
    data = json.loads(result.stdout) if result.exit_code in (0, 1) else None
    return result.exit_code, data, result.stderr


def skips(data: dict) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in data["skipped"]}


def unprivileged(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run COMMAND as nobody when we are root (root reads every file), else as ourselves."""
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *command], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "HOME": str(cwd)}, timeout=120)


def migrate_executable() -> str:
    found = shutil.which("migrate", path=str(Path(sys.executable).parent))
    assert found, "the migrate entry point is installed beside the test interpreter"
    return found


# --- item 5: a long line is evidence in a bounded window; minified files are skipped -------------------------


def test_evidence_is_a_bounded_window_around_the_match(tmp_path: Path) -> None:
    padding = "int a = 0; " * 400  # 4,400 characters on each side, still under the limit for minified files
    (tmp_path / "long.cu").write_text("void f(float** p) { " + padding + "cudaMalloc(p, 4); " + padding + "}\n")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    (finding,) = [f for f in data["findings"] if f["rule"] == "cuda-runtime-api"]
    assert "cudaMalloc(p, 4);" in finding["evidence"]
    assert len(finding["evidence"]) <= 300


def test_minified_file_is_skipped_with_a_reason(tmp_path: Path) -> None:
    line = "void f(float** p) {" + "".join(f"cudaMalloc(p, {n});" for n in range(20000)) + "}"
    (tmp_path / "blob.cu").write_text(line + "\n")
    (tmp_path / "ok.cu").write_text(CUDA_CALL)
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {"blob.cu": f"looks minified or generated (line 1 is {len(line):,} characters long)"}
    assert {f["path"] for f in data["findings"]} == {"ok.cu"}


def test_a_long_number_table_keeps_its_file_scanned(tmp_path: Path) -> None:
    """A lookup table written on one line (a FAST corner table, an embedded cubin's bytes) is data in a hand-written
    file: the file's code is still scanned, and the table's line yields no finding."""
    values = ", ".join(("0x80", "0x0", "0xff", "-1", "2.5f")[n % 5] for n in range(4000))
    table = "__constant__ unsigned char lut[] = { " + values + " };"
    (tmp_path / "corners.cu").write_text("#include <cstdio>\n" + table + "\n" + CUDA_CALL)
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {}
    assert {(f["path"], f["rule"]) for f in data["findings"]} >= {("corners.cu", "cuda-runtime-api")}
    assert all(f["line"] != 2 for f in data["findings"])


def test_a_prebuilt_library_with_cuda_device_code_is_one_blocker(tmp_path: Path) -> None:
    """A .so holding nvcc's fat binary is read for its markers, not skipped as binary: one blocker at its first line;
    a static library of host code (CUDA runtime calls, no device code) is quiet; neither is listed as skipped."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libicp.so").write_bytes(b"\x7fELF\x00\x00.nv_fatbin\x00__cudaRegisterFatBinary\x00")
    (tmp_path / "lib" / "libio.a").write_bytes(b"!<arch>\n\x00\x00cudaMalloc\x00cudaMemcpy\x00")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {}
    assert [(f["path"], f["line"], f["rule"], f["severity"]) for f in data["findings"]] == [
        ("lib/libicp.so", 1, "prebuilt-cuda-binary", "blocker")]


def test_a_prebuilt_library_beside_its_cuda_sources_is_a_build_artifact_to_rebuild(tmp_path: Path) -> None:
    """A research op's library committed in the folder of the .cu it was built from is rebuilt with hipcc: medium
    (prebuilt-cuda-binary-beside-sources), not the vendor-library blocker; the same bytes in a folder of headers and
    host code only (a vendor's library) stay the blocker."""
    device = b"\x7fELF\x00\x00.nv_fatbin\x00__cudaRegisterFunction\x00"
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "knn_so.so").write_bytes(device)
    (tmp_path / "ops" / "knn_g.cu").write_text("int knn_count = 0;\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "libknn.so").write_bytes(device)
    (tmp_path / "vendor" / "knn.h").write_text("int knn_count(void);\n")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert sorted((f["path"], f["line"], f["rule"], f["severity"]) for f in data["findings"]) == [
        ("ops/knn_so.so", 1, "prebuilt-cuda-binary-beside-sources", "medium"),
        ("vendor/libknn.so", 1, "prebuilt-cuda-binary", "blocker")]


def test_a_prebuilt_library_past_the_size_limit_is_left_out_quietly(tmp_path: Path) -> None:
    (tmp_path / "libbig.so").write_bytes(b"\x7fELF\x00" + b"\x00" * 4096 + b".nv_fatbin\x00")
    (tmp_path / "big.cu").write_text(CUDA_CALL + "// padding\n" * 400)
    code, data, _ = run_scan(tmp_path, "--max-file-size", "2048")
    assert code == 0
    assert list(skips(data)) == ["big.cu"]
    assert data["findings"] == []


# --- item 6: YAML aliases cannot make a file expand without bound ------------------------------------------


def billion_laughs(levels: int = 12) -> str:
    lines = ["apiVersion: v1", "kind: Pod", "a0: &a0 [x, x, x, x, x, x, x, x]"]
    for level in range(1, levels):
        refs = ", ".join([f"*a{level - 1}"] * 8)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append(f"spec: {{containers: [{{image: nvidia/cuda:12.1.0-devel, env: *a{levels - 1}}}]}}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", ["k8s.yaml", "docker-compose.yml", ".github/workflows/ci.yml"])
def test_yaml_alias_bomb_is_skipped_quickly(tmp_path: Path, name: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(billion_laughs())
    start = time.perf_counter()
    code, data, _ = run_scan(tmp_path)
    assert time.perf_counter() - start < 20
    assert code == 0
    assert skips(data) == {name: "YAML aliases expand too far (more than 100,000 nodes): refused"}


def test_recursive_yaml_alias_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_text("services: &s\n  app:\n    image: nvidia/cuda\n    more: *s\n")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {"docker-compose.yml": "YAML alias refers to itself: refused"}


def test_ordinary_yaml_anchors_still_work(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_text(
        "x-gpu: &gpu\n  image: nvidia/cuda:12.1.0-devel-ubuntu22.04\nservices:\n  a: *gpu\n  b:\n    <<: *gpu\n"
    )
    code, data, _ = run_scan(tmp_path)
    assert code == 0 and data["skipped"] == []
    assert data["findings"], "the image behind the anchor is still found"


def test_hook_survives_a_yaml_alias_bomb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "k8s.yaml").write_text(billion_laughs())
    init_repo(tmp_path)
    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    result = CliRunner().invoke(cli, ["check", "--no-cache", "k8s.yaml"])
    assert time.perf_counter() - start < 20
    assert result.exit_code == 0, result.output


def test_each_file_has_a_time_budget(tmp_path: Path) -> None:
    from migrate.config import Settings
    from migrate.scan import scan

    body = "".join(f"  cudaMalloc(p, {n});\n" for n in range(20000))
    (tmp_path / "slow.cu").write_text("void f(float** p) {\n" + body + "}\n")
    (tmp_path / "fast.cu").write_text("void g(float** p) { cudaMalloc(p, 4); }\n")
    result = scan(tmp_path, Settings(jobs=1, file_time_budget=0.05))
    assert [(s.path, s.reason) for s in result.skipped] == [("slow.cu", "took longer than the time budget of 0.05 s a file")]
    assert {f.path for f in result.findings} == {"fast.cu"}


def test_a_budget_that_runs_out_inside_tree_sitter_is_still_a_budget() -> None:
    """tree-sitter compiling a query's #match? regex turns the timer's OverBudget into its own QueryError (a scan of
    CUTLASS on a loaded machine stopped on one); the timer says the budget ran out, and scan_file skips the file."""
    import tree_sitter
    import tree_sitter_cuda

    from migrate.scan import budget

    language = tree_sitter.Language(tree_sitter_cuda.language())
    patterns = " ".join(f'((identifier) @i{n} (#match? @i{n} "^(ab|cd){n}[a-z]+$"))' for n in range(600))
    with pytest.raises((budget.OverBudget, tree_sitter.QueryError)) as raised:
        with budget.file_budget(0.002) as timer:
            tree_sitter.Query(language, patterns)  # ~0.1 s
    assert timer.expired, raised.value
    with budget.file_budget(5) as timer:
        pass
    assert not timer.expired


# --- item 8: a baseline named in the repository's config is a bounded regular file inside it -----------------


@pytest.mark.slow
@pytest.mark.parametrize("where", ["/dev/zero", "../outside.json", "fifo"])
def test_baseline_from_config_must_be_a_regular_file_inside_the_repository(tmp_path: Path, where: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    (tmp_path / "outside.json").write_text('{"schema": "rocm-migrate/baseline/1", "findings": []}')
    if where == "fifo":
        os.mkfifo(repo / "fifo")
    (repo / ".migrate.toml").write_text(f'baseline = "{where}"\n')
    done = subprocess.run([migrate_executable(), "scan", str(repo), "--no-cache"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "baseline" in done.stderr and ("inside the repository" in done.stderr or "regular file" in done.stderr)


def test_oversized_baseline_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text(CUDA_CALL)
    with open(tmp_path / "big.json", "wb") as handle:
        handle.truncate(200 * 1024 * 1024)
    code, _, stderr = run_scan(tmp_path, "--baseline", str(tmp_path / "big.json"))
    assert code == 2
    assert "larger than" in stderr and stderr.count("\n") == 1


# --- item 15: deeply nested Python ------------------------------------------------------------------------------


def test_deeply_nested_python_is_skipped_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text(TORCH_CHECK + "x = " + "-" * 6000 + "1\n")
    (tmp_path / "ok.py").write_text(TORCH_CHECK)
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {"deep.py": "too deeply nested to parse"}
    assert {f["path"] for f in data["findings"]} == {"ok.py"}


def test_nul_byte_skip_names_no_line_none(tmp_path: Path) -> None:
    (tmp_path / "nul.py").write_text(TORCH_CHECK + "#" * 9000 + "\nx = 1\0\n")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {"nul.py": "cannot parse as Python: the file contains a NUL byte"}


# --- items 21, 22: unreadable and very deep directories outside git ---------------------------------------------


@pytest.mark.slow
def test_unreadable_directory_is_a_skipped_entry(tmp_path: Path) -> None:
    repo = Path(tempfile.mkdtemp(prefix="migrate-unreadable-dir-"))
    try:
        repo.chmod(0o755)
        (repo / "open.cu").write_text(CUDA_CALL)
        (repo / "closed").mkdir()
        (repo / "closed" / "hidden.cu").write_text(CUDA_CALL)
        (repo / "closed").chmod(0o700)
        for path in (repo / "open.cu", repo / "closed" / "hidden.cu"):
            path.chmod(0o644)
        done = unprivileged([migrate_executable(), "scan", str(repo), "--format", "json", "--no-cache"], cwd=repo)
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        assert skips(data) == {"closed": "cannot read directory: permission denied"}
        assert {f["path"] for f in data["findings"]} == {"open.cu"}
    finally:
        (repo / "closed").chmod(0o755)
        shutil.rmtree(repo)


@pytest.mark.slow
def test_very_deep_tree_does_not_recurse(tmp_path: Path) -> None:
    deep = tmp_path
    start = os.getcwd()
    try:
        os.chdir(tmp_path)
        for _ in range(1100):
            os.mkdir("a")
            os.chdir("a")
        Path("x.cu").write_text(CUDA_CALL)
        deep = Path(os.getcwd())
    finally:
        os.chdir(start)
    try:
        code, data, stderr = run_scan(tmp_path)
        assert code == 0, stderr
        assert [f["path"] for f in data["findings"]] == ["a/" * 1100 + "x.cu"]
    finally:
        remove_deep(tmp_path / "a", deep)


def remove_deep(top: Path, deepest: Path) -> None:
    """Remove a chain of nested directories bottom-up (shutil.rmtree recurses, and so would pytest's cleanup)."""
    for path in deepest.iterdir():
        path.unlink()
    while deepest != top.parent:
        deepest.rmdir()
        deepest = deepest.parent


# --- item 24: one bad requirements line ------------------------------------------------------------------------


def test_one_bad_requirements_line_is_reported_and_the_rest_kept(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy\nthis is not ( a requirement\nflash-attn==2.5.0\n")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert [(f["rule"], f["line"]) for f in data["findings"] if f["path"] == "requirements.txt"][0][1] == 3
    reason = skips(data)["requirements.txt"]
    assert reason.startswith("line 2 skipped: invalid requirement 'this is not ( a requirement'")
    assert data["summary"]["files_scanned"] == 1


# --- item 25: an invalid pyproject.toml ---------------------------------------------------------------------------


def test_invalid_pyproject_is_skipped_and_the_rest_scanned(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\ndependencies = ['flash-attn', 'torch']\n")
    (tmp_path / "a.cu").write_text(CUDA_CALL)
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data)["pyproject.toml"].startswith("invalid TOML")
    assert [f["path"] for f in data["findings"]] == ["a.cu"]


def test_invalid_migrate_toml_is_still_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / ".migrate.toml").write_text("jobs = [\n")
    code, _, stderr = run_scan(tmp_path)
    assert code == 2 and stderr.startswith("migrate: error: .migrate.toml: invalid TOML") and stderr.count("\n") == 1


# --- item 26: rule files whose lists hold the wrong things --------------------------------------------------------


@pytest.mark.parametrize("line", ["substitutions: [[1]]", "languages: [[cuda]]", "substitutions: [{a: 1}]"])
def test_malformed_rule_lists_are_one_line_exit_2(tmp_path: Path, line: str) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    key = line.split(":")[0]
    body = {"substitutions": "    languages: [cuda]\n", "languages": ""}[key]
    (rules / "r.yaml").write_text(
        "rules:\n  - id: x-y\n    title: t\n    category: other\n    severity: high\n    message: m\n"
        f"{body}    {line}\n    match: {{matcher: cuda-api, libraries: [runtime], with_hip: true}}\n"
    )
    (tmp_path / ".migrate.toml").write_text('rule-dirs = ["rules"]\n')
    (tmp_path / "a.cu").write_text(CUDA_CALL)
    code, _, stderr = run_scan(tmp_path)
    assert code == 2, stderr
    assert stderr.startswith("migrate: error: ") and "rule x-y" in stderr and stderr.count("\n") == 1


def test_build_files_read_again_by_the_verdict_may_be_fifos(tmp_path: Path) -> None:
    # the verdict's project-wide steps reopen a Makefile and a setup.py by name: a FIFO there must not block the scan
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "CMakeLists.txt").write_text('option(WITH_FAST "a vendor library" OFF)\nif(WITH_FAST)\n'
                                         '  add_definitions(-DFAST)\nendif()\n')
    (repo / "src" / "a.cu").write_text("#ifdef FAST\n" + CUDA_CALL + "#endif\n" + CUDA_CALL)
    (repo / "train.py").write_text(TORCH_CHECK)
    init_repo(repo)
    for name in ("Makefile", "setup.py"):
        os.mkfifo(repo / name)
    done = subprocess.run([sys.executable, "-m", "migrate", "scan", str(repo), "--format", "json", "--no-cache"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["summary"]["findings"] >= 2


def test_a_long_line_is_found_where_splitting_the_lines_finds_one() -> None:
    sizes = [0, 1, LONG_LINE - 1, LONG_LINE, LONG_LINE + 1, 2 * LONG_LINE + 3]
    texts = ["", "\n", "\n" * (3 * LONG_LINE)]
    texts += ["\n".join("x" * size for size in (before, size, after))
              for size in sizes for before in (0, 5, LONG_LINE) for after in (0, 7, LONG_LINE)]
    texts += ["y\n" * LONG_LINE + "x" * (LONG_LINE + 1), "x" * (LONG_LINE + 1) + "\n" + "y\n" * LONG_LINE]
    for text in texts:
        assert _has_long_line(text) == (max(map(len, text.split("\n"))) > LONG_LINE)
    assert any(_has_long_line(text) for text in texts) and not all(_has_long_line(text) for text in texts)
