"""The fast path for Python files against the full one: a file is parsed only when a rule has a candidate in it."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from migrate.casefold import FOLDS_TO_ASCII as _FOLDS_TO_ASCII, folded
from migrate.config import Settings
from migrate.discover import discover
from migrate.matchers import Code
from migrate.matchers.python_common import _GAP, as_list, has_attribute, has_name, has_string, has_word, string_candidate
from migrate.matchers.python_literals import required, searches
from migrate.model import FileKind, FileResult, SourceFile
from migrate.parse.python import _HIP_HINT, _may_hint, _walk, parse_python
from migrate.ruleset import load_builtin
from migrate.scan import Shortcuts, prefilter, scan_file

FIXTURES = Path(__file__).parent.parent / "fixtures"

# Real-looking modules with the spellings a text test can get wrong: names split over lines and comments, aliases,
# imports in lists, f-strings, dict keys, strings that only look like code, and files where nothing may fire.
SAMPLES = {
    "split_chain.py": "import torch\nx = (torch  # the module\n     .  # and its\n     cuda.is_available())\n"
                      "y = torch \\\n    .cuda.current_device()\n",
    "import_list.py": "from torch import (\n    nn,  # layers\n    cuda as tc,\n)\nfrom torch.backends import cudnn\n"
                      "tc.synchronize()\ncudnn.benchmark = True\n",
    "alias.py": "import torch as th\nimport pytest\nT = pytest.importorskip('torch')\n"
                "if th.version.cuda and T.version.cuda.split('.')[0] == '11':\n    pass\n",
    "devices.py": "import torch\nrank = 0\nx = torch.zeros(2).to(f'cuda:{rank}')\ny = torch.ones(1, device='cuda')\n"
                  "cfg = {'device': \"cuda\"}\nkw = {}\nkw['device'] = 'cuda:0'\nz = x.cuda()\n",
    "strings.py": "import os, subprocess\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\nbackend = 'nccl'\n"
                  "subprocess.run(['nvidia-smi', '--query-gpu=name', '--format=csv'])\narch = 'sm_90a'\n"
                  "IMAGE = 'nvcr.io/nvidia/pytorch:24.01-py3'\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'\n",
    "quiet.py": "# Runs on cuda devices (see the torch docs).\nfrom vllm.platforms import current_platform\n"
                "def f(x):\n    '''Move x to cuda.'''\n    return current_platform.is_cuda() and x.is_cuda\n"
                "cuda_graph = None\n",
    "capability.py": "import torch\nmajor, minor = torch.cuda.get_device_capability()\nif (major, minor) >= (8, 0):\n"
                     "    pass\nprops = torch.cuda.get_device_properties(0)\nsm = props.major * 10 + props.minor\n",
    "kernels.py": "import triton\nimport triton.language as tl\nfrom numba import cuda\n@triton.jit\ndef k(x):\n"
                  "    tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [x], dtype=tl.int32, is_pure=True, pack=1)\n"
                  "@cuda.jit\ndef g(a):\n    pass\nflops = 312e12\n",
    "libs.py": "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\nimport cupy as cp\n"
               "from transformers import BitsAndBytesConfig\nq = BitsAndBytesConfig(load_in_4bit=True)\n"
               "from torch.utils.cpp_extension import CUDA_HOME, load\nm = load('k', ['k.cu'])\n",
    "broken.py": "import torch\ntorch.cuda.synchronize(\n",
}


def _sources(root: Path) -> list[SourceFile]:
    found = discover(root, files=(), exclude=(), include=(), max_file_size=10**7)
    return [s for s in found if isinstance(s, SourceFile) and s.kind in (FileKind.PYTHON, FileKind.SETUP_PY)]


def _results(sources: list[SourceFile], *, fast: bool) -> list[FileResult]:
    shortcuts = Shortcuts(python_candidates=fast)
    return [scan_file(source, load_builtin(), Settings(), shortcuts) for source in sources]


@pytest.fixture
def samples(tmp_path: Path) -> list[SourceFile]:
    for name, text in SAMPLES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return _sources(tmp_path)


def test_fast_path_equals_full_parse_on_samples(samples: list[SourceFile]) -> None:
    fast = _results(samples, fast=True)
    full = _results(samples, fast=False)
    assert fast == full
    fired = {f.rule for result in full for f in result.findings}
    assert len(fired) >= 15  # the samples exercise most Python rules, not only the quiet path


def test_fast_path_equals_full_parse_on_fixtures() -> None:
    sources = [*_sources(FIXTURES / "repos"), *_sources(FIXTURES / "rules")]
    fast = _results(sources, fast=True)
    full = _results(sources, fast=False)
    assert fast == full and sum(len(r.findings) for r in full) > 50


def _parsed(text: str) -> bool:
    """Whether the scan would parse TEXT: some rule of the Python kind keeps a candidate after the needles."""
    table = prefilter.table(load_builtin(), FileKind.PYTHON)
    return bool(prefilter.with_candidates(prefilter.applicable(table, text), Code(text, ())))


def test_a_file_without_candidates_is_not_parsed() -> None:
    assert not _parsed(SAMPLES["quiet.py"])  # "cuda" only in comments, docstrings and longer names
    assert _parsed(SAMPLES["split_chain.py"])
    assert _parsed(SAMPLES["broken.py"])  # a syntax error is still reported where a rule could fire


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("import torch\ntorch.cuda.init()", True),
        ("import torch\ntorch .\\\n  cuda.init()", True),
        ("from torch import (nn,  # x\n cuda)", True),
        ("from torch import nn as n, cuda", True),
        ("import torch\nx.is_cuda", False),
        ("import torch\ncuda_graph = 1", False),
        ("x.cuda", False),  # torch is not written: nothing can resolve to torch.cuda
    ],
)
def test_has_name(text: str, found: bool) -> None:
    assert has_name(text, "torch.cuda") is found


@pytest.mark.parametrize(
    ("regex", "text", "found"),
    [
        ("^cuda(:|$|\\{)", "x.to('cuda:0')", True),
        ("^cuda(:|$|\\{)", 'f"cuda:{i}"', True),
        ("^cuda(:|$|\\{)", "f'{x}cuda'", True),  # the fixed part of an f-string after a field
        ("^cuda(:|$|\\{)", "is_cuda = 'a cuda'", False),
        ("^nccl$", "backend = 'nccl'", True),
        ("\\b(?:sm|compute)_[1-9]\\d{1,2}[af]?\\b", "arch = 'sm_90a'", True),
        ("\\b(?:sm|compute)_[1-9]\\d{1,2}[af]?\\b", "is_sm_x = 1", False),
        ("libdevice[\\w.]*\\.bc$", "p = 'libdevice.10.bc'", True),
        ("^cuda|rocm", "x = 'on rocm'", True),  # a top-level branch: no prefix is required
    ],
)
def test_string_candidate(regex: str, text: str, found: bool) -> None:
    assert has_string(text, string_candidate(regex)) is found


def test_no_candidate_derived_from_inner_anchors() -> None:
    assert string_candidate("(?:^|[\\s/])nvidia-smi(?:\\s|$)") is None
    assert has_string("anything", None)


def test_walk_visits_every_node_once_with_its_parent() -> None:
    for source in _sources(FIXTURES / "rules"):
        tree = ast.parse(source.path.read_text(encoding="utf-8"))
        nodes, parents, groups = _walk(tree)
        expected = [n for n in ast.walk(tree) if not isinstance(n, (ast.expr_context, ast.operator, ast.unaryop,
                                                                    ast.cmpop, ast.boolop))]
        assert sorted(map(id, nodes)) == sorted(map(id, expected))
        assert all(parents[child] is node for node in expected for child in ast.iter_child_nodes(node)
                   if child in parents)
        assert sum(len(group) for group in groups.values()) == len(nodes)


@pytest.mark.parametrize(("text", "word", "found"), [
    ("x = torch.cuda", "torch", True),
    ("mytorch = 1", "torch", False),  # inside a longer identifier, before it
    ("torchvision", "torch", False),  # and after it
    ("a_torch torch_b torch", "torch", True),  # only the last one stands alone
    ("", "torch", False),
    ("aaa", "aa", False),  # overlapping occurrences: each is inside a longer identifier
    (" aaa-", "aaa", True),
    ("(.-y", ".-", True),  # a word ending in a non-word character needs a word character after it
    ("(.- y", ".-", False),
    ("é1cuda cuda", "cuda", True),
    ("écuda", "cuda", False),  # a non-ASCII letter is a word character
])
def test_has_word_is_the_literal_regex_with_its_neighbours(text: str, word: str, found: bool) -> None:
    """has_word's plain search answers as the regex `word\\b` preceded by no word character does."""
    regex = re.compile(re.escape(word) + r"\b")
    expected = any(m.start() == 0 or not re.match(r"\w", text[m.start() - 1]) for m in regex.finditer(text))
    assert has_word(text, word) is found is expected


def test_only_the_folding_characters_match_ascii_case_insensitively() -> None:
    """folded's premise: beyond ASCII, only these characters match an ASCII letter or digit under re.I."""
    ascii_alike = re.compile("(?i)[a-z0-9]")
    found = {chr(c) for c in range(128, sys.maxunicode + 1) if ascii_alike.match(chr(c))}
    assert found == set(_FOLDS_TO_ASCII)


@pytest.mark.parametrize("text", [
    "x = 1\n", "import torch\nIS_HIP = torch.version.hip\n", "# ─── Gfx942 ───\nok = 1\n", "x = 'ROCm'  # é\n",
    "a = 'Amd'\nb = '\u0130S_H\u0130P'\n", "c = 'gcnArch'\nd = 'h\u0131p'\n", "e = 'gfx\u0663'\n",
    "f = 'ro\u017fcm'\ng = 'cdna'\n", "h = '\u212a'\ni = 'RDNA3'\nj = 'ch\u0130p'\n", "k = 'ß'\nl = 'ﬁhip'\n",
])
def test_hint_lines_are_the_case_insensitive_regex_lines(text: str) -> None:
    """The ROCm hints found in the lower case of a text are what the case-insensitive regex finds, line by line."""
    expected = {text.count("\n", 0, m.start()) + 1 for m in _HIP_HINT.finditer(text)}
    source = SourceFile(Path("m.py"), "m.py", FileKind.PYTHON, len(text))
    assert parse_python(source, text)._hint_lines == expected
    assert _may_hint(folded(text), text) is bool(expected)


@pytest.mark.parametrize(("text", "found"), [
    ("x.cuda()", True), ("x . cuda", True), ("x.\\\n  cuda", True), ("x.  # the device\n  cuda()", True),
    ("x.cudax", False), ("cuda = 1", False), ("x.is_cuda", False), ("'a.' # c\ncuda", False), ("a. # c\ncuda", True),
    ("x.cuda_", False),
])
def test_has_attribute_is_the_regex_with_gaps(text: str, found: bool) -> None:
    """The literal `.cuda` searched first changes no answer of the regex that allows gaps after the dot."""
    assert has_attribute(text, "cuda") is found is (re.search(rf"\.{_GAP}cuda\b", text) is not None)


# Regexes as the Python matchers search whole texts with them (`if_file`, `unless_file`, a switch or identifier as a
# whole word), and shapes the literal derivation must get right: scoped and global case, optional and repeated parts,
# classes, branches, lookarounds, a back reference.
_SEARCHED = [
    r"(?<!\w)(?:(?i:(?:\w*_)?sm_?(?:7[025]|8[0679]|9[0]|10[0-3]|12[01])[af]?(?:_\w*)?))(?!\w)",
    r"(?s)\A(?=.*?(?:\b(?:float16|bfloat16|float8_e\w+)\b|\.(?:half|bfloat16)\(\)))(?=.*?\b(?:cuda|triton)\b)",
    r"(?i:torch\.version\.hip|is_hip\w*|skip_?if_?rocm|\brocm\b)", r"(?i)kernel_[ab]x", r"SKIP(?i:_rocm)",
    r"\b(?:cuda|triton|device)\b", r"abc?d", r"(?:ab){2}cd", r"x(?=yz)yzw", r"(?<=ab)cde", r"(a)bc\1", r"[A-C]x?yz",
    r"(?:foo|ba[rz])+qux", r"(?:foo|\w+)bar", r"(?!abc)abd",
]
_TEXTS = [
    "", "x = 1\n", "import torch\nif torch.version.hip:\n    pass\n", "IS_SM90 = True\n", "is_sm_90a()", "sm_89 x",
    "smsm90_", "Is_Hip_Thing = 0", "skip_If_ROCm", "x = t.half().cuda()\n", "float8_e4m3fn triton", "kernel_BX",
    "KERNEL_\u212aX", "ker\u017fel_ax", "kernel_\u0130x", "SKIP_ROCM SKIP_rocm", "abd abcd", "ababcd", "xyzw", "abcde",
    "abca", "Bxyz byz", "foobazqux", "zzbar", "torch.version.HIP", "\u017fm90 = 1", "sm90\u0130", "é sm_120 é",
]


@pytest.mark.parametrize("regex", _SEARCHED)
def test_literal_search_answers_as_the_regex(regex: str) -> None:
    """The literals every match holds, searched first, change no answer of the regex (case folding included)."""
    for text in _TEXTS:
        assert searches(regex, text) is (re.search(regex, text) is not None), (regex, text)


def test_literals_every_match_holds() -> None:
    assert required(r"(?<!\w)(?:(?i:(?:\w*_)?(?:volta|hopper)(?:_\w*)?))(?!\w)") == (({"volta", "hopper"},), True)
    assert required(r"\A(?=.*?\b(?:cuda|triton)\b)(?=.*?x\.half\(\))") == (({"x.half()"}, {"cuda", "triton"}), False)
    assert required(r"SKIP(?i:_rocm)") == (({"skip_rocm"},), True)
    assert required(r"abc?") is None  # "ab" is too short to rule a text out
    assert required(r"(?i)caf\u00e9") is None  # beyond ASCII, a case-insensitive literal is not folded here
    assert required(r"(?:foo|\w+)bar") == (({"bar"},), False)


def test_every_rule_regex_searched_whole_answers_as_before() -> None:
    """Each `if_file`/`unless_file`, identifier and string regex of the built-in Python rules, over the samples."""
    regexes = {r"\belse\s*:"}
    for rule in load_builtin().for_kind(FileKind.PYTHON):
        params = rule.match
        regexes.update(regex for key in ("if_file", "unless_file") for regex in as_list(params.get(key)))
        regexes.update(rf"(?<!\w)(?:{entry['regex']})(?!\w)" for entry in params.get("identifiers", []))
        for entry in [*params.get("strings", []), *params.get("calls", [])]:  # has_string's patterns
            found = string_candidate(entry["regex"]) if isinstance(entry, dict) and "regex" in entry else None
            regexes.update([found[0].pattern] if found and not found[1] else [])
    assert len(regexes) >= 30
    for regex in regexes:
        for text in [*SAMPLES.values(), *_TEXTS]:
            assert searches(regex, text) is (re.search(regex, text) is not None), (regex, text)
