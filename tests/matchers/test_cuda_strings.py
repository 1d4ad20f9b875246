"""c-string: a regex from a string literal's opening quote, in code only; its rule parameters checked."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from migrate.errors import RuleFileError
from migrate.matchers.cuda_strings import match_c_string
from migrate.model import FileKind, SourceFile
from migrate.parse.cuda import parse_cuda
from migrate.ruleset import load

_PARAMS = {"matcher": "c-string", "needles": ["=sm_"], "pattern": '"-arch=sm_"'}


def _lines(tmp_path: Path, code: str) -> list[int]:
    source = SourceFile(tmp_path / "a.cpp", "a.cpp", FileKind.CPP, len(code))
    return [hit.line for hit in match_c_string(parse_cuda(source, code), _PARAMS)]


def test_only_literals_in_code_match(tmp_path: Path) -> None:
    code = (
        'auto a = "-arch=sm_" + cc;\n'          # a literal: fires
        '// auto b = "-arch=sm_" + cc;\n'       # a comment: quiet
        '/* "-arch=sm_" */ int c = 0;\n'        # a block comment: quiet
        'auto d = R"(-arch=sm_)";\n'            # a raw string spells no opening quote before the option: quiet
        'auto e = "x", f = "-arch=sm_";\n'      # the second literal of a line: fires
    )
    assert _lines(tmp_path, code) == [1, 5]


@pytest.mark.parametrize(
    "change, error",
    [
        ({"pattern": "-arch=sm_"}, "opening quote"),
        ({"pattern": '"(['}, "bad 'pattern' regex"),
        ({"needles": []}, "'needles'"),
    ],
)
def test_broken_rules_name_the_file_and_rule(tmp_path: Path, change: dict[str, object], error: str) -> None:
    rule = {"id": "broken-rule", "title": "t", "category": "other", "languages": ["cpp"], "severity": "low",
            "message": "m", "match": {**_PARAMS, **change}}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"rules": [rule]}), encoding="utf-8")
    with pytest.raises(RuleFileError, match=r"bad\.yaml: rule broken-rule: .*") as caught:
        load([tmp_path])
    assert error in str(caught.value)
