"""Markdown, HTML, SARIF and the JSON risk summary: goldens, schema, escaping, truncation, CLI wiring."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from migrate.assessment import assess
from migrate.cli import cli
from migrate.model import Finding, Occurrence, ScanResult, Severity, Skipped, Substitution
from migrate.report import render
from migrate.report import markdown, sarif

from conftest import EXPECTED, REPOS, check_golden, init_repo, sarif_schema

REPO_NAMES = sorted(p.name for p in REPOS.iterdir() if p.is_dir())
EVIL = "<script>alert(1)</script>"


def make(path: str, line: int, rule: str, severity: Severity, *, category: str = "custom-cuda-kernel", **extra: object) -> Finding:
    return Finding(
        path=path, line=line, column=5, rule=rule, category=category, severity=severity, end_line=line,
        message=str(extra.pop("message", f"{rule} message")), evidence=str(extra.pop("evidence", f"  call_{line}(x);")),
        **extra,  # type: ignore[arg-type]
    )


def sample(**changes: object) -> ScanResult:
    findings = (
        make("csrc/k.cu", 10, "inline-ptx-asm", Severity.HIGH, category="inline-ptx", evidence='asm("mov.u32 %0, %%laneid;");'),
        make("csrc/k.cu", 20, "warp-size-32", Severity.MEDIUM, category="warp-size-assumption"),
        *(make("csrc/k.cu", 30 + n, "cuda-runtime-api", Severity.LOW, category="cuda-driver-api", hip="hipMalloc", symbol="cudaMalloc") for n in range(3)),
        make("infer/trt.py", 2, "tensorrt-import", Severity.BLOCKER, category="tensorrt", substitutions=("tensorrt",)),
        make("train.py", 7, "torch-cuda-call", Severity.INFO, category="python-cuda-api"),
    )
    sub = Substitution(
        id="tensorrt", replaces="TensorRT", rocm="MIGraphX", install=("apt install migraphx", "pip install migraphx"),
        caveats=("Not all TensorRT plugins exist.",), sources=("https://rocm.docs.amd.com/projects/AMDMIGraphX",), as_of="2026-10",
    )
    result = ScanResult(
        root="repo", targets=("gfx942",), files_scanned=6, findings=tuple(sorted(findings)),
        skipped=(Skipped("data/blob.cu", "not UTF-8"),), substitutions=(sub,),
    )
    return replace(result, **changes)  # type: ignore[arg-type]


def run_scan(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.chdir(repo.parent)
    result = CliRunner().invoke(cli, ["scan", repo.name, *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("name", REPO_NAMES)
@pytest.mark.parametrize("fmt, suffix", [("md", "md"), ("sarif", "sarif")])
def test_golden_reports(name: str, fmt: str, suffix: str, make_repo, monkeypatch: pytest.MonkeyPatch, update_golden: bool) -> None:
    output = run_scan(make_repo(name), monkeypatch, "--format", fmt)
    check_golden(output, EXPECTED / f"{name}.{suffix}", update_golden)


FIRST_SCREEN = '<section class="card" id="first-screen">'


@pytest.mark.parametrize("name", REPO_NAMES)
def test_golden_first_screen(name: str, make_repo, monkeypatch: pytest.MonkeyPatch, update_golden: bool) -> None:
    """The first screen of each fixture in the terminal (the whole summary) and in HTML (its first section); the
    Markdown goldens above hold it too."""
    repo = make_repo(name)
    check_golden(run_scan(repo, monkeypatch), EXPECTED / f"{name}.txt", update_golden)
    page = run_scan(repo, monkeypatch, "--format", "html")
    start = page.index(FIRST_SCREEN)
    check_golden(page[start : page.index("</section>", start)] + "</section>\n", EXPECTED / f"{name}.first.html", update_golden)


@pytest.mark.parametrize("name", REPO_NAMES)
def test_fixture_sarif_is_valid(name: str, make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    jsonschema.validate(json.loads(run_scan(make_repo(name), monkeypatch, "--format", "sarif")), sarif_schema())


def test_sarif_is_valid_and_maps_levels() -> None:
    data = json.loads(sarif.render(assess(sample())))
    jsonschema.validate(data, sarif_schema())
    run = data["runs"][0]
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels == {
        "inline-ptx-asm": "error", "warp-size-32": "warning", "cuda-runtime-api": "note",
        "tensorrt-import": "error", "torch-cuda-call": "note",
    }
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rule_ids == sorted(set(rule_ids)) and len(rule_ids) == 5
    for result in run["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location["uriBaseId"] == "SRCROOT" and not location["uri"].startswith("/")
    assert run["invocations"][0]["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "data/blob.cu"


def fingerprints(result: ScanResult) -> list[str]:
    return [r["partialFingerprints"]["rocmMigrate/v1"] for r in json.loads(sarif.render(assess(result)))["runs"][0]["results"]]


def test_fingerprints_survive_line_shifts_and_tell_repeats_apart() -> None:
    result = sample()
    shifted = replace(result, findings=tuple(replace(f, line=f.line + 7, end_line=f.end_line + 7) for f in result.findings))
    assert fingerprints(shifted) == fingerprints(result)
    same_code = [replace(f, evidence="cudaMalloc(&p, n);") for f in result.findings if f.rule == "cuda-runtime-api"]
    prints = fingerprints(replace(result, findings=tuple(same_code)))
    assert len(set(prints)) == 3
    edited = replace(result, findings=tuple(replace(f, evidence=f.evidence + " // changed") for f in result.findings))
    assert set(fingerprints(edited)).isdisjoint(fingerprints(result))


def test_sarif_uris_are_percent_encoded() -> None:
    result = sample(findings=(make(f"odd dir/{EVIL}.cu", 1, "r", Severity.LOW),))
    uri = json.loads(sarif.render(assess(result)))["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "odd%20dir/%3Cscript%3Ealert%281%29%3C/script%3E.cu"


def test_markdown_sections_in_order() -> None:
    text = markdown.render(assess(sample()))
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings == [
        "### Porting checklist", "### What to install instead (most effort removed first)",
        "### Skipped files (1)", "### Findings by component (one row per rule; `--format json` lists every finding)",
    ]
    assert text.startswith("## ROCm porting report: ")
    first = ["**Verdict:**", "**Why ", "**What drives the effort**", "> **Most of what blocks this port is TensorRT",
             "**First actions**", "- **Findings:**", "\n---\n"]
    assert [text.index(part) for part in first] == sorted(text.index(part) for part in first)
    assert "```sh\napt install migraphx\npip install migraphx\n```" in text
    assert "Source: <https://rocm.docs.amd.com/projects/AMDMIGraphX> (as of 2026-10)." in text
    checklist = [line.split("**")[1] for line in text.splitlines() if line.startswith("- [ ] ")]
    assert checklist == ["Blockers", "Kernels", "Mechanical renames", "Validate"]


def test_markdown_aggregates_repeated_renames() -> None:
    text = markdown.render(assess(sample()))
    assert "- **low** `cuda-runtime-api` ×3: mechanical renames: `cudaMalloc` → `hipMalloc`\n" in text
    assert "  <details><summary>2 more places</summary>\n\n  - `csrc/k.cu:31`: `call_31(x);`\n" in text
    assert text.count("cuda-runtime-api") == 1


def test_markdown_escapes_repo_text() -> None:
    finding = make(f"src/{EVIL}.cu", 3, "r", Severity.HIGH, message=f"bad {EVIL} *x*", evidence=f"f(); // {EVIL} ` tick")
    text = markdown.render(assess(sample(findings=(finding,), skipped=(Skipped(f"{EVIL}.cu", EVIL),))))
    outside_code = re.sub(r"(`+)(.+?)\1", "", text)
    assert "<script>" not in outside_code
    assert "bad \\<script\\>alert(1)\\</script\\> \\*x\\*" in text
    assert "``f(); // <script>alert(1)</script> ` tick``" in text


def test_markdown_truncates_with_a_note() -> None:
    findings = tuple(
        sorted(make(f"src/mod{i:04d}/file.cu", n, f"rule-{n}", Severity.MEDIUM, message="x" * 80) for i in range(400) for n in (1, 2, 3))
    )
    text = markdown.render(assess(sample(findings=findings)))
    assert len(text) <= markdown.LIMIT
    assert "> **Truncated:**" in text and "more findings in" in text
    shown = text.count("#### custom ops/kernels (src/mod")
    assert 0 < shown < 400 and f"{(400 - shown) * 3} more findings in {400 - shown} components" in text


def test_markdown_without_findings() -> None:
    text = markdown.render(assess(sample(findings=(), skipped=(), substitutions=())))
    assert "**Verdict:** trivial (risk 0/100), effort 0 engineer-days, for gfx942  \n" in text
    assert "**What drives the effort**" not in text
    assert "**First actions**\n\n1. Build it for ROCm and run its tests on gfx942 — nothing on the main path to port\n" in text
    assert text.endswith("No findings: nothing CUDA-specific stands in the way.\n")


def test_json_summary_gains_risk_and_keeps_its_keys() -> None:
    data = json.loads(render(sample(), "json"))
    summary = data["summary"]
    assert list(summary)[:6] == ["files_scanned", "files_skipped", "findings", "by_severity", "by_category", "guarded_findings"]
    assert summary["verdict"] in {"hard", "very-hard"} and summary["blockers"] == 1
    assert 0 <= summary["risk_score"] <= 100
    assert summary["effort_days"]["low"] < summary["effort_days"]["high"]
    assert summary["drivers"][0]["text"].startswith("infer: TensorRT use (1 rule, 1 finding in 1 file) ")
    assert "per_target" not in summary
    original = ["schema", "tool", "root", "targets", "summary", "findings", "skipped"]
    assert [key for key in data if key in original] == original


def test_json_has_per_target_entries_for_several_targets() -> None:
    summary = json.loads(render(sample(targets=("gfx942", "gfx1100")), "json"))["summary"]
    assert [(t["target"], t["wavefront"]) for t in summary["per_target"]] == [("gfx942", 64), ("gfx1100", 32)]
    assert set(summary["per_target"][0]) == {"target", "wavefront", "risk_score", "effort_days", "verdict",
                                             "verdict_basis", "drivers", "blockers"}


def test_html_escapes_and_is_self_contained() -> None:
    finding = make(f"src/{EVIL}.cu", 3, "r", Severity.HIGH, message=EVIL, evidence=f"f(); // {EVIL}")
    page = render(sample(findings=(finding,), skipped=(Skipped(f"{EVIL}.cu", EVIL),)), "html")
    assert page.count("<script") == 1 and "alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    for attribute in (' src="', " href=", "@import", "url("):
        assert attribute not in page


def test_html_shows_counts_table_and_copy_buttons() -> None:
    page = render(sample(), "html")
    assert page.count("<tr data-severity=") == 5  # the three renames of one rule in csrc/ are one row
    assert 'data-component="csrc" data-count="3"' in page
    assert '<div class="big" id="count-total">7</div>' in page
    assert '<span id="count-blocker">1</span>' in page and '<span id="count-low">3</span>' in page
    assert page.count('<button class="copy"') == 2  # the first action's command and the substitute's
    assert 'id="chart-effort"' in page and 'id="chart-directories"' in page


def test_terminal_shows_verdict_and_drivers() -> None:
    text = render(sample(), "terminal")
    assert "Verdict: very-hard" in text or "Verdict: hard" in text
    assert "  1. inference/deployment path (infer/): TensorRT use, 1 finding in 1 file, blocked, " in text
    assert "  2. custom ops/kernels (csrc/): " in text
    assert "  1. tensorrt → MIGraphX — removes " in text and "     $ apt install migraphx\n" in text


@pytest.mark.parametrize("name, fmt", [("r.md", "md"), ("r.html", "html"), ("r.sarif", "sarif"), ("r.sarif.json", "sarif"), ("r.json", "json")])
def test_report_option_follows_the_suffix(name: str, fmt: str, make_repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo("cuda-extension")
    stdout = run_scan(repo, monkeypatch, "--report", str(tmp_path / name))
    assert stdout.startswith("rocm-migrate scanned")
    assert (tmp_path / name).read_text(encoding="utf-8") == run_scan(repo, monkeypatch, "--format", fmt)


def test_report_option_rejects_an_unknown_suffix(make_repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo("cuda-extension")
    monkeypatch.chdir(repo.parent)
    result = CliRunner().invoke(cli, ["scan", repo.name, "--report", str(tmp_path / "r.pdf")])
    assert result.exit_code == 2 and "cannot tell the format of 'r.pdf'" in result.output
    assert not (tmp_path / "r.pdf").exists()


@pytest.mark.parametrize(
    "name, verdicts",
    [("pytorch-trainer", {"trivial", "easy"}), ("hip-ported", {"trivial", "easy"}), ("cuda-extension", {"hard", "very-hard"})],
)
def test_fixture_repos_are_calibrated(name: str, verdicts: set[str], make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (REPOS / name).is_dir():
        pytest.skip(f"fixture repo {name} is gone")
    summary = json.loads(run_scan(make_repo(name), monkeypatch, "--format", "json"))["summary"]
    assert summary["verdict"] in verdicts


def test_markdown_collapses_a_rule_in_one_component_to_one_row() -> None:
    findings = tuple(sorted([
        make("k.cu", 3, "warp-full-mask", Severity.HIGH, message="32-bit mask", evidence="a(0xffffffff);"),
        make("k.cu", 9, "warp-full-mask", Severity.HIGH, message="32-bit mask", evidence="b(0xffffffff);"),
        make("k.cu", 5, "no-hip", Severity.MEDIUM, message="cudaFoo has none"),
        make("k.cu", 6, "no-hip", Severity.MEDIUM, message="cudaBar has none"),
    ]))
    text = markdown.render(assess(sample(findings=findings)))
    assert ("- **high** `warp-full-mask` ×2: 32-bit mask\n  `k.cu:3`: `a(0xffffffff);`\n\n"
            "  <details><summary>1 more place</summary>\n\n  - `k.cu:9`: `b(0xffffffff);`\n\n  </details>\n") in text
    assert "- **medium** `no-hip` ×2: cudaFoo has none\n  `k.cu:5`: " in text and "  - `k.cu:6`: " in text


def test_terminal_shows_each_target_when_several() -> None:
    text = render(sample(targets=("gfx942", "gfx1100")), "terminal", width=200)
    assert "Per target: gfx942 " in text and "; gfx1100 " in text
    assert "Per target" not in render(sample(), "terminal")


THRUST = """\
#include <thrust/sort.h>
// thrust::sort in a comment is not a place to change
void f(int* d, int n) {
  thrust::sort(thrust::device, d, d + n);
  auto s = "thrust::reduce";
  thrust::reverse(d, d + n);
}
"""
OCCURRENCES = [
    {"line": 4, "column": 3, "end_line": 4, "evidence": "thrust::sort(thrust::device, d, d + n);"},
    {"line": 6, "column": 3, "end_line": 6, "evidence": "thrust::reverse(d, d + n);"},
]


def thrust_repo(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "sort.cu").write_text(THRUST, encoding="utf-8")
    (root / "src" / "long.cu").write_text(
        "void g(int* d) { thrust::fill(d, d + 1, 0); " + "/* pad */ " * 100 + "thrust::fill(d, d, 1); }\n"
        "void h(int* d) { thrust::fill(d, d + 1, 2); }\n", encoding="utf-8",
    )
    return init_repo(root)


def test_a_once_per_file_finding_lists_every_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = thrust_repo(tmp_path / "repo")
    findings = json.loads(run_scan(repo, monkeypatch, "--format", "json"))["findings"]
    sort = [f for f in findings if f["rule"] == "thrust-usage" and f["path"] == "src/sort.cu"]
    assert len(sort) == 1 and sort[0]["occurrences"] == OCCURRENCES
    assert (sort[0]["line"], sort[0]["column"]) == (4, 3) and sort[0]["message"].endswith("(2 places in this file.)")
    long = next(f for f in findings if f["rule"] == "thrust-usage" and f["path"] == "src/long.cu")
    assert [(o["line"], o["column"]) for o in long["occurrences"]] == [(1, 18), (2, 18)]
    assert [len(o["evidence"]) for o in long["occurrences"]] == [200, 45]  # bounded per place
    assert all("occurrences" not in f for f in findings if f["rule"] != "thrust-usage")


def test_sarif_related_locations_hold_the_other_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = thrust_repo(tmp_path / "repo")
    data = json.loads(run_scan(repo, monkeypatch, "--format", "sarif"))
    jsonschema.validate(data, sarif_schema())
    result = next(r for r in data["runs"][0]["results"] if r["ruleId"] == "thrust-usage"
                  and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/sort.cu")
    related = [
        (r["id"], r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"],
         r["physicalLocation"]["region"]["startColumn"], r["message"]["text"])
        for r in result["relatedLocations"]
    ]
    assert related == [
        (2, "src/sort.cu", 6, 3, "thrust-usage: place 2 of 2 in this file"),
    ]
    assert all("relatedLocations" not in r for r in data["runs"][0]["results"] if r["ruleId"] != "thrust-usage")


def test_markdown_and_html_list_the_places_collapsed() -> None:
    places = tuple(Occurrence(o["line"], o["column"], o["end_line"], o["evidence"]) for o in OCCURRENCES)  # type: ignore[arg-type]
    finding = make("src/sort.cu", 4, "thrust-usage", Severity.LOW, evidence=places[0].evidence, occurrences=places)
    text = markdown.render(assess(sample(findings=(finding,))))
    assert (
        "  <details><summary>2 places in this file</summary>\n\n"
        "  - L4: `thrust::sort(thrust::device, d, d + n);`\n"
        "  - L6: `thrust::reverse(d, d + n);`\n\n"
        "  </details>\n"
    ) in text
    page = render(sample(findings=(finding,)), "html")
    assert (
        '<details class="occurrences"><summary>2 places in this file</summary><ul>'
        '<li><span class="line">L4</span> <code>thrust::sort(thrust::device, d, d + n);</code></li>'
        '<li><span class="line">L6</span> <code>thrust::reverse(d, d + n);</code></li></ul></details>'
    ) in page
    assert "places in this file</summary>" not in markdown.render(assess(sample())) + render(sample(), "html")


@pytest.mark.parametrize("finding", [
    make("a.cu", 1, "r", Severity.INFO),
    make("d\udcff/é \"q\".cu", 7, "r2", Severity.BLOCKER, message="tab\there \\ \x01 \u2028 ✓", evidence="\x7f\u202e",
         hip="hipX", substitutions=("a", "b\"c"), vendored=True, symbol="s", effort=(1.0, 2.5), status="covered"),
    make("e.cu", 3, "r3", Severity.LOW, hip="", occurrences=(Occurrence(3, 5, 3, "x\ny"), Occurrence(9, 1, 10, ""))),
])
def test_json_writes_each_finding_as_json_dumps_of_its_dict(finding: Finding) -> None:
    from migrate.report.json import finding_json

    assert finding_json(finding) == json.dumps(finding.to_dict(), ensure_ascii=False)


@pytest.mark.parametrize("value", [
    {}, [], (), "", 0, -3, 2.5, 1e300, float("nan"), float("inf"), -float("inf"), True, False, None,
    {"a": [1, 2.5, (), [], {}, {"k": [[[]]]}, "é\n\"x\udcff\u2028"], "": {"b": (None, True)}},
    {1: "int", 2.5: "float", True: "true", False: "false", None: "none", "s": Severity.HIGH.label},
    [[{"x": [{"y": {}}]}], [1, [2, [3]]]],
])
def test_indented_json_is_json_dumps_with_an_indent(value: object) -> None:
    from migrate.report.json import indented

    assert indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_indented_json_refuses_what_json_dumps_refuses() -> None:
    from migrate.report.json import indented

    for bad in ({"a": object()}, {(1, 2): 3}):
        with pytest.raises(TypeError):
            json.dumps(bad, indent=2, ensure_ascii=False)
        with pytest.raises(TypeError):
            indented(bad)


def test_importing_the_escaper_does_not_load_the_assessment() -> None:
    """migrate.escape is imported by every command and by fleet jobs under a memory cap, and the report formats by
    the CLI at start-up: the report package loads the assessment (rules, weights, knowledge base) only when a report
    is rendered."""
    import subprocess
    import sys

    code = ("import sys, migrate.escape, migrate.report.formats; "
            "print(sorted(m for m in ('migrate.assessment', 'migrate.risk') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
