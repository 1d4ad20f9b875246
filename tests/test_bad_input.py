"""Bad input never crashes a scan: unreadable things become skipped entries, bad paths exit 2."""

from __future__ import annotations

import codecs
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings
from migrate.errors import RuleFileError
from migrate.ruleset import load
from migrate.scan import scan

from conftest import ROOT, init_repo

KERNEL = "void alloc(float** p) { cudaMalloc(p, 4); }\n"


def run_scan(path: Path, *args: str) -> tuple[int, dict | None, str]:
    result = CliRunner().invoke(cli, ["scan", str(path), "--format", "json", *args])
    data = json.loads(result.stdout) if result.exit_code in (0, 1) else None
    return result.exit_code, data, result.stderr


def skips(data: dict) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in data["skipped"]}


def test_source_in_an_8bit_code_page_is_scanned_and_non_text_skipped(tmp_path: Path) -> None:
    """A Latin-1 comment (`Müller`) leaves the code ASCII: the file is read as Latin-1 and scanned like its UTF-8
    twin; content mostly outside ASCII is not source code and is skipped."""
    (tmp_path / "latin1.cu").write_bytes("// Müller\n".encode("latin-1") + KERNEL.encode())
    (tmp_path / "good.cu").write_text("// Muller\n" + KERNEL)
    (tmp_path / "noise.cu").write_bytes(bytes(range(128, 256)) * 4 + b"\n" + KERNEL.encode())
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {"noise.cu": "not UTF-8 text (invalid byte at offset 0)"}
    found = {path: sorted((f["rule"], f["line"], f["column"]) for f in data["findings"] if f["path"] == path)
             for path in ("latin1.cu", "good.cu")}
    assert found["latin1.cu"] == found["good.cu"] != []
    assert data["summary"]["files_scanned"] == 2
    assert data["summary"]["files_skipped"] == 1


def test_binary_file_named_cu_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "blob.cu").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00cudaMalloc\x00\xff" * 50)
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {"blob.cu": "binary file"}
    assert data["findings"] == []


def test_utf16_text_with_a_bom_is_read_and_binary_that_opens_like_it_is_not(tmp_path: Path) -> None:
    """PowerShell's `pip freeze > requirements.txt` writes UTF-16 with a BOM: read as text, line numbers and all, like
    its UTF-8 twin; bytes that open with the same mark but decode to control characters stay binary."""
    pins = "numpy==1.26.4\r\ntorch==2.1.2+cu121\r\n"
    (tmp_path / "wide").mkdir()
    (tmp_path / "wide" / "requirements.txt").write_bytes(pins.encode("utf-16"))
    (tmp_path / "wide-be").mkdir()
    (tmp_path / "wide-be" / "requirements.txt").write_bytes(codecs.BOM_UTF16_BE + pins.encode("utf-16-be"))
    (tmp_path / "narrow").mkdir()
    (tmp_path / "narrow" / "requirements.txt").write_text(pins, newline="")
    (tmp_path / "blob.cu").write_bytes(b"\xff\xfe" + b"\x01\x00\x02\x00cudaMalloc" * 20)
    code, data, _ = run_scan(tmp_path)
    assert code in (0, 1)
    assert skips(data) == {"blob.cu": "binary file"}
    found = {path: sorted((f["rule"], f["line"], f["severity"]) for f in data["findings"] if f["path"] == path)
             for path in ("wide/requirements.txt", "wide-be/requirements.txt", "narrow/requirements.txt")}
    assert found["wide/requirements.txt"] == found["wide-be/requirements.txt"] == found["narrow/requirements.txt"] != []
    assert [f["line"] for f in data["findings"] if f["path"] == "wide/requirements.txt"] == [2]


def test_empty_file_is_scanned_quietly(tmp_path: Path) -> None:
    (tmp_path / "empty.cu").write_text("")
    (tmp_path / "empty.py").write_text("")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert data["summary"]["files_scanned"] == 2
    assert data["findings"] == [] and data["skipped"] == []


def test_huge_file_is_skipped_past_the_size_limit(tmp_path: Path) -> None:
    with open(tmp_path / "huge.cu", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    (tmp_path / "small.cu").write_text(KERNEL)
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data)["huge.cu"].startswith("larger than the size limit (52,428,800 > 5,242,880 bytes)")
    code, data, _ = run_scan(tmp_path, "--max-file-size", "10")
    assert set(skips(data)) == {"huge.cu", "small.cu"}


def test_broken_symlink_and_symlink_loop_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "dangling.cu").symlink_to(tmp_path / "missing.cu")
    (tmp_path / "loop.cu").symlink_to(tmp_path / "loop.cu")
    (tmp_path / "real.cu").write_text(KERNEL)
    (tmp_path / "alias.cu").symlink_to(tmp_path / "real.cu")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert skips(data) == {"dangling.cu": "broken symlink", "loop.cu": "symlink loop"}
    assert {f["path"] for f in data["findings"]} == {"real.cu"}  # the alias is not scanned twice


def test_symlink_out_of_the_repository_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.cu"
    outside.write_text(KERNEL)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "link.cu").symlink_to(outside)
    _, data, _ = run_scan(repo)
    assert skips(data) == {"link.cu": "symlink points outside the repository"}


@pytest.mark.slow
def test_unreadable_file_is_skipped(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        repo = tmp_path
        (repo / "secret.cu").write_text(KERNEL)
        (repo / "secret.cu").chmod(0)
        _, data, _ = run_scan(repo)
        assert skips(data) == {"secret.cu": "cannot read: permission denied"}
        return
    # root reads everything: run the scan as an unprivileged user instead
    migrate = shutil.which("migrate", path=str(Path(sys.executable).parent))
    assert migrate, "the migrate entry point is installed beside the test interpreter"
    repo = Path(tempfile.mkdtemp(prefix="migrate-unreadable-"))
    try:
        repo.chmod(0o755)
        (repo / "secret.cu").write_text(KERNEL)
        (repo / "secret.cu").chmod(0o600)
        (repo / "open.cu").write_text(KERNEL)
        (repo / "open.cu").chmod(0o644)
        (repo / "own.cu").write_text(KERNEL)  # the scanning user's own, without the owner's read bit: unreadable
        os.chown(repo / "own.cu", 65534, 65534)
        (repo / "own.cu").chmod(0o044)
        done = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", migrate, "scan", str(repo), "--format", "json"],
            capture_output=True, text=True, cwd=repo, env={**os.environ, "HOME": str(repo)},
        )
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        denied = "cannot read: permission denied"
        assert skips(data) == {"secret.cu": denied, "own.cu": denied}
        assert {f["path"] for f in data["findings"]} == {"open.cu"}
    finally:
        shutil.rmtree(repo)


def test_plain_directory_and_git_repo_scan_alike(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text(KERNEL)
    _, plain, _ = run_scan(tmp_path)
    init_repo(tmp_path)
    _, tracked, _ = run_scan(tmp_path)
    assert plain["findings"] == tracked["findings"]


def test_directory_with_no_sources(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    code, data, _ = run_scan(tmp_path)
    assert code == 0
    assert data["summary"]["files_scanned"] == 0 and data["findings"] == []


@pytest.mark.parametrize("make", ["missing", "file"])
def test_bad_path_is_one_line_and_exit_2(tmp_path: Path, make: str) -> None:
    target = tmp_path / "nope"
    if make == "file":
        target.write_text("x")
    result = CliRunner().invoke(cli, ["scan", str(target)])
    assert result.exit_code == 2
    expected = "path does not exist" if make == "missing" else "not a directory"
    assert result.stderr == f"migrate: error: {expected}: {target}\n"
    assert "Traceback" not in result.output


def test_unparsable_python_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    _, data, _ = run_scan(tmp_path)
    assert skips(data) == {"broken.py": "Python syntax error at line 2: invalid syntax"}


def test_a_script_exported_from_a_notebook_is_read_past_its_shell_escapes(tmp_path: Path) -> None:
    (tmp_path / "puzzles.py").write_text(
        "!pip install -q plotting-helper\n%matplotlib inline\nfrom numba import cuda\n"
        "if True:\n    !nvidia-smi\n    kernel = cuda.jit(lambda a: None)\n"
    )
    _, data, _ = run_scan(tmp_path)
    assert skips(data) == {}
    assert sorted((f["rule"], f["line"]) for f in data["findings"]) == [
        ("python-numba-cuda", 3), ("python-numba-cuda", 6)]


def test_a_syntax_error_beside_shell_escapes_is_still_skipped(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("!pip install torch\nimport torch\ndef f(:\n    pass\n")
    _, data, _ = run_scan(tmp_path)
    assert skips(data) == {"broken.py": "Python syntax error at line 1: invalid syntax"}


def test_broken_rules_file_names_file_and_rule(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "rules:\n  - id: my-rule\n    title: t\n    category: nonsense\n    languages: [python]\n"
        "    severity: low\n    message: m\n    match: {matcher: cuda-api, libraries: [runtime], with_hip: true}\n"
    )
    with pytest.raises(RuleFileError, match=r"bad\.yaml: rule my-rule: unknown category 'nonsense'"):
        load([tmp_path])
    (tmp_path / "bad.yaml").write_text("rules: [\n")
    with pytest.raises(RuleFileError, match=r"bad\.yaml: cannot read rules"):
        load([tmp_path])


def test_fail_on_sets_exit_code(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("void f() { cudaDeviceFlushGPUDirectRDMAWrites(a, b); }\n")
    assert run_scan(tmp_path)[0] == 0
    assert run_scan(tmp_path, "--fail-on", "medium")[0] == 1  # a name with no HIP name needs a look: medium
    assert run_scan(tmp_path, "--fail-on", "high")[0] == 0


def test_scan_of_the_project_itself_does_not_crash() -> None:
    result = scan(ROOT / "src", Settings(jobs=1))
    assert result.files_scanned > 10


def test_rule_effort_must_be_a_range(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        "rules:\n  - id: my-rule\n    title: t\n    category: other\n    languages: [cuda]\n    severity: low\n"
        "    message: m\n    effort: 0.5\n    match: {matcher: cuda-api, libraries: [runtime], with_hip: true}\n"
    )
    with pytest.raises(RuleFileError, match=r"mine\.yaml: rule my-rule: 'effort' has the wrong type"):
        load([tmp_path])
