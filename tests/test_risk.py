"""The risk and effort model on small hand-made finding sets: values, monotonicity, calibration."""

from __future__ import annotations

import copy
import itertools
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from migrate import finding_status, risk, weights
from migrate.errors import RuleFileError
from migrate.model import Finding, Occurrence, Rule, ScanResult, Severity
from migrate.data import data_path

W = weights.load_weights()


def make(path: str, line: int, rule: str, category: str, severity: Severity, **extra: object) -> Finding:
    return Finding(
        path=path, line=line, column=1, rule=rule, category=category, severity=severity, end_line=line,
        message=f"{rule} here", evidence=extra.pop("evidence", f"code_{line}();"), **extra,  # type: ignore[arg-type]
    )


def renames(path: str, count: int, *, rule: str = "cuda-runtime-api", start: int = 1) -> list[Finding]:
    return [make(path, start + i, rule, "cuda-driver-api", Severity.LOW, hip="hipX") for i in range(count)]


def blocker(path: str = "infer/trt.py", line: int = 1) -> Finding:
    return make(path, line, "tensorrt-import", "tensorrt", Severity.BLOCKER)


PYTORCH_REPO = [
    *(make("trainer/train.py", n, "torch-cuda-call", "python-cuda-api", Severity.INFO) for n in range(10, 30, 2)),
    make("requirements.txt", 3, "cuda-index-url", "cuda-index-url", Severity.MEDIUM),
    make("trainer/train.py", 5, "torch-version-cuda", "torch-version-check", Severity.LOW),
]
KERNEL_REPO = [
    *(make(f"csrc/k{i}.cu", 40 + i, "inline-ptx-asm", "inline-ptx", Severity.HIGH) for i in range(3)),
    *(make("csrc/reduce.cu", 10 + i, "warp-size-32", "warp-size-assumption", Severity.HIGH) for i in range(4)),
    *(make("csrc/reduce.cu", 50 + i, "shfl-full-mask", "warp-size-assumption", Severity.MEDIUM) for i in range(3)),
    make("setup.py", 12, "cuda-extension-build", "cpp-extension-build", Severity.MEDIUM),
    *renames("csrc/k0.cu", 40, start=100),
]


def test_no_findings_is_trivial_with_no_effort() -> None:
    assessed = risk.assess([], W)
    assert (assessed.score, assessed.verdict, assessed.effort, assessed.drivers) == (0, "trivial", risk.Effort(), ())


def test_info_findings_cost_nothing() -> None:
    assessed = risk.assess(PYTORCH_REPO[:10], W)
    assert assessed.effort == risk.Effort() and assessed.verdict == "trivial"


def test_one_finding_costs_its_severity_range_times_its_category_factor_plus_its_components_build() -> None:
    assessed = risk.assess([make("a.cu", 1, "inline-ptx-asm", "inline-ptx", Severity.HIGH)], W)
    low, high = W.severity_days[Severity.HIGH]
    factor = W.categories["inline-ptx"].factor
    fixed_low, fixed_high = W.component_fixed
    assert assessed.effort == risk.Effort(low * factor + fixed_low, high * factor + fixed_high)


def test_a_finding_outside_kernels_carries_no_fixed_cost() -> None:
    assessed = risk.assess([make("requirements.txt", 1, "idx", "cuda-index-url", Severity.MEDIUM)], W)
    low, high = W.severity_days[Severity.MEDIUM]
    factor = W.categories["cuda-index-url"].factor
    assert assessed.effort == risk.Effort(low * factor, high * factor)


def test_pure_pytorch_repo_reads_trivial_or_easy() -> None:
    assert risk.assess(PYTORCH_REPO, W).verdict in {"trivial", "easy"}


def test_kernel_repo_reads_moderate_and_its_driver_is_its_kernel_component() -> None:
    assessed = risk.assess(KERNEL_REPO, W)
    assert assessed.verdict == "moderate"  # high (not blocker) PTX in 3 files + warp logic: one to two weeks
    assert [d.component for d in assessed.drivers] == ["csrc", "."]
    assert assessed.drivers[0].text.startswith("csrc: inline PTX and 32-wide warp assumptions (4 rules, 50 findings in 4 files) ")


def test_a_blocker_alone_reads_at_least_hard() -> None:
    assert risk.assess([blocker()], W).verdict in {"hard", "very-hard"}


def test_a_rules_own_effort_range_replaces_the_default() -> None:
    default = make("csrc/a.cu", 1, "cutlass-usage", "cuda-library", Severity.HIGH)
    own = replace(default, effort=(2.0, 5.0))
    assert risk.assess([own], W).effort == risk.Effort(2.0, 5.0)
    assert risk.assess([own], W).effort.mid > risk.assess([default], W).effort.mid
    assert risk.assess([replace(own, vendored=True)], W).effort == risk.Effort(2.0, 5.0).scaled(W.vendored_factor)


def test_vendored_code_counts_once_per_rule() -> None:
    one = make("third_party/lib/a.cu", 1, "inline-ptx", "inline-ptx", Severity.BLOCKER, vendored=True)
    many = [replace(one, line=n, path=f"third_party/lib/f{n}.cu") for n in range(1, 200)]
    total, single = risk.assess(many, W).effort, risk.assess([one], W).effort
    assert (total.low, total.high) == (pytest.approx(single.low), pytest.approx(single.high))


def _no_fixed(effort: risk.Effort, components: int = 1) -> risk.Effort:
    low, high = W.component_fixed
    return risk.Effort(effort.low - components * low, effort.high - components * high)


def test_one_rule_in_one_component_is_one_decision_growing_slowly_with_its_files() -> None:
    one = make("csrc/k.cu", 1, "warp-size-32", "warp-size-assumption", Severity.HIGH)
    same_file = [one, replace(one, line=2), replace(one, line=3)]
    three_files = [one, replace(one, path="csrc/a.cu"), replace(one, path="csrc/b.cu")]
    single = _no_fixed(risk.assess([one], W).effort).high
    assert _no_fixed(risk.assess(same_file, W).effort).high == pytest.approx(single)
    assert _no_fixed(risk.assess(three_files, W).effort).high == pytest.approx(single * 3**W.unit_exponent)


def test_the_growth_is_capped() -> None:
    one = make("csrc/k.cu", 1, "warp-size-32", "warp-size-assumption", Severity.HIGH)
    many = [replace(one, path=f"csrc/k{n}.cu") for n in range(500)]
    single = _no_fixed(risk.assess([one], W).effort).high
    assert _no_fixed(risk.assess(many, W).effort).high == pytest.approx(single * W.unit_cap)


def test_distinct_ptx_mnemonics_count_like_files() -> None:
    one = make("csrc/k.cuh", 1, "inline-ptx", "inline-ptx", Severity.BLOCKER, evidence='asm("mov.u32 %0, %%laneid;")')
    other = replace(one, line=2, evidence='asm("cp.async.wait_group 0;")')
    same = replace(one, line=3, evidence='asm("mov.b32 %0, %1;")')
    single = _no_fixed(risk.assess([one], W).effort).high
    assert _no_fixed(risk.assess([one, same], W).effort).high == pytest.approx(single)
    assert _no_fixed(risk.assess([one, other], W).effort).high == pytest.approx(single * 2**W.unit_exponent)


def test_generated_instantiation_files_count_as_one() -> None:
    stubs = [make(f"csrc/flash/inst/flash_fwd_hdim{d}_fp16_sm80.cu", 3, "cutlass-usage", "cuda-library", Severity.HIGH,
                  effort=(2.0, 5.0)) for d in (32, 64, 96, 128, 160, 192, 224, 256)]
    assert risk.assess(stubs, W).effort == risk.assess(stubs[:1], W).effort


def test_renames_cost_nothing_where_the_build_hipifies() -> None:
    context = finding_status.Context(hipify_dirs=("",))
    assert risk.assess(renames("csrc/a.cu", 40), W, context=context).effort == risk.Effort()
    assert risk.assess(renames("csrc/a.cu", 40), W).effort.high > 0
    assert {finding_status.status_of(f, context, W) for f in renames("csrc/a.cu", 3)} == {"covered"}


def test_a_value_hipify_leaves_as_it_is_stays_to_change_where_the_build_hipifies() -> None:
    context = finding_status.Context(hipify_dirs=("",))
    bounds = make("csrc/a.cu", 7, "launch-bounds-min-blocks", "other", Severity.LOW,
                  evidence="__global__ void __launch_bounds__(256, 4) k()")
    assert "launch-bounds-min-blocks" in W.not_renamed
    assert finding_status.status_of(bounds, context, W) == "remaining"
    assert risk.assess([bounds], W, context=context).effort.high > 0
    # a rename of the same severity in the same hipified file is hipify's
    assert finding_status.status_of(renames("csrc/a.cu", 1)[0], context, W) == "covered"


@pytest.mark.parametrize("path, role", [
    ("tests/test_model.py", "tests"), ("docs/install.md", "docs"), ("examples/run.py", "examples"),
    ("benchmarks/bench.py", "benchmarks"), ("microbenchmarks/pipe.cu", "benchmarks"),
    ("test/cpp/micro_benchmarks/arena.cc", "tests"), ("dev/cuda/variant.py", "development"), (".github/workflows/ci.yml", "ci"),
    ("tensorrt/dcn_plugin/plugin.py", "deployment"), ("deploy/TensorRT/infer.py", "deployment"),
    ("scripts/convert_controlnet_to_tensorrt.py", "deployment"), ("export_trt.py", "deployment"),
    ("tools/export-tensorrt-engine.py", "deployment"), ("src/tts/runtime/triton_trtllm/model.py", "deployment"),
    ("runtime/trtllm/Dockerfile.server", "deployment"), ("serving/trt_llm/build.py", "deployment"),
    ("tools/trt.py", "deployment"), ("scripts/tensorrt.py", "deployment"),
    ("runtime/gpu/tensorrt_fastertransformer/run.sh", "deployment"), ("tools/trt-bench/main.cpp", "deployment"),
    ("src/lib/tensorrt_plugin/layer.cu", "deployment"), ("eval/ruler/pred/serve_trt.py", "deployment"),
    ("inference/server/serve_trtllm.py", "deployment"), ("serve-tensorrt.py", "deployment"),
    ("modules/tensorrt_llm.py", "deployment"), ("app/backends/trt_llm.py", "deployment"),
    ("docker/TensorRT-LLM/Dockerfile", "deployment"),
    ("build-windows/Triad.vcxproj", "windows"), ("win32/cuda.props", "windows"), ("vs2019/kernels/app.cu", "windows"),
    ("dev_requirements.txt", "development"), ("requirements-dev.txt", "development"),
    ("ci/requirements_docs.txt", "development"), ("requirements-lint.txt", "development"),
])
def test_folders_off_the_main_path_weigh_their_roles_factor(path: str, role: str) -> None:
    code = make("pkg/model.py", 1, "torch-version-cuda", "torch-version-check", Severity.MEDIUM)
    off = replace(code, path=path)
    found = weights.role_of(path, W)
    assert found is not None and found.name == role and weights.role_of(code.path, W) is None
    assert risk.assess([off], W).effort.high == pytest.approx(risk.assess([code], W).effort.high * found.factor)


@pytest.mark.parametrize("path", [
    "torch2trt/converters/conv.py", "pkg/trt_utils.py", "pred/serve_vllm.py", "pkg/serve_trt_model.py", "pkg/deployer.py", "pkg/deployment_test_helpers.py",
    "torch2trt/torch2trt.py", "scripts/convert_strtoupper.py", "pkg/export.py", "pkg/trt_runtime.py",
    "tensorrt_llm/runtime/session.py", "pkg/trtllm_utils.py", "pkg/trt.py", "tools/trt_utils.py",
    "src/window_attention.cu", "pkg/windows_utils.py", "src/msvc_compat.h",
    # a top-level package named for TensorRT is the project; TensorRT-LLM's C++ core is its own
    "trt_pose/models/resnet.py", "cpp/tensorrt_llm/kernels/gemm.cu",
    # a one-module project named for TensorRT-LLM, and helpers that only mention it
    "tensorrt_llm.py", "pkg/tensorrt_llm_utils.py", "pkg/tensorrt_llm/runtime.py",
    # what users install: the requirements themselves, a device's, a file that only starts with dev
    "requirements.txt", "requirements-cuda.txt", "requirements-devices.txt", "developer_requirements_notes.md",
])
def test_main_path_look_alikes_of_the_roles_keep_no_role(path: str) -> None:
    assert weights.role_of(path, W) is None


def test_the_roles_remembered_by_path_stay_bounded_and_right(monkeypatch: pytest.MonkeyPatch) -> None:
    own = weights.load_weights(data_path("risk.yaml"))  # its own object: its memo starts empty
    monkeypatch.setattr(weights, "_PATH_ROLES_KEPT", 4)
    for n in range(10):
        assert weights.role_of(f"tests/test_{n}.py", own) is not None
        assert len(own.path_roles) <= 4
    assert weights.role_of("tests/test_0.py", own) is not None and weights.role_of("pkg/model.py", own) is None


def test_a_tensorrt_step_documented_in_a_readme_floors_nothing_and_weighs_off_the_main_path() -> None:
    """A trtexec export step in a README documents a deployment users opt into; the same command in a script the
    project runs is the deployment path itself."""
    documented = make("README.md", 179, "trtexec-call", "tensorrt", Severity.BLOCKER)
    script = replace(documented, path="scripts/build_engine.sh")
    assert risk.assess([script], W).verdict == "hard"  # a blocker floors at hard
    assessed = risk.assess([documented], W)
    assert assessed.verdict == "easy" and "off the main path" in assessed.basis
    assert assessed.effort.high == pytest.approx(risk.assess([script], W).effort.high)  # its work still counts


def test_a_development_folder_neither_floors_the_verdict_nor_builds_in_full() -> None:
    variant = make("dev/cuda/attention_forward.cu", 7, "warp-lane-math", "warp-size-assumption", Severity.HIGH)
    main = replace(variant, path="csrc/attention.cu")
    assert risk.assess([main], W).verdict == "moderate"  # a high finding in kernel code floors at moderate
    assert risk.assess([variant], W).verdict == "easy"  # GPU code of its own, but off the main path
    assert risk.assess([variant], W).effort.high == pytest.approx(risk.assess([main], W).effort.high * 0.3)


def test_components_follow_build_files_and_kernel_directories() -> None:
    context = finding_status.Context(build_dirs=("contrib/addon",))
    assert context.component("contrib/addon/csrc/k.cu") == "contrib/addon"
    assert context.component("csrc/attn/fwd.cu") == "csrc/attn"
    assert context.component("deepspeed/ops/csrc/attn/fwd.cu") == "csrc/attn"  # a packaged copy: the same unit
    # kernels/cuda names no kernel: the packages above keep their folders apart
    assert context.component("pkg/scene/kernels/cuda/csrc/a.cu") == "pkg/scene/kernels/cuda"
    assert context.component("pkg/sensors/kernels/cuda/b.cu") == "pkg/sensors/kernels/cuda"
    assert context.component("pkg/cuda/csrc/c.cu") == "pkg/cuda/csrc"
    assert context.component("pkg/sub/mod.py") == "pkg"
    assert context.component("setup.py") == "."


def test_in_a_supported_repository_an_unported_component_is_an_optional_gap() -> None:
    addon = make("contrib/fast/csrc/gemm.cu", 3, "inline-ptx", "inline-ptx", Severity.BLOCKER)
    core = make("csrc/core/reduce.cu", 5, "warp-size-32", "warp-size-assumption", Severity.HIGH)
    context = finding_status.Context(build_dirs=("contrib/fast",), ported=frozenset({"csrc/core"}), level="supported")
    assert (finding_status.status_of(addon, context, W), finding_status.status_of(core, context, W)) == ("optional-gap", "remaining")
    assessed = risk.assess([addon, core], W, context=context)
    assert assessed.blockers == 0 and assessed.optional.high > 0
    assert [(c.name, c.optional) for c in assessed.components] == [("csrc/core", False), ("contrib/fast", True)]
    assert assessed.verdict == "easy"  # the supported floors: a remaining high finding reads easy
    unsupported = risk.assess([addon, core], W, context=replace(context, level="partial"))
    assert unsupported.verdict in {"hard", "very-hard"}


def test_gpu_code_of_its_own_reads_easy_also_where_the_repository_builds_for_rocm() -> None:
    """The expert's already-ported repositories are all easy: their kernels still need a ROCm build and a run."""
    supported = finding_status.Context(level="supported")
    kernel = make("hip/simulation.cpp", 12, "cuda-kernel-definition", "custom-cuda-kernel", Severity.LOW)
    assert risk.assess([kernel], W, context=supported).verdict == "easy"
    assert risk.assess([replace(kernel, status="guarded")], W, context=supported).verdict == "trivial"
    python_only = make("train.py", 3, "torch-cuda-call", "python-cuda-api", Severity.INFO)
    assert risk.assess([python_only], W, context=supported).verdict == "trivial"


def test_a_triton_kernel_on_the_main_path_reads_easy() -> None:
    triton = make("pkg/ops/softmax.py", 8, "python-triton-kernel", "triton-kernel", Severity.LOW)
    assert risk.assess([triton], W).verdict == "easy"
    assert risk.assess([replace(triton, path="tests/test_softmax.py")], W).verdict == "trivial"  # a test's kernel


def test_a_collection_of_programs_reports_the_median_program_and_the_blocked_ones() -> None:
    programs = [f"samples/p{n}" for n in range(8)]
    findings = [make(f"{p}/main.cu", 1, "warp-size-32", "warp-size-assumption", Severity.MEDIUM) for p in programs]
    findings.append(make("samples/p0/main.cu", 9, "inline-ptx", "inline-ptx", Severity.BLOCKER))
    context = finding_status.Context(build_dirs=tuple(programs))
    assessed = risk.assess(findings, W, context=context)
    assert assessed.collection is not None
    assert (assessed.collection.programs, assessed.collection.blocked) == (8, ("samples/p0",))
    one = risk.assess(findings[1:2], W, context=context)
    assert assessed.collection.median == one.effort
    assert assessed.effort == one.effort and assessed.total.high > 7 * one.effort.high
    assert assessed.verdict == one.verdict


def test_guarded_code_is_credited() -> None:
    plain = risk.assess(KERNEL_REPO, W).effort
    guarded = risk.assess(KERNEL_REPO, W, guarded=len(KERNEL_REPO)).effort
    assert guarded.high == pytest.approx(plain.high * (1 - W.guarded_credit / 2))


def test_vendored_findings_weigh_less() -> None:
    own = make("src/a.py", 1, "torch-version-cuda", "torch-version-check", Severity.HIGH)
    vendored = make("third_party/a.py", 1, "torch-version-cuda", "torch-version-check", Severity.HIGH, vendored=True)
    assert risk.assess([vendored], W).effort.high == pytest.approx(risk.assess([own], W).effort.high * W.vendored_factor)


def test_blockers_are_counted_apart() -> None:
    assessed = risk.assess([*KERNEL_REPO, blocker(), blocker(line=9)], W)
    high = W.severity_days[Severity.BLOCKER][1]
    factor = W.categories["tensorrt"].factor
    assert assessed.blockers == 2
    assert assessed.blocker_effort.high == pytest.approx(high * factor)


def test_rollups_add_up_to_the_total() -> None:
    assessed = risk.assess(KERNEL_REPO, W)
    for rollups in (assessed.by_directory, assessed.by_category):
        assert sum(r.effort.high for r in rollups) == pytest.approx(assessed.effort.high)
        assert sum(r.findings for r in rollups) == len(KERNEL_REPO)
        assert sum(r.share for r in rollups) == pytest.approx(1.0)
    assert [r.key for r in assessed.by_directory] == ["csrc", "."]


def test_duplicates_count_once() -> None:
    assert risk.assess(KERNEL_REPO + KERNEL_REPO[:3], W) == risk.assess(KERNEL_REPO, W)


ALL_SEVERITIES = [make("x/y.cu", 900 + int(s), f"r-{s.label}", "custom-cuda-kernel", s) for s in Severity]
BASES = [[], PYTORCH_REPO, KERNEL_REPO, renames("m.cu", 30), [blocker()], ALL_SEVERITIES]


@pytest.mark.parametrize("base", BASES, ids=["empty", "pytorch", "kernels", "renames", "blocker", "mixed"])
@pytest.mark.parametrize("guarded", [0, 5])
def test_adding_a_blocker_never_lowers_anything(base: list[Finding], guarded: int) -> None:
    before = risk.assess(base, W, guarded=guarded)
    after = risk.assess([*base, blocker("new/file.py", 77)], W, guarded=guarded)
    assert weights.VERDICTS.index(after.verdict) >= weights.VERDICTS.index(before.verdict)
    assert after.score >= before.score and after.effort.high > before.effort.high
    assert after.verdict in {"hard", "very-hard"}


def test_adding_any_finding_never_lowers_score_or_effort() -> None:
    pool = KERNEL_REPO + PYTORCH_REPO + ALL_SEVERITIES + [blocker()]
    rng = random.Random(4)
    for _ in range(200):
        subset = rng.sample(pool, rng.randint(0, 12))
        extra = rng.choice([f for f in pool if f not in subset])
        before, after = risk.assess(subset, W), risk.assess([*subset, extra], W)
        assert after.effort.low >= before.effort.low - 1e-12 and after.effort.high >= before.effort.high - 1e-12
        assert after.score >= before.score
        assert weights.VERDICTS.index(after.verdict) >= weights.VERDICTS.index(before.verdict)


@pytest.mark.parametrize("lower, higher", list(itertools.pairwise(sorted(Severity))))
def test_raising_a_severity_never_lowers_the_score(lower: Severity, higher: Severity) -> None:
    base = renames("a.cu", 5)
    low = risk.assess([*base, make("b.cu", 1, "r", "custom-cuda-kernel", lower)], W)
    high = risk.assess([*base, make("b.cu", 1, "r", "custom-cuda-kernel", higher)], W)
    assert high.score >= low.score and high.effort.high >= low.effort.high


def test_raising_any_severity_in_a_set_never_lowers_score_or_effort() -> None:
    pool = KERNEL_REPO + PYTORCH_REPO + renames("csrc/k0.cu", 5, rule="cuda-driver-api") + [blocker()]
    rng = random.Random(7)
    for _ in range(300):
        subset = rng.sample(pool, rng.randint(1, 20))
        index = rng.randrange(len(subset))
        if subset[index].severity == Severity.BLOCKER:
            continue
        raised = [*subset]
        raised[index] = replace(subset[index], severity=Severity(subset[index].severity + 1))
        before, after = risk.assess(subset, W), risk.assess(raised, W)
        assert after.effort.low >= before.effort.low - 1e-12 and after.effort.high >= before.effort.high - 1e-12
        assert after.score >= before.score


def test_environment_findings_group_per_rule_in_their_component() -> None:
    one = make("requirements.txt", 2, "pytorch-cuda-index", "cuda-index-url", Severity.MEDIUM)
    spread = [one, replace(one, path="Dockerfile"), replace(one, path="README.md")]
    single = risk.assess([one], W).effort.high
    assert risk.assess(spread, W).effort.high == pytest.approx(single * 3**W.unit_exponent)


def test_more_guarded_code_never_raises_the_effort() -> None:
    efforts = [risk.assess(KERNEL_REPO, W, guarded=g).effort.high for g in (0, 1, 10, 100)]
    assert efforts == sorted(efforts, reverse=True)


def test_verdict_thresholds() -> None:
    lowest = dict(W.verdicts)
    for name in weights.VERDICTS:
        assert risk.verdict(lowest[name], W) == name
    assert risk.verdict(100, W) == "very-hard"


def test_checklist_runs_environment_build_blockers_kernels_renames_validate() -> None:
    items = risk.checklist([*KERNEL_REPO, *PYTORCH_REPO, blocker()], W, gfx_targets=("gfx942",))
    assert [i.phase.id for i in items] == ["environment", "build", "blockers", "kernels", "mechanical", "validate"]
    assert items[2].paths == ("infer/trt.py",)
    assert "gfx942" in items[-1].phase.hint


def test_checklist_puts_what_no_rename_does_with_the_kernels() -> None:
    """A runtime call without a HIP equivalent is in a mechanical category, but hipify cannot port it."""
    rename = make("csrc/k.cu", 3, "cuda-runtime-api", "cuda-driver-api", Severity.LOW, hip="hipMalloc")
    missing = make("csrc/k.cu", 9, "cuda-unsupported-api", "cuda-driver-api", Severity.MEDIUM)
    items = risk.checklist([rename, missing], W)
    assert [(i.phase.id, i.findings) for i in items] == [("kernels", 1), ("mechanical", 1), ("validate", 0)]


def test_checklist_is_empty_without_findings() -> None:
    assert risk.checklist([], W) == ()


WARP_RULE = Rule(
    id="warp-size-32", title="t", category="warp-size-assumption", languages=("cuda",), severity=Severity.MEDIUM,
    message="m", hip=None, effort=0.5, match={}, by_wavefront=((32, Severity.INFO), (64, Severity.HIGH)),
)


def test_severity_for_target_follows_the_wavefront() -> None:
    finding = make("k.cu", 3, "warp-size-32", "warp-size-assumption", Severity.HIGH)
    both = ("gfx942", "gfx1100")
    assert risk.severity_for_target(finding, WARP_RULE, both, "gfx942") == Severity.HIGH
    assert risk.severity_for_target(finding, WARP_RULE, both, "gfx1100") == Severity.INFO
    assert risk.severity_for_target(finding, None, both, "gfx1100") == Severity.HIGH


def test_severity_set_by_an_override_is_kept() -> None:
    finding = make("k.cu", 3, "warp-size-32", "warp-size-assumption", Severity.LOW)
    assert risk.severity_for_target(finding, WARP_RULE, ("gfx942", "gfx1100"), "gfx1100") == Severity.LOW


def test_per_target_assessments_differ_by_wavefront() -> None:
    findings = tuple(sorted(make("k.cu", n, "warp-size-32", "warp-size-assumption", Severity.HIGH) for n in range(1, 6)))
    result = ScanResult("r", ("gfx942", "gfx1100"), 1, findings, ())
    entries = dict(risk.per_target(result, {"warp-size-32": WARP_RULE}, W))
    assert entries["gfx942"].score > entries["gfx1100"].score
    # wave32 leaves only the kernel floor: a project with GPU code of its own needs a build and a run (easy)
    assert (entries["gfx942"].verdict, entries["gfx1100"].verdict) == ("moderate", "easy")


@pytest.mark.parametrize(
    "effort, text",
    [
        (risk.Effort(), "0 engineer-days"),
        (risk.Effort(0.5, 1), "0.5-1 engineer-day"),
        (risk.Effort(0.04, 0.11), "0.04-0.11 engineer-days"),
        (risk.Effort(12.4, 31.6), "12-32 engineer-days"),
    ],
)
def test_format_days(effort: risk.Effort, text: str) -> None:
    assert risk.format_days(effort) == text


def test_weights_missing_a_category_are_rejected(tmp_path: Path) -> None:
    source = data_path("risk.yaml")
    broken = tmp_path / "risk.yaml"
    broken.write_text(source.read_text().replace("  inline-ptx: {", "  inline-ptx-typo: {"), encoding="utf-8")
    with pytest.raises(RuleFileError, match="inline-ptx"):
        weights.load_weights(broken)


def test_every_category_has_weights() -> None:
    from migrate.model import CATEGORIES

    assert set(CATEGORIES) <= set(W.categories)


def test_the_worked_example_of_docs_report_md() -> None:
    findings = [
        *(make("csrc/attn/fwd.cu", 12 + i, "inline-ptx", "inline-ptx", Severity.BLOCKER,
               evidence=f'asm volatile("{m} %0, %1;");') for i, m in enumerate(["ldmatrix.sync", "cp.async", "mov.u32"])),
        *(make(f"csrc/attn/{name}.cu", 20, "warp-size-32", "warp-size-assumption", Severity.HIGH)
          for name in ("fwd", "bwd", "reduce", "softmax")),
        *renames("csrc/attn/fwd.cu", 9),
        make("pkg/api.py", 5, "torch-version-cuda", "torch-version-check", Severity.MEDIUM),
    ]
    assessed = risk.assess(findings, W, guarded=4, context=finding_status.Context(hipify_dirs=("",)))
    assert (round(assessed.effort.low, 2), round(assessed.effort.high, 2)) == (5.85, 15.34)
    assert (assessed.score, assessed.verdict) == (50, "hard")
    assert [(d.component, round(d.share * 100)) for d in assessed.drivers] == [("csrc/attn", 97), ("pkg", 3)]


def test_raising_a_severity_in_a_group_never_lowers_and_raising_its_top_adds() -> None:
    group = [make("k.cu", n, "warp-size-32", "warp-size-assumption", Severity.MEDIUM) for n in range(1, 101)]
    rename = make("k.cu", 500, "warp-size-32", "warp-size-assumption", Severity.LOW, hip="warpSize")
    before = risk.assess([*group, rename], W).effort
    same = risk.assess([*group, replace(rename, severity=Severity.MEDIUM)], W).effort
    top = risk.assess([*group, replace(rename, severity=Severity.HIGH)], W).effort
    assert (same.low, same.high) == (pytest.approx(before.low), pytest.approx(before.high))  # one decision per rule
    assert top.low > before.low and top.high > before.high


def test_a_project_with_gpu_code_of_its_own_is_at_least_easy() -> None:
    renames = [make("csrc/k.cu", n, "cuda-runtime-api", "cuda-driver-api", Severity.INFO) for n in (1, 2)]
    python_only = [make("train.py", n, "python-torch-cuda", "python-cuda-api", Severity.INFO) for n in (1, 2)]
    assert risk.assess(renames, W).verdict == "easy"
    assert risk.assess(python_only, W).verdict == "trivial"


def test_build_units_that_build_libraries_only_are_one_project_not_a_collection() -> None:
    units = [f"src/kernels/k{n}" for n in range(8)]
    findings = [make(f"{u}/k.cu", 1, "warp-size-32", "warp-size-assumption", Severity.MEDIUM) for u in units]
    findings.append(make("src/kernels/k0/k.cu", 9, "inline-ptx", "inline-ptx", Severity.BLOCKER))
    as_programs = finding_status.Context(build_dirs=tuple(units))
    as_libraries = replace(as_programs, library_dirs=frozenset(units))
    assert risk.assess(findings, W, context=as_programs).collection is not None
    library = risk.assess(findings, W, context=as_libraries)
    assert library.collection is None
    assert library.effort.high > risk.assess(findings, W, context=as_programs).effort.high


def test_a_collection_is_priced_by_its_ninetieth_percentile_program() -> None:
    programs = [f"samples/p{i}" for i in range(10)]
    findings = [make(f"{p}/main.cu", 1, "warp-lane-math", "warp-size-assumption", Severity.HIGH) for p in programs[:2]]
    findings += [make(f"{p}/main.cu", 2, "cuda-kernel-launch", "custom-cuda-kernel", Severity.LOW) for p in programs]
    context = finding_status.Context(build_dirs=tuple(programs))
    assessed = risk.assess(findings, W, context=context)
    assert assessed.collection is not None and assessed.collection.programs == 10
    assert assessed.collection.typical.mid > assessed.collection.median.mid  # the 9th of 10 is a warp program
    assert assessed.verdict == "moderate"
    one_hard = findings[1:]  # one warp program in ten: the ninth stays a rename pass
    assert risk.assess(one_hard, W, context=context).verdict == "easy"


def test_a_cuda_only_install_dependency_keeps_a_supported_repository_moderate() -> None:
    supported = finding_status.Context(level="supported", ported=frozenset({"."}))
    kernels = [make("csrc/k.cu", 1, "warp-lane-math", "warp-size-assumption", Severity.HIGH)]
    required = make("pyproject.toml", 9, "nvidia-kernel-dsl-dependency", "cuda-only-dependency", Severity.HIGH)
    in_tests = make("tests/requirements.txt", 2, "nvidia-kernel-dsl-dependency", "cuda-only-dependency", Severity.HIGH)
    assert risk.assess(kernels, W, context=supported).verdict == "easy"
    assert risk.assess([*kernels, required], W, context=supported).verdict == "moderate"
    assert risk.assess([*kernels, in_tests], W, context=supported).verdict == "easy"
    an_extra = required.with_status("optional-gap")  # `pip install pkg[cute]`: not the main install
    assert risk.assess([*kernels, an_extra], W, context=supported).verdict == "easy"


def test_what_a_python_project_replaces_decides_between_trivial_easy_and_moderate() -> None:
    env = [make("environment.yml", 3, "conda-cuda-package", "cuda-only-dependency", Severity.MEDIUM,
                substitutions=("torch-cuda-wheels",))]
    assert risk.assess(env, W).verdict == "trivial"  # install the ROCm wheels and run
    int4 = make("quantize.py", 9, "python-torch-int4pack", "python-cuda-api", Severity.MEDIUM)
    assert risk.assess([*env, int4], W).verdict == "easy"  # a CUDA-specific call to check
    bnb = make("train.py", 5, "python-hf-bitsandbytes", "cuda-only-dependency", Severity.HIGH,
               substitutions=("bitsandbytes",))
    assert risk.assess([*env, bnb], W).verdict == "easy"  # one CUDA-only package: not kernel rework
    image = make("Dockerfile", 1, "nvidia-cuda-image", "nvidia-docker", Severity.MEDIUM, substitutions=("cuda-image",))
    assert risk.assess([*env, image], W).verdict == "easy"  # two things to replace: more than installing wheels
    assert risk.assess([*env, bnb, image], W).verdict == "moderate"  # three things to replace on the main path


def test_a_python_build_step_that_runs_nvcc_itself_floors_as_rework_of_the_build() -> None:
    kernel = make("lib/nms/kernel.cu", 4, "cuda-kernel-launch", "custom-cuda-kernel", Severity.LOW)
    # a flag hipcc rejects in a torch extension's setup.py: the ROCm build drops it, one thing to change (easy)
    flag = make("lib/setup.py", 30, "nvcc-flag-hipcc-rejects", "cuda-build-config", Severity.HIGH,
                substitutions=("nvcc",))
    assert risk.assess([kernel, flag], W).verdict == "easy"
    # distutils' compiler swapped for nvcc: no nvcc and no hipify on ROCm, the build itself is rewritten (moderate)
    swap = make("lib/setup.py", 12, "python-build-ext-cuda-compiler", "cuda-build-config", Severity.HIGH,
                substitutions=("nvcc",))
    assessed = risk.assess([kernel, flag, swap], W)
    assert (assessed.verdict, assessed.basis) == (
        "moderate", "a high finding: python-build-ext-cuda-compiler at lib/setup.py:12")
    assert "python-build-ext-cuda-compiler" in W.build_rework_rules


def test_the_hardest_component_leads_the_score_and_the_others_add_half() -> None:
    hard = [make(f"csrc/attn/k{i}.cu", 3, f"rule-{i}", "warp-size-assumption", Severity.HIGH) for i in range(6)]
    small = [make("csrc/norm/n.cu", 3, "warp-lane-math", "warp-size-assumption", Severity.HIGH)]
    alone, both = risk.assess(hard, W), risk.assess([*hard, *small], W)
    other = risk.assess(small, W).effort
    assert both.effort == alone.effort + other  # the effort reported is the sum
    led = alone.effort.mid + W.others_share * other.mid
    assert both.score == round(100 * (1 - math.exp(-led / W.scale_days)))
    assert both.basis.startswith("the hardest component (csrc/attn) and 50% of the others")


SEPARATE_BACKEND = finding_status.Context(
    build_dirs=("csrc/layer_norm",), level="supported", rocm_builds=("",), rocm_code=frozenset({"csrc/attn_ck"}),
    ported=frozenset({".", "csrc/attn_ck"}),
)


def test_cuda_kernels_beside_a_separate_rocm_backend_are_replaced_not_add_ons() -> None:
    attn = make("csrc/attn/fwd_sm80.cu", 5, "inline-ptx", "inline-ptx", Severity.BLOCKER)
    norm = make("csrc/layer_norm/ln.cu", 5, "inline-ptx", "inline-ptx", Severity.BLOCKER)  # its own build, no ROCm branch
    context = SEPARATE_BACKEND.seeing([attn, norm], W)
    assert context.replaced == frozenset({"csrc/attn"})
    assert [finding_status.status_of(f, context, W) for f in (attn, norm)] == ["remaining", "optional-gap"]
    assert risk.assess([attn, norm], W, context=SEPARATE_BACKEND).verdict == "hard"  # the unported floors
    knows_rocm = replace(SEPARATE_BACKEND, rocm_code=SEPARATE_BACKEND.rocm_code | {"csrc/attn"},
                         ported=SEPARATE_BACKEND.ported | {"csrc/attn"})
    assert knows_rocm.seeing([attn, norm], W).replaced == frozenset()
    assert risk.assess([attn, norm], W, context=knows_rocm).verdict == "easy"


def test_a_package_the_main_path_trains_with_is_a_thing_to_replace() -> None:
    env = [make("Dockerfile", 1, "nvidia-cuda-image", "nvidia-docker", Severity.MEDIUM, substitutions=("cuda-image",)),
           make("Dockerfile", 2, "pytorch-cuda-index", "cuda-index-url", Severity.MEDIUM,
                substitutions=("torch-cuda-wheels",))]
    loads = make("train.py", 4, "python-hf-bitsandbytes", "cuda-only-dependency", Severity.LOW,
                 substitutions=("bitsandbytes",), evidence="load_in_8bit=True,")
    trains = replace(loads, occurrences=(Occurrence(9, 1, 9, "model = prepare_model_for_kbit_training(model)"),))
    assert risk.assess([*env, loads], W).verdict == "easy"
    assert risk.assess([*env, trains], W).verdict == "moderate"
    assert risk.assess([*env, replace(trains, path="examples/train.py")], W).verdict == "easy"


def test_findings_priced_once_assess_and_list_as_when_each_prices_them() -> None:
    # the assessment prices a scan's findings once for the score, the checklist and each finding's effort
    findings = [*KERNEL_REPO, *PYTORCH_REPO, KERNEL_REPO[0]]  # one twice: counted once either way
    priced = risk.pricing(findings, W, guarded=5)
    assert risk.assess(priced, W) == risk.assess(findings, W, guarded=5)
    # with the weights that priced them, the remaining findings are read from the statuses kept; with others
    # (a copy here), each status is worked out again: the same answer
    assert risk.assess(priced, W) == risk.assess(priced, copy.copy(W))
    assert risk.checklist(priced, W, gfx_targets=("gfx90a",)) == risk.checklist(findings, W, gfx_targets=("gfx90a",),
                                                                                 guarded=5)
    assert len(priced.every) == len(findings) - 1 and len(list(priced.each())) == len(priced.every)


def test_each_read_again_gives_the_first_reads_answers() -> None:
    # the answers of a read that went to the end are kept by index; one left half-way, or one inside another, is
    # worked out again and keeps nothing wrong
    findings = [*KERNEL_REPO, *PYTORCH_REPO]
    priced = risk.pricing(findings, W, guarded=5)
    worked = [(f, *priced.prices.of(f)) for f in priced.every]
    half = priced.each()
    next(half)
    nested = [(outer[0], [inner[1] for inner in priced.each()]) for outer in priced.each()]
    assert [statuses for _, statuses in nested] == [[w[1] for w in worked]] * len(worked)
    del half
    assert list(priced.each()) == worked and list(priced.each()) == worked
    assert priced._read.complete and len(priced._read.statuses) == len(worked)


def test_work_off_the_main_path_adds_a_small_share_and_never_leads() -> None:
    # a library with one CUDA-only call, and a folder of example trainers with far more work of their own
    library = [make("pkg/models/attn.py", 8, "compute-capability", "python-cuda-api", Severity.MEDIUM)]
    examples = [make(f"examples/train_{i}/train.py", 3, f"ex-rule-{i}", "warp-size-assumption", Severity.HIGH)
                for i in range(6)]
    both = risk.assess([*library, *examples], W)
    main, off = risk.assess(library, W).effort, risk.assess(examples, W).effort
    led = main.mid + W.off_path_share * off.mid
    assert both.effort == main + off and both.verdict == "easy"  # the effort reported is still the sum
    assert risk._led(both.components, W)[0].mid == pytest.approx(led)
    assert risk._led(both.components, W)[1] == "the hardest component (pkg) and 20% of the work off the main path"
    # the look-alike: the same work in a main-path package (a trainer module, not an examples folder) leads
    trainers = [replace(f, path=f.path.replace("examples/", "pkg/trainers/")) for f in examples]
    led_main = risk.assess([*library, *trainers], W)
    assert led_main.score > both.score and led_main.verdict == "moderate"


def test_off_path_files_inside_a_main_component_do_not_lead_it() -> None:
    # a scripts/ folder of converters: one to a TensorRT engine (deployment, off the main path) and one plain one
    scripts = [make("scripts/convert_unet_to_tensorrt.py", n, "python-tensorrt", "tensorrt", Severity.BLOCKER)
               for n in range(3, 9)]
    plain = [make("scripts/convert_vae.py", 4, "sdpa-choice", "python-cuda-api", Severity.LOW)]
    library = [make("pkg/pipe.py", 8, "compute-capability", "python-cuda-api", Severity.MEDIUM)]
    mixed = risk.assess([*scripts, *plain, *library], W)
    component = next(c for c in mixed.components if c.name == "scripts")
    assert component.main.mid < component.effort.mid  # only the plain converter is on the main path
    assert risk._led(mixed.components, W)[1].startswith("the hardest component (pkg)")
    # nothing on the main path: a share of the work, never all of it
    alone = risk.assess(scripts, W)
    assert risk._led(alone.components, W)[1] == "20% of the work, all off the main path"



def test_a_training_use_a_setting_switches_on_is_not_a_thing_to_replace() -> None:
    env = [make("Dockerfile", 1, "nvidia-cuda-image", "nvidia-docker", Severity.MEDIUM, substitutions=("cuda-image",)),
           make("README.md", 20, "pytorch-cuda-index", "cuda-index-url", Severity.MEDIUM,
                substitutions=("torch-cuda-wheels",))]
    trains = make("train.py", 6, "python-peft-kbit", "cuda-only-dependency", Severity.LOW,
                  substitutions=("bitsandbytes",), evidence="model = prepare_model_for_kbit_training(model)")
    switched = finding_status.Context(switched=frozenset({("train.py", 6)}))
    assert risk.assess([*env, trains], W, context=switched).verdict == "easy"  # `if opts.quantized_lora:` body
    # the look-alike: the same call on every run (another line of the file) is the method, a thing to replace
    assert risk.assess([*env, replace(trains, line=14)], W, context=switched).verdict == "moderate"


def test_a_cuda_only_package_a_setting_switches_on_is_not_a_thing_to_replace() -> None:
    env = [make("Dockerfile", 1, "nvidia-cuda-image", "nvidia-docker", Severity.MEDIUM, substitutions=("cuda-image",)),
           make("README.md", 20, "pytorch-cuda-index", "cuda-index-url", Severity.MEDIUM,
                substitutions=("torch-cuda-wheels",))]
    patch = make("infer.py", 7, "python-ort-cuda-provider", "cuda-only-dependency", Severity.MEDIUM,
                 substitutions=("onnxruntime-gpu",), evidence='else "CUDAExecutionProvider"',
                 occurrences=(Occurrence(7, 9, 7, 'else "CUDAExecutionProvider"'),
                              Occurrence(30, 9, 30, 'providers=["CUDAExecutionProvider"]')))
    some = finding_status.Context(switched=frozenset({("infer.py", 7)}))
    every = finding_status.Context(switched=frozenset({("infer.py", 7), ("infer.py", 30)}))
    assert risk.assess([*env, patch], W, context=every).verdict == "easy"  # every place behind a choice
    # the look-alike: one place of the same finding on every run keeps it a thing to replace
    assert risk.assess([*env, patch], W, context=some).verdict == "moderate"


def test_what_a_variant_image_installs_is_one_container_decision() -> None:
    variant = [
        make("Dockerfile.int4api", 1, "cuda-tagged-image", "nvidia-docker", Severity.MEDIUM,
             substitutions=("pytorch-images",)),
        make("Dockerfile.int4api", 9, "pytorch-cuda-index", "cuda-index-url", Severity.MEDIUM,
             substitutions=("torch-cuda-wheels",)),
        make("Dockerfile.int4api", 9, "gptq-awq-dependency", "cuda-only-dependency", Severity.MEDIUM,
             substitutions=("gptq-awq-kernels",)),
    ]
    assert risk.assess(variant, W).verdict == "trivial"  # one recipe to rebase on a ROCm image: no floor of two
    in_folder = [replace(f, path="docker/serve-cuda/Dockerfile") for f in variant]
    assert risk.assess(in_folder, W).verdict == "trivial"
    # the look-alike: the project's own Dockerfile installs its packages and index, each a decision of its own
    own = [replace(f, path="Dockerfile") for f in variant]
    assessed = risk.assess(own, W)
    assert assessed.verdict == "moderate" and assessed.basis.startswith("3 things to replace on the main path")


def test_a_core_built_on_a_cuda_only_cxx_library_floors_at_hard() -> None:
    core = [make(f"graph/backend/gpu/{op}.hpp", 5, "moderngpu-include", "cuda-library", Severity.HIGH,
                 evidence="#include <moderngpu.cuh>") for op in ("spmv", "spmm", "bfs")]
    assessed = risk.assess(core, W)
    assert assessed.verdict == "hard" and assessed.basis.startswith("a library with no ROCm build")
    # the look-alikes: one core file and two tests, or the same files in a vendored tree, stay with the high floor
    few = [core[0], replace(core[1], path="tests/test_spmm.cu"), replace(core[2], path="tests/test_bfs.cu")]
    assert risk.assess(few, W).verdict == "moderate"
    assert risk.assess([replace(f, vendored=True) for f in core], W).verdict != "hard"


def test_in_a_collection_a_library_floor_counts_only_the_program_that_prices_it() -> None:
    """Four sample programs that each include the library are not one code base built on it."""
    programs = [f"samples/p{n}" for n in range(8)]
    findings = [make(f"{p}/main.cu", 1, "warp-size-32", "warp-size-assumption", Severity.MEDIUM) for p in programs]
    findings += [make(f"{p}/gather.cu", 5, "moderngpu-include", "cuda-library", Severity.HIGH,
                      evidence="#include <moderngpu.cuh>") for p in programs[:4]]
    context = finding_status.Context(build_dirs=tuple(programs))
    assessed = risk.assess(findings, W, context=context)
    assert assessed.collection is not None and assessed.verdict == "moderate"
    assert not assessed.basis.startswith("a library with no ROCm build")
    one_project = risk.assess(findings, W)  # the same files read as one code base: the floor holds
    assert one_project.verdict == "hard" and one_project.basis.startswith("a library with no ROCm build")


def test_a_core_that_calls_moderngpu_through_a_header_of_its_own_floors_at_hard() -> None:
    # one wrapper header includes the library; the core's files call its primitives
    wrapper = make("lib/gpu_prims.h", 4, "moderngpu-include", "cuda-library", Severity.HIGH,
                   evidence="#include <moderngpu/kernel_segsort.hxx>")
    calls = [make(f"lib/{op}.cu", 30, "moderngpu-usage", "cuda-library", Severity.HIGH, evidence="mgpu::segreduce(")
             for op in ("ragged_ops", "array_ops", "sort")]
    assessed = risk.assess([wrapper, *calls], W)
    assert assessed.verdict == "hard" and "moderngpu-usage in 3 files" in assessed.basis
    # the look-alike: the wrapper and one caller are one utility, not the core: the high floor only
    assert risk.assess([wrapper, calls[0]], W).verdict == "moderate"


def test_a_trainer_built_on_isaac_gym_floors_at_very_hard_and_one_variant_script_does_not() -> None:
    envs = [make(f"robot_gym/envs/{name}.py", 3, "python-isaac-simulator", "cuda-only-dependency", Severity.HIGH,
                 evidence="from isaacgym import gymapi") for name in ("base_task", "legged_robot", "anymal")]
    built_on = risk.assess(envs, W)
    assert built_on.verdict == "very-hard" and "python-isaac-simulator in 3 files" in built_on.basis
    # the look-alike: one algorithm script among many has an Isaac Gym variant (cleanrl's ppo_..._isaacgym)
    variant = risk.assess([replace(envs[0], path="rl/ppo_continuous_action_isaacgym/ppo.py")], W)
    assert variant.verdict == "moderate"  # a module-level import of a CUDA-only package: required_floor, not a rewrite
    assert variant.basis.startswith("a CUDA-only package the main path cannot load without")


def test_a_model_whose_ops_are_nvidia_warp_kernels_floors_at_hard_and_one_utility_module_does_not() -> None:
    ops = [make(f"potential/kernels/{op}.py", 12, "python-nvidia-warp", "cuda-only-dependency", Severity.HIGH,
                evidence="@wp.kernel") for op in ("neighbour_list", "radial_basis", "tensor_product")]
    built_on = risk.assess(ops, W)
    assert built_on.verdict == "hard" and "python-nvidia-warp in 3 files" in built_on.basis
    # the look-alikes: one utility module of Warp calls beside the model is one package to replace (easy), and the
    # same kernels in the examples are off the main path
    assert risk.assess([ops[0]], W).verdict == "easy"
    assert risk.assess([replace(f, path=f"examples/{f.path}") for f in ops], W).verdict == "trivial"


def test_a_gpu_decode_back_end_on_nvdec_floors_at_hard_and_one_decoder_file_does_not() -> None:
    reader = [make(f"src/video/gpu/{part}.cc", 20, "nvidia-video-decode", "cuda-library", Severity.HIGH,
                   evidence="cuvidCreateDecoder(") for part in ("decoder", "parser", "frame_pool")]
    built_on = risk.assess(reader, W)
    assert built_on.verdict == "hard" and "nvidia-video-decode in 3 files" in built_on.basis
    # the look-alike: one decoder file (a sample's) is a high finding to rework, moderate
    assert risk.assess([reader[0]], W).verdict == "moderate"


def test_an_image_pipeline_on_vpi_or_cv_cuda_floors_at_hard_and_one_wrapper_file_does_not() -> None:
    nodes = [make(f"image_proc/src/{node}.cpp", 9, "cvcuda-usage", "cuda-library", Severity.HIGH,
                  evidence="cvcuda::Resize resize_op;") for node in ("resize_node", "crop_node", "normalize_node")]
    built_on = risk.assess(nodes, W)
    assert built_on.verdict == "hard" and "cvcuda-usage in 3 files" in built_on.basis
    stereo = [make(f"stereo/src/{part}.cpp", 14, "vpi-usage", "cuda-library", Severity.HIGH,
                   evidence="vpiSubmitStereoDisparityEstimator(stream,") for part in ("disparity", "rectify", "pyramid")]
    assert risk.assess(stereo, W).verdict == "hard"
    # the look-alikes: one wrapper file is a high finding to rework (moderate), and the same nodes in the examples
    # are off the main path
    assert risk.assess([nodes[0]], W).verdict == "moderate"
    assert risk.assess([replace(f, path=f"examples/{f.path}") for f in stereo], W).verdict == "easy"


def test_a_renderer_built_on_optix_floors_at_very_hard() -> None:
    core = [make(f"render/{part}.cpp", 3, "optix-include", "cuda-library", Severity.HIGH,
                 evidence="#include <optix.h>") for part in ("pipeline", "accel", "denoise")]
    assessed = risk.assess(core, W)
    assert assessed.verdict == "very-hard" and "optix-include in 3 files" in assessed.basis
    # beside a core on moderngpu (hard), the engine with no counterpart API sets the floor
    graph = [make(f"graph/{op}.cu", 5, "moderngpu-include", "cuda-library", Severity.HIGH,
                  evidence="#include <moderngpu.cuh>") for op in ("spmv", "spmm", "bfs")]
    both = risk.assess(graph + core, W)
    assert both.verdict == "very-hard" and "optix-include" in both.basis
    assert risk.assess(graph, W).verdict == "hard"
    # one OptiX file beside two tests is an optional back end, not the core
    few = [core[0], replace(core[1], path="tests/test_accel.cpp"), replace(core[2], path="tests/test_denoise.cpp")]
    assert risk.assess(few, W).verdict == "moderate"
