"""CUB includes in sources a ROCm torch builds: a branch that includes hipCUB and names its namespace `cub`, as the
ROCm ports of mamba and flashinfer (and PaddlePaddle's HIP build) write it, so every `cub::` keeps one spelling."""

from __future__ import annotations

import re

import tree_sitter

from migrate import preproc
from migrate.model import Finding, Severity
from migrate.parse.cuda import INCLUDES, CudaDocument, captures
from migrate.port.branches import Branch, Edit
from migrate.port.plan import RULE_LEFT

HIPCUB = "#include <hipcub/hipcub.hpp>"
ALIAS = "namespace cub = hipcub;"
NOTE = "  // hipCUB: CUB's API in namespace hipcub"
_CUB = re.compile(r'^[<"]cub/')
_OWN_CUB = re.compile(r"\bnamespace\s+cub\s*\{")  # the file adds to CUB's namespace: an alias of that name clashes
_BETWEEN = re.compile(r"\s*(?://[^\n]*)?")  # what may sit between two includes of one run: blanks, a line comment
# compiler macros hipcc never defines: an include under them is never compiled for HIP
_NOT_HIPCC = {name: preproc.Macro(preproc.UNDEFINED, True) for name in ("__NVCC__", "__CUDACC__", "__CUDA_ARCH__")}


def opens_cub(text: str) -> bool:
    """Whether a source adds to CUB's namespace itself (`namespace cub {`, a trait for its own type)."""
    return "cub" in text and _OWN_CUB.search(text) is not None


def hipcub_branches(doc: CudaDocument, own_cub: str | None = None) -> tuple[list[Branch], list[Finding]]:
    """One branch per run of CUB includes (blank and comment lines between them belong to the run): on ROCm the
    hipCUB header and `namespace cub = hipcub;`. None where the file already includes hipCUB, and a finding where the
    repository opens `namespace cub` itself (OWN_CUB: the first file that does), which the alias would clash with."""
    if b"hipcub" in doc.data:
        return [], []
    includes = [node for node in _cub_includes(doc) if not doc.is_guarded(node.start_point.row + 1)]
    if not includes:
        return [], []
    own_cub = own_cub or (doc.source.relpath if opens_cub(doc.text) else None)
    if own_cub is not None:
        line = includes[0].start_point.row + 1
        why = (f"{own_cub} opens namespace cub itself, so `namespace cub = hipcub;` would clash with it; include "
               "hipCUB by hand")
        return [], [Finding(doc.source.relpath, line, 1, RULE_LEFT, "cuda-library", Severity.MEDIUM, line,
                            f"no #ifdef branch written: {why}", doc.line_text(line))]
    return [_branch(doc, run, alias=index == 0) for index, run in enumerate(_runs(doc, includes))], []


def _cub_includes(doc: CudaDocument) -> list[tree_sitter.Node]:
    """The `#include <cub/...>` lines a HIP build compiles, in file order."""
    dead = preproc.dead_ranges(doc.lexed_for(frozenset()).directives, _NOT_HIPCC)
    found = []
    for node in captures(doc.root, INCLUDES).get("include", []):
        path = node.child_by_field_name("path")
        line = node.start_point.row + 1
        if path is not None and _CUB.match(doc.node_text(path)) and not any(a <= line <= b for a, b in dead):
            found.append(node)
    return sorted(found, key=lambda n: n.start_byte)


def _runs(doc: CudaDocument, includes: list[tree_sitter.Node]) -> list[list[tree_sitter.Node]]:
    runs = [[includes[0]]]
    for node in includes[1:]:
        gap = doc.data[_path_end(runs[-1][-1]) : node.start_byte].decode("utf-8", "replace")
        if all(_BETWEEN.fullmatch(line) for line in gap.splitlines()):
            runs[-1].append(node)
        else:
            runs.append([node])
    return runs


def _path_end(include: tree_sitter.Node) -> int:
    path = include.child_by_field_name("path")
    assert path is not None
    return path.end_byte


def _branch(doc: CudaDocument, run: list[tree_sitter.Node], *, alias: bool) -> Branch:
    """The run's lines kept for CUDA; on ROCm the hipCUB include, and after the file's first run the alias, indented
    and ended as the run is."""
    first, last = run[0], run[-1]
    line_start = doc.data.rfind(b"\n", 0, first.start_byte) + 1
    indent = doc.data[line_start : first.start_byte].decode("utf-8", "replace")
    newline = "\r\n" if doc.data[_path_end(last) : _path_end(last) + 2] == b"\r\n" else "\n"
    text = f"{HIPCUB}{newline}{indent}{ALIAS}" if alias else HIPCUB
    return Branch(first.start_point.row, last.start_point.row, (Edit(first.start_byte, _path_end(last), text),), NOTE)
