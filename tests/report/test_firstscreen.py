"""The first screen: components named for what they are, actions by the effort they remove, the project-level
counterpart, run-unchanged notes only where a port cannot handle the code, counts in words."""

from __future__ import annotations

import pytest

from migrate.assessment import assess
from migrate.model import Finding, Severity, Substitution
from migrate.report import components, firstscreen, render
from migrate.substitutions import for_targets, knowledge_base

from test_reports import make, sample


def sub(sub_id: str) -> Substitution:
    return for_targets(knowledge_base()[sub_id], ("gfx942",))


def screen(*findings: Finding, substitutions: tuple[str, ...] = ()) -> firstscreen.FirstScreen:
    result = sample(findings=tuple(sorted(findings)), substitutions=tuple(sub(s) for s in substitutions))
    return firstscreen.build(assess(result))


def ptx(path: str, line: int, evidence: str = 'asm volatile("mov.u32 %0, %%laneid;");') -> Finding:
    return make(path, line, "inline-ptx", Severity.BLOCKER, category="inline-ptx", evidence=evidence,
                substitutions=("inline-ptx",))


def trt(path: str, line: int) -> Finding:
    return make(path, line, "python-tensorrt", Severity.BLOCKER, category="tensorrt", substitutions=("tensorrt",))


@pytest.mark.parametrize("name, categories, role", [
    ("tests/unit", ("custom-cuda-kernel",), "tests"),
    ("examples/yolo", ("tensorrt",), "examples"),
    ("benchmarks", ("inline-ptx",), "benchmarks"),
    (".github", ("cuda-build-config",), "CI"),
    ("csrc/ops", ("inline-ptx", "cuda-library"), "custom ops/kernels"),
    ("torch2trt", ("tensorrt",), "inference/deployment path"),
    (".", ("cpp-extension-build",), "build"),
    ("docker", ("nvidia-docker",), "environment"),
    ("train", ("python-cuda-api",), "training path"),
    ("serve", ("python-cuda-api",), "inference/deployment path"),
    ("mylib", ("python-cuda-api",), "Python GPU code"),
])
def test_a_component_is_named_for_what_it_is(name: str, categories: tuple[str, ...], role: str) -> None:
    assert components.role(name, categories) == role


def test_the_root_is_never_a_dot() -> None:
    assert components.name_title(".", ("cpp-extension-build",)) == "build (repository root)"
    assert components.name_title("csrc/ops", ("inline-ptx",)) == "custom ops/kernels (csrc/ops/)"
    root = make("setup.py", 3, "torch-cuda-extension-build", Severity.HIGH, category="cpp-extension-build")
    result = sample(findings=(root,), substitutions=())
    for fmt in ("terminal", "md", "html"):
        text = render(result, fmt, **({"width": 300} if fmt == "terminal" else {}))
        assert "build (repository root)" in text and " . →" not in text and "(.)" not in text and "(./)" not in text


def test_actions_are_the_substitutes_that_remove_most_effort_first() -> None:
    renames = [make("csrc/a.cu", n, "cublas-call", Severity.LOW, category="cuda-library", substitutions=("cublas",))
               for n in range(1, 30)]
    found = screen(*renames, trt("infer/run.py", 3), substitutions=("cublas", "tensorrt"))
    assert [a.what.split(" →")[0] for a in found.actions[:2]] == ["tensorrt", "cublas"]  # not alphabetical
    assert found.actions[0].command.startswith("python -m pip install --index-url https://stable.repo.amd.com/rocm/migraphx")
    assert found.actions[0].why.startswith("removes ") and found.actions[0].why.endswith("(1 finding)")
    assert found.actions[1].install == "amdrocm-blas (Core SDK) / hipblas, rocblas (legacy)"  # no command: words


def test_a_project_built_on_tensorrt_leads_with_migraphx_and_says_what_zluda_covers() -> None:
    found = screen(*(trt(f"converters/op{n}.py", 2) for n in range(6)), ptx("csrc/k.cu", 4),
                   substitutions=("tensorrt", "inline-ptx"))
    assert found.lead is not None and found.lead.heading.startswith("Most of what blocks this port is TensorRT: ")
    assert "MIGraphX" in found.lead.text and "torch_migraphx" in found.lead.text and "ONNX Runtime" in found.lead.text
    assert found.lead.sources and found.lead.as_of and found.lead.as_of[0].startswith("ROCm 10.1 docs")
    assert [n.heading.split("?")[0] for n in found.unchanged] == ["Run unchanged"]
    zluda = found.unchanged[0]
    assert "unmodified CUDA binaries" in zluda.text and any("server-class GPUs" in limit for limit in zluda.limits)
    assert zluda.sources[0].startswith("https://github.com/vosen/ZLUDA") and zluda.as_of


def test_no_counterpart_when_the_stack_is_a_minority() -> None:
    found = screen(trt("infer/run.py", 3), *(ptx(f"csrc/k{n}.cu", 4) for n in range(8)),
                   substitutions=("tensorrt", "inline-ptx"))
    assert found.lead is None and all("ZLUDA" not in n.text for n in found.unchanged)


def test_inline_ptx_without_tensor_cores_may_build_unchanged_with_scale() -> None:
    found = screen(*(ptx(f"csrc/k{n}.cu", 4) for n in range(3)), substitutions=("inline-ptx",))
    assert [n.heading.split(":")[0] for n in found.unchanged] == ["Port or build unchanged"]
    note = found.unchanged[0]
    assert note.text.startswith("SCALE (Spectral Compute)") and note.sources[0] == "https://docs.scale-lang.com/stable"
    assert any("Tensor-core" in limit for limit in note.limits) and note.as_of


def test_no_scale_note_where_there_is_tensor_core_code_or_the_blockers_are_a_port() -> None:
    mma = ptx("csrc/mma.cu", 9, 'asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ...");')
    assert screen(*(ptx(f"csrc/k{n}.cu", 4) for n in range(3)), mma, substitutions=("inline-ptx",)).unchanged == ()
    kernels = [make(f"csrc/k{n}.cu", 5, "warp-literal-32", Severity.HIGH, category="warp-size-assumption")
               for n in range(4)]
    assert screen(*kernels).unchanged == ()  # a port handles warp-size code: no advice to run it unchanged


def test_counts_say_what_they_count() -> None:
    guarded = make("csrc/g.cu", 3, "inline-ptx", Severity.INFO, category="inline-ptx", status="guarded")
    found = firstscreen.build(assess(sample(guarded=1, guarded_findings=(guarded,))))
    counts = dict(found.counts)
    assert counts["Findings"] == ("7 findings in 3 of 6 files scanned: 6 to port (1 blocker, 1 high, 1 medium, 3 low), "
                                  "1 need nothing on ROCm (informational, or handled by its HIP build)")
    assert counts["Already handled"].startswith(
        "1 more NVIDIA-only place in code a HIP build never compiles (behind HIP guards, or another backend's code), "
        "not among the findings above and not in the effort: 1 inline PTX in 1 file")


def test_a_cutlass_kernel_library_leads_with_composable_kernel() -> None:
    gemm = [make(f"csrc/gemm{n}.cu", 3, "cutlass-usage", Severity.HIGH, category="cuda-library",
                 evidence="cutlass::gemm::device::Gemm<float> op;", substitutions=("cutlass",)) for n in range(5)]
    found = screen(*gemm, substitutions=("cutlass",))
    assert found.lead is not None and found.lead.heading.startswith("Most of what blocks this port is CUTLASS/CuTe: 100%")
    assert "Composable Kernel" in found.lead.text and "hipBLASLt" in found.lead.text
    assert found.actions[0].what.startswith("cutlass → Composable Kernel")
    assert found.unchanged == ()  # a GEMM library is a port, not a binary-only stack or inline PTX
