"""Hardening, round two: what an untrusted repository may not make migrate do (issue 20: D2, D3, D6, D8, D9,
D10, D11, D15, D23). Real git and submodules, real symlinks, real signals."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import signal
import stat
import threading
import unicodedata
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings
from migrate.port.verify import _flags_from_compile_db
from migrate.report import render
from migrate.escape import document, in_json, visible
from migrate.ruleset import load
from migrate.scan import scan
from migrate.writer import default_mode

from conftest import GIT_ENV, USER_RULE, git, init_repo

CUDA_CALL = "void f(float** p) { cudaMalloc(p, 4); }\n"
SECRET = "SECRET-7f3a9c-outside-the-repository"


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def migrate(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def outside_dir(tmp_path: Path) -> Path:
    """A directory beside the repository holding a file the repository must never get at."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.cu").write_text(CUDA_CALL)
    (outside / "secret.yaml").write_text(f"rules:\n  - id: {SECRET}\n")
    (outside / "secret.h").write_text(f"{SECRET} here\n")
    return outside


# --- D2: git never looks into a submodule, whose own config may name filters ---------------------------------


def submodule_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a submodule whose own config runs a `clean` filter (touching MARKER) on its .cu files,
    and a .gitmodules that asks git to look into it (`ignore = none` wins over diff.ignoreSubmodules)."""
    library = tmp_path / "library"
    library.mkdir()
    (library / "s.cu").write_text(CUDA_CALL)
    (library / ".gitattributes").write_text("*.cu filter=evil\n")
    init_repo(library)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    init_repo(repo)
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub")
    git(repo, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
    git(repo, "add", ".gitmodules")
    git(repo, "commit", "-qm", "submodule")
    marker = tmp_path / "MARKER"
    git(repo / "sub", "config", "filter.evil.clean", f"touch {marker}; cat")
    return repo, marker


def restamp(path: Path) -> None:
    """Change PATH's mtime, not its content: git must read the file again (through its clean filter) to tell."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 7_000_000_000))


@pytest.mark.parametrize("command", ["scan", "check", "apply"])
def test_a_submodules_filter_never_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    repo, marker = submodule_repo(tmp_path)
    (repo / "a.cu").write_text(CUDA_CALL + "void g() { cudaFree(0); }\n")
    git(repo, "commit", "-qam", "more")
    restamp(repo / "sub" / "s.cu")
    git(repo / "sub", "status", "--porcelain")  # the filter is real: git in the submodule runs it
    assert marker.exists()
    marker.unlink()
    restamp(repo / "sub" / "s.cu")
    monkeypatch.chdir(repo)
    args = {"scan": ["scan", ".", "--diff-base", "HEAD~1", "--no-cache"],
            "check": ["check", "--diff-base", "HEAD~1", "--no-cache", "--fail-on", "blocker"],
            "apply": ["apply", ".", "--engine", "builtin", "--strategy", "fork"]}[command]
    result = migrate(*args)
    assert result.exit_code == 0, result.output
    assert not marker.exists()


# --- D3: a repository's rule-dirs stay inside it; --rule-dir names any folder -----------------------------------


@pytest.mark.parametrize("exists", [True, False])
def test_rule_dirs_outside_the_repository_are_refused_alike(tmp_path: Path, exists: bool) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    name = "../outside" if exists else "../nothing-here"
    if exists:
        outside_dir(tmp_path)
    (repo / ".migrate.toml").write_text(f'rule-dirs = ["{name}"]\n')
    result = migrate("scan", str(repo), "--no-cache")
    assert result.exit_code == 2
    assert result.stderr == (f"migrate: error: .migrate.toml: rule-dirs: '{name}' is not a folder inside the "
                             "repository (name others with --rule-dir)\n")


def test_rule_dirs_through_a_symlink_are_refused(tmp_path: Path) -> None:
    outside = outside_dir(tmp_path)
    repo = tmp_path / "repo"
    (repo / "rules").mkdir(parents=True)
    (repo / "linked").symlink_to(outside, target_is_directory=True)
    (repo / "rules" / "team.yaml").symlink_to(outside / "secret.yaml")
    for name, reason in (("linked", "is not a folder inside the repository"),
                         ("rules", "holds a rule file that leads out of the repository")):
        (repo / ".migrate.toml").write_text(f'rule-dirs = ["{name}"]\n')
        result = migrate("scan", str(repo), "--no-cache")
        assert result.exit_code == 2 and reason in result.stderr and SECRET not in result.output


def test_rule_dir_on_the_command_line_may_be_anywhere(tmp_path: Path) -> None:
    team = tmp_path / "team-rules"
    team.mkdir()
    (team / "team.yaml").write_text(USER_RULE.format(severity="medium"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    result = migrate("scan", str(repo), "--no-cache", "--format", "json", "--rule-dir", str(team))
    assert result.exit_code == 0, result.output
    assert "team-gpu-wrappers" in {f["rule"] for f in json.loads(result.stdout)["findings"]}


# --- D6: translate --in-place never writes through a symlinked directory on the way ------------------------------


def linked_tree(tmp_path: Path) -> tuple[Path, Path]:
    outside = outside_dir(tmp_path)
    (outside / "sub").mkdir()
    (outside / "sub" / "y.cu").write_text(CUDA_CALL)
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "vdir").symlink_to(outside, target_is_directory=True)
    return repo, outside


@pytest.mark.parametrize("cwd, names", [(".", ["vdir/x.cu"]), ("src", ["../vdir/sub/y.cu"]),
                                        (".", ["vdir/x.cu", "vdir/sub/y.cu"])])
def test_in_place_never_writes_through_a_symlinked_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cwd: str, names: list[str]
) -> None:
    repo, outside = linked_tree(tmp_path)
    monkeypatch.chdir(repo / cwd)
    result = migrate("translate", *names, "--in-place", "--engine", "builtin")
    assert result.exit_code == 2
    assert result.stderr.endswith("vdir is a symlinked directory: not written through (name the real path)\n")
    assert (outside / "x.cu").read_text() == CUDA_CALL and (outside / "sub" / "y.cu").read_text() == CUDA_CALL


def test_in_place_still_writes_a_real_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, _ = linked_tree(tmp_path)
    (repo / "src" / "k.cu").write_text(CUDA_CALL)
    monkeypatch.chdir(repo)
    result = migrate("translate", "src/k.cu", "--in-place", "--engine", "builtin")
    assert result.exit_code == 0, result.output
    assert "hipMalloc" in (repo / "src" / "k.cu").read_text()


# --- D8: verify passes only include paths inside the tree (or the toolchain's) to hipcc ---------------------------


def test_compile_commands_include_paths_stay_inside(tmp_path: Path) -> None:
    outside = outside_dir(tmp_path)
    root = tmp_path / "proj"
    (root / "include").mkdir(parents=True)
    (root / "include" / "pre.h").write_text("#pragma once\n")
    (root / "inc").symlink_to(outside, target_is_directory=True)
    toolchain = (tmp_path / "rocm" / "include").resolve()
    command = (f"nvcc -include {outside / 'secret.h'} -include{outside / 'secret.h'} -I{outside} -isystem ../outside "
               f"-Iinc -include inc/secret.h -include-pch x.pch -include include/pre.h -isystem {toolchain} -DX=1 "
               "-c a.cu")
    (root / "compile_commands.json").write_text(json.dumps([{"directory": str(root), "file": "a.cu",
                                                              "command": command}]))
    tree = tmp_path / "copy"
    assert _flags_from_compile_db(root, tree, (toolchain,)) == {
        "a.cu": [f"-include{tree / 'include' / 'pre.h'}", f"-isystem{toolchain}", "-DX=1"]}


def test_a_compile_database_outside_the_tree_is_not_read(tmp_path: Path) -> None:
    outside = outside_dir(tmp_path)
    (outside / "db.json").write_text(json.dumps([{"directory": str(tmp_path), "file": "a.cu", "command": "cc -DX"}]))
    root = tmp_path / "proj"
    root.mkdir()
    (root / "compile_commands.json").symlink_to(outside / "db.json")
    assert _flags_from_compile_db(root, tmp_path / "copy") == {}


# --- D9: .migrate.toml and .migrate-baseline.json are never read through a symlink out of the tree -------------


@pytest.mark.parametrize("target_exists", [True, False])
def test_config_through_a_symlink_out_of_the_tree_is_refused(tmp_path: Path, target_exists: bool) -> None:
    outside = outside_dir(tmp_path)
    if target_exists:
        (outside / "m.toml").write_text(f'fail-on = "low"\n{SECRET.replace("-", "_")} = 1\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    (repo / ".migrate.toml").symlink_to(outside / "m.toml")
    result = migrate("scan", str(repo), "--no-cache")
    assert result.exit_code == 2
    assert result.stderr == "migrate: error: .migrate.toml: a symlink that leads out of the repository; not read\n"


def test_pyproject_through_a_symlink_out_of_the_tree_gives_no_settings(tmp_path: Path) -> None:
    outside = outside_dir(tmp_path)
    (outside / "pyproject.toml").write_text('[tool.migrate]\nfail-on = "low"\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    (repo / "pyproject.toml").symlink_to(outside / "pyproject.toml")
    assert migrate("scan", str(repo), "--no-cache").exit_code == 0  # fail-on low would make it 1


def test_baseline_through_a_symlink_out_of_the_tree_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = outside_dir(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    monkeypatch.chdir(init_repo(repo))
    assert migrate("baseline", str(outside)).exit_code == 0  # a baseline that accepts the finding, outside
    (repo / ".migrate-baseline.json").symlink_to(outside / ".migrate-baseline.json")
    result = migrate("check", "--no-cache", "--fail-on", "low")
    assert result.exit_code == 2
    assert result.stderr == ("migrate: error: .migrate-baseline.json: a symlink that leads out of the repository; "
                             "not read\n")


# --- D10: a report written over a symlink gets a file's mode, not the link's 0777 ------------------------------


@pytest.mark.parametrize("command", ["scan", "baseline"])
def test_replacing_a_symlink_leaves_a_private_enough_file(tmp_path: Path, command: str) -> None:
    outside = outside_dir(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.cu").write_text(CUDA_CALL)
    target = repo / ("report.txt" if command == "scan" else ".migrate-baseline.json")
    target.symlink_to(outside / "x.cu")
    args = ["scan", str(repo), "--no-cache", "-o", str(target)] if command == "scan" else ["baseline", str(repo)]
    assert migrate(*args).exit_code == 0
    info = target.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == default_mode()
    assert not info.st_mode & stat.S_IWOTH and (outside / "x.cu").read_text() == CUDA_CALL


# --- D11: zero-width and other format characters in names are escaped in every format --------------------------

INVISIBLE = {"a\u200b.cu": "a\\u200b.cu", "b\ufeff.cu": "b\\ufeff.cu", "c\u2028.cu": "c\\u2028.cu",
             "d\U000e0041.cu": "d\\U000e0041.cu", "e\u00ad.cu": "e\\xad.cu"}


@pytest.fixture
def invisible_repo(tmp_path: Path) -> Path:
    for name in INVISIBLE:
        (tmp_path / name).write_text(CUDA_CALL)
    return init_repo(tmp_path)


@pytest.mark.parametrize("fmt", ["terminal", "md", "html"])
def test_invisible_characters_are_escaped_in_reports(invisible_repo: Path, fmt: str) -> None:
    text = render(scan(invisible_repo, Settings(jobs=1)), fmt)
    for raw, shown in INVISIBLE.items():
        assert raw not in text and shown in text


def test_invisible_characters_are_json_escapes_that_read_back(invisible_repo: Path) -> None:
    result = scan(invisible_repo, Settings(jobs=1))
    text = render(result, "json")
    assert not any(raw in text for raw in INVISIBLE) and "a\\u200b.cu" in text and "d\\udb40\\udc41.cu" in text
    assert {f["path"] for f in json.loads(text)["findings"]} == set(INVISIBLE)
    assert not any(raw in render(result, "sarif") for raw in INVISIBLE)  # its URIs are percent-encoded


def test_invisible_characters_are_escaped_by_check(invisible_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(invisible_repo)
    result = migrate("check", "--no-cache", "--fail-on", "low")
    assert result.exit_code == 1
    for raw, shown in INVISIBLE.items():
        assert raw not in result.stdout and f"{shown}:1:21: cuda-runtime-api" in result.stdout


def test_visible_leaves_printable_ascii_as_it_is_and_escapes_every_other_ascii_character() -> None:
    """Printable ASCII skips the pattern; every ASCII character, alone and in a line, is what the pattern makes."""
    from migrate import escape

    for code in range(0x80):
        for text in (chr(code), f"a.cu:1:2: rule {chr(code)} message"):
            assert visible(text) == escape._CONTROL.sub(escape._escaped, text)
            assert (visible(text) == text) == (0x20 <= code < 0x7F)


def test_every_format_and_separator_character_is_escaped() -> None:
    invisible = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp")]
    text = "".join(invisible)
    assert not re.search("[^\\\\a-fxuU0-9]", visible(text)) and not re.search("[^\\\\a-fxuU0-9]", document(text))
    assert json.loads(in_json(json.dumps(text, ensure_ascii=False))) == text and in_json(json.dumps(text)).isascii()


# --- D15: Ctrl-C while the rules load is an interrupt, never a broken rule ----------------------------------------


def slow_query_rules(tmp_path: Path) -> Path:
    """A rule whose tree-sitter query takes a good part of a second to compile, with a #match? regex per pattern (which
    tree-sitter compiles by calling back into Python: where a Ctrl-C used to turn into a QueryError)."""
    token = uuid.uuid4().hex  # a query the process has not compiled (and cached) before
    patterns = "\n".join(f'((call_expression function: (identifier) @hit) (#match? @hit "^n{i}_{token}$"))'
                         for i in range(300))
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "slow.yaml").write_text(
        "rules:\n  - id: slow-query\n    title: t\n    category: other\n    languages: [cuda]\n    severity: low\n"
        "    message: m\n    match:\n      matcher: cuda-query\n      query: |\n"
        + "".join(f"        {line}\n" for line in patterns.splitlines()))
    return rules


@pytest.mark.slow
def test_ctrl_c_while_rules_load_is_an_interrupt(tmp_path: Path) -> None:
    rules = slow_query_rules(tmp_path)
    # Ctrl-C as a terminal session has it (Python's handler, not blocked), whatever an earlier test left
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))  # reading the rule takes less
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            load([rules])  # before: RuleFileError "slow-query: bad tree-sitter query: ... regular expression error"
    finally:
        timer.cancel()
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        signal.signal(signal.SIGINT, handler)


# --- D23: the HTML report's own script runs by its hash; no other inline script does ----------------------------


def test_html_policy_allows_the_reports_script_by_hash(invisible_repo: Path) -> None:
    page = render(scan(invisible_repo, Settings(jobs=1)), "html")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None and "'unsafe-inline'" not in policy.group(1).split("script-src", 1)[1].split(";")[0]
    (script,) = re.findall(r"<script>(.*?)</script>", page, re.S)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in policy.group(1)
