"""Configuration: [tool.migrate] / .migrate.toml, precedence under command-line options, one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.config import Settings, check_settings, default_cache_dir, load_settings
from migrate.errors import ConfigError
from migrate.model import Severity

from conftest import KERNEL, USER_RULE


@pytest.fixture(autouse=True)
def _cache_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def scan_rules(repo: Path, *args: str) -> tuple[int, list[tuple[str, str, int]]]:
    result = CliRunner().invoke(cli, ["scan", str(repo), "--format", "json", *args])
    if result.exit_code not in (0, 1):
        return result.exit_code, []
    data = json.loads(result.stdout)
    return result.exit_code, [(f["rule"], f["severity"], f["line"]) for f in data["findings"]]


def test_defaults_without_configuration(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, {})
    assert settings.targets == ("gfx942",)
    assert settings.fail_on is None and settings.config_file is None
    assert settings.cache_dir == str(default_cache_dir())
    assert default_cache_dir().parent == Path(str(settings.cache_dir)).parent


def test_pyproject_table_is_read(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.migrate]\ntargets = ["gfx90a", "gfx1100"]\nexclude = ["legacy/**"]\n'
        'include = ["src/**"]\ndisable = ["cuda-driver-api"]\nfail-on = "medium"\nrule-dirs = ["rules"]\n'
        'max-file-size = 1000\njobs = 1\nbaseline = "accepted.json"\n\n[tool.migrate.severity]\ncudnn-api = "blocker"\n'
    )
    settings = load_settings(tmp_path, {})
    assert settings.targets == ("gfx90a", "gfx1100")
    assert settings.exclude == ("legacy/**",) and settings.include == ("src/**",)
    assert settings.disabled_rules == frozenset({"cuda-driver-api"})
    assert settings.severity_overrides == (("cudnn-api", Severity.BLOCKER),)
    assert settings.fail_on is Severity.MEDIUM
    assert settings.extra_rule_dirs == (str((tmp_path / "rules").resolve()),)
    assert (settings.max_file_size, settings.jobs) == (1000, 1)
    assert settings.baseline == str(tmp_path / "accepted.json")
    assert settings.config_file == str(tmp_path / "pyproject.toml")


def test_migrate_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\ntargets = ["gfx90a"]\n')
    (tmp_path / ".migrate.toml").write_text('targets = "gfx1100, gfx942"\n')
    assert load_settings(tmp_path, {}).targets == ("gfx1100", "gfx942")


def test_pyproject_without_our_table_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.black]\nline-length = 100\n')
    assert load_settings(tmp_path, {}) == load_settings(tmp_path / "missing", {})


def test_command_line_overrides_configuration(tmp_path: Path) -> None:
    (tmp_path / ".migrate.toml").write_text('targets = ["gfx90a"]\nfail-on = "low"\njobs = 3\n')
    options = {"targets": ("gfx1100",), "fail_on": "blocker", "jobs": None, "no_cache": True, "cache_dir": None}
    settings = load_settings(tmp_path, options)
    assert settings.targets == ("gfx1100",)
    assert settings.fail_on is Severity.BLOCKER
    assert settings.jobs == 3  # not given on the command line: the configuration stands
    assert settings.cache_dir is None


def test_cache_dir_option(tmp_path: Path) -> None:
    assert load_settings(tmp_path, {"cache_dir": tmp_path / "c"}).cache_dir == str(tmp_path / "c")


def test_check_defaults_to_high_and_the_repository_baseline(tmp_path: Path) -> None:
    assert check_settings(tmp_path, {}).fail_on is Severity.HIGH
    assert check_settings(tmp_path, {}).baseline is None
    (tmp_path / ".migrate-baseline.json").write_text("{}")
    assert check_settings(tmp_path, {}).baseline == str(tmp_path / ".migrate-baseline.json")
    assert check_settings(tmp_path, {"fail_on": "low"}).fail_on is Severity.LOW


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[tool.migrate]\ntargest = ["gfx90a"]\n', "pyproject.toml: [tool.migrate] unknown key 'targest'"),
        ('[tool.migrate]\nfail-on = "hgh"\n', "pyproject.toml: [tool.migrate] fail-on: unknown severity 'hgh'"),
        ('[tool.migrate]\ntargets = ["sm_80"]\n', "pyproject.toml: [tool.migrate] targets: 'sm_80' is not a gfx"),
        ('[tool.migrate]\nexclude = "a" \nmax-file-size = -1\n', "max-file-size: expected a positive number"),
        ('[tool.migrate]\ndisable = [1]\n', "disable: expected a list of strings"),
        ('[tool.migrate.severity]\ncudnn-api = "huge"\n', "severity: unknown severity 'huge'"),
        ('[tool.migrate]\nrule-dirs = ["nope"]\n', "rule-dirs: directory not found: nope"),
        ("[tool]\nmigrate = 3\n", "[tool.migrate] must be a table"),
    ],
)
def test_bad_configuration_is_one_error_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_settings(tmp_path, {})
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("name", "message"), [("sm_80", "'sm_80' is not a gfx target name"),
                                              ("gfx9999", "unknown target gfx9999 (known targets: gfx906")])
def test_a_target_name_is_checked_alike_in_the_config_and_on_the_command_line(tmp_path: Path, name: str,
                                                                             message: str) -> None:
    (tmp_path / ".migrate.toml").write_text(f'targets = ["{name}"]\n')
    with pytest.raises(ConfigError, match=re.escape(f".migrate.toml: targets: {message}")):
        load_settings(tmp_path, {})
    result = CliRunner().invoke(cli, ["scan", str(tmp_path / "elsewhere"), "--target", f"gfx942,{name}"])
    assert result.exit_code == 2
    assert result.output.startswith(f"migrate: error: {message}")
    assert result.output.count("\n") == 1


def test_bad_configuration_exits_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / ".migrate.toml").write_text("fail_on = 3\n")
    result = CliRunner().invoke(cli, ["scan", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == "migrate: error: .migrate.toml: fail_on: expected a severity name\n"


def test_configuration_changes_what_a_scan_finds(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    assert scan_rules(tmp_path) == (0, [("cudnn-api", "high", 2), ("cuda-runtime-api", "low", 3)])
    (tmp_path / ".migrate.toml").write_text(
        'disable = ["cuda-runtime-api"]\nfail-on = "high"\n[severity]\ncudnn-api = "blocker"\n'
    )
    assert scan_rules(tmp_path) == (1, [("cudnn-api", "blocker", 2)])
    assert scan_rules(tmp_path, "--fail-on", "blocker")[0] == 1
    (tmp_path / ".migrate.toml").write_text('exclude = ["k.cu"]\n')
    assert scan_rules(tmp_path) == (0, [])


def test_user_rule_directory(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "team-rules").mkdir()
    (tmp_path / "team-rules" / "team.yaml").write_text(USER_RULE.format(severity="medium"))
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\nrule-dirs = ["team-rules"]\n')
    _, found = scan_rules(tmp_path)
    assert ("team-gpu-wrappers", "medium", 3) in found


def test_user_rule_is_validated_like_the_builtin_ones(tmp_path: Path) -> None:
    (tmp_path / "team-rules").mkdir()
    (tmp_path / "team-rules" / "team.yaml").write_text(USER_RULE.format(severity="medium").replace("category: other", "category: nope"))
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\nrule-dirs = ["team-rules"]\n')
    result = CliRunner().invoke(cli, ["scan", str(tmp_path)])
    assert result.exit_code == 2
    assert "team.yaml: rule team-gpu-wrappers: unknown category 'nope'" in result.stderr


def test_settings_stay_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().targets = ("gfx90a",)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('disable = ["cuda-runtim-api"]\n', ".migrate.toml: disable: unknown rule id(s): cuda-runtim-api"),
        ('[severity]\ncudnn-apii = "low"\n', ".migrate.toml: severity: unknown rule id(s): cudnn-apii"),
    ],
)
def test_unknown_rule_ids_are_config_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / ".migrate.toml").write_text(text)
    for _ in range(2):  # the second run would find a cached ruleset if the first had cached one
        result = CliRunner().invoke(cli, ["scan", str(tmp_path)])
        assert result.exit_code == 2
        assert result.stderr == f"migrate: error: {message}\n"
