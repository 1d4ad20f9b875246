"""docs/guide.md's snippets, taken from the page itself: the pre-commit config through the real `pre-commit`,
the CI jobs' commands (their SARIF against the schema), the baseline commands and every `[tool.migrate]` example."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from migrate import config
from migrate.cli import cli
from migrate.config import Settings, load_settings
from migrate.scan import ruleset_for

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from conftest import EXPECTED, GIT_ENV, KERNEL, ROOT, git, init_repo, sarif_schema
from test_check import NEW_CALL, _hook_repo, _pre_commit

GUIDE = ROOT / "docs" / "guide.md"
README = ROOT / "README.md"
_SNIPPET = re.compile(r"<!-- test: ([a-z-]+) -->\n```[a-z]*\n(.*?)\n```", re.S)


def snippets(name: str) -> list[str]:
    """The code blocks of docs/guide.md marked `<!-- test: NAME -->`, in page order."""
    found = [body for marker, body in _SNIPPET.findall(GUIDE.read_text(encoding="utf-8")) if marker == name]
    assert found, f"docs/guide.md has no snippet marked {name}"
    return found


def run_migrate(command: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `migrate ...` line of a CI job, run in CWD as the job would."""
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(cli, shlex.split(command)[1:])
    assert result.exit_code == 0, (command, result.output)


def job_commands(lines: list[str]) -> list[str]:
    assert any(line.startswith("pip install ") for line in lines)  # the job installs the tool first
    return [line for line in lines if line.startswith("migrate ")]


def test_every_config_key_has_one_example_that_loads(tmp_path: Path) -> None:
    defaults = Settings()
    shown: list[str] = []
    for index, example in enumerate(snippets("config")):
        repo = tmp_path / f"repo{index}"
        repo.mkdir()
        (repo / "pyproject.toml").write_text(example + "\n", encoding="utf-8")
        table = tomllib.loads(example)["tool"]["migrate"]
        for key in table:
            shown.append(key)
            if key == "rule-dirs":
                for directory in table[key]:
                    (repo / directory).mkdir(parents=True)
        settings = load_settings(repo, {"no_cache": True})
        assert settings.config_file == str(repo / "pyproject.toml")
        changed = [f.name for f in fields(Settings) if getattr(settings, f.name) != getattr(defaults, f.name)]
        assert set(changed) == {config._KEYS[k][0] for k in table} | {"config_file"}, example
        ruleset_for(settings)  # rule ids named in `disable` or `severity` must exist
    assert sorted(shown) == sorted(config._KEYS)  # every key, one example each


def test_github_actions_job_uploads_valid_sarif(make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    (workflow,) = snippets("github-actions")
    job = yaml.safe_load(workflow)["jobs"]["rocm-scan"]
    assert job["permissions"]["security-events"] == "write"
    steps = job["steps"]
    repo = make_repo("cuda-extension")
    for command in job_commands([s["run"] for s in steps if "run" in s]):
        run_migrate(command, repo, monkeypatch)
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    data = json.loads((repo / upload["with"]["sarif_file"]).read_text(encoding="utf-8"))
    jsonschema.validate(data, sarif_schema())
    results = data["runs"][0]["results"]
    golden = json.loads((EXPECTED / "cuda-extension.json").read_text(encoding="utf-8"))
    assert len(results) == golden["summary"]["findings"]  # every finding but the guarded ones, as the golden JSON
    assert all(r["partialFingerprints"]["rocmMigrate/v1"] for r in results)
    assert len({r["partialFingerprints"]["rocmMigrate/v1"] for r in results}) == len(results)


def test_gitlab_job_writes_the_markdown_report(make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    (pipeline,) = snippets("gitlab-ci")
    job = yaml.safe_load(pipeline)["rocm-report"]
    repo = make_repo("cuda-extension")
    for command in job_commands(job["script"]):
        run_migrate(command, repo, monkeypatch)
    (artifact,) = job["artifacts"]["paths"]
    assert (repo / artifact).read_text(encoding="utf-8").startswith("## ROCm porting report: hard\n")


def git_env(tmp_path: Path) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)  # the venv's migrate and pre-commit
    return {
        **os.environ, **GIT_ENV, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "PRE_COMMIT_HOME": str(tmp_path / "pc-home"), "GIT_CONFIG_GLOBAL": os.devnull,
    }


@pytest.mark.slow
def test_pre_commit_config_and_baseline_through_real_pre_commit(tmp_path: Path) -> None:
    pre_commit = _pre_commit()
    hook_repo = _hook_repo(tmp_path)
    (snippet,) = snippets("pre-commit-config")
    local = re.sub(r"(?m)^(\s*- repo:) .*$", rf"\1 {hook_repo}", snippet)
    local = re.sub(r"(?m)^(\s*rev:) .*$", rf"\1 {git(hook_repo, 'rev-parse', 'HEAD').strip()}", local)
    assert yaml.safe_load(local)["repos"][0]["hooks"] == [{"id": "migrate"}] and local != snippet
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(local + "\n", encoding="utf-8")
    (project / "clean.cu").write_text("int main() { return 0; }\n")
    (project / "old.cu").write_text(KERNEL)  # a high finding the team accepts
    init_repo(project)
    env = git_env(tmp_path)

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600)

    blocked = run(pre_commit, "run", "--all-files")
    assert blocked.returncode == 1 and "old.cu:2:3: cudnn-api" in blocked.stdout, blocked.stdout + blocked.stderr
    (baseline,) = snippets("baseline")
    done = run("bash", "-euc", baseline)
    assert done.returncode == 0 and "recorded" in done.stdout, done.stdout + done.stderr
    assert git(project, "ls-files", ".migrate-baseline.json").strip() == ".migrate-baseline.json"

    passed = run(pre_commit, "run", "--all-files")
    assert passed.returncode == 0 and "rocm-migrate check" in passed.stdout, passed.stdout + passed.stderr
    assert run(pre_commit, "install").returncode == 0
    (project / "new.cu").write_text(NEW_CALL)
    git(project, "add", "new.cu")
    commit = run("git", "commit", "-m", "a new CUDA-only call")
    assert commit.returncode == 1, commit.stdout + commit.stderr
    output = commit.stdout + commit.stderr  # git shows the hook's output on stderr
    assert "new.cu:2:3: cudnn-api cudnnCreate" in output and "old.cu:" not in output
    assert git(project, "log", "--format=%s") == "rocm-migrate baseline\ninitial\n"


def test_readme_leads_with_the_two_commands_and_links_the_guide() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# rocm-migrate" and lines[2] == "```bash" and lines[5] == "```"
    assert lines[3].startswith("bash scripts/setup.sh && .venv/bin/migrate scan ")
    assert lines[4] == "bash scripts/setup.sh --test && .venv/bin/python -m pytest -q"
    assert "docs/guide.md" in "\n".join(lines[:15]) and "docs/performance.md" in "\n".join(lines[:40])
