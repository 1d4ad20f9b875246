"""benchmarks/parse_reasons.py: which rules send first-party C/C++ files to a parse, and whether they fire there."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import parse_reasons  # noqa: E402

KERNEL = "__global__ void k(float* out) {\n  out[threadIdx.x] = 1.0f;\n  __syncwarp();\n}\n"
PLAIN = "int add(int a, int b) { return a + b; }\n"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_a_rule_that_sends_a_file_and_fires_there(tmp_path: Path, capsys: object) -> None:
    tree = _tree(tmp_path, {"k.cu": KERNEL, "plain.cpp": PLAIN})
    assert parse_reasons.main([str(tree)]) == 0
    out = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
    assert out[0].startswith("# 1 of 2 first-party C/C++ files parsed;")
    assert out[1:] == ["rule\tpassed\tfired\talone\talone_fired", "syncwarp-without-mask\t1\t1\t1\t1"]


def test_vendored_files_and_files_no_rule_needs_are_not_parsed(tmp_path: Path, capsys: object) -> None:
    tree = _tree(tmp_path, {"third_party/lib/k.cu": KERNEL, "plain.cpp": PLAIN})
    assert parse_reasons.main([str(tree)]) == 0
    out = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
    assert out[0].startswith("# 0 of 1 first-party C/C++ files parsed;")
    assert out[1:] == ["rule\tpassed\tfired\talone\talone_fired"]


def test_top_keeps_the_rules_that_send_the_most_files() -> None:
    found = parse_reasons.Reasons(files=3, parsed=3)
    parse_reasons._count(found, ["a", "b"], None)
    parse_reasons._count(found, ["b"], None)
    assert parse_reasons.lines(found, 1)[1:] == ["rule\tpassed\tfired\talone\talone_fired", "b\t2\t0\t1\t0"]
    assert parse_reasons.lines(found, 0)[2:] == ["b\t2\t0\t1\t0", "a\t1\t0\t0\t0"]
