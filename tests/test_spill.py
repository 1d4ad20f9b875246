"""A scan's findings kept on disk as they come (scan/spill.py): read back equal, in order, and the temp file gone
when the scan ends, fails or is interrupted."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from migrate.config import Settings
from migrate.model import Finding, Occurrence, Severity
from migrate.packed import decode, encode
from migrate.scan import project, scan, spill
from migrate.scan.spill import Spill, SpilledFindings

KERNEL = "#include <cuda_runtime.h>\nvoid f(float** p) {\n  cudaMalloc(p, 4);\n  cudaFree(*p);\n}\n"


def _tree(root: Path, files: int) -> Path:
    for index in range(files):
        (root / f"d{index % 3}").mkdir(parents=True, exist_ok=True)
        (root / f"d{index % 3}" / f"k{index}.cu").write_text(KERNEL * (1 + index % 4))
    (root / "requirements.txt").write_text("cupy-cuda12x\ntorch\n")
    return root


def _open_in(directory: Path) -> list[str]:
    """The files this process holds open under DIRECTORY (an unnamed temp file reads as DIRECTORY/#N (deleted))."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory)):
            found.append(target)
    return found


@pytest.fixture
def spill_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every scan spills its findings at once (no bytes kept in memory, none kept decoded), under a temp dir of its own."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    monkeypatch.setattr(spill, "IN_MEMORY", 0)
    monkeypatch.setattr(spill, "RESIDENT", 0)
    return directory


def test_findings_come_back_equal_from_the_bytes() -> None:
    places = (Occurrence(3, 1, 3, "cudaFree(p);"), Occurrence(9, 5, 10, "x"))
    findings = [
        Finding("a.cu", 3, 1, "r", "other", Severity.HIGH, 3, "m", "cudaFree(p);", "hipFree", ("hip",), True, "cudaFree",
                (0.5, 2.0), "covered", places),
        Finding("a.cu", 4, 2, "s", "env-var", Severity.INFO, 5, "m2", "e"),
    ]
    back = decode(encode(findings))
    assert back == findings
    assert [f.__dict__ for f in back] == [f.__dict__ for f in findings]  # every field, not only the compared ones
    assert back[0].severity is Severity.HIGH and all(type(o) is Occurrence for o in back[0].occurrences)


def test_a_spilled_scan_reads_back_what_an_unspilled_one_holds(tmp_path: Path, spill_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path / "repo", 80)  # past the pool's threshold: two forked workers send their findings encoded
    spilled = scan(root, Settings(jobs=2))
    assert isinstance(spilled.findings, SpilledFindings) and spilled.findings._spill.on_disk
    monkeypatch.setattr(spill, "IN_MEMORY", 1 << 30)
    monkeypatch.setattr(spill, "RESIDENT", 1 << 30)
    held = scan(root, Settings(jobs=1))
    assert not held.findings._spill.on_disk  # type: ignore[attr-defined]
    assert len(spilled.findings) == len(held.findings) > 160
    assert list(spilled.findings) == list(held.findings) and spilled == held
    assert [f.__dict__ for f in spilled.findings] == [f.__dict__ for f in held.findings]
    keys = [f.key() for f in spilled.findings]
    assert keys == sorted(keys)  # in report order, without a sort of them all
    assert spilled.findings[-1] == held.findings[-1] and spilled.findings[5:8] == list(held.findings[5:8])


def test_the_temp_file_has_no_name_and_goes_when_the_findings_go(tmp_path: Path, spill_dir: Path) -> None:
    result = scan(_tree(tmp_path / "repo", 5), Settings(jobs=1))
    assert result.findings and os.listdir(spill_dir) == []  # unnamed: nothing to leave behind, even on kill -9
    assert [target.endswith("(deleted)") for target in _open_in(spill_dir)] == [True]
    result.findings.close()  # type: ignore[attr-defined]
    assert _open_in(spill_dir) == []
    del result
    assert os.listdir(spill_dir) == []


def test_the_temp_file_is_closed_when_the_scan_fails(tmp_path: Path, spill_dir: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(project, "settling", interrupted)  # after every file's findings went to disk
    with pytest.raises(KeyboardInterrupt):
        scan(_tree(tmp_path / "repo", 5), Settings(jobs=1))
    assert _open_in(spill_dir) == [] and os.listdir(spill_dir) == []


def test_a_small_scan_makes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    result = scan(_tree(tmp_path / "repo", 3), Settings(jobs=1))
    assert result.findings and not result.findings._spill.on_disk  # type: ignore[attr-defined]
    assert _open_in(directory) == []


def test_the_sequence_reads_blocks_in_order_and_indexes_across_them() -> None:
    blocks = [[Finding(f"{name}.cu", line, 1, "r", "other", Severity.LOW, line, "m", "e") for line in range(1, n + 1)]
              for name, n in (("a", 3), ("b", 1), ("c", 4))]
    every = [f for block in blocks for f in block]
    for resident in (0, 4, 100):
        found = SpilledFindings(Spill(in_memory=0), resident=resident)
        for block in blocks:
            found.add(list(block))
        found.add([])  # a file without findings adds no block
        assert len(found) == 8 and list(found) == every and found == tuple(every) and tuple(every) == found
        assert [found[i] for i in range(-8, 8)] == every + every
        assert found[2:6] == every[2:6] and found[::3] == every[::3]
        assert found != tuple(every[:-1]) and found != "abc"
        with pytest.raises(IndexError):
            found[8]
        found.close()


def test_reads_between_appends_see_every_block() -> None:
    stored = Spill(in_memory=0)  # on disk from the first byte, written through a buffer
    where = [stored.append(bytes([n]) * (n + 1)) for n in range(3)]
    assert stored.read(*where[0]) == b"\x00"
    later = stored.append(b"xyz")  # after a read: an earlier block is read without it, the new one with it
    assert stored.read(*where[2]) == b"\x02" * 3 and stored.read(*later) == b"xyz"
    assert stored.read(*where[1]) == b"\x01\x01" and stored.read(*stored.append(b"q")) == b"q"
    stored.close()


def test_the_second_pass_reads_again_what_the_first_could_not_keep(tmp_path: Path, spill_dir: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import migrate.scan.orchestrate as orchestrate

    root = _tree(tmp_path / "repo", 12)
    kept = scan(root, Settings(jobs=1))
    monkeypatch.setattr(orchestrate, "RESIDENT", 5)  # the first files' findings kept, the rest read again
    read_again = scan(root, Settings(jobs=1))
    assert len(kept.findings) > 5 and list(read_again.findings) == list(kept.findings)
    assert [f.__dict__ for f in read_again.findings] == [f.__dict__ for f in kept.findings]
