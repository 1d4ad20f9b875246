"""The report memo: a scan of an unchanged tree hands back its reports whole, and any change the scan could see
(a file's content, a file added or removed, the rules, the settings, the baseline, the repository's packages, the
root as written) scans again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import migrate.cache.store
import migrate.memo
import migrate.scan
import migrate.scan.pool
from migrate.baseline import render as render_baseline
from migrate.cli import cli

from conftest import KERNEL

OLD = 1_600_000_000


@pytest.fixture(autouse=True)
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled at once: what two seconds later would see, without sleeping in a test."""
    monkeypatch.setattr(migrate.cache.store, "_SETTLED_NS", 0)


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The roots scanned (not served from the memo) in this process."""
    seen: list[Path] = []
    real = migrate.scan.scan_inputs

    def counting(root, settings, found, **options):  # type: ignore[no-untyped-def]
        seen.append(root)
        return real(root, settings, found, **options)

    monkeypatch.setattr(migrate.scan, "scan_inputs", counting)  # memo.py imports it where it scans
    return seen


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "k.cu").write_text(KERNEL)
    (root / "pkg" / "ops.py").write_text("import cupy\nimport pycuda\n")
    return root


def run(root: Path, *extra: str, cache: bool = True) -> Result:
    options = ["--cache-dir", str(root.absolute().parent / "cache")] if cache else ["--no-cache"]
    return CliRunner().invoke(cli, ["scan", str(root), "--format", "json", "--jobs", "1", *options, *extra])


def report(result: Result) -> dict[str, object]:
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_an_unchanged_tree_gets_its_reports_back_whole(tmp_path: Path, calls: list[str], scans: list[Path]) -> None:
    root = repo(tmp_path)
    cold = run(root, "--fail-on", "high")
    output = tmp_path / "report.md"
    cold_files = run(root, "--output", str(output))
    assert sorted(calls) == ["k.cu", "pkg/ops.py"] and len(scans) == 2  # other reports asked for: scanned again
    first = output.read_text()
    scans.clear()
    warm = run(root, "--fail-on", "high")
    assert scans == []
    assert (warm.output, warm.exit_code) == (cold.output, cold.exit_code) == (cold.output, 1)
    assert run(root, "--fail-on", "blocker").exit_code == 0  # --fail-on reads the worst severity kept
    output.unlink()
    assert run(root, "--output", str(output)).output == cold_files.output and output.read_text() == first
    assert scans == [] and sorted(calls) == ["k.cu", "pkg/ops.py"]


def test_the_memo_is_skipped_without_a_cache_and_for_files_just_changed(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path)
    assert report(run(root, cache=False)) == report(run(root))
    monkeypatch.setattr(migrate.cache.store, "_SETTLED_NS", 10**18)  # every file changed "just now"
    (tmp_path / "cache2").mkdir(mode=0o700)
    CliRunner().invoke(cli, ["scan", str(root), "--cache-dir", str(tmp_path / "cache2"), "--jobs", "1"])
    assert not (tmp_path / "cache2" / "reports").exists()


@pytest.mark.parametrize(
    "change",
    ["edit", "edit-same-size-and-mtime", "add", "remove", "package", "target", "config", "baseline", "root"],
)
def test_any_change_the_scan_could_see_scans_again(
    tmp_path: Path, scans: list[Path], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    root = repo(tmp_path)
    (root / "other.cu").write_text(KERNEL)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(render_baseline([]))
    extra = ("--baseline", str(baseline)) if change == "baseline" else ()
    run(root, *extra)
    kernel = root / "k.cu"
    if change == "edit":
        kernel.write_text(KERNEL + "void g() { cudaFree(0); }\n")
    elif change == "edit-same-size-and-mtime":
        before = kernel.stat()
        kernel.write_text(KERNEL.replace("cudaMalloc(&p, 4)", "cudaFree(p)      "))
        os.utime(kernel, ns=(before.st_atime_ns, before.st_mtime_ns))  # only the ctime tells
    elif change == "add":
        (root / "new.cu").write_text(KERNEL)
    elif change == "remove":
        (root / "other.cu").unlink()
    elif change == "package":
        (root / "cupy").mkdir()
        (root / "cupy" / "__init__.py").write_text("")  # `import cupy` is the repository's own now
    elif change == "target":
        extra = ("--target", "gfx1100")
    elif change == "config":
        (root / ".migrate.toml").write_text('disable = ["cuda-runtime-api"]\n')
    elif change == "baseline":
        assert CliRunner().invoke(cli, ["baseline", str(root), "-o", str(baseline), "--no-cache"]).exit_code == 0
    elif change == "root":
        monkeypatch.chdir(tmp_path)
        root = Path("repo")
    fresh = report(run(root, *extra, cache=False))
    scans.clear()
    again = report(run(root, *extra))
    assert scans, "the memo was served"
    assert again == fresh


@pytest.mark.parametrize("damage", ["worst", "text", "foreign-worst"])
def test_a_damaged_memo_is_a_miss(tmp_path: Path, scans: list[Path], damage: str) -> None:
    root = repo(tmp_path)
    cold = run(root)
    [place] = (tmp_path / "cache" / "reports").glob("*/*")
    if damage == "worst":
        (place / "worst.json").write_text('{"format": 5, "worst": "high"}')
    elif damage == "text":
        (place / "json.txt").unlink()
    else:
        (place / "worst.json").chmod(0o666)  # others may write it: not trusted
    scans.clear()
    assert run(root).output == cold.output
    assert scans == [root]


def test_a_report_written_to_a_file_is_kept_as_a_file_and_copied_back(tmp_path: Path, scans: list[Path]) -> None:
    """--output streams the report into the memo and copies it out; a warm scan copies the kept file again, and a
    kept file that is gone is a miss."""
    root = repo(tmp_path)
    output = tmp_path / "out.json"
    run(root, "--output", str(output))
    first = output.read_bytes()
    assert json.loads(first)["findings"]
    [place] = (tmp_path / "cache" / "reports").glob("*/*")
    assert (place / "json.txt").read_bytes() == first
    scans.clear()
    output.unlink()
    run(root, "--output", str(output))
    assert scans == [] and output.read_bytes() == first
    (place / "json.txt").unlink()
    run(root, "--output", str(output))
    assert scans == [root] and output.read_bytes() == first


def test_reports_of_a_tree_that_changed_while_it_was_scanned_are_not_kept(
    tmp_path: Path, scans: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    real = migrate.scan.pool.scan_file

    def editing(source, *rest):  # type: ignore[no-untyped-def]
        if source.relpath == "k.cu":  # an editor saves the file while the scan runs
            (root / "k.cu").write_text(KERNEL + "void g() { cudaFree(0); }\n")
        return real(source, *rest)

    monkeypatch.setattr(migrate.scan.pool, "scan_file", editing)
    run(root)
    run(root, "--output", str(tmp_path / "out.json"))  # a report written as it is rendered is not kept either
    monkeypatch.setattr(migrate.scan.pool, "scan_file", real)
    assert not list((tmp_path / "cache" / "reports").glob("*/*"))
    assert report(run(root)) == report(run(root, cache=False))


def test_the_memo_key_is_discoverys_stat_and_an_edit_after_it_is_seen_by_the_next_scan(
    tmp_path: Path, scans: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is taken from the stat discovery made (no second stat per file): an edit after discovery belongs to
    the next run, which scans again; a run that reads a file edited after its discovery keeps no reports."""
    root = repo(tmp_path)
    cold = run(root)
    real = migrate.memo.inputs
    edits = iter(range(1, 10))

    def editing(*args, **options):  # type: ignore[no-untyped-def]
        found = real(*args, **options)
        (root / "k.cu").write_text(KERNEL + "void g() { cudaFree(0); }\n" * next(edits))  # saved after discovery
        return found

    def scanned_again_as_without_a_cache() -> None:
        monkeypatch.setattr(migrate.memo, "inputs", real)
        fresh = report(run(root, cache=False))
        scans.clear()
        assert report(run(root)) == fresh and scans == [root]

    monkeypatch.setattr(migrate.memo, "inputs", editing)
    scans.clear()
    assert run(root).output == cold.output and scans == []  # the tree as discovery saw it: the kept reports
    scanned_again_as_without_a_cache()
    kept = sorted((tmp_path / "cache" / "reports").glob("*/*"))
    (root / "k.cu").write_text(KERNEL)  # a change before discovery: a miss, and the file changes again after it
    monkeypatch.setattr(migrate.memo, "inputs", editing)
    scans.clear()
    run(root)
    assert scans == [root] and sorted((tmp_path / "cache" / "reports").glob("*/*")) == kept  # nothing kept
    scanned_again_as_without_a_cache()


def test_a_scan_is_assessed_once_for_every_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One assessment feeds the printed report and the written one: no renderer assesses again."""
    import migrate.risk

    calls: list[int] = []
    real = migrate.risk.assess

    def counting(findings, weights, **options):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(findings, weights, **options)

    monkeypatch.setattr(migrate.risk, "assess", counting)
    root = repo(tmp_path)
    done = run(root, "--report", str(tmp_path / "out.html"), cache=False)
    assert done.exit_code == 0 and (tmp_path / "out.html").exists(), done.output
    assert len(calls) == 1
