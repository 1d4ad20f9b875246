"""Fleet sources (issue 23): the list file, its YAML form and a folder of checkouts -> jobs; bad entries are one
line and exit 2."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.errors import InputError
from migrate.fleet.model import Job, redacted
from migrate.fleet.sources import parse_size, read_sources

DEFAULTS = Job(source="", targets=("gfx942",), timeout=900.0, memory=4 << 30)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_list_file_local_paths_urls_refs_and_comments(tmp_path: Path) -> None:
    (tmp_path / "checkouts" / "alpha").mkdir(parents=True)
    listed = write(tmp_path / "repos.txt", (
        "# the lab's repositories\n"
        "checkouts/alpha\n"
        "\n"
        "https://example.org/team/beta.git v1.2   # pinned\n"
        "git@example.org:team/gamma.git\n"
        "file:///srv/git/delta\n"
    ))
    jobs = read_sources(listed, DEFAULTS).jobs
    assert [(j.name, j.source, j.ref, j.remote) for j in jobs] == [
        ("alpha", str(tmp_path / "checkouts" / "alpha"), "", False),
        ("beta", "https://example.org/team/beta.git", "v1.2", True),
        ("gamma", "git@example.org:team/gamma.git", "", True),
        ("delta", "file:///srv/git/delta", "", True),
    ]
    assert all(j.targets == ("gfx942",) and j.timeout == 900.0 for j in jobs)
    assert len({j.key for j in jobs}) == 4 and len({j.slug for j in jobs}) == 4


def test_a_folder_of_checkouts_is_every_subdirectory_but_hidden_ones(tmp_path: Path) -> None:
    for name in ("zeta", "alpha", ".cache"):
        (tmp_path / name).mkdir()
    (tmp_path / "notes.txt").write_text("not a checkout")
    jobs = read_sources(tmp_path, DEFAULTS).jobs
    assert [j.name for j in jobs] == ["alpha", "zeta"] and not any(j.remote for j in jobs)


def test_yaml_form_with_defaults_and_per_repository_options(tmp_path: Path) -> None:
    listed = write(tmp_path / "fleet.yaml", """\
defaults:
  targets: [gfx90a, gfx942]
  timeout: 300
repositories:
  - https://example.org/a.git
  - source: https://example.org/b.git
    ref: 0123abcd
    name: bee
    targets: gfx1100
    memory: 512MiB
    timeout: 20
""")
    a, b = read_sources(listed, DEFAULTS).jobs
    assert (a.targets, a.timeout, a.memory) == (("gfx90a", "gfx942"), 300.0, 4 << 30)
    assert (b.name, b.ref, b.targets, b.timeout, b.memory) == ("bee", "0123abcd", ("gfx1100",), 20.0, 512 << 20)
    assert a.key != replace(a, targets=("gfx942",)).key  # targets change the results: another key
    assert a.key == replace(a, timeout=5.0, memory=1).key  # limits do not


def test_repeated_entries_are_kept_once(tmp_path: Path) -> None:
    listed = write(tmp_path / "repos.txt", "https://example.org/a.git\nhttps://example.org/b.git\nhttps://example.org/a.git\n")
    found = read_sources(listed, DEFAULTS)
    assert [j.name for j in found.jobs] == ["a", "b"] and found.duplicates == 1


@pytest.mark.parametrize(("text", "message"), [
    ("ext::sh\n", "git URLs must use one of"),
    ("ftp://example.org/a.git\n", "git URLs must use one of"),
    ("https://example.org/a.git --upload-pack=touch\n", "not a branch, tag or commit name"),
    ("https://example.org/a.git main extra\n", "expected SOURCE [REF]"),
    ("some/dir v1\n", "a ref is for git URLs"),
    ("# nothing\n\n", "lists no repositories"),
])
def test_bad_lines_are_one_line_errors_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    listed = write(tmp_path / "repos.txt", text)
    with pytest.raises(InputError, match=None) as caught:
        read_sources(listed, DEFAULTS)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("text", "message"), [
    ("repositories: {a: 1}\n", "expected a mapping with a 'repositories' list"),
    ("repositories: [{ref: v1}]\n", "repositories[1]: expected a source string"),
    ("repositories: [{source: 'https://x.org/a.git', colour: red}]\n", "unknown key colour"),
    ("repositories: [{source: 'https://x.org/a.git', targets: [gfx000]}]\n", "unknown target gfx000"),
    ("repositories: [{source: 'https://x.org/a.git', timeout: -1}]\n", "timeout: expected seconds"),
    ("defaults: {memory: lots}\nrepositories: ['https://x.org/a.git']\n", "cannot read 'lots' as a size"),
    ("repositories: [\n", "is not valid YAML"),
])
def test_bad_yaml_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    listed = write(tmp_path / "repos.yaml", text)
    with pytest.raises(InputError) as caught:
        read_sources(listed, DEFAULTS)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_command_refuses_bad_sources_with_exit_2(tmp_path: Path) -> None:
    listed = write(tmp_path / "repos.txt", "ext::sh\n")
    done = CliRunner().invoke(cli, ["fleet", str(listed), "--out", str(tmp_path / "out")])
    assert done.exit_code == 2 and done.output.count("\n") == 1 and "git URLs must use one of" in done.output
    both = CliRunner().invoke(cli, ["fleet", str(tmp_path), "--out", str(tmp_path / "o"), "--workers", "2",
                                    "--scheduler", "tcp://127.0.0.1:1"])
    assert both.exit_code == 2 and "--workers is for a local cluster" in both.output
    size = CliRunner().invoke(cli, ["fleet", str(tmp_path), "--out", str(tmp_path / "o"), "--memory", "much"])
    assert size.exit_code == 2 and "cannot read 'much' as a size" in size.output


@pytest.mark.parametrize(("text", "size"), [("4GiB", 4 << 30), ("512M", 512 << 20), ("1.5G", 3 << 29), ("1000", 1000)])
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_reports_never_show_a_urls_token() -> None:
    assert redacted("https://user:s3cret@example.org/a.git") == "https://***@example.org/a.git"
    assert redacted("https://ghp_token@example.org/a.git") == "https://***@example.org/a.git"
    assert redacted("ssh://git@example.org/a.git") == "ssh://git@example.org/a.git"
    job = replace(DEFAULTS, source="https://user:s3cret@example.org/a.git", ref="v1", remote=True)
    assert "s3cret" not in job.identity and job.identity == "https://***@example.org/a.git v1"
