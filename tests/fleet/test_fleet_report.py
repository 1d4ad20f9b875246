"""The fleet's store, its comparison with an earlier audit (--since) and its reports: fleet.json, fleet.csv and
fleet.html, from outcomes made by hand (issue 23)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from migrate.errors import InputError
from migrate.fleet import report, since
from migrate.fleet.model import Blocker, Job, Outcome, TargetEffort, failed, pack, unpack
from migrate.fleet.store import Store

EVIL = "<script>alert(1)</script>\x1b[31m"


def outcome(name: str, *, verdict: str = "hard", rocm: str = "none", blockers: int = 1, low: float = 2.0,
            high: float = 5.0, families: tuple[tuple[str, int], ...] = (("inline-ptx", 3),),
            libraries: tuple[str, ...] = (), blocking: tuple[tuple[str, str], ...] = (("inline-ptx-asm", "k.cu"),)) -> Outcome:
    job = Job(source=f"/repos/{name}", name=name)
    return Outcome(
        key=job.key, identity=job.identity, name=name, slug=job.slug, status="done", verdict=verdict,
        rocm_status=rocm, score=60, low=low, high=high,
        targets=(TargetEffort("gfx942", verdict, 60, low, high, blockers), TargetEffort("gfx1100", "easy", 10, 0.1, 0.2, 0)),
        top_blockers=(Blocker("inline-ptx-asm", "inline PTX", "blocker", "inline-ptx", 3, 1, "k.cu:4"),) if blockers else (),
        blocking=blocking, families=families, libraries=libraries, findings=12,
        by_severity=(("blocker", blockers), ("high", 2)), files_scanned=4,
    )


def fleet() -> list[Outcome]:
    ptx = outcome("ptx-lab", libraries=("flash-attn",))
    ready = outcome("ported", verdict="easy", rocm="supported", blockers=0, low=0.1, high=0.3, families=(),
                    libraries=("flash-attn",), blocking=())
    trt = outcome("trt-serving", verdict="very-hard", low=20, high=60, families=(("tensorrt", 9), ("inline-ptx", 1)),
                  libraries=("tensorrt",))
    broken = failed(Job(source="https://example.org/gone.git", name="gone", remote=True), "git could not fetch HEAD")
    return [ptx, ready, trt, broken]


def test_outcomes_round_trip_through_the_wire_and_the_store(tmp_path: Path) -> None:
    first = fleet()[0]
    assert unpack(pack(first, {"json": "{}", "html": EVIL})) == (first, {"json": "{}", "html": EVIL})
    store = Store(tmp_path / "fleet.db")
    run = store.begin_run(cluster="local", jobs=4)
    for item in fleet():
        store.put(run, item, {"html": f"<p>{item.name}</p>"} if item.status == "done" else {})
    store.end_run(run)
    store.close()
    again = Store(tmp_path / "fleet.db", readonly=True)
    assert list(again.outcomes().values()) == fleet()
    assert again.reports(fleet()[1].key) == {"html": "<p>ported</p>"} and again.reports("nope") == {}
    assert set(again.runs_of().values()) == {run}
    row = sqlite3.connect(tmp_path / "fleet.db").execute(
        "SELECT status, verdict, rocm_status, effort_high FROM results WHERE name = 'trt-serving'").fetchone()
    assert row == ("done", "very-hard", "none", 60.0)  # plain columns for whoever queries the store


def test_a_file_that_is_not_a_fleet_store_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_text("just text")
    with pytest.raises(InputError, match="is not a fleet store"):
        Store(tmp_path / "notes.db", readonly=True)
    other = sqlite3.connect(tmp_path / "other.db")
    other.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', 'x/9');")
    other.close()
    with pytest.raises(InputError, match=r"another version \(x/9\)"):
        Store(tmp_path / "other.db")
    with pytest.raises(InputError, match="no such file"):
        since.load(tmp_path / "missing.db")


def test_since_finds_new_blockers_and_repositories_that_became_ready() -> None:
    before = since.by_identity([
        outcome("ptx-lab", blocking=(("inline-ptx-asm", "k.cu"),)),
        outcome("ported", verdict="hard", rocm="partial"),
        outcome("trt-serving", verdict="very-hard"),
        outcome("retired"),
    ])
    now = fleet()
    now[0] = replace(now[0], blocking=(("inline-ptx-asm", "k.cu"), ("tensorrt-import", "serve.py")))
    changes = since.compare("old/fleet.db", before, now)
    assert [c.name for c in changes.became_ready] == ["ported"]
    assert [(c.name, c.new_blockers) for c in changes.with_new_blockers] == [("ptx-lab", (("tensorrt-import", "serve.py"),))]
    ported = next(c for c in changes.changed if c.name == "ported")
    assert (ported.before, ported.after, ported.direction, ported.fixed_blockers) == ("hard", "easy", "easier", 1)
    assert changes.added == ("https://example.org/gone.git",) and changes.removed == ("/repos/retired",)
    assert "trt-serving" not in {c.name for c in changes.changed}  # nothing changed there


def test_families_count_repositories_and_list_work_first() -> None:
    found = report.families(fleet())
    assert [(f.kind, f.id, len(f.repositories)) for f in found] == [
        ("work", "inline-ptx", 2), ("work", "tensorrt", 1), ("library", "flash-attn", 2), ("library", "tensorrt", 1)]
    assert found[0].label == "inline PTX" and found[2].label == "flash-attn"


def test_fleet_json_lists_every_repository_with_status_reason_verdict_rocm_status_and_effort() -> None:
    data = json.loads(report.render_json(fleet()))
    assert data["schema"] == "rocm-migrate/fleet/1" and data["targets"] == ["gfx942", "gfx1100"]
    entries = {e["name"]: e for e in data["repositories"]}
    assert entries["gone"] == {"source": "https://example.org/gone.git", "name": "gone", "status": "failed",
                               "reason": "git could not fetch HEAD", "seconds": 0.0}
    ported = entries["ported"]
    assert (ported["status"], ported["verdict"], ported["rocm_status"], ported["ready"]) == ("done", "easy", "supported", True)
    assert ported["effort_days"] == {"low": 0.1, "high": 0.3} and ported["report"].startswith("repos/ported-")
    assert [t["target"] for t in ported["targets"]] == ["gfx942", "gfx1100"]
    assert data["summary"]["by_verdict"] == {"trivial": 0, "easy": 1, "moderate": 0, "hard": 1, "very-hard": 1}
    assert data["summary"] | {"by_verdict": None, "by_rocm_status": None} == {
        "repositories": 4, "done": 3, "failed": 1, "ready": 1, "by_verdict": None, "by_rocm_status": None,
        "effort_days": {"low": 22.1, "high": 65.3}}
    assert "since" not in data
    with_since = json.loads(report.render_json(fleet(), since.compare("p.db", {}, fleet())))
    assert with_since["since"]["added"] == [o.identity for o in fleet()]


def test_fleet_csv_has_a_column_per_target_and_defuses_formulas() -> None:
    hostile = replace(fleet()[0], name="=HYPERLINK(\"http://x\")" + EVIL)
    rows = list(csv.DictReader(io.StringIO(report.render_csv([hostile, *fleet()[1:]]))))
    assert [r["status"] for r in rows] == ["done", "done", "done", "failed"]
    assert rows[0]["repository"].startswith("'=HYPERLINK") and "\x1b" not in rows[0]["repository"]
    assert rows[1]["gfx942_verdict"] == "easy" and rows[1]["gfx1100_high"] == "0.2" and rows[1]["ready"] == "true"
    assert rows[3]["reason"] == "git could not fetch HEAD" and rows[3]["gfx942_verdict"] == ""
    assert rows[0]["top_blockers"] == "inline-ptx-asm x3 (blocker)"


def test_fleet_html_is_one_offline_file_with_everything_escaped() -> None:
    hostile = replace(fleet()[0], name=EVIL, identity=f"/repos/{EVIL}")
    page = report.render_html([hostile, *fleet()[1:]], since.compare("p.db", {}, fleet()))
    assert page.count("<script") == 1 and "<script>alert(1)" not in page and "\x1b" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m" in page
    for fetching in ("<link", "<img", "<iframe", " src=", "url(", "@import"):  # nothing is fetched: it works offline
        assert fetching not in page
    for section in ('id="fleet-table"', 'id="chart-verdicts"', 'id="chart-rocm"', 'id="chart-effort"',
                    'id="families-work"', 'id="families-library"', 'id="since"'):
        assert section in page
    assert f'href="repos/{fleet()[1].slug}/report.html"' in page
