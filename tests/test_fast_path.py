"""The scan's fast paths against the slow ones: one-pass rule applicability and token-level vendored code."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import migrate.scan.file
from migrate.scan import prefilter
from migrate.config import Settings
from migrate.discover import discover
from migrate.matchers import Code, CodeTest
from migrate.model import FileKind, Finding, SourceFile
from migrate.parse import read_text
from migrate.ruleset import load_builtin
from migrate.parse import lexer
from migrate.scan import Shortcuts, scan, scan_file
from migrate.scan.prefilter import applicable, rule_needles, table, token_form

FIXTURES = Path(__file__).parent.parent / "fixtures"
CODE = (FileKind.CUDA, FileKind.CPP, FileKind.C)

VENDORED_KERNEL = r"""
#include <cuda_runtime.h>
#include "cutlass/gemm/device/gemm.h"
// cudaMalloc in a comment, thrust:: in a comment, asm("mma.sync.aligned") in a comment
/* cudaFree(p); cutlass::half_t
   #include <cublas_v2.h> */
const char* s = "cudaMemcpy thrust::sort";
namespace cutlass { struct Widget { int cudaStream; }; }

__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.f;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}, {%1}, {%2}, {%3};" : "=f"(x[0]) : "r"(i));
}

void run(float* x, int n, Widget w) {
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  scale<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
  thrust::device_vector<float> v(4);
  w.cudaStream = 0;
#if defined(USE_ROCM)
  hipDeviceSynchronize();
  cudaDeviceSynchronize();
#else
  cudaDeviceSynchronize();
#endif
}
"""


def _sources(root: Path) -> Iterator[SourceFile]:
    for item in discover(root, files=(), exclude=(), include=(), max_file_size=10**7):
        if isinstance(item, SourceFile):
            yield item


def _substring_reference(kind: FileKind, text: str) -> set[str]:
    """The rules a per-rule `needle in text` check keeps: what the one-pass search must reproduce."""
    kept = set()
    for rule in load_builtin().for_kind(kind):
        needles = rule_needles(rule)
        if needles is None or any(n in text for n in needles):
            kept.add(rule.id)
    return kept


def test_one_pass_applicability_equals_a_search_per_rule(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(VENDORED_KERNEL, encoding="utf-8")
    files = [*_sources(FIXTURES), *_sources(tmp_path)]
    checked = 0
    for source in files:
        rules = load_builtin().for_kind(source.kind)
        if not rules:
            continue
        try:
            text = read_text(source)
        except Exception:
            continue
        assert {r.id for r in applicable(table(load_builtin(), source.kind), text)} == _substring_reference(source.kind, text), (
            source.relpath
        )
        checked += 1
    assert checked > 50


def test_overlapping_needles_are_all_found() -> None:
    # '__global__' and '<<<' sit next to words that are needles of other rules
    text = "x<<<__global__cuda::std::atomic"
    assert {r.id for r in applicable(table(load_builtin(), FileKind.CUDA), text)} == _substring_reference(FileKind.CUDA, text)


def test_a_needle_across_the_search_windows_is_found() -> None:
    """The search goes window by window: a needle that starts in one window and ends in the next still counts."""
    from migrate.scan import prefilter

    kinds = table(load_builtin(), FileKind.CUDA)
    needles = sorted({n for rule in kinds.rules for n in rule_needles(rule) or ()}, key=len)
    filler = "int value = 1;\n" * (prefilter._WINDOW // 8)
    for needle in (needles[0], needles[len(needles) // 2], needles[-1]):
        for shift in (1, len(needle) // 2, len(needle) - 1):
            text = filler[: prefilter._WINDOW - shift] + needle + filler
            found = applicable(kinds, text)
            assert {r.id for r in found} == _substring_reference(FileKind.CUDA, text), (needle, shift)
            assert any(needle in (rule_needles(r) or ()) for r in found)


def test_the_needles_automaton_finds_the_same_before_and_after_its_dfa() -> None:
    """Needles searches with a contiguous NFA first, then builds a DFA: each gives every occurrence of every needle."""
    names = ["cuda", "cudaMalloc", "Malloc", "lloc", "<<<", "a", "thrust::"]
    texts = ["", "cudaMalloc(&p, n); thrust::sort", "x<<<<g, b>>>", "aaa", "no needle here" * 50]
    needles = prefilter.Needles(names)
    first = [sorted(needles.find(text)) for text in texts]
    nfa, needles.left = needles.automaton, 1  # the next search builds the DFA
    assert [sorted(needles.find(text)) for text in texts] == first
    assert needles.left < 0 and needles.automaton is not nfa
    want = [sorted((i, m.start(), m.start() + len(n)) for i, n in enumerate(names)
                   for m in re.finditer(f"(?={re.escape(n)})", text)) for text in texts]
    assert first == want


def _scan(root: Path, tokens: bool) -> tuple[Finding, ...]:
    return scan(root, Settings(jobs=1), shortcuts=Shortcuts(tokens=tokens)).findings


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The fixture repositories, plus their C/C++/CUDA files again as a vendored library."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "repos", root)
    vendored = root / "third_party" / "lib"
    for source in _sources(FIXTURES / "repos"):
        if source.kind in CODE:
            target = vendored / source.relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source.path, target)
    (vendored / "kernel.cu").write_text(VENDORED_KERNEL, encoding="utf-8")
    return root


def test_first_party_findings_are_identical_with_the_full_parse(tree: Path) -> None:
    fast = [f for f in _scan(tree, True) if not f.vendored]
    full = [f for f in _scan(tree, False) if not f.vendored]
    assert fast == full and len(fast) > 100


def _described(findings: tuple[Finding, ...]) -> list[tuple[object, ...]]:
    return [(f.key(), f.severity, f.status, f.message, f.evidence, f.occurrences) for f in findings]


def test_library_shaped_fast_path_equals_parsing_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files shaped like real CUDA libraries (fixtures/fastpath, see its README): the fast path reports exactly what
    running every rule on every file's tree reports, and parses fewer files."""
    root = tmp_path / "library"
    shutil.copytree(FIXTURES / "fastpath", root)
    parsed: list[str] = []
    parse = migrate.scan.file.parse
    def counted(source: SourceFile, text: str) -> object:
        if source.kind in CODE:
            parsed.append(source.relpath)
        return parse(source, text)

    monkeypatch.setattr(migrate.scan.file, "parse", counted)
    fast = _scan(root, True)
    parsed_by_fast_path = len(parsed)
    parsed.clear()
    full = _scan(root, False)
    assert _described(fast) == _described(full)
    assert {"warp-full-mask", "warp-lane-math", "warp-ballot-32bit", "warp-size-constant", "warp-literal-32",
            "warpsize-compile-time", "cooperative-groups-missing", "cooperative-groups-limited", "cub-warp-primitives",
            "atomic-add-float", "inline-ptx", "cuda-arch-check", "cuda-kernel-launch", "cuda-runtime-api",
            "cuda-driver-api", "cutlass-usage", "cub-usage", "thrust-usage"} <= {f.rule for f in fast}
    assert parsed_by_fast_path < len(parsed) == 13


def test_vendored_code_finds_the_token_rules_of_the_full_parse(tree: Path) -> None:
    """Per file, the token-level rules that fire are those that fire with the full parse."""
    rules = {r.id: r for r in load_builtin().rules}
    token_rules = {rule_id for rule_id, rule in rules.items() if token_form(rule) is not None}
    fast = {(f.path, f.rule) for f in _scan(tree, True) if f.vendored}
    full = {(f.path, f.rule) for f in _scan(tree, False) if f.vendored and f.rule in token_rules}
    assert fast == full and len(fast) > 20


def test_vendored_kernel_on_tokens(tmp_path: Path) -> None:
    """Comments, strings and members stay quiet; HIP-guarded uses are counted as guarded."""
    path = tmp_path / "third_party" / "k.cu"
    path.parent.mkdir()
    path.write_text(VENDORED_KERNEL, encoding="utf-8")
    source = SourceFile(path, "third_party/k.cu", FileKind.CUDA, path.stat().st_size, vendored=True)
    result = scan_file(source, load_builtin(), Settings())
    found = sorted({(f.line, f.rule, f.symbol) for f in result.findings})
    assert found == [
        (2, "cuda-runtime-include", "cuda_runtime.h"),
        (3, "cutlass-include", "cutlass/gemm/device/gemm.h"),
        (8, "cutlass-usage", "cutlass"),
        (10, "cuda-kernel-definition", "scale"),
        (13, "cuda-ptx-mma", None),
        (13, "inline-ptx", None),
        (17, "cuda-runtime-api", "cudaStream_t"),
        (18, "cuda-runtime-api", "cudaStreamCreate"),
        (19, "cuda-kernel-launch", "scale"),
        (20, "thrust-usage", "thrust"),
    ]
    assert result.guarded == 2  # every branch of an #if that tests a HIP macro, as with the full parse
    assert all(f.vendored for f in result.findings)


def test_an_asm_label_is_not_inline_asm_on_tokens_either(tmp_path: Path) -> None:
    """Composable Kernel binds LLVM intrinsics with asm labels: `int f(int) __asm("llvm.amdgcn...");` runs nothing."""
    path = tmp_path / "third_party" / "ck.hpp"
    path.parent.mkdir()
    path.write_text(
        '__device__ int add(int v, int s) __asm("llvm.amdgcn.raw.buffer.atomic.add.i32");\n'
        '__device__ int lane(int x) { int l; if (x) asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }\n',
        encoding="utf-8",
    )
    source = SourceFile(path, "third_party/ck.hpp", FileKind.CPP, path.stat().st_size, vendored=True)
    result = scan_file(source, load_builtin(), Settings())
    assert [(f.line, f.rule) for f in result.findings if f.rule == "inline-ptx"] == [(2, "inline-ptx")]


def test_the_api_name_regex_is_compiled_once_per_process() -> None:
    """A dict's keys() gave a new mappingproxy per call, so every file past the 16th recompiled the regex of
    ~9,000 names (0.15 s each): a 14,850-file scan took 89 s instead of 7 s."""
    from migrate.apimap import api_map, api_names
    from migrate.parse.cuda import names_pattern

    first = names_pattern(api_names())
    assert first is not None
    assert names_pattern(api_names()) is first
    assert names_pattern(api_map().keys()) is first  # the same names share the one compiled regex


def test_words_found_the_same_before_and_after_the_regex_is_compiled() -> None:
    """A few files look every identifier up; later ones use the one compiled regex: the same words either way."""
    words = table(load_builtin(), FileKind.CUDA).tokens.words
    texts = [read_text(s) for s in _sources(FIXTURES) if s.kind in CODE]
    texts.append(VENDORED_KERNEL + "\nint x2cudaMalloc = cudaMallocHost_x + cudaMalloc(p) + é_cudaFree;\n")
    looked_up = [lexer.looked_up(text, words) for text in texts]
    assert [lexer.matched(text, words) for text in texts] == looked_up
    assert sum(map(len, looked_up)) > 500
    assert [w for w, _ in lexer.looked_up("x2cudaMalloc = cudaMallocHost_x + cudaMalloc(p) + é_cudaFree", words)] == [
        "cudaMalloc"]


def test_queries_run_alone_find_what_the_bundle_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that has parsed few files runs each query alone (`check`), later ones run the bundle: every C/C++/CUDA
    fixture, parsed and matched by every rule, gives the same findings both ways."""
    import migrate.parse.cuda

    sources = [s for root in (FIXTURES / "fastpath", FIXTURES / "rules" / "cuda", FIXTURES / "repos")
               for s in _sources(root) if s.kind in CODE]

    def scanned(source: SourceFile, parsed_before: int) -> object:
        monkeypatch.setattr(migrate.parse.cuda, "_parsed", parsed_before)
        return scan_file(source, load_builtin(), Settings(), Shortcuts(tokens=False))

    load_builtin()  # its first read compiles the bundle with the rules' queries
    monkeypatch.setattr(migrate.parse.cuda, "_BUNDLES", {})  # which would end running alone
    monkeypatch.setattr(migrate.parse.cuda, "_GROUPS", {})
    alone = [scanned(s, 0) for s in sources]
    assert migrate.parse.cuda._GROUPS and not migrate.parse.cuda._BUNDLES
    assert [scanned(s, 10**6) for s in sources] == alone
    assert len(sources) > 40 and sum(len(r.findings) for r in alone) > 300  # type: ignore[attr-defined]


def _scanned_and_parsed(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[Finding, ...], list[str]]:
    """The fast path's findings under ROOT, and the files it parsed."""
    parsed: list[str] = []
    parse = migrate.scan.file.parse

    def counted(source: SourceFile, text: str) -> object:
        parsed.append(source.relpath)
        return parse(source, text)

    monkeypatch.setattr(migrate.scan.file, "parse", counted)
    return _scan(root, True), parsed


def test_cpu_asm_is_not_parsed_for_device_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """asm in a file that names no device code (x86 or ARM kernels of a CPU library) needs no tree; asm the rule's
    pattern does not know, in a __device__ function, is still found on the tree."""
    (tmp_path / "pack_neon.h").write_text(
        "static void pack(float* p) {\n    asm volatile(\"prfm pldl1keep, [%0]\" : : \"r\"(p) : \"memory\");\n}\n",
        encoding="utf-8",
    )
    (tmp_path / "lane.h").write_text(
        "__device__ unsigned lane() {\n    unsigned id;\n    asm volatile(\"opaque %0;\" : \"=r\"(id));\n"
        "    return id;\n}\n",
        encoding="utf-8",
    )
    found, parsed = _scanned_and_parsed(tmp_path, monkeypatch)
    assert parsed == ["lane.h"]
    assert [(f.path, f.line, f.rule) for f in found if f.rule == "inline-ptx"] == [("lane.h", 3, "inline-ptx")]


def test_cpu_simd_shuffles_are_not_warp_helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SSE/AVX shuffles and std::shuffle with a loop of 32 need no tree for the warp rules; a warp helper does."""
    (tmp_path / "transpose_sse.h").write_text(
        "#include <immintrin.h>\nvoid transpose(float* p) {\n    for (int i = 0; i < 32; i++) {\n"
        "        __m128 a = _mm_loadu_ps(p + 4 * i);\n        _mm_storeu_ps(p + 4 * i, _mm_shuffle_ps(a, a, 0x1b));\n"
        "    }\n}\nvoid mix(std::vector<int>& v, std::mt19937& g) {\n"
        "    for (int i = 0; i < 32; i++) std::shuffle(v.begin(), v.end(), g);\n}\n",
        encoding="utf-8",
    )
    (tmp_path / "reduce.cuh").write_text(
        "__device__ float row_sum(float v) {\n    for (int i = 0; i < 32; i++) v += warp_shuffle_down(v, 1);\n"
        "    return v;\n}\n",
        encoding="utf-8",
    )
    _, parsed = _scanned_and_parsed(tmp_path, monkeypatch)
    assert parsed == ["reduce.cuh"]


def _tree_rules(kind: FileKind) -> dict[str, frozenset[str] | None]:
    """The needles of KIND's rules that need a tree, by rule id."""
    return {rule.id: rule_needles(rule) for rule, _ in table(load_builtin(), kind).tokens.tree_tests}


def test_every_tree_rule_has_needles() -> None:
    """Each C/C++/CUDA rule that needs a tree declares needles: its test is asked only where the code holds one."""
    for kind in CODE:
        assert all(needles and "" not in needles for needles in _tree_rules(kind).values()), kind


NEEDLE_FIXTURES = ("rules/cuda", "repos", "fastpath")  # every C/C++ tree rule's firing fixtures, dev-set-like repos


def _code_with_includes(path: Path, kind: FileKind) -> str:
    lexed = lexer.lex(read_text(SourceFile(path=path, relpath=path.name, kind=kind, size=path.stat().st_size)),
                      table(load_builtin(), kind).tokens.words)
    return "\n".join([lexed.code, *(f"#include <{p}>" for p, _ in lexed.includes)])


@pytest.mark.parametrize("fixtures", NEEDLE_FIXTURES)
def test_a_tree_rule_finding_is_in_code_that_holds_a_needle(fixtures: str) -> None:
    """Every finding of a tree rule, on every file's tree (no shortcut), is in a file whose code or #include paths
    hold one of the rule's needles: the needles are complete where the rules fire, so the gate loses nothing."""
    root = FIXTURES / fixtures
    kinds = {s.relpath: s.kind for s in _sources(root)}
    checked = set()
    for finding in scan(root, Settings(jobs=1, max_file_size=10**7), shortcuts=Shortcuts(tokens=False)).findings:
        kind = kinds.get(finding.path)
        if kind not in CODE or finding.rule not in (needles_of := _tree_rules(kind)):
            continue
        code = _code_with_includes(root / finding.path, kind)
        assert any(n in code for n in needles_of[finding.rule] or ()), (finding.path, finding.line, finding.rule)
        checked.add(finding.rule)
    assert len(checked) >= {"rules/cuda": 30, "repos": 10, "fastpath": 8}[fixtures], sorted(checked)


@pytest.mark.parametrize("fixtures", NEEDLE_FIXTURES)
def test_the_needle_gate_keeps_what_the_tests_find(fixtures: str) -> None:
    """Which rules a file's tree is parsed for is the same with the needle gate as with every tree rule's test asked
    of every first-party file."""
    for source in _sources(FIXTURES / fixtures):
        if source.kind not in CODE:
            continue
        plan = table(load_builtin(), source.kind).tokens
        lexed = lexer.lex(read_text(source), plan.words)
        code = Code(lexed.code, [p for p, _ in lexed.includes], frozenset(w for w, _ in lexed.words),
                    [t for _, t in lexed.templates])
        assert plan.needing_tree(lexed) == tuple(rule for rule, test in plan.tree_tests if test(code)), source.relpath


@pytest.mark.parametrize("fixtures", NEEDLE_FIXTURES)
def test_a_token_rule_left_out_by_its_needles_finds_nothing(fixtures: str) -> None:
    """A file's token rules run only where its text holds one of their needles: every rule left out would have found
    nothing there (its needles are complete), and most files leave most rules out."""
    left_out = 0
    for source in _sources(FIXTURES / fixtures):
        if source.kind not in CODE:
            continue
        plan = table(load_builtin(), source.kind).tokens
        text = read_text(source)
        lexed = lexer.lex(text, plan.words)
        kept = {rule.id for rule, _ in plan.token_runs(text)}
        for rule, run in plan.token_rules:
            if rule.id not in kept:
                assert list(run(lexed, text, rule.match)) == [], (source.relpath, rule.id)
                left_out += 1
    assert left_out >= {"rules/cuda": 5_000, "repos": 1_000, "fastpath": 100}[fixtures], left_out


def test_a_namespace_rule_with_an_include_runs_without_its_words() -> None:
    """A cuda-namespace rule with `include` finds the header's #include where the file names none of its namespaces
    (`<mma.h>` for nvcuda::wmma): `include` is one of its needles, so the gate keeps it; a rule without one is left
    out."""
    text = "#include <mma.h>\n\nint twice(int x) { return 2 * x; }\n"
    plan = table(load_builtin(), FileKind.CUDA).tokens
    kept = {rule.id for rule, _ in plan.token_runs(text)}
    assert "cuda-wmma" in kept and "thrust-usage" not in kept
    rule, run = next((rule, run) for rule, run in plan.token_rules if rule.id == "cuda-wmma")
    assert [(hit.line, hit.symbol) for hit in run(lexer.lex(text, plan.words), text, rule.match)] == [(1, "<mma.h>")]


def test_a_tree_rule_test_is_not_asked_without_its_needles(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule whose needles the code lacks is left out before its test (here one that would always pass) is asked;
    a needle in a comment or a string does not count."""
    plan = table(load_builtin(), FileKind.CUDA).tokens
    index = next(i for i, (rule, _) in enumerate(plan.tree_tests) if rule.id == "nvcc-macro-test")
    asked: list[str] = []

    def always(code: Code) -> bool:
        asked.append(code.text)
        return True

    tests = list(plan.tree_tests)
    tests[index] = (tests[index][0], always)
    gated = replace(plan, tree_tests=tuple(tests))
    quiet = lexer.lex("// __NVCC__\nconst char* s = \"__NVCC__\";\nint f() { return 1; }\n", plan.words)
    assert "nvcc-macro-test" not in {r.id for r in gated.needing_tree(quiet)} and not asked
    loud = lexer.lex("#ifdef __NVCC__\nint f() { return 1; }\n#endif\n", plan.words)
    assert "nvcc-macro-test" in {r.id for r in gated.needing_tree(loud)} and len(asked) == 1


def test_a_tree_rule_test_is_made_when_first_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule's code test (its regexes compiled) is made the first time a file holds one of the rule's needles, and
    once: a check of a few files asks few of the C/C++ rules' tests."""
    rule = next(r for r in load_builtin().for_kind(FileKind.CUDA) if r.id == "nvcc-macro-test")
    hooks = prefilter._hooks(rule)
    assert hooks.candidates is not None
    made: list[object] = []

    def candidates(params: Mapping[str, Any]) -> CodeTest:
        made.append(params)
        assert hooks.candidates is not None
        return hooks.candidates(params)

    monkeypatch.setattr(prefilter, "_hooks", lambda _rule: replace(hooks, candidates=candidates))
    plan = prefilter._plan((rule,))
    assert not made
    assert plan.needing_tree(lexer.lex("// __NVCC__\nint f() { return 1; }\n", plan.words)) == () and not made
    loud = lexer.lex("#ifdef __NVCC__\nint f() { return 1; }\n#endif\n", plan.words)
    assert plan.needing_tree(loud) == (rule,) and plan.needing_tree(loud) == (rule,)
    assert made == [rule.match]


def _code_of(text: str) -> Code:
    lexed = lexer.lex(text, table(load_builtin(), FileKind.CUDA).tokens.words)
    return Code(lexed.code, [p for p, _ in lexed.includes], frozenset(w for w, _ in lexed.words),
                [t for _, t in lexed.templates])


_WARP_FUNCTION = ("__global__ void k(float* s, int n, int count, int blockSize) {\n"
                  "  s[0] = __shfl_down_sync(0xffffffff, s[0], 1);\n")


@pytest.mark.parametrize(
    "rule_id, text, lines",
    [
        # the value compared from the right, a member across lines, a field after `. `, a helper called before ` (`
        ("device-compute-capability", "bool a(int computeCapability) { return 90 <= computeCapability; }\n", [1]),
        ("device-compute-capability", "bool b(const A& arch) {\n  return arch . compute_capability\n      > 80;\n}\n",
         [2]),
        ("device-compute-capability", "int c(const P& prop) { int v = prop. major * 10; return v; }\n", [1]),
        ("device-compute-capability", "int d() { int cc = getCudaComputeCapability (); return cc; }\n", [1]),
        # look-alikes: a longer name, a declared member, a type, parameters named major / minor, an uncompared value
        ("device-compute-capability", "template <class A> bool e() { return A::kMinComputeCapability >= 90; }\n", []),
        ("device-compute-capability", "struct Key { int compute_capability; };\nvoid f(int major, int minor) {\n"
         "  cuda::compute_capability cc{major, minor};\n  int minimum_compute_capability = 50;\n}\n", []),
        # a thread index or a block's thread count before the 32, and a halving loop's condition
        ("warp-literal-32", _WARP_FUNCTION + "  if (threadIdx . x<32) s[threadIdx.x] = 1;\n}\n", [3]),
        ("warp-literal-32", _WARP_FUNCTION + "  int lane_id = threadIdx.x;\n  s[lane_id + 32] = 2;\n}\n", [4]),
        ("warp-literal-32", _WARP_FUNCTION + "  if (blockSize >\n      32) s[1] = 0;\n}\n", [3]),
        ("warp-literal-32", _WARP_FUNCTION + "  for (int i = n >> 1; i > 32; i >>= 1) s[threadIdx.x] += s[i];\n}\n",
         [3]),
        # a mask literal of some lanes, or one full-mask does not take for all lanes (`0X`); the all-lanes literals
        # are full-mask's
        ("warp-narrow-mask", "__device__ float f(float v) { return __shfl_xor_sync(0xffff, v, 1); }\n", [1]),
        ("warp-narrow-mask", "__device__ float f(float v) { return __shfl_xor_sync(0XFFFFFFFF, v, 1); }\n", [1]),
        ("warp-narrow-mask", "__device__ float g(float v) {\n  return __shfl_xor_sync(0xffff'ffffu, v, 1) +\n"
         "    __shfl_sync(0xFFFFFFFF, v, 0) + __shfl_up_sync(4294967295, v, 1);\n}\n", []),
        # look-alikes: a template's 32 and another name's bound
        ("warp-literal-32",
         "using Shape = GemmShape<32, 64, 32>;\n" + _WARP_FUNCTION + "  if (count < 32 && n) s[1] = 0;\n}\n", []),
    ],
)
def test_a_tree_rule_test_passes_where_its_rule_fires_at_the_edge(rule_id: str, text: str, lines: list[int]) -> None:
    """The code test that decides whether a file is parsed for a rule passes wherever the rule fires (these are the
    nearest shapes that still fire), and fails on the look-alikes that made the scan parse files for nothing."""
    import migrate.matchers as registry
    from migrate.parse.cuda import parse_cuda

    rule = load_builtin().by_id(rule_id)
    assert rule is not None
    test = {r.id: t for r, t in table(load_builtin(), FileKind.CUDA).tokens.tree_tests}[rule_id]
    doc = parse_cuda(SourceFile(Path("a.cu"), "a.cu", FileKind.CUDA, len(text)), text)
    matcher = registry.get(rule.match["matcher"])
    assert matcher is not None
    assert [hit.line for hit in matcher.function(doc, rule.match)] == lines
    assert test(_code_of(text)) is bool(lines)
