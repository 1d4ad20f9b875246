"""The rewrite floor: a component whose kernel code is mostly blocker PTX reads very hard, a few PTX lines do not."""

from __future__ import annotations

from dataclasses import replace

from migrate import finding_status, risk, weights
from migrate.model import Finding, Severity

W = weights.load_weights()
PTX = ("mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned.m8n8", "cp.async.cg.shared.global", "lop3.b32",
       "cp.async.wait_group", "mma.sync.aligned.m16n8k8", "ldmatrix.sync.aligned.x4.trans", "cp.async.commit_group")


def make(path: str, line: int, rule: str, category: str, severity: Severity, evidence: str = "") -> Finding:
    return Finding(path=path, line=line, column=1, rule=rule, category=category, severity=severity, end_line=line,
                   message=f"{rule} here", evidence=evidence or f"code_{line}();")


def ptx(path: str, mnemonics: tuple[str, ...] = PTX, start: int = 10) -> list[Finding]:
    return [make(path, start + i, "inline-ptx", "inline-ptx", Severity.BLOCKER, f'asm volatile("{m} ...");')
            for i, m in enumerate(mnemonics)]


def lanes(path: str, count: int, start: int = 100) -> list[Finding]:
    return [make(path, start + i, "warp-lane-math", "warp-size-assumption", Severity.HIGH) for i in range(count)]


GEMM = [*ptx("gemm/kernel.cu"), *lanes("gemm/kernel.cu", 10),
        make("gemm/binding.cpp", 3, "cuda-runtime-api", "cuda-driver-api", Severity.LOW),
        make("setup.py", 5, "torch-cuda-extension-build", "cpp-extension-build", Severity.MEDIUM)]


def test_a_component_of_blocker_ptx_is_a_rewrite() -> None:
    assessed = risk.assess(GEMM, W)
    assert (assessed.verdict, assessed.score) == ("very-hard", 65)
    assert assessed.basis.startswith("a rewrite: 1 of the 2 files with work in gemm are blocker code (inline-ptx)")


def test_blocker_ptx_in_one_file_of_many_with_work_is_not() -> None:
    spread = [*GEMM, *(f for n in range(3) for f in lanes(f"gemm/epilogue{n}.cu", 4))]
    assessed = risk.assess(spread, W)
    assert assessed.verdict != "very-hard" and not assessed.basis.startswith("a rewrite")


def test_one_ptx_line_is_not() -> None:
    timer = [*ptx("timing/timer.cu", PTX[3:4]), *lanes("timing/timer.cu", 2)]
    assessed = risk.assess(timer, W)
    assert assessed.verdict == "hard" and not assessed.basis.startswith("a rewrite")


def test_code_that_already_runs_on_rocm_reads_no_rewrite() -> None:
    context = finding_status.Context(level="supported")
    assert not risk.assess(GEMM, W, context=context).basis.startswith("a rewrite")


def test_the_floor_is_data() -> None:
    off = replace(W, rewrite=weights.Rewrite())
    assert risk.assess(GEMM, off).verdict == "hard"
