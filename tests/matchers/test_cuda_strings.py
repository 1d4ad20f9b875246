"""c-string: a regex from a string literal's opening quote, in code only (its parameter checks are in
test_cuda_rules.py)."""

from __future__ import annotations

from pathlib import Path

from migrate.matchers.cuda_strings import match_c_string
from migrate.model import FileKind, SourceFile
from migrate.parse.cuda import parse_cuda

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



def test_the_tree_form_asks_its_needles_first(tmp_path: Path) -> None:
    """On a parsed file the rule runs only where its text holds a needle (the scan's token path leaves the rule out
    of such a file before string_hits is asked: prefilter.Plan.token_runs)."""
    from migrate.matchers.cuda_strings import string_hits
    from migrate.parse.lexer import lex

    code = 'auto a = "-arch=sm_" + cc;\n'
    params = {**_PARAMS, "needles": ["--gpu-architecture"]}
    source = SourceFile(tmp_path / "a.cpp", "a.cpp", FileKind.CPP, len(code))
    assert list(match_c_string(parse_cuda(source, code), params)) == []
    assert [hit.line for hit in string_hits(lex(code, frozenset()), code, params)] == [1]
