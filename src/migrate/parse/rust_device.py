"""Rust sources other than build.rs: four things only are read, device code written for NVIDIA's nvptx64 target
(kernels with the `extern "ptx-kernel"` ABI, `core::arch::nvptx` intrinsics, `llvm.nvvm.*` intrinsics bound by
`link_name`, PTX text in `asm!`, Rust-CUDA's `cuda_std`), host code that loads PTX or compiles it with NVRTC at
run time (cudarc, cust), nvidia-smi run through `Command::new`, and nvcc run or looked up (`Command::new("nvcc")`,
`which("nvcc")`) by a build helper or a program that compiles kernels, with the architecture flags it passes. A file
holding none of their literal words is never lexed; comments are never read, and a literal counts only where the code
around it makes it one of these."""

from __future__ import annotations

import re
from collections.abc import Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import FACT, Item, ManifestDocument, Positions
from migrate.parse.rust import Literal, lex, nvcc_option_facts, nvcc_runs

_WORDS = ("ptx-kernel", "nvptx", "llvm.nvvm", "cuda_std", "asm!", "nvidia-smi", "Ptx", "_ptx", "nvcc")  # the prefilter
_CODE = re.compile(r"\bcore\s*::\s*arch\s*::\s*(nvptx)(?:64)?\b|\b(cuda_std)\s*::")
# PTX loaded or JIT-compiled by the host: cudarc's Ptx::from_src / from_file, load_ptx, compile_ptx (NVRTC), cust's
# Module::from_ptx (and wrappers named *Module::from_ptx)
_PTX_LOAD = re.compile(r"\b(Ptx\s*::\s*from_(?:src|file)|\w*Module\s*::\s*from_ptx|compile_ptx(?:_with_opts)?|"
                       r"load_ptx)\s*[(:<]")
_EXTERN_BEFORE = re.compile(r"\bextern\s*$")
_LINK_NAME_BEFORE = re.compile(r"\blink_name\s*=\s*$")
# PTX that only NVIDIA's assembler reads: special registers and the warp-synchronous and memory instructions
_PTX = re.compile(r"%(?:laneid|warpid|smid|lanemask_\w+|n?tid\.[xyz]|n?ctaid\.[xyz])\b|"
                  r"\b(?:shfl|vote|bar|mma|wmma|match|redux)\.sync\b|\b(?:cp\.async|ld\.global|st\.global)\b")
_COMMAND_NEW_BEFORE = re.compile(r"\bCommand\s*::\s*new\s*\(\s*$")
_NVIDIA_SMI = re.compile(r"^(?:.*[/\\])?nvidia-smi(?:\.exe)?$")
_ASM = re.compile(r"\b(?:core\s*::\s*arch\s*::\s*)?(?:asm|global_asm)\s*!\s*\(")


def _before(code: str, literal: Literal, width: int = 40) -> str:
    return code[max(0, literal.start - 1 - width):literal.start - 1]


def _facts(text: str) -> Iterator[Item]:
    code, literals = lex(text)
    where = Positions(text)
    for match in _CODE.finditer(code):
        group = 1 if match.group(1) else 2
        yield Item(FACT, "rust-nvptx-code", *where.at(match.start()), value=match.group(group))
    for match in _PTX_LOAD.finditer(code):
        yield Item(FACT, "rust-ptx-load", *where.at(match.start()), value=re.sub(r"\s+", "", match.group(1)))
    asm_calls = [match.end() for match in _ASM.finditer(code)]
    for literal in literals:
        before = _before(code, literal)
        if literal.value == "ptx-kernel" and _EXTERN_BEFORE.search(before):
            yield Item(FACT, "rust-nvptx-code", *where.at(literal.start - 1), value="ptx-kernel")
        elif _NVIDIA_SMI.match(literal.value) and _COMMAND_NEW_BEFORE.search(before):
            yield Item(FACT, "rust-nvidia-smi", *where.at(literal.start), value=literal.value)
        elif literal.value.startswith("llvm.nvvm.") and _LINK_NAME_BEFORE.search(before):
            yield Item(FACT, "rust-nvptx-code", *where.at(literal.start), value=literal.value)
        elif asm_calls and (ptx := _PTX.search(literal.value)) and _inside_asm(code, asm_calls, literal.start):
            yield Item(FACT, "rust-nvptx-code", *where.at(literal.start + ptx.start()), value=ptx.group())
    runs = list(nvcc_runs(code, literals, where, "rust-nvcc-run"))
    if runs:
        yield from runs
        yield from nvcc_option_facts(literals, where)[1]


def _inside_asm(code: str, asm_calls: list[int], offset: int) -> bool:
    """Whether OFFSET lies in the argument list of an asm! call (its parentheses not yet closed)."""
    opened = max((end for end in asm_calls if end <= offset), default=-1)
    if opened < 0:
        return False
    depth = 1
    for char in code[opened:offset]:
        depth += 1 if char == "(" else -1 if char == ")" else 0
        if depth == 0:
            return False
    return True


@register(FileKind.RUST)
def parse_rust_source(source: SourceFile, text: str) -> ManifestDocument:
    """A Rust source reduced to its nvptx64 device code, its PTX loads, its nvidia-smi runs and its nvcc runs."""
    if not any(word in text for word in _WORDS):
        return ManifestDocument(source=source, text=text)
    found = sorted(_facts(text), key=lambda item: (item.line, item.column))
    return ManifestDocument(source=source, text=text, manifest=found)
