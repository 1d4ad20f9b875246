"""A rule's hits -> findings: the path for a file with no suppressed and no guarded line gives what the hit-by-hit
path gives, and a folded finding's occurrences read their lines as Document.line_text does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from migrate.config import Settings
from migrate.matchers import Hit
from migrate.model import FileKind, Occurrence, Rule, Severity, SourceFile
from migrate.parse.document import EVIDENCE, Document
from migrate.scan import MAX_FINDINGS_PER_RULE, MAX_OCCURRENCES
from migrate.scan.findings import _OCCURRENCE_EVIDENCE, _occurrences, file_result
from migrate.packed import decode, encode

RULE = Rule(id="r", title="t", category="cuda-runtime-api", languages=("cuda",), severity=Severity.HIGH,
            message="m", hip=None, match={})
ONCE = Rule(id="once", title="t", category="cuda-library", languages=("cuda",), severity=Severity.LOW,
            message="m", hip=None, match={}, per_file=True)


def _doc(text: str, guarded: list[tuple[int, int]] | None = None) -> Document:
    source = SourceFile(path=Path("/x/a.cu"), relpath="a.cu", kind=FileKind.CUDA, size=len(text))
    return Document(source=source, text=text, guarded_ranges=guarded or [])


def _text(lines: int) -> str:
    return "".join(f"  cudaMalloc(p{n}, 4);\n" for n in range(1, lines + 1))


def test_a_list_of_hits_past_the_cap_is_counted_once() -> None:
    calls = MAX_FINDINGS_PER_RULE + MAX_OCCURRENCES + 700
    hits = [Hit(n, 3) for n in range(1, calls + 1)]  # a list, not a generator: the count must not start over
    result = file_result(_doc(_text(calls)), [(RULE, hits)], Settings())
    rest = calls - (MAX_FINDINGS_PER_RULE - 1)
    assert len(result.findings) == MAX_FINDINGS_PER_RULE
    assert f"({rest:,} places in this file past the first" in result.findings[-1].message


def test_the_shortcut_gives_what_the_hit_by_hit_path_gives() -> None:
    calls = MAX_FINDINGS_PER_RULE + 300
    text = _text(calls)

    def runs() -> list[tuple[Rule, Iterator[Hit]]]:
        return [(RULE, iter([Hit(n, 3) for n in range(1, calls + 1)])),
                (ONCE, iter([Hit(n, 5) for n in range(calls, 0, -2)]))]

    plain = file_result(_doc(text), runs(), Settings())
    # a range past the last line sends every hit through the hit-by-hit path, and guards none of them
    asked = file_result(_doc(text, guarded=[(calls + 5, calls + 9)]), runs(), Settings())
    assert plain == asked
    assert [f.occurrences for f in plain.findings] == [f.occurrences for f in asked.findings]
    assert plain.guarded == asked.guarded == 0


def test_guarded_and_suppressed_lines_still_count() -> None:
    text = _text(6).replace("(p2, 4);", "(p2, 4);  // migrate: ignore[r]")
    hits = [Hit(n, 3) for n in range(1, 7)]
    result = file_result(_doc(text, guarded=[(5, 6)]), [(RULE, hits)], Settings())
    assert [f.line for f in result.findings] == [1, 4]  # 2 and 3 suppressed (its line and the next)
    assert [f.line for f in result.guarded_findings] == [5, 6]


def test_occurrences_read_lines_as_line_text_does() -> None:
    long = "x = " + "cudaMalloc(p, 4); " * (EVIDENCE // 10)
    doc = _doc(f"  short line  \n{long}\n\n")
    places = [(1, 3, 1), (2, 40, 2), (3, 1, 3), (4, 1, 4), (0, 1, 0)]
    expected = tuple(Occurrence(line, column, end, doc.line_text(line)[:_OCCURRENCE_EVIDENCE])
                     for line, column, end in places)
    assert _occurrences(doc, places) == expected
    assert all(type(o) is Occurrence for o in _occurrences(doc, places))


def test_encoded_places_come_back_occurrences() -> None:
    calls = 50
    found = file_result(_doc(_text(calls)), [(ONCE, [Hit(n, 3) for n in range(1, calls + 1)])], Settings())
    before = found.findings[0].occurrences
    (after,) = decode(encode(found.findings))
    assert len(before) == calls
    assert after.occurrences == before and all(type(o) is Occurrence for o in after.occurrences)


def test_a_finding_is_made_as_its_constructor_makes_it() -> None:
    from migrate.model import Finding
    hits = [Hit(2, 3, end_line=4, note="n", hip="hipX", symbol="s"), Hit(3, 1, severity=Severity.LOW, optional=True)]
    result = file_result(_doc(_text(5)), [(RULE, hits)], Settings())
    for finding in result.findings:
        fields = vars(finding)
        assert finding == Finding(**fields) and vars(Finding(**fields)) == fields
        assert list(fields) == [f for f in Finding.__dataclass_fields__]  # the class's order, as decode sets them
    assert [(f.line, f.end_line, f.severity, f.status, f.message) for f in result.findings] == [
        (2, 4, Severity.HIGH, "remaining", "m n"), (3, 3, Severity.LOW, "optional-gap", "m")]
