"""The first small documents of a process compile the queries their rules expect together, on the first ask: each
query then gives what it gives compiled alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter

from migrate.matchers import cuda_warp
from migrate.model import FileKind
from migrate.parse import cuda

from conftest import parse_file

CODE = """\
#define FULL_MASK 0xffffffff
__global__ void reduce(float* out, float v, unsigned mask = 0xffffffffu) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(FULL_MASK, v, offset, 32);
  if (threadIdx.x < 32) partial[threadIdx.x] = v;
  unsigned lanes = __ballot_sync(mask, v > 0);
  out[0] = partial[0] + __popc(lanes);
}
void launch(float* out) { dim3 block(32, 4); reduce<<<1, block>>>(out, 1.0f); }
"""
WANTED = (cuda_warp._MASK_ARGS, cuda_warp._LOOPS, cuda_warp._WARP_TAILS, cuda_warp._FIXED_WIDTHS)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that has compiled no bundle and no group, and parsed no document."""
    monkeypatch.setattr(cuda, "_BUNDLES", {})
    monkeypatch.setattr(cuda, "_GROUPS", {})
    monkeypatch.setattr(cuda, "_parsed", 0)


def _document(tmp_path: Path, name: str) -> cuda.CudaDocument:
    document = parse_file(tmp_path, name, FileKind.CUDA, CODE)
    assert isinstance(document, cuda.CudaDocument) and document._alone()
    return document


def _spans(matches: list[cuda.Groups]) -> list[dict[str, list[tuple[int, int, str]]]]:
    return [{name: [(n.start_byte, n.end_byte, n.type) for n in nodes] for name, nodes in groups.items()}
            for groups in matches]


def _alone(document: cuda.CudaDocument, source: str) -> list[dict[str, list[tuple[int, int, str]]]]:
    compiled = tree_sitter.Query(cuda.language(), source)
    return _spans([groups for _, groups in tree_sitter.QueryCursor(compiled).matches(document.root)])


@pytest.mark.usefixtures("fresh")
def test_expected_queries_compile_as_one_and_each_finds_what_it_finds_alone(tmp_path: Path) -> None:
    document = _document(tmp_path, "first.cu")
    document.expect(WANTED)
    found = {source: _spans(document.matches(source)) for source in reversed(WANTED)}
    group = cuda._GROUPS[WANTED[0]]
    assert all(cuda._GROUPS[source] is group for source in WANTED) and set(group.patterns) == set(WANTED)
    assert found == {source: _alone(document, source) for source in WANTED}
    assert all(found[source] for source in WANTED)  # each query matches CODE: the comparison says something


@pytest.mark.usefixtures("fresh")
def test_a_later_document_compiles_only_the_queries_no_group_holds(tmp_path: Path) -> None:
    first = _document(tmp_path, "first.cu")
    first.expect(WANTED[:2])
    first.matches(WANTED[0])
    later = _document(tmp_path, "later.cu")
    later.expect(WANTED[1:])
    assert _spans(later.matches(WANTED[1])) == _alone(later, WANTED[1])  # from the first document's group
    assert _spans(later.matches(WANTED[3])) == _alone(later, WANTED[3])
    assert set(cuda._GROUPS[WANTED[0]].patterns) == set(WANTED[:2])
    assert set(cuda._GROUPS[WANTED[3]].patterns) == set(WANTED[2:])


@pytest.mark.usefixtures("fresh")
def test_a_query_never_registered_is_not_expected(tmp_path: Path) -> None:
    document = _document(tmp_path, "first.cu")
    unregistered = "(for_statement body: (_) @body)"
    document.expect([unregistered, cuda_warp._LOOPS])
    assert document.matches(cuda_warp._LOOPS) and set(cuda._GROUPS) == {cuda_warp._LOOPS}


@pytest.mark.usefixtures("fresh")
def test_a_warp_check_expects_its_queries_before_it_runs_one(tmp_path: Path) -> None:
    document = _document(tmp_path, "first.cu")
    hits = cuda_warp.match_warp_size(document, {"check": "literal-size"})
    assert cuda._GROUPS == {}  # nothing runs until the scan reads the hits
    assert [hit.line for hit in hits] == [3, 4, 5, 9]
    assert set(cuda._GROUPS) == set(cuda_warp._QUERIES["literal-size"])
    assert len({id(group) for group in cuda._GROUPS.values()}) == 1


def test_the_rules_queries_run_in_a_bundle_apart_from_the_matchers(tmp_path: Path) -> None:
    """A document that asks only for matchers' queries runs only the matchers' bundle; a rule's query, only the
    rules'; each gives what it gives compiled alone."""
    from migrate.ruleset import load_builtin

    rules = [r.match["query"] for r in load_builtin().rules
             if r.match["matcher"] == "cuda-query" and not r.match.get("alone")]
    assert rules and set(rules) <= set(cuda._tier(True)) and not set(cuda._tier(False)) & set(cuda._tier(True))
    assert set(WANTED) <= set(cuda._tier(False))
    big = parse_file(tmp_path, "big.cu", FileKind.CUDA, CODE + "int x;\n" * 3000)
    assert isinstance(big, cuda.CudaDocument) and not big._alone()
    assert _spans(big.matches(WANTED[1])) == _alone(big, WANTED[1])
    assert list(big._bundle_cache) == [cuda._bundle(cuda._tier(False)).query]
    assert _spans(big.matches(rules[0])) == _alone(big, rules[0])
    assert list(big._bundle_cache) == [cuda._bundle(cuda._tier(False)).query, cuda._bundle(cuda._tier(True)).query]
