"""python-te-fp8-autocast: FP8 execution turned on through TransformerEngine, one finding per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.scan import scan
from test_python_rules import OTHER_RULES, findings

RULE = "python-te-fp8-autocast"


def _ours(tmp_path: Path, source: str) -> list[tuple[str, int, str]]:
    return [f for f in findings(tmp_path, source) if f[0] == RULE]


def test_every_call_is_an_occurrence_of_one_finding(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "import transformer_engine.pytorch as te\n"
        "from transformer_engine.pytorch import fp8_model_init\n"
        "def step(m, x):\n"
        "    with te.fp8_autocast(enabled=True):\n"
        "        y = m(x)\n"
        "    with fp8_model_init(enabled=True):\n"
        "        return y\n", encoding="utf-8")
    result = scan(tmp_path, OTHER_RULES)
    [finding] = [f for f in result.findings if f.rule == RULE]
    assert (finding.line, finding.severity.label) == (4, "low")
    assert [o.line for o in finding.occurrences] == [4, 6]


@pytest.mark.parametrize("source", [
    "from transformer_engine.jax import fp8_autocast\nwith fp8_autocast(enabled=True):\n    pass\n",
    "import transformer_engine.tensorflow as te\nwith te.fp8_autocast(enabled=True):\n    pass\n",
])
def test_jax_and_tensorflow(tmp_path: Path, source: str) -> None:
    assert _ours(tmp_path, source) == [(RULE, 2, "low")]


@pytest.mark.parametrize("source", [
    # torch's own autocast
    "import torch\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    pass\n",
    # a project's own helper of the same name
    "import contextlib\n@contextlib.contextmanager\ndef fp8_autocast(enabled=True):\n    yield\n"
    "with fp8_autocast(enabled=False):\n    pass\n",
    # the name in a comment and a string
    "# te.fp8_autocast(enabled=True)\nHELP = 'run under te.fp8_autocast(enabled=True)'\n",
])
def test_quiet(tmp_path: Path, source: str) -> None:
    assert _ours(tmp_path, source) == []
