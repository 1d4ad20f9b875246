"""Hardening, listing and writing: one file lister for scan, translate and apply, and one atomic writer for every
output (issue 10: #7, #10, #11, #30, #31; issue 12 section 3)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings
from migrate.scan import scan
from migrate.writer import write_file

from conftest import GIT_ENV, init_repo

KERNEL = "void f(float** p) { cudaMalloc(p, 4); }\n"
PORTED = "#include <hip/hip_runtime.h>\nvoid f(float** p) { hipMalloc(p, 4); }\n"  # a .cu file gets the runtime header
BUILTIN = ["--engine", "builtin"]
MIGRATE = [sys.executable, "-c", "from migrate.cli import main; main()"]


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def _translate(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["translate", *args, *BUILTIN])


# -- #7: translate --in-place never writes through a symlink or outside the named root ----------------------------


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.cu").write_text(KERNEL)
    return outside


def test_in_place_does_not_write_through_a_named_symlink(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "real.cu").write_text(KERNEL)
    (root / "link.cu").symlink_to(outside / "x.cu")
    names = sorted(str(p) for p in root.glob("*.cu"))  # what the shell makes of `*.cu`
    result = _translate(*names, "--in-place")
    assert result.exit_code == 0, result.output
    assert "link.cu: skipped: symlink" in result.stderr
    assert (outside / "x.cu").read_text() == KERNEL
    assert (root / "real.cu").read_text() == PORTED and (root / "link.cu").is_symlink()


def test_in_place_does_not_follow_a_named_directory_symlink(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    (tmp_path / "linkdir").symlink_to(outside, target_is_directory=True)
    result = _translate(str(tmp_path / "linkdir"), "--in-place")
    assert result.exit_code == 0 and "linkdir: skipped: symlink; not followed" in result.stderr
    assert (outside / "x.cu").read_text() == KERNEL


def test_in_place_does_not_follow_a_symlink_inside_the_tree(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "sub").symlink_to(outside, target_is_directory=True)
    (root / "k.cu").symlink_to(outside / "x.cu")
    result = _translate(str(root), "--in-place")
    assert result.exit_code == 0, result.output
    assert (outside / "x.cu").read_text() == KERNEL


# -- #10 / issue 12 section 3: translate lists a directory as scan does -------------------------------------------


def _scanned(path: Path) -> set[str]:
    return {f.path for f in scan(path, Settings(jobs=1)).findings}


def _translated(path: Path, out: Path) -> set[str]:
    result = _translate(str(path), "--out-dir", str(out))
    assert result.exit_code == 0, result.output
    return {p.relative_to(out).as_posix() for p in out.rglob("*.cu") if p.read_text() == PORTED}


def _tree(root: Path) -> Path:
    for name in ("a.cu", "gen/g.cu", "lib/l.cu", "lib/tmp.cu", "build/b.cu"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(KERNEL)
    (root / ".gitignore").write_text("gen/\nlib/tmp.cu\n")
    return root


@pytest.mark.parametrize("in_git", [True, False])
@pytest.mark.parametrize("sub", ["", "gen", "lib"])
def test_translate_lists_what_scan_lists(tmp_path: Path, in_git: bool, sub: str) -> None:
    root = _tree(tmp_path / "repo")
    if in_git:
        init_repo(root)
    target = root / sub if sub else root
    translated = _translated(target, tmp_path / "out")
    assert translated == _scanned(target)
    expected = {"": {"a.cu", "build/b.cu", "lib/l.cu"}, "gen": {"g.cu"}, "lib": {"l.cu"}}[sub] if in_git else None
    if expected is not None:
        assert translated == expected


def test_out_dir_copies_the_listed_files_only(tmp_path: Path) -> None:
    root = init_repo(_tree(tmp_path / "repo"))
    out = tmp_path / "out"
    assert CliRunner().invoke(cli, ["apply", str(root), *BUILTIN, "--strategy", "fork", "--out-dir", str(out)]).exit_code == 0
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        ".gitignore", "a.cu", "build/b.cu", "lib/l.cu"]


# -- #30: unreadable directories are reported -------------------------------------------------------------------------


@pytest.mark.slow
def test_out_dir_reports_an_unreadable_directory(tmp_path: Path) -> None:
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        base.chmod(0o777)
        src = base / "src"
        (src / "secret").mkdir(parents=True)
        (src / "a.cu").write_text(KERNEL)
        (src / "secret" / "s.cu").write_text(KERNEL)
        (src / "secret").chmod(0)
        for path in (base, src):
            path.chmod(0o777)
        done = _as_nobody([*MIGRATE, "translate", str(src), "--out-dir", str(base / "out"),
                           *BUILTIN])
        assert "secret: skipped: cannot read directory: permission denied" in done.stderr, done.stderr
        assert (base / "out" / "a.cu").read_text() == PORTED
    finally:
        (base / "src" / "secret").chmod(0o755)
        shutil.rmtree(base)


def _as_nobody(command: list[str]) -> subprocess.CompletedProcess[str]:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0:
        return subprocess.run(command, capture_output=True, text=True, check=False)
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a directory unreadable")
    return subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *command],
                          capture_output=True, text=True, check=False, cwd="/tmp")


# -- #11: every output is written atomically ------------------------------------------------------------------------


def _limited(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _migrate_with_a_full_disk(*args: str) -> subprocess.CompletedProcess[str]:
    """Run migrate where no file can grow past 200 bytes: every write of a real report fails half-way."""
    return subprocess.run([*MIGRATE, *args], capture_output=True, text=True,
                          preexec_fn=lambda: _limited(200), check=False, env={**os.environ, **GIT_ENV})


@pytest.mark.slow
def test_failed_baseline_keeps_the_old_file(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL * 20)
    old = tmp_path / ".migrate-baseline.json"
    old.write_text('{"schema": "rocm-migrate/baseline/1", "findings": []}\n')
    done = _migrate_with_a_full_disk("baseline", str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"migrate: error: cannot write {old}")
    assert json.loads(old.read_text())["findings"] == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [old.name]


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["-o", "--report"])
def test_failed_report_keeps_the_old_file(tmp_path: Path, flag: str) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    report = tmp_path / "old.json"
    report.write_text("{}\n")
    args = ["--format", "json"] if flag == "-o" else []
    done = _migrate_with_a_full_disk("scan", str(tmp_path), "--no-cache", *args, flag, str(report))
    assert done.returncode == 2 and "cannot write" in done.stderr, done.stderr
    assert report.read_text() == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cu", "old.json"]


@pytest.mark.slow
def test_failed_translate_output_keeps_the_old_file(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL * 20)
    out = tmp_path / "out.cu"
    out.write_text("// old\n")
    done = _migrate_with_a_full_disk("translate", str(tmp_path / "k.cu"), "-o", str(out), *BUILTIN)
    assert done.returncode == 2, done.stderr
    assert out.read_text() == "// old\n"


# -- #31: wording -----------------------------------------------------------------------------------------------------


def test_output_into_a_missing_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    target = tmp_path / "missing" / "dir" / "x.cu"
    result = _translate(str(tmp_path / "k.cu"), "-o", str(target))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == f"migrate: error: cannot write {target}: directory {target.parent} does not exist"


def test_a_report_written_to_dev_null_leaves_the_device_in_place(tmp_path: Path) -> None:
    """Renaming a temp file over /dev/null (as root) would turn the device into a regular file."""
    (tmp_path / "dev").mkdir()
    device = tmp_path / "dev" / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    write_file(device, "report\n")
    assert stat.S_ISCHR(os.stat(device).st_mode)
    assert os.path.getsize(device) == 0
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "src.cu").write_text("void f() { cudaDeviceSynchronize(); }\n")
    done = CliRunner().invoke(cli, ["scan", str(repo), "--format", "json", "--output", str(device)])
    assert done.exit_code == 0, done.output
    assert stat.S_ISCHR(os.stat(device).st_mode), done.output


def test_a_temp_file_is_new_private_and_named_for_its_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stage() makes its temp file as mkstemp would (O_EXCL, mode 0600 until the target's mode is set, 8 random
    characters that leftovers() knows), beside the target, and never opens one that exists."""
    from migrate import writer

    target = tmp_path / "report.json"
    monkeypatch.chdir(tmp_path)
    taken = iter([b"\0" * 8, b"\0" * 8, b"\1" * 8])  # the first name twice: the second try must not reuse it
    monkeypatch.setattr(writer.os, "urandom", lambda n: next(taken))
    first = writer.stage(Path("report.json"), b"one", 0o640, durable=False)
    second = writer.stage(Path("report.json"), b"two", 0o640, durable=False)
    assert first.is_absolute() and first.parent == tmp_path and first != second
    names = (f".report.json.aaaaaaaa{writer.TEMP_SUFFIX}", f".report.json.bbbbbbbb{writer.TEMP_SUFFIX}")
    assert (first.name, second.name) == names
    assert (first.read_bytes(), second.read_bytes()) == (b"one", b"two") and first.stat().st_mode & 0o777 == 0o640
    assert sorted(writer.leftovers([target])) == [first, second]
