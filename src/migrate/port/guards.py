"""ROCm branches in C/C++/CUDA sources that keep their CUDA names: an `#ifdef` copy beside each warp intrinsic and
PTX idiom, warp-size constants per platform (warpsize.py), hipCUB for CUB includes (hipcub.py), and the `typename`
hipcc needs (typename.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import tree_sitter

from migrate import preproc
from migrate.bounded import Refused, read_source
from migrate.data import load_yaml
from migrate.model import FileKind, Finding, Severity, SourceFile
from migrate.parse.cuda import CudaDocument, parse_cuda
from migrate.port.branches import Branch, Edit, render
from migrate.port.hipcub import hipcub_branches, opens_cub
from migrate.port.plan import RULE_LEFT, FileChange
from migrate.port.translate import is_translatable
from migrate.port.typename import TypeNames, type_names, typename_edits
from migrate.port.warpsize import WarpSizes, plan_warp_sizes, warp_size_edits

TORCH_MACRO = "USE_ROCM"  # a ROCm torch compiles extensions with -DUSE_ROCM=1
HIP_MACRO = "__HIP_PLATFORM_AMD__"  # hip_runtime.h (or the compat header) defines it on AMD
# code for one NVIDIA architecture from Hopper on (TMA, wgmma, tcgen05): a ROCm build leaves it out, so no branches
_NVIDIA_ARCH_PATH = re.compile(r"(?i)(?:^|[/_.-])(?:sm_?(?:9\d|1\d\d)a?|hopper|blackwell)(?=[/_.-]|$)")
_NVIDIA_ARCH_PTX = re.compile(r"\b(?:wgmma|tcgen05|setmaxnreg|cp\.async\.bulk|fence\.proxy\.async)\b")
# CUDA's version macros as a HIP build sees them: a ROCm torch hipifies CUDA_VERSION to TORCH_HIP_VERSION (major * 100
# + minor, so below 1000 for every release), the others are never defined; with the compat header none is defined.
_CUDA_VERSIONS = {
    TORCH_MACRO: {"CUDA_VERSION": preproc.Macro(preproc.DEFINED, True, 700)},
    HIP_MACRO: {"CUDA_VERSION": preproc.Macro(preproc.UNDEFINED, True)},
}
_NEVER_ON_HIP = {name: preproc.Macro(preproc.UNDEFINED, True)
                 for name in ("CUDART_VERSION", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDA_ARCH__")}
# scan rules that mark a source built on NVIDIA tensor cores (CUTLASS/CuTe, WMMA, mma.sync/ldmatrix PTX): its ROCm form
# is a rewrite (Composable Kernel, rocWMMA, MFMA), so branches for its warp code would be half a port of it
REWRITE_RULES = frozenset({"cutlass-include", "cutlass-usage", "cuda-wmma", "cuda-ptx-mma"})
_STATEMENTS = frozenset({"expression_statement", "declaration", "return_statement", "for_statement",
                         "while_statement", "do_statement", "if_statement"})
_STOP = frozenset({"compound_statement", "function_definition", "translation_unit", "preproc_def",
                   "preproc_function_def"})


@dataclass(frozen=True)
class Facts:
    """What the whole repository tells the port of one source: the warp-size constants it makes per-platform, and
    the names it declares as types."""

    warp: WarpSizes = field(default_factory=WarpSizes)
    types: TypeNames = field(default_factory=TypeNames)
    # sources built on tensor cores, with the lines that show it: left whole for a rewrite
    rewritten: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    # the first source that opens CUB's namespace itself: no `namespace cub = hipcub;` anywhere then
    own_cub: str | None = None


def repo_facts(sources: Sequence[SourceFile], findings: Sequence[Finding], targets: Sequence[str]) -> Facts:
    """The Facts of the repository's own (not vendored) C/C++/CUDA SOURCES, read with the scan's FINDINGS."""
    own = [s for s in sources if not s.vendored and is_translatable(s.relpath)]
    texts = {s.relpath: text for s in own if (text := _text(s)) is not None and not nvidia_arch_only(s.relpath, text)}
    rewritten: dict[str, tuple[int, ...]] = {}
    for finding in findings:
        if finding.rule in REWRITE_RULES:
            rewritten[finding.path] = (*rewritten.get(finding.path, ()), finding.line)
    own_cub = next((path for path, text in sorted(texts.items()) if opens_cub(text)), None)
    return Facts(plan_warp_sizes(texts, findings, targets), type_names(texts), rewritten, own_cub)


def nvidia_arch_only(relpath: str, text: str) -> bool:
    """Whether a source is written for one NVIDIA architecture from Hopper on (named for it, or using its TMA, wgmma or
    tcgen05 instructions): a ROCm build leaves it out (the scan's arch-specific-sources), so the port adds nothing."""
    return nvidia_arch_path(relpath) or bool(_NVIDIA_ARCH_PTX.search(text))


def nvidia_arch_path(relpath: str) -> bool:
    """Whether a path names one NVIDIA architecture from Hopper on (`hopper/`, `*_sm90.cu`, `bench_blackwell_*.py`):
    code, tests and builds for it stay out of a ROCm port."""
    return bool(_NVIDIA_ARCH_PATH.search(relpath))


def _text(source: SourceFile) -> str | None:
    try:
        data = read_source(source)
        return None if b"\0" in data[:8192] else data.decode("utf-8")
    except (OSError, Refused, UnicodeDecodeError):
        return None


def guard_changes(
    sources: Sequence[SourceFile], changes: dict[str, FileChange], facts: Facts, macro: str,
) -> list[Finding]:
    """Add the ROCm branches of every own C/C++/CUDA source to CHANGES (on top of an earlier change to it); the
    places left for a hand port."""
    findings: list[Finding] = []
    for source in sources:
        if source.vendored or not is_translatable(source.relpath):
            continue
        change, left = _guarded_source(source, changes.get(source.relpath), facts, macro)
        findings += left
        if change is not None:
            changes[source.relpath] = change
    return findings


# -- warp intrinsics and PTX ---------------------------------------------------------------------------------------


@cache
def _data() -> dict[str, Any]:
    return dict(load_yaml("rocm_guards.yaml"))


def _guarded_source(
    source: SourceFile, earlier: FileChange | None, facts: Facts, macro: str,
) -> tuple[FileChange | None, list[Finding]]:
    try:
        old = read_source(source)
        data = earlier.new if earlier is not None else old
        text = data.decode("utf-8")
    except (OSError, Refused, UnicodeDecodeError):
        return earlier, []
    if b"\0" in data[:8192] or not _may_change(text, source.relpath, facts) or nvidia_arch_only(source.relpath, text):
        return earlier, []
    new, findings = rocm_guards(text, source.relpath, macro=macro, facts=facts)
    if new is None:
        return earlier, findings
    reason = f"ROCm branches (#ifdef {macro})" + (f"; {earlier.reason}" if earlier else "")
    return FileChange(source.relpath, old, new.encode("utf-8"), reason=reason), findings


def _may_change(text: str, relpath: str, facts: Facts) -> bool:
    """A cheap test before the parse: a warp intrinsic, asm, a warp-size edit, or a candidate for `typename`."""
    return (any(name in text for name in [*_data()["warp"], "asm", "cub/"]) or relpath in facts.warp.files
            or facts.types.may_need(text))


def rocm_guards(
    text: str, relpath: str, *, macro: str = TORCH_MACRO, facts: Facts | None = None,
) -> tuple[str | None, list[Finding]]:
    """TEXT with an `#ifdef MACRO` branch beside each statement using PTX or a warp *_sync intrinsic (and, with the
    repository's FACTS, beside each warp-size constant it makes per-platform, plus the `typename`s hipcc needs)."""
    facts = facts or Facts()
    source = SourceFile(path=Path(relpath), relpath=relpath, kind=FileKind.CUDA, size=len(text))
    doc = parse_cuda(source, text)
    assert isinstance(doc, CudaDocument)
    wide = relpath in facts.warp.wide_files
    dead = _never_compiled(doc, macro)
    rewrite = any(not _within(line, dead) for line in facts.rewritten.get(relpath, ()))
    branches: list[Branch] = []
    findings: list[Finding] = []
    for node in _targets(doc.root):
        line = node.start_point.row + 1
        if (doc.is_guarded(line) or _within(line, dead)
                or (node.type == "call_expression" and doc.declares(_name(node)))):
            continue  # already dual-path, never compiled for HIP, or the file's own overload of the intrinsic
        branch, why = _branch(doc, node, wide)
        if branch is None:
            findings.append(_left(doc, line, why, macro))
        else:
            branches.append(branch)
    sized, edits = warp_size_edits(doc, facts.warp)
    branches += sized
    if macro == TORCH_MACRO:  # the compat header of the other strategies includes hipCUB in their place
        cub, left = hipcub_branches(doc, facts.own_cub)
        branches += cub
        findings += left
    edits += typename_edits(doc, facts.types)
    if rewrite:  # tensor-core code a HIP build compiles: the file is rewritten, not branched
        return None, [_rewrite(relpath, macro)] if branches or edits or findings else []
    if not branches and not edits:
        return None, findings
    return render(doc.data, branches, edits, macro).decode("utf-8"), findings


def _never_compiled(doc: CudaDocument, macro: str) -> tuple[tuple[int, int], ...]:
    """Line ranges a HIP build of the file never compiles because of CUDA's version and architecture macros: the
    `*_sync` form under `#if CUDA_VERSION >= 9000` whose `#else` already holds the non-sync one needs no branch."""
    directives = doc.lexed_for(frozenset()).directives
    if not any(name in d.argument for d in directives for name in ("CUDA_VERSION", "CUDACC_VER", "__CUDA_ARCH__")):
        return ()
    return preproc.dead_ranges(directives, {**_NEVER_ON_HIP, **_CUDA_VERSIONS.get(macro, {})})


def _within(line: int, ranges: Sequence[tuple[int, int]]) -> bool:
    return any(start <= line <= end for start, end in ranges)


def _targets(root: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """The outermost PTX statements and warp intrinsic calls (a call nested in another is rewritten with it)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "gnu_asm_expression" or _is_warp_call(node):
            yield node
        else:
            stack.extend(reversed(node.children))


def _is_warp_call(node: tree_sitter.Node) -> bool:
    function = node.child_by_field_name("function") if node.type == "call_expression" else None
    return function is not None and function.type == "identifier" and _name(node) in _data()["warp"]


def _name(call: tree_sitter.Node) -> str:
    function = call.child_by_field_name("function")
    return (function.text or b"").decode() if function is not None else ""


def _branch(doc: CudaDocument, node: tree_sitter.Node, wide: bool) -> tuple[Branch | None, str]:
    statement = _whole_line_statement(doc, node)
    if statement is None:
        return None, "shares its line with other code, or sits in a macro; add the ROCm branch by hand"
    if node.type == "gnu_asm_expression":
        return _ptx_branch(doc, node, statement)
    edit = _warp_edit(doc, node, wide)
    shuffle = "lanes" in _data()["warp"][_name(node)]
    note = "  // non-sync form: ROCm < 6.2 has no *_sync builtins" + (
        ("; the wavefront's width, as the warp size here" if wide else "; width 32 as on CUDA") if shuffle else "")
    return Branch(statement.start_point.row, statement.end_point.row, (edit,), note), ""


def _whole_line_statement(doc: CudaDocument, node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The innermost statement around NODE that starts and ends its lines (only blanks around it)."""
    current: tree_sitter.Node | None = node
    while current is not None and current.type not in _STOP:
        if current.type in _STATEMENTS and _alone(doc, current):
            return current
        current = current.parent
    return None


def _alone(doc: CudaDocument, node: tree_sitter.Node) -> bool:
    data = doc.data
    start = data.rfind(b"\n", 0, node.start_byte) + 1
    end = data.find(b"\n", node.end_byte)
    after = data[node.end_byte : len(data) if end < 0 else end]
    return not data[start : node.start_byte].strip() and (not after.strip() or after.strip().startswith(b"//"))


def _warp_edit(doc: CudaDocument, node: tree_sitter.Node, wide: bool) -> Edit:
    """The non-sync HIP call; a shuffle without a width gets 32 (CUDA's warp) unless the file's warp size follows the
    wavefront (WIDE: its warp-size constant is 64 on ROCm)."""
    arguments = node.child_by_field_name("arguments")
    assert arguments is not None
    spec = _data()["warp"][_name(node)]
    if "call" in spec:
        return Edit(node.start_byte, node.end_byte, str(spec["call"]))
    args = [_rewritten(doc, a, wide) for a in arguments.named_children if a.type != "comment"][1:]
    if "lanes" in spec and len(args) == int(spec["lanes"]) - 1 and not wide:
        args.append("32")
    return Edit(node.start_byte, node.end_byte, f"{spec['hip']}({', '.join(args)})")


def _rewritten(doc: CudaDocument, node: tree_sitter.Node, wide: bool) -> str:
    """NODE's text with the warp calls inside it in their HIP form."""
    text = doc.node_text(node)
    for inner in sorted(_targets(node), key=lambda n: n.start_byte, reverse=True):
        if _is_warp_call(inner):
            new = _warp_edit(doc, inner, wide).text
            start, end = inner.start_byte - node.start_byte, inner.end_byte - node.start_byte
            text = text[:start] + new + text[end:]
    return text


def _ptx_branch(doc: CudaDocument, node: tree_sitter.Node, statement: tree_sitter.Node) -> tuple[Branch | None, str]:
    template = "".join(_string_value(doc, s) for s in node.children if s.type in ("string_literal", "concatenated_string"))
    shown = re.sub(r"(?:\\[nt]|\s)+", " ", template).strip()
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if statement.type != "expression_statement" or statement.named_child(0) != node:
        return None, "inline PTX inside a larger statement; add the ROCm branch by hand"
    operands = {"out": _operands(doc, node, "gnu_asm_output_operand"), "in": _operands(doc, node, "gnu_asm_input_operand")}
    for idiom in _data()["ptx"]:
        if re.match(idiom["match"], template):
            values = {f"{kind}{i}": v for kind, found in operands.items() for i, v in enumerate(found)}
            try:
                hip = str(idiom["hip"]).format(**values)
            except (KeyError, IndexError):
                break
            note = f"  // HIP builtin for PTX `{shown}`"
            return Branch(statement.start_point.row, statement.end_point.row,
                          (Edit(statement.start_byte, statement.end_byte, hip),), note), ""
    return None, f"inline PTX `{shown}` has no known HIP form; port it by hand"


def _string_value(doc: CudaDocument, node: tree_sitter.Node) -> str:
    if node.type == "concatenated_string":
        return "".join(_string_value(doc, c) for c in node.named_children if c.type == "string_literal")
    return doc.node_text(node)[1:-1]


def _operands(doc: CudaDocument, asm: tree_sitter.Node, kind: str) -> list[str]:
    found = []
    stack = list(asm.children)
    while stack:
        node = stack.pop(0)
        if node.type == kind:
            value = node.child_by_field_name("value")
            found.append(doc.node_text(value) if value is not None else "")
        else:
            stack[:0] = node.children
    return found


def _rewrite(relpath: str, macro: str) -> Finding:
    message = (f"no #ifdef {macro} branches written: the file is built on NVIDIA tensor cores (CUTLASS/CuTe, WMMA or "
               "mma.sync/ldmatrix PTX), so its ROCm form is a rewrite (Composable Kernel, rocWMMA, MFMA builtins), "
               "not branches beside its warp code")
    return Finding(relpath, 1, 1, RULE_LEFT, "unsupported-api", Severity.MEDIUM, 1, message, "")


def _left(doc: CudaDocument, line: int, why: str, macro: str) -> Finding:
    return Finding(doc.source.relpath, line, 1, RULE_LEFT, "inline-ptx" if "PTX" in why else "warp-size-assumption",
                   Severity.MEDIUM, line, f"no #ifdef {macro} branch written: {why}", doc.line_text(line))
