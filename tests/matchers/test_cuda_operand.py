"""cuda-operand: what device-compute-capability found as a tree-sitter query, found by walking up from each name;
and the cuda-query rules' queries, checked all at once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from migrate.errors import RuleFileError
from migrate.matchers.cuda_operand import match_cuda_operand
from migrate.matchers.cuda_query import match_cuda_query
from migrate.model import FileKind, SourceFile
from migrate.parse.cuda import parse_cuda
from migrate.ruleset import load, load_builtin

_CALLS = r"(^|::|[.>])([Gg]et_?)?[Ss][Mm]_?([Vv]ersion|[Aa]rch)$|(^|::|[.>])[Cc]apability$"
# The query the rule was before: each shape it matched, as the walk must find it.
_QUERY = f"""
((binary_expression left: (field_expression argument: (_) @obj field: (field_identifier) @hit))
  (#match? @hit "^(major|minor)$") (#match? @obj "[Pp]rop"))
((binary_expression right: (field_expression argument: (_) @obj field: (field_identifier) @hit))
  (#match? @hit "^(major|minor)$") (#match? @obj "[Pp]rop"))
((init_declarator value: (field_expression argument: (_) @obj field: (field_identifier) @hit))
  (#match? @hit "^(major|minor)$") (#match? @obj "[Pp]rop"))
((assignment_expression right: (field_expression argument: (_) @obj field: (field_identifier) @hit))
  (#match? @hit "^(major|minor)$") (#match? @obj "[Pp]rop"))
((return_statement (field_expression argument: (_) @obj field: (field_identifier) @hit))
  (#match? @hit "^(major|minor)$") (#match? @obj "[Pp]rop"))
((binary_expression left: (call_expression function: (_) @hit)) (#match? @hit "{_CALLS}"))
((binary_expression right: (call_expression function: (_) @hit)) (#match? @hit "{_CALLS}"))
((init_declarator value: (call_expression function: (_) @hit)) (#match? @hit "{_CALLS}"))
"""
_OPERAND = {"matcher": "cuda-operand", "needles": ["major", "minor", "SMVersion", "apability"], "fields": ["major", "minor"],
            "object": "[Pp]rop", "calls": _CALLS, "call_words": "(?i:capability|sm_?version|sm_?arch)"}

_CODE = """
#define CC(p) ((p).major * 10 + (p).minor)
struct P { int major, minor; };
int a(const P& prop, P* dprop, P other) {
  int x = prop.major, y = dprop->minor;
  x = prop.minor; x += (dprop)->major;
  if (other.major > 7 || props_of(0).minor < 2 || at::cuda::getCurrentDeviceProperties()->major >= 9) return 1;
  int z = -prop.major + !prop.minor;
  use(prop.major); P q = {prop.major};
  x = cond ? prop.major : 0;
  if (prop.major
      >= 8) return prop.minor;
  if (getSMVersion() >= 90 || 80 < obj.getSmArch() || ns::detail::device_capability() == 3) return 2;
  int v = a::Capability(), w = capability(), s = sm_version_num() + getSMVersion<int>() * (getSMArch)();
  auto u = prop. major ;
  return prop.major;  // prop.minor == 1
}
"""


def _lines(hits: object) -> list[tuple[int, int, int | None, str | None]]:
    return [(h.line, h.column, h.end_line, h.symbol) for h in hits]  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", [Path("fixtures/rules/cuda/compute_capability.cpp"), None])
def test_the_walk_finds_what_the_query_found(tmp_path: Path, path: Path | None) -> None:
    code = path.read_text(encoding="utf-8") if path is not None else _CODE
    source = SourceFile(tmp_path / "a.cu", "a.cu", FileKind.CUDA, len(code))
    doc = parse_cuda(source, code)
    found = _lines(match_cuda_query(doc, {"matcher": "cuda-query", "query": _QUERY}))
    # the one shape the walk leaves out on purpose: what `<<` writes to a stream (`log << "cc " << prop.major`)
    printed = {n for n, text in enumerate(code.splitlines(), start=1) if re.match(r'\s*[\w:]+\s*<<\s*"', text)}
    expected = [hit for hit in found if hit[0] not in printed]
    assert expected  # the shapes are there
    assert _lines(match_cuda_operand(doc, _OPERAND)) == expected


def test_a_field_written_to_a_stream_is_printed_not_compared(tmp_path: Path) -> None:
    code = ('void f(const P& prop, std::ostream& log) {\n  log << "cc " << prop.major << "." << prop.minor;\n'
            '  int packed = prop.major << 4;\n}\n')
    doc = parse_cuda(SourceFile(tmp_path / "a.cu", "a.cu", FileKind.CUDA, len(code)), code)
    assert [hit[:2] for hit in _lines(match_cuda_operand(doc, _OPERAND))] == [(3, 21)]


def test_the_rule_is_decided_by_the_walk() -> None:
    rule = load_builtin().by_id("device-compute-capability")
    assert rule is not None and rule.match["matcher"] == "cuda-operand"


@pytest.mark.parametrize(
    "change, error",
    [
        ({"fields": []}, "'fields'"),
        ({"fields": ["a.b"]}, "'fields'"),
        ({"object": "("}, "bad 'object' regex"),
        ({"calls": None}, "'calls'"),
        ({"call_words": "[a"}, "bad 'call_words' regex"),
        ({"variables": "(["}, "bad 'variables' regex"),
        ({"variables": 3}, "'variables'"),
        ({"code": ["("]}, "bad 'code' regex"),
    ],
)
def test_broken_operand_rules_name_the_file_and_rule(tmp_path: Path, change: dict[str, object], error: str) -> None:
    import yaml

    rule = {"id": "broken-rule", "title": "t", "category": "other", "languages": ["cuda"], "severity": "low",
            "message": "m", "match": {**_OPERAND, **change}}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"rules": [rule]}), encoding="utf-8")
    with pytest.raises(RuleFileError, match=r"bad\.yaml: rule broken-rule: .*") as caught:
        load([tmp_path])
    assert error in str(caught.value)


def test_a_bad_query_among_good_ones_is_named(tmp_path: Path) -> None:
    import yaml

    def rule(rule_id: str, query: str, **extra: object) -> dict[str, object]:
        return {"id": rule_id, "title": "t", "category": "other", "languages": ["cuda"], "severity": "low",
                "message": "m", "match": {"matcher": "cuda-query", "query": query, **extra}}

    rules = [rule("good-one", "(identifier) @hit"), rule("good-alone", "(number_literal) @hit", alone=True),
             rule("bad-one", "(call_expression nope: (identifier) @hit)", alone=True)]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"rules": rules}), encoding="utf-8")
    with pytest.raises(RuleFileError, match=r"rules\.yaml: rule bad-one: bad tree-sitter query"):
        load([tmp_path])
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"rules": rules[:2]}), encoding="utf-8")
    assert [r.id for r in load([tmp_path]).rules] == ["good-one", "good-alone"]
