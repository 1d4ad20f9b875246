"""The result cache: warm runs reuse results, and nothing stale survives a content, rule, config or version change."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

import migrate.cache.store
import migrate.scan.pool
from migrate import apimap
from migrate.cache.results import _shard_name
from migrate.cli import cli
from migrate.config import Settings
from migrate.model import ScanResult
from migrate.scan import scan

from conftest import KERNEL, USER_RULE


def settings_for(tmp_path: Path, **changes: object) -> Settings:
    return replace(Settings(jobs=1, cache_dir=str(tmp_path / "cache")), **changes)  # type: ignore[arg-type]


def repo(tmp_path: Path, files: int = 3) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    for index in range(files):
        (root / f"k{index}.cu").write_text(KERNEL)
    return root


def summary(result: ScanResult) -> list[tuple[str, str, int, str, str]]:
    return [(f.path, f.rule, f.line, f.severity.label, f.message) for f in result.findings]


def test_warm_scan_reads_nothing_again_and_gives_the_same_result(tmp_path: Path, calls: list[str]) -> None:
    root = repo(tmp_path)
    cold = scan(root, settings_for(tmp_path))
    assert sorted(calls) == ["k0.cu", "k1.cu", "k2.cu"]
    calls.clear()
    warm = scan(root, settings_for(tmp_path))
    assert calls == []
    assert warm == cold and summary(warm) == summary(cold)
    assert [f.evidence for f in warm.findings] == [f.evidence for f in cold.findings]


def test_only_changed_files_are_scanned_again(tmp_path: Path, calls: list[str]) -> None:
    root = repo(tmp_path)
    scan(root, settings_for(tmp_path))
    calls.clear()
    (root / "k1.cu").write_text("void g() {}\n" + KERNEL)
    result = scan(root, settings_for(tmp_path))
    assert calls == ["k1.cu"]
    assert [f.line for f in result.findings if f.path == "k1.cu"] == [3, 4]


def test_rule_change_is_never_served_stale(tmp_path: Path, calls: list[str]) -> None:
    root = repo(tmp_path, files=1)
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "team.yaml").write_text(USER_RULE.format(severity="medium"))
    settings = settings_for(tmp_path, extra_rule_dirs=(str(rules),))
    scan(root, settings)
    (rules / "team.yaml").write_text(USER_RULE.format(severity="blocker"))
    calls.clear()
    result = scan(root, settings)
    assert calls == ["k0.cu"]
    assert [f.severity.label for f in result.findings if f.rule == "team-gpu-wrappers"] == ["blocker"]


def test_settings_change_is_never_served_stale(tmp_path: Path, calls: list[str]) -> None:
    root = repo(tmp_path, files=1)
    scan(root, settings_for(tmp_path))
    calls.clear()
    result = scan(root, settings_for(tmp_path, targets=("gfx1100",), disabled_rules=frozenset({"cuda-runtime-api"})))
    assert calls == ["k0.cu"]
    assert [f.rule for f in result.findings] == ["cudnn-api"]
    calls.clear()
    scan(root, settings_for(tmp_path, jobs=2, fail_on=None))  # how a run goes does not change a file's findings
    assert calls == []


def test_tool_version_change_is_never_served_stale(tmp_path: Path, calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path, files=1)
    scan(root, settings_for(tmp_path))
    monkeypatch.setattr(migrate.cache.store, "__version__", "99.0")
    calls.clear()
    scan(root, settings_for(tmp_path))
    assert calls == ["k0.cu"]


def shard(tmp_path: Path) -> Path:
    """The one store file of a one-file repo."""
    (found,) = (tmp_path / "cache").glob("results/*/*.json")
    return found


def entries(store: Path) -> dict[str, list[object]]:
    found = json.loads(store.read_bytes())
    assert found["format"] == migrate.cache.store.FORMAT
    return found["entries"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "garbage",
    [b"", b"{not json", b"\x80\x05\x95", json.dumps({"format": migrate.cache.store.FORMAT, "entries": {"k0.cu": ["x", {}]}}).encode(),
     b'["a", "list"]', b"\x00\xff", b"[" * 100000],
)
def test_corrupt_cache_file_is_ignored_and_replaced(tmp_path: Path, calls: list[str], garbage: bytes) -> None:
    root = repo(tmp_path, files=1)
    expected = scan(root, settings_for(tmp_path))
    store = shard(tmp_path)
    store.write_bytes(garbage)
    calls.clear()
    assert scan(root, settings_for(tmp_path)) == expected
    assert calls == ["k0.cu"]
    assert list(entries(store)) == ["k0.cu"]


def test_corrupt_entry_with_a_matching_key_is_a_miss(tmp_path: Path, calls: list[str]) -> None:
    root = repo(tmp_path, files=1)
    expected = scan(root, settings_for(tmp_path))
    store = shard(tmp_path)
    found = entries(store)
    found["k0.cu"] = [found["k0.cu"][0], "not a result"]
    store.write_text(json.dumps({"format": migrate.cache.store.FORMAT, "entries": found}))
    calls.clear()
    assert summary(scan(root, settings_for(tmp_path))) == summary(expected)
    assert calls == ["k0.cu"]


FINDING_KEYS = ["rule", "category", "severity", "path", "line", "column", "end_line", "message", "evidence", "hip",
                "substitutions", "vendored", "symbol", "effort", "status", "occurrences"]  # Finding.to_dict's


@pytest.mark.parametrize("where", [
    *(("finding", key) for key in FINDING_KEYS),  # each field of a finding
    ("finding", "severity-label"), ("finding", "occurrence"), ("finding", "substitution"), ("finding", "missing"),
    ("finding", "unknown"), ("result", "directive"), ("result", "evidence"), ("result", "relpath"),
])
def test_an_entry_with_any_field_of_the_wrong_shape_is_a_miss(
    tmp_path: Path, calls: list[str], where: tuple[str, str]
) -> None:
    root = repo(tmp_path, files=1)
    expected = scan(root, settings_for(tmp_path))
    store = shard(tmp_path)
    found = entries(store)
    data = found["k0.cu"][2]
    part, field = where
    finding = data["findings"][0]
    if (part, field) == ("finding", "severity-label"):
        finding["severity"] = "huge"
    elif field == "occurrence":
        finding["occurrences"] = [{"line": 1, "column": 2, "end_line": 3, "evidence": 4}]  # evidence must be text
    elif field == "substitution":
        finding["substitutions"] = ["ok", 7]
    elif field == "missing":
        del finding["rule"]
    elif field == "unknown":
        finding["colour"] = "red"
    elif part == "finding":
        finding[field] = {"not": "a field"}
    elif field == "directive":
        data["directives"] = [[1, "if"]]
    elif field == "evidence":
        data["evidence"] = [{"kind": "guard", "path": "k0.cu", "line": "1", "text": "t", "weight": 1}]
    else:
        data["relpath"] = "k1.cu"  # another file's result under this file's name
    store.write_text(json.dumps({"format": migrate.cache.store.FORMAT, "entries": found}))
    calls.clear()
    assert summary(scan(root, settings_for(tmp_path))) == summary(expected)
    assert calls == ["k0.cu"]


def test_a_complete_scan_forgets_deleted_files(tmp_path: Path, calls: list[str]) -> None:
    root = repo(tmp_path, files=40)
    scan(root, settings_for(tmp_path))
    stores = list((tmp_path / "cache").glob("results/*/*.json"))
    for index in range(1, 40):
        (root / f"k{index}.cu").unlink()
    scan(root, settings_for(tmp_path))
    assert len(stores) > 1 and [p.name for p in (tmp_path / "cache").glob("results/*/*.json")] == [shard(tmp_path).name]
    assert list(entries(shard(tmp_path))) == ["k0.cu"]


def test_checking_a_few_files_keeps_the_others(tmp_path: Path, calls: list[str]) -> None:
    root = repo(tmp_path, files=5)
    scan(root, settings_for(tmp_path))
    (root / "k3.cu").write_text(KERNEL + "// edited\n")
    scan(root, settings_for(tmp_path), files=[root / "k3.cu"])
    calls.clear()
    scan(root, settings_for(tmp_path))
    assert calls == []


def test_checking_a_file_leaves_the_other_entries_of_its_shard_as_they_were(tmp_path: Path, calls: list[str]) -> None:
    """A check reads back only the entries it uses: the others of the shard are written back as they were read,
    and one of the wrong shape is still a miss when a later scan reaches it."""
    first = _shard_name("k0.cu")
    other = next(f"k{i}.cu" for i in range(1, 10_000) if _shard_name(f"k{i}.cu") == first)
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("k0.cu", other):
        (root / name).write_text(KERNEL)
    scan(root, settings_for(tmp_path))
    (store,) = (tmp_path / "cache").glob(f"results/*/{first}.json")
    found = entries(store)
    found[other][2]["findings"][0]["severity"] = "huge"  # type: ignore[index]
    store.write_text(json.dumps({"format": migrate.cache.store.FORMAT, "entries": found}))
    (root / "k0.cu").write_text(KERNEL + "// edited\n")
    calls.clear()
    scan(root, settings_for(tmp_path), files=[root / "k0.cu"])
    assert calls == ["k0.cu"]
    assert entries(store)[other] == found[other]
    calls.clear()
    scan(root, settings_for(tmp_path))
    assert calls == [other]


def test_unwritable_cache_directory_is_not_fatal(tmp_path: Path) -> None:
    root = repo(tmp_path, files=1)
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = scan(root, replace(Settings(jobs=1), cache_dir=str(blocker / "cache")))
    assert len(result.findings) == 2


def test_process_pool_results_are_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path, files=70)  # enough for the process pool
    cold = scan(root, settings_for(tmp_path, jobs=2))

    def no_scanning(*_args: object) -> None:
        raise AssertionError("a cached file was scanned again")

    monkeypatch.setattr(migrate.scan.pool, "scan_file", no_scanning)
    assert scan(root, settings_for(tmp_path, jobs=2)) == cold
    assert len(cold.findings) == 140


def test_no_cache_and_cache_dir_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path, files=1)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    runner = CliRunner()
    assert runner.invoke(cli, ["scan", str(root), "--no-cache"]).exit_code == 0
    assert not (tmp_path / "xdg").exists()
    assert runner.invoke(cli, ["scan", str(root)]).exit_code == 0
    assert len(list((tmp_path / "xdg" / "rocm-migrate").glob("results/*/*.json"))) == 1
    assert runner.invoke(cli, ["scan", str(root), "--cache-dir", str(tmp_path / "mine")]).exit_code == 0
    assert len(list((tmp_path / "mine").glob("results/*/*.json"))) == 1


def test_warm_scan_keeps_the_occurrences_of_once_per_file_findings(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "sort.cu").write_text(
        "#include <thrust/sort.h>\nvoid f(int* p) {\n  thrust::sort(p, p + 4);\n  thrust::sort(p, p + 2);\n}\n"
    )
    cold = scan(root, settings_for(tmp_path))
    warm = scan(root, settings_for(tmp_path))
    folded = [f for f in cold.findings if f.occurrences]
    assert folded, "the fixture must give a once-per-file finding with several places"
    assert [f.occurrences for f in warm.findings] == [f.occurrences for f in cold.findings]


def test_the_collector_is_paused_inside_and_restored_after() -> None:
    import gc

    from migrate.gcpause import paused

    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # an inner block leaves the outer one paused
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()
    with pytest.raises(ValueError), paused():
        raise ValueError("restored on errors too")
    assert gc.isenabled()


def test_the_ruleset_cache_keeps_the_knowledge_files_a_check_reads(tmp_path: Path) -> None:
    from migrate import data
    from migrate.cache import rulesets

    root = repo(tmp_path, files=1)
    first = summary(scan(root, settings_for(tmp_path)))
    [kept] = (tmp_path / "cache" / "rulesets").glob("*.json")
    document = json.loads(kept.read_text())
    assert sorted(document["knowledge"]) == sorted(rulesets._KNOWLEDGE)
    assert document["knowledge"]["risk.yaml"] == data.load_yaml("risk.yaml")
    assert document["api_map"] == apimap.entries_flat()
    assert summary(scan(root, settings_for(tmp_path))) == first


def test_the_api_map_read_back_from_the_ruleset_cache_is_the_one_its_tsv_gives() -> None:
    """Another process reads the kept entries instead of the TSV: the same entries, in the same order."""
    program = (
        "import json, sys\n"
        "from migrate import apimap\n"
        "apimap.remember_entries(json.loads(sys.stdin.read()))\n"
        "print(json.dumps([list(e) for e in apimap.api_map().values()]))\n"
    )
    kept = json.dumps(apimap.entries_flat())
    done = subprocess.run([sys.executable, "-c", program], input=kept, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [list(entry) for entry in apimap.api_map().values()]
    assert len(apimap.api_map()) > 8000


def test_the_map_s_columns_and_indexed_entries_are_its_entries_whether_kept_or_read() -> None:
    """The cuda-api rules select names from the map's columns and make an entry by its index only when a name is
    found: in a process that read the TSV and in one handed the kept entries, the same entries in the same order."""
    program = (
        "import json, sys\n"
        "from migrate import apimap\n"
        "apimap.remember_entries(json.loads(sys.stdin.read()))\n"
        "names = apimap.column('cuda_name')\n"
        "print(json.dumps([names, [list(apimap.entry_at(i)) for i in range(len(names))], sorted(apimap.api_names())]))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], input=json.dumps(apimap.entries_flat()),
                          capture_output=True, text=True, check=True)
    entries = [list(entry) for entry in apimap.api_map().values()]
    names, indexed, every = json.loads(done.stdout)
    assert names == apimap.column("cuda_name") == list(apimap.api_map())
    assert indexed == [list(apimap.entry_at(i)) for i in range(len(entries))] == entries
    assert every == sorted(apimap.api_names()) == sorted(apimap.api_map())
    assert apimap.column("library")[:1] == [entries[0][0]] and len(entries) > 8000


def test_an_api_map_of_the_wrong_shape_in_the_ruleset_cache_is_left_out() -> None:
    from migrate.cache import rulesets

    fields = len(apimap.ApiEntry._fields)
    assert rulesets._entries_from({"api_map": ["x"] * fields}) == ["x"] * fields
    for wrong in (None, {}, "x" * fields, ["x"] * (fields + 1), ["x"] * (fields - 1) + [1], [["x"]] * fields):
        assert rulesets._entries_from({"api_map": wrong}) is None
    assert rulesets._entries_from({}) is None


def test_knowledge_of_the_wrong_shape_in_the_ruleset_cache_is_left_out() -> None:
    from migrate.cache import rulesets

    document = {"knowledge": {"cuda_api_map.tsv": [["a", "b"], "not a row"], "risk.yaml": [1], "other.yaml": {},
                              "hip_headers.yaml": {"headers": {}}}}
    assert rulesets._knowledge_from(document) == {"hip_headers.yaml": {"headers": {}}}
    assert rulesets._knowledge_from({"knowledge": []}) == {}


def test_the_ruleset_cache_keeps_the_rules_digest(tmp_path: Path) -> None:
    """The digest of every rule's fields is kept with the rules, so a process reading them back does not make it
    again: the same digest the rules read back give."""
    from migrate.cache import rulesets, store
    from migrate.ruleset import Ruleset, load_builtin

    settings = settings_for(tmp_path)
    made = rulesets.load_ruleset(settings, load_builtin)
    [kept] = (tmp_path / "cache" / "rulesets").glob("*.json")
    back = rulesets.load_ruleset(settings, lambda: pytest.fail("read from the rule files, not the cache"))
    afresh = store.rules_digest(Ruleset(back.rules))  # a new object: its digest made from its rules
    assert back == made and back is not made
    assert json.loads(kept.read_text())["digest"] == store.rules_digest(back) == store.rules_digest(made) == afresh
