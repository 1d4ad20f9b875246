"""benchmarks/port_diff.py: a port's hunks from a real git diff, the 3-line matching, the grep baseline, a whole run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, git

sys.path.insert(0, str(ROOT / "benchmarks"))
import port_diff  # noqa: E402
import port_diff_families  # noqa: E402
from port_diff_figures import (  # noqa: E402
    Block, Hunk, Mark, MarkIndex, PortTruth, apply_overlap, grep_marks, kind_of, parse_diff, port_truth, scan_marks,
    tally, unquote,
)

KERNEL = "".join(f"// line {n}\n" for n in range(1, 11))
SETUP = "from setuptools import setup\nsetup(name='x')\n"
HELPERS = "import torch\n\n\ndef device():\n    return 'cuda'\n"


def _commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        path = repo / name
        if text is None:
            git(repo, "rm", "-q", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def ported(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository with an upstream commit and a 'port' on top: edits, an insertion, a rename, noise."""
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = _commit(repo, {"csrc/k.cu": KERNEL, "setup.py": SETUP, "pkg/helpers.py": HELPERS, "old/gone.cpp": "int x;\n",
                          "version.txt": "1.0\n", "pkg/util.py": "A = 1\nB = 2\nC = 3\n"}, "upstream")
    kernel = KERNEL.replace("// line 3\n", "// line three\n").replace("// line 8\n// line 9\n", "// eight\n")
    kernel = kernel.replace("// line 5\n", "// line 5\n#ifdef USE_ROCM\n#endif\n")
    head = _commit(repo, {
        "csrc/k.cu": kernel,
        "setup.py": SETUP.replace("setup(", "setup(  ", 1),             # whitespace only: not a port change
        "pkg/helpers.py": HELPERS.replace("'cuda'", "'cuda' if not hip else 'hip'"),
        "old/gone.cpp": None,                                             # deleted wholesale: noise
        "version.txt": "1.0+rocm\n",                                      # version file: noise
        "csrc/k_hip.h": "#pragma once\n",                                 # added by the port
    }, "port")
    git(repo, "mv", "pkg/util.py", "pkg/utils.py")
    (repo / "pkg/utils.py").write_text("A = 1\nB = 20\nC = 3\n")
    git(repo, "commit", "-q", "-am", "rename")
    return repo / ".git", base, git(repo, "rev-parse", "HEAD").strip()


def _where(hunks: tuple[Hunk, ...]) -> list[tuple[str, int, int, bool, str]]:
    return [(h.path, h.block.start, h.block.end, h.block.insertion, h.kind) for h in hunks]


def test_hunks_of_a_real_port(ported: tuple[Path, str, str]) -> None:
    truth = port_diff.port_changes(*ported)
    assert _where(truth.hunks) == [
        ("csrc/k.cu", 3, 3, False, "cuda"),
        ("csrc/k.cu", 6, 6, True, "cuda"),      # inserted after line 5: it goes before old line 6
        ("csrc/k.cu", 8, 9, False, "cuda"),
        ("pkg/helpers.py", 5, 5, False, "python"),
        ("pkg/util.py", 2, 2, False, "python"),  # renamed and changed: counted on the upstream path
    ]
    assert truth.hunks[2].block.removed == ("// line 8", "// line 9")
    assert truth.hunks[2].block.added == ("// eight",)
    assert truth.added == ("csrc/k_hip.h",)
    assert truth.excluded == {"deleted": ["old/gone.cpp"], "version-file": ["version.txt"]}
    assert truth.touched == {"csrc/k.cu", "pkg/helpers.py", "pkg/util.py"}


def test_extract_writes_the_base_tree(ported: tuple[Path, str, str], tmp_path: Path) -> None:
    git_dir, base, _ = ported
    missing = port_diff.extract(git_dir, base, tmp_path / "tree")
    assert missing == []
    assert (tmp_path / "tree" / "csrc/k.cu").read_text() == KERNEL
    tree = tmp_path / "tree"
    written = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    assert written == ["csrc/k.cu", "old/gone.cpp", "pkg/helpers.py", "pkg/util.py", "setup.py", "version.txt"]


def test_the_base_tree_is_indexed_as_a_clone_is(ported: tuple[Path, str, str], tmp_path: Path) -> None:
    """A scan reads the tree through git's file list, as it reads a clone: a tracked folder the walk outside git
    passes over (`build/`) is read; grep reads the files, not the index beside them."""
    git_dir, base, _ = ported
    tree = tmp_path / "tree"
    port_diff.extract(git_dir, base, tree)
    (tree / "build").mkdir()
    (tree / "build" / "configure.ac").write_text("AC_CHECK_LIB([cudart], [cudaMalloc])\n")
    before = grep_marks(tree)
    port_diff.index_tree(tree)
    listed = subprocess.run(["git", "-C", str(tree), "ls-files"], capture_output=True, text=True, check=True).stdout
    assert listed.split() == ["build/configure.ac", "csrc/k.cu", "old/gone.cpp", "pkg/helpers.py", "pkg/util.py",
                              "setup.py", "version.txt"]
    (tree / ".git" / "description").write_text("nvcc builds the __global__ kernels\n")  # git's files name CUDA too
    assert grep_marks(tree) == before


CONTEXT_DIFF = """\
diff --git a/setup.py b/setup.py
--- a/setup.py
+++ b/setup.py
@@ -10,6 +10,7 @@
 a
 b
 c
+from torch.utils.cpp_extension import IS_HIP_EXTENSION
 d
 e
 f
@@ -40,4 +41,4 @@
 g
-    x = 1
-    y = 2
+    x = 3
 h
diff --git a/src/new_hip.h b/src/new_hip.h
--- /dev/null
+++ b/src/new_hip.h
@@ -0,0 +1 @@
+#pragma once
"""


def test_context_diff_blocks() -> None:
    setup, new = parse_diff(CONTEXT_DIFF)
    assert (setup.old, setup.new, setup.status) == ("setup.py", "setup.py", "M")
    assert [(b.start, b.end, b.insertion) for b in setup.blocks] == [(13, 13, True), (41, 42, False)]
    assert (new.old, new.new, new.status) == (None, "src/new_hip.h", "A")


def test_submodule_bump_and_quoted_names_are_read() -> None:
    text = ('diff --git a/ext/lib b/ext/lib\nindex 1111111..2222222 160000\n--- a/ext/lib\n+++ b/ext/lib\n'
            '@@ -1 +1 @@\n-Subproject commit 1111111\n+Subproject commit 2222222\n'
            'diff --git "a/d\\303\\251j\\303\\240.py" "b/d\\303\\251j\\303\\240.py"\n'
            '--- "a/d\\303\\251j\\303\\240.py"\n+++ "b/d\\303\\251j\\303\\240.py"\n@@ -2 +2 @@\n-x\n+y\n')
    sub, quoted = parse_diff(text)
    assert sub.submodule and port_truth([sub, quoted]).excluded == {"submodule": ["ext/lib"]}
    assert quoted.old == "déjà.py" and [(b.start, b.end) for b in quoted.blocks] == [(2, 2)]
    assert unquote('"tab\\there"') == "tab\there"


@pytest.mark.parametrize(("mark_line", "hit"), [(4, False), (5, True), (8, True), (15, True), (16, False)])
def test_three_line_window(mark_line: int, hit: bool) -> None:
    index = MarkIndex([Mark("a.cu", (mark_line,), 1)])
    assert index.near("a.cu", 8, 12) is hit
    assert not index.near("b.cu", 8, 12)


def test_occurrences_count_as_lines_and_info_is_below_the_floor() -> None:
    report = {"findings": [
        {"path": "a.py", "line": 2, "end_line": 3, "severity": "low", "occurrences": [{"line": 40, "end_line": 40}]},
        {"path": "a.py", "line": 90, "end_line": 90, "severity": "info"},
    ]}
    assert scan_marks(report, min_severity="low") == [Mark("a.py", (2, 3, 40), 1)]
    assert [m.lines for m in scan_marks(report, min_severity="info")] == [(2, 3, 40), (90,)]


def test_grep_baseline(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text("int a;\n__global__ void k() {}\nint WarpSize;\n")
    (tmp_path / "Makefile").write_text("all:\n\tnvcc -o x x.cu\n")
    (tmp_path / "README.md").write_text("CUDA everywhere\n")              # docs are not grepped
    (tmp_path / "blob.bin").write_bytes(b"\0cuda")                       # neither are binaries
    (tmp_path / "data.txt").write_bytes(b"\0\0 cuda")
    (tmp_path / "asm.h").write_text("int basm;\nasm volatile(\"\");\n")  # a word, not a part of one
    found = sorted((m.path, m.lines) for m in grep_marks(tmp_path))
    assert found == [("Makefile", (2,)), ("asm.h", (2,)), ("src/k.cu", (2,)), ("src/k.cu", (3,))]


@pytest.mark.parametrize(("path", "kind"), [
    ("csrc/a.cu", "cuda"), ("include/b.cuh", "cuda"), ("csrc/c.cpp", "cpp"), ("x/y.h", "cpp"),
    ("setup.py", "build"), ("CMakeLists.txt", "build"), ("cmake/Find.cmake", "build"), ("Makefile", "build"),
    ("requirements-dev.txt", "build"), ("requirements/cuda.txt", "build"), ("pyproject.toml", "build"),
    ("docker/Dockerfile.rocm", "build"), (".github/workflows/ci.yml", "build"), ("configs/model.yaml", "other"),
    ("pkg/mod.py", "python"), ("README.md", "other"), ("scripts/run.sh", "other"),
])
def test_kinds_of_file(path: str, kind: str) -> None:
    assert kind_of(path) == kind


def _hunk(path: str, start: int, end: int) -> Hunk:
    return Hunk(path, Block(start, end, False, ("x",), ("y",)), kind_of(path))


def test_tally_recall_and_focus() -> None:
    truth = PortTruth((_hunk("a.cu", 10, 10), _hunk("a.cu", 50, 52), _hunk("b.py", 3, 3)), ("new.h",))
    marks = [Mark("a.cu", (12,), 3), Mark("a.cu", (100,), 4), Mark("c.cu", (1,), 3), Mark("b.py", (1,), 1)]
    by_kind, missed = tally(truth, marks, focus_rank=3)
    assert [h.block.start for h in missed] == [50]
    cuda, python = by_kind["cuda"].figures(), by_kind["python"].figures()
    assert (cuda["hunks"], cuda["hunks_hit"], cuda["files"], cuda["files_hit"]) == (2, 1, 1, 1)
    assert (cuda["findings"], cuda["ranked"], cuda["ranked_in_touched"], cuda["focus"]) == (3, 3, 2, 0.6667)
    assert (python["hunk_recall"], python["file_recall"], python["focus"]) == (1.0, 1.0, None)


def test_apply_overlap() -> None:
    truth = PortTruth((_hunk("setup.py", 20, 21), _hunk("k.cu", 5, 5)), ("k_hip.h",))
    applied = parse_diff(CONTEXT_DIFF)
    assert apply_overlap(truth, applied) == {
        "files_both": 1, "files_apply_only": 0, "files_port_only": 1, "added_both": 0, "added_apply_only": 1,
        "added_port_only": 1, "port_hunks": 2, "port_hunks_near_apply": 0, "apply_hunks": 2, "apply_hunks_near_port": 0,
    }
    near = PortTruth((_hunk("setup.py", 15, 15),), ())
    assert apply_overlap(near, applied)["port_hunks_near_apply"] == 1


@pytest.mark.slow
def test_whole_run_on_a_mirror(ported: tuple[Path, str, str], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    git_dir, base, head = ported
    mirrors = tmp_path / "mirrors"
    (mirrors / "up+proj").mkdir(parents=True)
    (mirrors / "up+proj" / "repo").symlink_to(git_dir.parent)
    pairs = tmp_path / "pairs.json"
    pair = {"name": "proj", "upstream": "up/proj", "fork": "up/proj", "base": base, "head": head}
    pairs.write_text(json.dumps([pair]))
    out, missed = tmp_path / "out.json", tmp_path / "missed.txt"
    migrate = str(Path(sys.executable).parent / "migrate")
    code = port_diff.main([str(mirrors), "--pairs", str(pairs), "--json", str(out), "--missed", str(missed),
                           "--migrate", migrate])
    assert code == 0
    result = json.loads(out.read_text())["pairs"][0]
    assert (result["hunks"], result["files"], result["added_files"]) == (5, 3, 1)
    assert result["tools"]["grep"]["total"]["hunks_hit"] == 1          # 'cuda' on helpers.py:5
    assert {m["path"] for m in result["missed"]} >= {"pkg/util.py"}
    assert "proj  pkg/util.py:2  python  code change with no ROCm word" in missed.read_text()
    assert "proj" in capsys.readouterr().out
    assert port_diff.main([str(mirrors), "--pairs", str(pairs), "--only", "nope"]) == 2
    pairs.write_text(json.dumps([{**pair, "fork": "up/proj2", "upstream_ref": head}]))
    (mirrors / "up+proj2").symlink_to(mirrors / "up+proj")
    assert port_diff.main([str(mirrors), "--pairs", str(pairs)]) == 2    # the merge base is not the recorded base
    assert "merge base of" in capsys.readouterr().err


def test_missing_mirror_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = tmp_path / "pairs.json"
    pairs.write_text(json.dumps([{"name": "x", "upstream": "a/b", "fork": "a/b", "base": "0" * 40, "head": "1" * 40}]))
    migrate = str(Path(sys.executable).parent / "migrate")
    assert port_diff.main([str(tmp_path), "--pairs", str(pairs), "--migrate", migrate]) == 2
    assert "no mirror of a/b" in capsys.readouterr().err
    assert port_diff.main([str(tmp_path), "--pairs", str(pairs), "--migrate", str(tmp_path / "nope")]) == 2
    assert "no migrate at" in capsys.readouterr().err
    pairs.write_text("{not json")
    assert port_diff.main([str(tmp_path), "--pairs", str(pairs)]) == 2


def test_every_pair_is_listed_with_full_commit_ids() -> None:
    pairs = port_diff.load_pairs(port_diff.PAIRS)
    assert len(pairs) >= 10 and len({p.name for p in pairs}) == len(pairs)
    for pair in pairs:
        for sha in (pair.base, pair.head, pair.upstream_ref or "0" * 40):
            assert len(sha) == 40 and int(sha, 16) >= 0
        assert (pair.kind == "fork") is bool(pair.upstream_ref)
        assert pair.name in (ROOT / "docs" / "recall.md").read_text()


@pytest.mark.parametrize(("path", "removed", "added", "expected"), [
    ("tests/test_ops.py", (), ("@pytest.mark.skipif(torch.version.hip is not None, reason='no fp8')",), "test skipped"),
    ("csrc/k.cu", ("  int lane = threadIdx.x % 32;",), ("  int lane = threadIdx.x % kWarpSize;",), "warp size"),
    ("csrc/k.cuh", ("    Traits::Load(s).Run(x);",), ("    typename Traits::Load(s).Run(x);",), "hipcc-strict"),
    ("csrc/k.cuh", (), ("#endif  // USE_ROCM",), "preprocessor branch alone"),
    ("pkg/attn.py", ("    use_fused = True",), ("    use_fused = not torch.version.hip",), "Python switch"),
    ("setup.py", (), ("if IS_HIP_EXTENSION:", "    extra = ['-fgpu-rdc']"), "build-file branch"),
    ("docs/install.md", ("pip install x",), ("pip install x-rocm",), "docs"),
    ("csrc/k.cu", (), ("// Modified by the ROCm port team, 2024.",), "licence"),
    ("pkg/model.py", ("    return relationship(x)",), ("    return relationship(x, y)",), "no ROCm word"),
])
def test_families_of_missed_hunks(path: str, removed: tuple[str, ...], added: tuple[str, ...], expected: str) -> None:
    hunk = Hunk(path, Block(10, 10 + max(len(removed) - 1, 0), not removed, removed, added), kind_of(path))
    assert expected in port_diff_families.family(hunk)


def test_named_hunks_say_rocm_in_their_new_lines() -> None:
    assert Hunk("a.cu", Block(1, 1, True, (), ("#ifdef USE_ROCM",)), "cuda").named
    assert Hunk("a.py", Block(1, 1, True, (), ("if is_hip():",)), "python").named
    assert not Hunk("a.py", Block(1, 1, True, (), ("ownership = chip.relationship",)), "python").named
    assert not Hunk("a.py", Block(1, 1, False, ("x = amd_gpu",), ("y = 1",)), "python").named  # only new lines count
