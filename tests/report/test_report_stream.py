"""A JSON report is written as it is rendered: the same bytes as render(), in memory far below the report's size,
and the escapes of non-ASCII lines kept."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from migrate.assessment import Assessment, assess
from migrate.model import Finding, Occurrence, ScanResult, Severity
from migrate.report import pieces, render
from migrate.writer import write_pieces

FINDINGS = 12_000


def _result() -> ScanResult:
    """A tree's worth of findings, each with a long line of evidence; a few name files and lines beyond ASCII."""
    findings = []
    for index in range(FINDINGS):
        odd = index % 997 == 0
        name = "caf\udce9" if odd else "file"  # an undecodable byte of a file name
        path = f"src/mod{index % 40}/{name}{index}.cu"
        evidence = ("cudaMalloc(&buffer, bytes);  // " + "x" * 600) + ("\u202e\u00e9" if odd else "")
        findings.append(Finding(
            path=path, line=index % 500 + 1, column=3, rule="cuda-api-runtime", category="api",
            severity=Severity.LOW, end_line=index % 500 + 1, message="cudaMalloc is hipMalloc in HIP.",
            evidence=evidence, hip="hipMalloc", occurrences=(Occurrence(1, 1, 1, evidence),) if odd else (),
        ))
    ordered = tuple(sorted(findings, key=Finding.key))
    return ScanResult(root="repo", targets=("gfx942",), files_scanned=FINDINGS, findings=ordered, skipped=())


def _written(record: Assessment, fmt: str, target: Path) -> tuple[bytes, int]:
    """RECORD's FMT report written to TARGET piece by piece: its bytes, and the most memory the writing took."""
    tracemalloc.start()
    try:
        write_pieces(target, pieces(record, fmt))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return target.read_bytes(), peak


@pytest.mark.slow  # a report of 12,000 findings, rendered twice, about two seconds
def test_a_json_report_is_written_piece_by_piece_with_the_bytes_render_gives(tmp_path: Path) -> None:
    record = assess(_result())
    written, peak = _written(record, "json", tmp_path / "report.json")
    assert len(written) > 8 * 2**20
    assert peak < len(written) / 4  # never whole: the whole text alone would be all of it
    assert written.decode("utf-8") == render(record, "json")
    data = json.loads(written)
    assert len(data["findings"]) == FINDINGS
    odd = [f for f in data["findings"] if "\\xe9" in f["path"]]
    assert len(odd) == len(range(0, FINDINGS, 997))
    assert odd[0]["evidence"].endswith("\u202e\u00e9")  # read back as written, shown escaped in the file
    assert b"\\u202e" in written and "\u202e".encode() not in written


@pytest.mark.slow  # the same findings as a SARIF log, rendered twice and dumped once whole, about three seconds
def test_a_sarif_log_is_written_result_by_result_with_the_bytes_of_the_whole_document(tmp_path: Path) -> None:
    from migrate.escape import in_json
    from migrate.report import sarif

    record = assess(_result())
    written, peak = _written(record, "sarif", tmp_path / "report.sarif")
    assert peak < len(written) / 4
    whole = in_json(json.dumps(sarif.as_dict(record), indent=2, ensure_ascii=False)) + "\n"
    assert written.decode("utf-8") == whole == render(record, "sarif")
    results = json.loads(written)["runs"][0]["results"]
    assert len(results) == FINDINGS
    assert sum("\\xe9" in r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results) == 0
    assert b"\\u202e" in written and "\u202e".encode() not in written


def test_a_sarif_log_without_findings_has_an_empty_list_of_results() -> None:
    from migrate.report import sarif

    empty = ScanResult(root="repo", targets=("gfx942",), files_scanned=3, findings=(), skipped=())
    text = render(empty, "sarif")
    assert text == json.dumps(sarif.as_dict(assess(empty)), indent=2, ensure_ascii=False) + "\n"
    assert json.loads(text)["runs"][0]["results"] == []


@pytest.mark.slow  # a page of 12,000 findings, rendered twice, about two seconds
def test_an_html_page_is_written_a_block_at_a_time_each_escaped_as_the_whole_page_was(tmp_path: Path) -> None:
    from migrate.escape import document, surrogates
    from migrate.report import html

    record = assess(_result())
    page, peak = _written(record, "html", tmp_path / "report.html")
    tracemalloc.start()
    try:
        whole = document(surrogates(html._template().render(**html._context(record))))  # the page made whole
        _, peak_whole = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    written = page.decode("utf-8")
    assert len(written) > 2 * html._BLOCK
    assert written == whole == render(record, "html")
    assert peak < peak_whole / 2  # what is left is what the template reads (its groups of findings)
    assert "caf\\xe9" in written and "\u202e" not in written
