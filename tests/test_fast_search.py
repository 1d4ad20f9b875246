"""Searches that replaced a slower regex find what the regex found, on every C/C++/CUDA fixture and on edge cases."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from migrate.discover import discover
from migrate.matchers import Code, cuda_library_names, cuda_query, cuda_typename, cuda_warp
from migrate.model import FileKind, SourceFile
from migrate.parse import ParseError, lexer, read_text

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
