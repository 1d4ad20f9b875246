"""Searches that replaced a slower regex find what the regex found, on every C/C++/CUDA fixture and on edge cases."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from migrate.casefold import FOLDS_TO_ASCII
from migrate.discover import discover
from migrate.matchers import Code, cuda_common, cuda_library_names, cuda_query, cuda_typename, cuda_warp, python_literals
from migrate.model import FileKind, SourceFile
from migrate.parse import ParseError, lexer, read_text
from migrate.scan import warp_constants

FIXTURES = Path(__file__).parent.parent / "fixtures"

# What the lexer blanked with before: a lazy block comment and an alternation per string character.
_BLANKED_BEFORE = re.compile(
    r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|R"(?P<delim>[^()\\\s]{0,16})\([\s\S]*?\)(?P=delim)"'
    r'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n]){1,8}\'|#[ \t]*include[ \t]*(?P<include>[<"][^>"\n]*[>"])'
)
EDGES = [
    "a /**/ b /***/ c /* x *y*/ d /* ** / */ e",
    "int x; /* never closed **",
    "int x; /* never closed\n  still open *",
    "/*/ not closed by its own star */ z",
    'char* s = "a\\"b" "c\\\\" "\\\n"; char* t = "open\nint y;',
    "char c = '\\''; char d = 'ab'; /* multi\nline\n*/ int z; // end\n",
    '  #  include <cuda_runtime.h>\nx = 1; #include "no.h"\n#include "a.h" // c\n',
    'R"delim(raw "text" /* not a comment */)delim" after',
    "** */ /* *//* */ ///* \n",
]


def _before(text: str) -> tuple[str, list[tuple[str, int]]]:
    includes: list[tuple[str, int]] = []

    def blank(match: re.Match[str]) -> str:
        if match.group("include") is not None:
            start = match.start()
            if not text[text.rfind("\n", 0, start) + 1 : start].strip():
                includes.append((match.group("include")[1:-1].strip(), match.start("include")))
        return re.sub(r"[^\n]", " ", match.group())

    return _BLANKED_BEFORE.sub(blank, text), includes


def _texts() -> list[str]:
    found = []
    for item in discover(FIXTURES, files=(), exclude=(), include=(), max_file_size=10**7):
        if isinstance(item, SourceFile) and item.kind in (FileKind.CUDA, FileKind.CPP, FileKind.C):
            try:
                found.append(read_text(item))
            except ParseError:
                continue
    return found


@pytest.fixture(scope="module")
def codes() -> list[str]:
    """The blanked code of every C/C++/CUDA fixture, and the edge cases."""
    return [lexer._code_view(text)[0] for text in [*_texts(), *EDGES]]


def test_blanking_is_what_the_regex_before_blanked() -> None:
    texts = [*_texts(), *EDGES]
    assert len(texts) > 100
    assert [lexer._code_view(text) for text in texts] == [_before(text) for text in texts]
    assert lexer._code_view("a /* x **")[0] == "a        "


MEMBER_TEMPLATES = [
    "template <int N> void f() { Sums<N, 4>::dispatch<M>(x); }",
    "template <class T> void f() { T::run<2>(x); }",
    "template <class T> void f() { Kernel_traits :: run < 2 > ( x ); }",
    "template <class T> void f() { KT::run<2>(x); }",
    "template <class T> void f() { std::max<int>(a, b); }",
    "template <class T> void f() { a::T::run<2>(x); }",
    "template <class T> void f() { BlockReduce<T, 4>(s).Sum<V>(x); }",
    "template <class T> void f() { x > :: y<1>(z); Ab1::c<d>(e); Z  ::c<d>(e); }",
    "template <class T> void f() { Ab:::run<2>(x); A_b::run<1;>(x); }",
    "void f() { Sums<N, 4>::dispatch<M>(x); }",
]


def test_member_template_candidates_are_what_the_regex_finds(codes: list[str]) -> None:
    texts = [*codes, *MEMBER_TEMPLATES]
    expected = ["template" in t and cuda_typename._MAYBE_MEMBER_TEMPLATE.search(t) is not None for t in texts]
    assert [cuda_typename._maybe_member_template(Code(t, ())) for t in texts] == expected
    assert sum(expected[-len(MEMBER_TEMPLATES):]) == 6


WARP_NAMES = ("WARP_SIZE kWarpSize _WARP_ X_WARPSIZE kNWarps WarpSize warp_size kwarpWarp FOO_WARP_bar éWARP WARP2"
              " kWarp")


def test_warp_constant_names_are_what_the_regex_finds(codes: list[str]) -> None:
    regex = re.compile(r"\b(?:[A-Z0-9_]*WARP[A-Z0-9_]*|k\w*Warp\w*)\b")
    for text in [*codes, WARP_NAMES]:
        assert cuda_warp._constant_names(text) == set(regex.findall(text))
    assert cuda_warp._constant_names(WARP_NAMES) == {"WARP_SIZE", "kWarpSize", "_WARP_", "X_WARPSIZE", "kNWarps",
                                                      "kwarpWarp", "WARP2", "kWarp"}


def test_library_names_are_found_where_the_regex_of_spellings_finds_them(codes: list[str]) -> None:
    words = ("cublas", "cudnn", "cusparse", "nvrtc")
    regex = re.compile("|".join(map(re.escape, cuda_library_names._spellings(words))))
    automaton = cuda_library_names._automaton(words)
    for text in [*codes, "CUBLAS_CHECK cuBLASLt get_cudnn_version nvrtcCompile NVRTC cublascublas"]:
        found = [(start, stop) for _, start, stop in automaton.find_matches_as_indexes(text)]
        assert found == [(m.start(), m.end()) for m in regex.finditer(text)]


def test_query_code_strings_are_found_as_their_regexes_find_them(codes: list[str]) -> None:
    strings = ("nvinfer1", "IPlugin", "createInfer", "cuda")
    for patterns in (strings, strings[:1], ("cuda.h",), (r"tex\w*\(", "cuda")):
        finder = cuda_query._regex_finder(patterns)
        for text in [*codes, "x = nvinfer1::Dims(); #include <cudaXh>"]:
            assert finder(text) == any(re.search(p, text) for p in patterns)
    assert not cuda_query._string_finder(("cuda.h",))("cudaXh")


COMMENT_RUNS = [
    "// one\n// two\n  // three, indented\n\t// after a tab\n//\n// \nint x; // trailing\n   // next\n",
    "a(); // x\n\n// after a blank line\n  \n  // after spaces only\n",
    "// a \\\n still the comment's line? no: the next line\n// b\r\n// c\r\n",
    "//// ///\n// /* not a block */\n  // \"not a string\"\n#include <x.h> // c\n  //",
]


def test_runs_of_line_comments_blank_as_each_comment_does() -> None:
    for text in COMMENT_RUNS:
        assert lexer._code_view(text) == _before(text)
    assert lexer._code_view(COMMENT_RUNS[0])[0].count("\t") == 1  # the tab before a comment is kept


def test_one_pass_for_every_rules_strings_answers_as_a_search_each(codes: list[str]) -> None:
    sets = [("nvinfer1", "IPlugin", "createInfer"), ("cuda", "cudaMalloc"), ('"cu', "cu"), ("__global__",),
            ("absent-string", "another absent one")]
    places = cuda_common.StringPlaces()
    tests = [places.any_of(strings) for strings in sets]
    late = places.any_of(("cudaMalloc", "hip"))  # a string added later: a new automaton
    for text in [*codes, 'x = "cuda"; nvinfer1::Dims d; hipMalloc', ""]:
        assert [test(text) for test in tests] == [any(s in text for s in strings) for strings in sets]
        assert late(text) == ("cudaMalloc" in text or "hip" in text)


WORD_TEXTS = [
    "sm_80 at the start", "at the end sm_90", "x_sm_86_y, sm_75a; SM_120 Sm89", "sm_800 sm_8 sm_80x1 asm_80",
    "sm_80sm_90 sm_sm_90", "nothing here", "", "sm_90\nsm_70", "(sm_70)", "é sm_90 ü", "ſm_90",
    "use allclose(a, b) and assert_close", "allclose_x xallclose", "cufft_plan_cache cudart libcublasLt_static",
]
WORD_REGEXES = [
    r"(?<!\w)(?:(?i:(?:\w*_)?sm_?(?:7[025]|8[0679]|9[0]|10[0-3]|11[0]|12[01])[af]?(?:_\w*)?))(?!\w)",
    r"(?<!\w)(?:allclose|assert_close|assert_allclose)(?!\w)",
    r"(?<!\w)(?:(?!cufft_plan_cache$|cudart$)(?i:\w*(?:cublas|cusparse|cufft|nvrtc|cudart)\w*))(?!\w)",
    r"(?<!\w)(?:sm_90|x.y)(?!\w)",  # not only word characters: the regex itself runs
    r"(?<!\w)sm_90|sm_80(?!\w)",  # an alternation of the whole: the regex itself runs
]


def test_whole_word_regexes_are_found_where_the_regex_finds_them(codes: list[str]) -> None:
    assert python_literals._whole_word(WORD_REGEXES[0]) is not None
    assert python_literals._whole_word(WORD_REGEXES[1]) is not None
    assert python_literals._whole_word(WORD_REGEXES[3]) is None
    assert python_literals._whole_word(WORD_REGEXES[4]) is None
    for regex in WORD_REGEXES:
        for text in [*WORD_TEXTS, *codes[:50]]:
            assert python_literals.searches(regex, text) == (re.search(regex, text) is not None), (regex, text)


def test_rule_code_regexes_are_found_where_a_search_of_each_finds_them(codes: list[str]) -> None:
    from migrate.ruleset import load_builtin
    sets = [tuple(rule.match["code"]) for rule in load_builtin().rules
            if rule.match["matcher"] in ("cuda-query", "cuda-operand") and rule.match.get("code")]
    sets += [(r"b(?<=ab)c", r"(?i)cuda\w+"), (r"\bshfl\w*\(", "x?cuda"), (r"(?:a|b)c", "__syncwarp")]
    assert len(sets) > 10
    assert cuda_query.literal_prefix(r"hfl(?<=\bshfl)\w*") == "hfl"
    assert cuda_query.literal_prefix(r"#(?:[ \t]|\\\n)*if") == "#"
    assert cuda_query.literal_prefix(r"ab?c") == "a" and cuda_query.literal_prefix(r"(?i)cuda") == ""
    assert cuda_query.literal_prefix(r"ab|cd") == "" and cuda_query.literal_prefix(r"x?y") == ""
    extra = ["abc abc", "xshfl(", "a shfl_sync(", "__shfl_xor_sync (", "CUDAFOO", "#if __CUDA_ARCH__\n", "p.major;"]
    finders = [cuda_query._regex_finder(patterns) for patterns in sets]
    for text in [*codes, *extra]:
        assert [finder(text) for finder in finders] == [
            any(re.search(p, text) for p in patterns) for patterns in sets]


PREFIX_SEARCHES = [
    r"\bcuda[A-Z][A-Za-z0-9]*[ \t]*\(",  # a word's start, then a literal: tried where `cuda` occurs
    r"(?<![a-z])aab",  # overlapping occurrences of the prefix: `aaab` holds one that fails, then one that matches
    r"^#include",  # not multiline: only at the text's start
    r"(?m)^[ \t]*#[ \t]*if",  # no literal after the zero-width test: the regex itself
    r"(?=cudaMalloc)cuda\w+\(",
    r"\b(?:x|cuda)y",  # an alternation first: the regex itself
]
PREFIX_TEXTS = ["aaab aab", "xaab", "int a = cudaMalloc(p);", "mycudaMalloc(p)", "x\n#include <a.h>", "#include <a>",
                "  #  if X", "cudaMalloc (", "xcuday", ""]


def test_a_regex_after_zero_width_tests_is_tried_where_its_literal_prefix_occurs(codes: list[str]) -> None:
    assert cuda_query.literal_prefix(PREFIX_SEARCHES[0]) == "cuda"
    assert cuda_query.literal_prefix(PREFIX_SEARCHES[1]) == "aab"
    assert cuda_query.literal_prefix(PREFIX_SEARCHES[3]) == "" and cuda_query.literal_prefix(PREFIX_SEARCHES[5]) == ""
    assert cuda_query.folded_prefix(r"(?i)\bcuda\w") == "cuda"
    for text in [*codes, *PREFIX_TEXTS]:
        for regex in PREFIX_SEARCHES:
            assert cuda_query.prefix_search(regex, text) == (re.search(regex, text) is not None), (regex, text)


WARP_DECLARATIONS = ("const int WARP_SIZE = 32;\n  static constexpr unsigned kWarpSize = 32u; // const\n"
                     "int x; const int WARP_LANES = 32;\nstatic int THREADS_PER_WARP = 32; const char* c;\n"
                     "__device__ const int WARP_WIDTH=32;")


def test_warp_constants_are_the_declarations_the_regex_finds_with_const(codes: list[str]) -> None:
    for text in [*codes, WARP_DECLARATIONS]:
        assert [m.span() for m in warp_constants._const_lines(text) if "const" in m.group(1)] == [
            m.span() for m in warp_constants._DECLARATION.finditer(text) if "const" in m.group(1)]
    lines = [d.argument for d in warp_constants.declarations(WARP_DECLARATIONS, (), lambda offset: 1)]
    assert lines == ["WARP_SIZE 32", "kWarpSize 32u", "WARP_WIDTH 32"]


def test_a_word_asked_again_of_the_same_text_gets_the_same_answer() -> None:
    from migrate.matchers import python_common
    texts = ["import torch\nx = torch.cuda", "torchvision only", "import torch\nx = torch.cuda"]
    for text in texts:
        for word in ("torch", "cuda", "vision", "torch", "cuda", ""):
            assert python_common.has_word(text, word) == python_common._has_word(text, word)
    assert python_common.has_word(texts[0], "torch") and not python_common.has_word(texts[1], "torch")


def test_a_case_insensitive_regex_is_tried_where_its_prefix_is_in_the_lower_case(codes: list[str]) -> None:
    assert cuda_query.folded_prefix(r"(?i)static_assert\s*\(") == "static_assert"
    assert cuda_query.folded_prefix(r"(?i)CUDA\w") == "cuda" and cuda_query.folded_prefix(r"(?i)ab\u00e9c") == "ab"
    assert cuda_query.folded_prefix(r"cuda\w") == "" and cuda_query.folded_prefix(r"(?i)x?y") == ""
    sets = [(r"(?i)static_assert\s*\(\s*\w*warp\w*\s*==\s*32\b", r"(?i)32\s*==\s*\w*lane"),
            (r"(?i)kind\b", r"shfl\w*\(", r"x?Cuda"), (r"(?i)is\w+", r"(?i)\w+is")]
    folding = ["\u017ftatic_assert(warp == 32)", "STATIC_ASSERT( WarpSize == 32 )", "\u212aIND", "kind",
               "\u0130s_x \u0131s static_assert(kWarp==32)", "\u0130\u0130 is_ok", "32 == LANES", "\u00e9 STATIC_ASSERT(warp==32)",
               "\u0131\u0131 32==lane", "a_is", "shfl_x(", "Cuda", ""]
    finders = [cuda_query._regex_finder(patterns) for patterns in sets]
    for text in [*codes, *folding]:
        assert [finder(text) for finder in finders] == [
            any(re.search(p, text) for p in patterns) for patterns in sets], text


def test_beyond_ascii_only_four_characters_match_an_ascii_character_ignoring_case() -> None:
    """folded_prefix's premise, for every ASCII character (letters, digits, punctuation)."""
    ascii_alike = re.compile("(?i)[\x00-\x7f]")
    found = {chr(c) for c in range(128, sys.maxunicode + 1) if ascii_alike.match(chr(c))}
    assert found == set(FOLDS_TO_ASCII)
    assert [chr(c) for c in range(sys.maxunicode + 1) if len(chr(c).lower()) != 1] == ["\u0130"]
