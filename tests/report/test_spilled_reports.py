"""A scan whose findings all come back from disk (none kept decoded) reports what one that holds them does, in
every format, reading them a few times, and the reports group them without a list of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from migrate.assessment import assess
from migrate.config import Settings
from migrate.model import ScanResult
from migrate.report import grouping, render
from migrate.scan import scan, spill
from migrate.scan.spill import SpilledFindings

REPOS = Path(__file__).resolve().parents[2] / "fixtures" / "repos"
FORMATS = ("json", "md", "html", "sarif", "terminal")


def _scan(root: Path, monkeypatch: pytest.MonkeyPatch, *, resident: int) -> ScanResult:
    with monkeypatch.context() as patched:
        patched.setattr(spill, "IN_MEMORY", 0 if resident == 0 else 1 << 30)
        patched.setattr(spill, "RESIDENT", resident)
        return scan(root, Settings(jobs=1))


@pytest.mark.parametrize("repo", ["cutlass-kernels", "ported-residual", "sample-collection"])
def test_every_report_of_a_spilled_scan_is_the_report_of_one_held_in_memory(
    repo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = _scan(REPOS / repo, monkeypatch, resident=1 << 30)
    spilled = _scan(REPOS / repo, monkeypatch, resident=0)
    assert isinstance(spilled.findings, SpilledFindings) and spilled.findings._spill.on_disk
    assert len(spilled.findings) > 10
    held_record, spilled_record = assess(held), assess(spilled)
    assert spilled_record.risk == held_record.risk and spilled_record.checklist == held_record.checklist
    for fmt in FORMATS:
        assert render(spilled_record, fmt) == render(held_record, fmt), fmt


def test_a_spilled_scan_is_read_a_few_times_for_its_assessment_and_reports(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _scan(REPOS / "cutlass-kernels", monkeypatch, resident=0)
    reads = 0
    blocks = SpilledFindings.blocks

    def counted(self: SpilledFindings):  # type: ignore[no-untyped-def]
        nonlocal reads
        reads += 1
        return blocks(self)

    monkeypatch.setattr(SpilledFindings, "blocks", counted)
    record = assess(result)
    assessed = reads
    for fmt in ("json", "terminal"):
        render(record, fmt)
    # the cited rules, the prices, the assessment's sums, its floors (3), the checklist, the blocking work and the
    # substitutes' work; then the JSON report (its counts, its findings, the first screen's) and the summary
    assert assessed <= 10, assessed
    assert reads - assessed <= 8, reads - assessed


def test_a_group_keeps_its_count_first_finding_and_the_places_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    record = assess(_scan(REPOS / "cutlass-kernels", monkeypatch, resident=0))
    tallied = grouping.tally(record, places=2)
    findings = list(record.result.findings)
    for group in tallied.groups:
        members = [f for f in findings if record.context.component(f.path) == group.component and f.rule == group.rule]
        assert group.count == len(members) and group.first == members[0]
        assert group.severity == max(f.severity for f in members)
        assert grouping.placed(record.result.findings, group) == members[1:3]
    assert sum(g.count for g in tallied.groups) == len(findings)
    assert tallied.files == len({f.path for f in findings})
    markdown = render(record, "md")
    big = max(tallied.groups, key=lambda g: g.count)
    assert big.count > 3 and re.search(rf"{big.count - 1} more places", markdown)


def test_files_counted_in_path_order_are_those_a_set_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    # the tally and the first screen count files as their paths change (no dict of every file): findings in any
    # other order (made by hand) are counted by path, the same
    from dataclasses import replace

    from migrate.report import firstscreen

    result = _scan(REPOS / "cutlass-kernels", monkeypatch, resident=1 << 30)
    shuffled = replace(result, findings=tuple(sorted(result.findings, key=lambda f: (f.line, f.rule, f.path))))
    in_order, mixed = grouping.tally(assess(result), worst_files=3), grouping.tally(assess(shuffled), worst_files=3)
    paths = {f.path for f in result.findings}
    assert len(paths) > 3 and in_order.files == mixed.files == len(paths)
    assert in_order.worst_files == mixed.worst_files and len(in_order.worst_files) == 3
    heaviest = sorted(dict.fromkeys(f.path for f in result.findings), key=lambda p: -sum(4 ** int(f.severity) for f in result.findings if f.path == p))
    assert [path for path, _, _ in in_order.worst_files] == heaviest[:3]
    assert firstscreen.counts(assess(result)) == firstscreen.counts(assess(shuffled))
    assert f" in {len(paths)} of " in firstscreen.counts(assess(result))[0][1]


def test_a_spilled_scan_on_several_targets_is_assessed_as_one_held_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    # per target, the findings are read with that target's severities as they come, not copied into a list
    from dataclasses import replace

    targets = ("gfx942", "gfx1100")
    with monkeypatch.context() as patched:
        patched.setattr(spill, "IN_MEMORY", 0)
        patched.setattr(spill, "RESIDENT", 0)
        spilled = scan(REPOS / "cutlass-kernels", Settings(jobs=1, targets=targets))
    held = replace(spilled, findings=tuple(spilled.findings))
    on_each = assess(spilled).per_target
    assert [gfx for gfx, _ in on_each] == list(targets) and on_each == assess(held).per_target
    assert on_each[0][1] != on_each[1][1]  # the warp-size findings weigh differently on 64 and 32 lanes


def test_the_json_report_writes_the_substitutions_answers_as_the_whole_document_has_them(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    # a substitution's (rule, path) answers come a pair a piece, never a list of dicts and a text of them all
    import json as std_json
    from dataclasses import replace

    from migrate.escape import in_json
    from migrate.report import json as json_report

    result = _scan(REPOS / "cutlass-kernels", monkeypatch, resident=1 << 30)
    odd = [replace(s, answers=(*s.answers, ("r", "d\u00e9j\u00e0/\u202e.cu"))) for s in result.substitutions]
    empty = replace(odd[0], id="none-answered", answers=())
    for substitutions in (result.substitutions, (*odd, empty), ()):
        record = assess(replace(result, findings=(), substitutions=tuple(substitutions)))  # the findings apart
        whole = json_report.as_dict(record)
        assert sum(len(s["answers"]) for s in whole["substitutions"]) >= len(substitutions)
        expected = in_json(std_json.dumps(whole, indent=2, ensure_ascii=False)) + "\n"
        assert "".join(json_report.chunks(record)) == expected
