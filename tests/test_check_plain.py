"""A plain `migrate check` (file names, --no-cache, --fail-on, --cache-dir) runs without click: the same arguments,
output and exit codes as through click, in real processes and git repos."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from migrate.commands.check import check
from migrate.commands.check_run import plain

from conftest import init_repo

ACCEPTED = [
    [], ["a.cu"], ["a.cu", "b.cu", "missing.cu"], ["--no-cache", "a.cu"], ["a.cu", "--fail-on", "low"],
    ["--fail-on=medium"], ["--cache-dir", "cache", "a.cu"], ["--cache-dir=cache"], ["dir"], ["x=y.cu"],
    ["--fail-on", "info", "--no-cache", "--cache-dir", "new", "a.cu"],
]
CLICK_REFUSES = [
    ["--fail-on", "severe"], ["--fail-on"], ["--fail-on="], ["--cache-dir", "a.cu"], ["--no-cache=1"],
    ["--cache-dir"], ["--bogus"], ["-x"],
]
UNREADABLE = [["locked.cu"], ["--cache-dir", "locked"]]  # click refuses them, but not to root, who reads anything
CLICK_PARSES = [  # valid, but left to click: help, `--`, other options, repeats, a dash, values like options
    ["--help"], ["-h"], ["--", "-a.cu"], ["--target", "gfx90a"], ["--baseline", "b.json"], ["--no-cache", "--no-cache"],
    ["--fail-on", "low", "--fail-on", "high"], ["-"], ["--cache-dir", "-c"], [""],
]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("a.cu", "b.cu", "locked.cu"):
        (tmp_path / name).write_text("__global__ void k() {}\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked.cu").chmod(0)
    (tmp_path / "locked").chmod(0)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    (tmp_path / "locked").chmod(0o700)


def _click_params(args: list[str]) -> dict[str, Any]:
    with check.make_context("check", list(args)) as ctx:
        return ctx.params


@pytest.mark.parametrize("args", ACCEPTED)
def test_plain_arguments_are_those_click_makes(tree: Path, args: list[str]) -> None:
    params = _click_params(args)
    files, options = plain(args) or pytest.fail("refused")
    assert files == params.pop("files")
    assert options == {key: value for key, value in params.items() if value not in (None, ())}


@pytest.mark.parametrize("args", CLICK_REFUSES + (UNREADABLE if os.geteuid() else []))
def test_what_click_refuses_is_left_to_click(tree: Path, args: list[str]) -> None:
    with pytest.raises(click.UsageError):
        _click_params(args)
    assert plain(args) is None


@pytest.mark.parametrize("args", CLICK_PARSES)
def test_help_and_rarer_forms_are_left_to_click(tree: Path, args: list[str]) -> None:
    assert plain(args) is None


def test_unreadable_paths_are_tested_as_click_tests_them(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """click.Path asks os.access; so does the plain path (for root, who reads anything, a denial is staged)."""
    monkeypatch.setattr(os, "access", lambda path, mode: "locked" not in str(path))
    for args in UNREADABLE:
        with pytest.raises(click.UsageError):
            _click_params(args)
        assert plain(args) is None


ENTRY = """
import os, sys
entry, sys.argv = sys.argv[1], ["migrate", *sys.argv[2:]]
def loaded():
    print("click" in sys.modules, file=sys.stderr, flush=True)
quick_exit = os._exit  # the plain path ends the process without Python's clean-up (no finally)
os._exit = lambda code: (loaded(), quick_exit(code))
if entry == "plain":
    from migrate.__main__ import main
else:
    from migrate.cli import main
try:
    main()
finally:
    loaded()
"""


def _migrate(entry: str, repo: Path, *args: str) -> tuple[int, str, str, bool]:
    done = subprocess.run([sys.executable, "-c", ENTRY, entry, *args], cwd=repo, capture_output=True, text=True)
    *err, clicked = done.stderr.splitlines(keepends=True)
    return done.returncode, done.stdout, "".join(err), clicked.strip() == "True"


@pytest.mark.parametrize("args", [
    ["check", "kernel.cu", "clean.cu"], ["check", "--fail-on", "low", "kernel.cu"], ["check", "clean.cu"],
    ["check"], ["check", "--no-cache", "missing.cu"], ["check", "--cache-dir", "kernel.cu"], ["check", "--bogus"],
    ["check", "--help"], ["check", "--fail-on", "nope"], ["check", "--cache-dir=cache", "kernel.cu"],
])
def test_the_console_script_says_what_click_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 args: list[str]) -> None:
    """Byte for byte and the exit code; click is imported only for what the plain path leaves to it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "kernel.cu").write_text("void f(float* p) {\n  cudnnHandle_t h;\n  cudaMalloc(&p, 4);\n}\n")
    (repo / "clean.cu").write_text("int add(int a, int b) { return a + b; }\n")
    init_repo(repo)
    *through_click, clicked = _migrate("click", repo, *args)
    *plain_run, plain_clicked = _migrate("plain", repo, *args)
    assert plain_run == through_click
    assert clicked
    monkeypatch.chdir(repo)
    assert plain_clicked == (plain(args[1:]) is None)


def test_an_input_error_is_one_line_and_exit_2_without_click(tmp_path: Path) -> None:
    """A failure inside the plain path is said as the click group says it: a bad config value, one line, exit 2."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".migrate.toml").write_text("fail-on = 'extreme'\n")
    init_repo(repo)
    through_click = _migrate("click", repo, "check")
    plain_run = _migrate("plain", repo, "check")
    assert plain_run[:3] == through_click[:3]
    assert plain_run[1] == "" and plain_run[2].startswith("migrate: error: ") and plain_run[0] == 2
    assert plain_run[3] is False


def test_with_stdout_closed_both_ways_say_the_same(tmp_path: Path) -> None:
    """`migrate check FILE >&-`: no stdout at all; the summary on stderr and the exit code as through click."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "kernel.cu").write_text("void f(float* p) {\n  cudnnHandle_t h;\n  cudaMalloc(&p, 4);\n}\n")
    init_repo(repo)
    said = []
    for entry in ("click", "plain"):
        done = subprocess.run([sys.executable, "-c", ENTRY, entry, "check", "--no-cache", "kernel.cu"], cwd=repo,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: os.close(1))
        said.append((done.returncode, done.stderr.splitlines()[:-1]))
    assert said[0] == said[1]
    assert said[1][0] == 1 and said[1][1] == ["migrate: 1 new finding(s) at or above high"]
