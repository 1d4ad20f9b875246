"""rocm-target-list-leaves-out-target: a ROCm build's literal GPU target list, reported where it leaves out a scan
target (--target), quiet where it covers them or is computed: exact findings on the hand-written fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path

from migrate.config import Settings
from migrate.risk import severity_for_target
from migrate.ruleset import load_builtin
from migrate.scan import scan

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rules" / "manifests" / "gpu-target-lists"
RULE = "rocm-target-list-leaves-out-target"


def findings(tree: Path, targets: tuple[str, ...] = ("gfx942",)) -> list[tuple[str, int, str, str | None]]:
    result = scan(tree, Settings(jobs=1, targets=targets))
    return sorted((f.path, f.line, f.severity.label, f.symbol) for f in result.findings if f.rule == RULE)


def test_lists_that_leave_out_the_default_target_fire(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "t", ignore=shutil.ignore_patterns("quiet"))
    assert findings(tmp_path / "t") == [
        ("CMakeLists.txt", 8, "medium", "gfx1030;gfx1100;gfx1101"),
        ("Dockerfile", 5, "medium", "gfx1100;gfx1101"),
        ("Makefile", 3, "medium", "gfx90a"),
        ("build_rocm.sh", 3, "medium", "gfx1100;gfx90a"),
        ("build_rocm.sh", 5, "medium", "gfx906;gfx908"),  # both options of the continued command
        ("setup.py", 4, "medium", "gfx1100;gfx1101"),
    ]


def test_the_target_decides_which_lists_fire(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "t", ignore=shutil.ignore_patterns("quiet"))
    assert findings(tmp_path / "t", ("gfx90a",)) == [
        ("CMakeLists.txt", 8, "medium", "gfx1030;gfx1100;gfx1101"),
        ("Dockerfile", 5, "medium", "gfx1100;gfx1101"),
        ("build_rocm.sh", 5, "medium", "gfx906;gfx908"),
        ("setup.py", 4, "medium", "gfx1100;gfx1101"),
    ]
    assert findings(tmp_path / "t", ("gfx1100",)) == [
        ("Dockerfile", 3, "medium", "gfx90a;gfx942"),
        ("Makefile", 2, "medium", "gfx90a;gfx942"),
        ("Makefile", 3, "medium", "gfx90a"),
        ("build_rocm.sh", 5, "medium", "gfx906;gfx908"),
    ]


def test_the_message_names_what_the_list_leaves_out(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "t", ignore=shutil.ignore_patterns("quiet"))
    result = scan(tmp_path / "t", Settings(jobs=1, targets=("gfx942", "gfx1100")))
    (makefile,) = [f for f in result.findings if f.rule == RULE and f.path == "Makefile" and f.line == 3]
    assert makefile.status == "remaining"  # in the ROCm build itself, never a guarded site
    assert "hipErrorNoBinaryForGpu" in makefile.message
    assert makefile.message.endswith("(The list names gfx90a; it leaves out gfx942 (AMD Instinct MI300X, AMD Instinct "
                                     "MI300A); gfx1100 (AMD Radeon RX 7900 XTX, AMD Radeon RX 7900 XT).)")


def test_covered_computed_shown_and_tested_lists_stay_quiet(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "quiet", tmp_path / "q")
    assert findings(tmp_path / "q") == []
    # the list that spans lines is read whole, and vLLM-style supported lists are lists too: they cover gfx942, not
    # gfx1201
    assert findings(tmp_path / "q", ("gfx1201",)) == [
        ("CMakeLists.txt", 6, "medium", "gfx1100;gfx90a;gfx942"),
        ("CMakeLists.txt", 17, "medium", "gfx90a;gfx942;gfx950"),
    ]


def test_a_cached_scan_follows_the_target(tmp_path: Path) -> None:
    """The targets are part of what a cached file result depends on: a second target reads no stale result."""
    shutil.copytree(FIXTURES, tmp_path / "t", ignore=shutil.ignore_patterns("quiet"))
    cache = str(tmp_path / "cache")

    def cached(targets: tuple[str, ...]) -> list[tuple[str, int]]:
        result = scan(tmp_path / "t", Settings(jobs=1, targets=targets, cache_dir=cache))
        return sorted((f.path, f.line) for f in result.findings if f.rule == RULE and f.path == "Makefile")

    assert cached(("gfx942",)) == [("Makefile", 3)]
    assert cached(("gfx1100",)) == [("Makefile", 2), ("Makefile", 3)]
    assert cached(("gfx942",)) == [("Makefile", 3)]


def test_each_target_s_assessment_counts_only_the_lists_that_leave_it_out(tmp_path: Path) -> None:
    """With two targets, a list that names one of them is work for the other only: info on the one it names."""
    shutil.copytree(FIXTURES, tmp_path / "t", ignore=shutil.ignore_patterns("quiet"))
    result = scan(tmp_path / "t", Settings(jobs=1, targets=("gfx942", "gfx1100")))
    rules = {r.id: r for r in load_builtin().rules}
    on_target = {
        (f.path, f.line): tuple(severity_for_target(f, rules[RULE], result.targets, gfx).label
                                for gfx in ("gfx942", "gfx1100"))
        for f in result.findings if f.rule == RULE and f.path in ("Makefile", "build_rocm.sh")
    }
    assert on_target == {
        ("Makefile", 2): ("info", "medium"),  # gfx90a,gfx942: only gfx1100 is missing
        ("Makefile", 3): ("medium", "medium"),  # gfx90a: both are
        ("build_rocm.sh", 3): ("medium", "info"),  # gfx90a;gfx1100: only gfx942 is
        ("build_rocm.sh", 5): ("medium", "medium"),
    }
