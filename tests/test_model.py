"""The data between the stages: a file's result written as dicts (the JSON report's findings, the cache's entries)
and read back whole; anything else read back is refused."""

from __future__ import annotations

import dataclasses
import json

import pytest

from migrate.model import Evidence, FileResult, Finding, Occurrence, Severity, Skipped

FULL = Finding("d\udcff/é.cu", 7, 3, "r2", "cuda-library", Severity.BLOCKER, 9, "tab\there", "\x7f\u202e", "hipX",
               ("a", "b"), True, "cudaMalloc", (1, 2.5), "covered", (Occurrence(7, 3, 7, "x"), Occurrence(9, 1, 10, "")))
BARE = Finding("a.cu", 1, 1, "r", "other", Severity.INFO, 1, "m", "e")


def fields(finding: Finding) -> tuple[object, ...]:
    return dataclasses.astuple(finding)  # every field, those that do not take part in == too


@pytest.mark.parametrize("finding", [FULL, BARE, BARE.guarded()])
def test_a_finding_comes_back_from_its_dict_through_json(finding: Finding) -> None:
    assert fields(Finding.from_dict(json.loads(json.dumps(finding.to_dict())))) == fields(finding)


def test_a_file_result_comes_back_from_its_dict_through_json() -> None:
    result = FileResult("d\udcff/é.cu", (FULL, BARE), skipped=Skipped("d\udcff/é.cu", "part left out"), guarded=4,
                        partial=True, guarded_findings=(BARE.guarded(),), directives=((3, "if", "X > 1"),),
                        evidence=(Evidence("guard", "d\udcff/é.cu", 2, "#ifdef __HIP_PLATFORM_AMD__", 2),))
    back = FileResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back == result
    assert [fields(f) for f in back.findings] == [fields(f) for f in result.findings]


@pytest.mark.parametrize("change", [
    {"severity": "huge"}, {"severity": 3}, {"line": "7"}, {"hip": 1}, {"symbol": 5}, {"effort": [1]},
    {"vendored": "yes"}, {"substitutions": "a"}, {"occurrences": [{"line": 1}]}, {"colour": "red"},
])
def test_a_finding_of_any_other_shape_is_refused(change: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Finding.from_dict({**FULL.to_dict(), **change})


def test_a_finding_without_a_field_is_refused() -> None:
    data = FULL.to_dict()
    del data["status"]
    with pytest.raises(ValueError):
        Finding.from_dict(data)


def test_a_finding_comes_back_whole_from_a_worker() -> None:
    import pickle

    # the pool's workers send findings pickled; an occurrence is a named tuple, and still compares as a place
    back = pickle.loads(pickle.dumps((FULL, BARE.guarded())))
    assert [fields(f) for f in back] == [fields(FULL), fields(BARE.guarded())]
    assert type(back[0].occurrences[0]) is Occurrence and back[0].occurrences[1].evidence == ""
    assert Occurrence.from_dict(back[0].occurrences[0].to_dict()) == Occurrence(7, 3, 7, "x")
