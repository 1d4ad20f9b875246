"""The risk and effort model on small hand-made finding sets: values, monotonicity, calibration."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from pathlib import Path

import pytest

from migrate import risk
from migrate.errors import RuleFileError
from migrate.model import Finding, Rule, ScanResult, Severity
from migrate.ruleset import data_path

W = risk.load_weights()


def make(path: str, line: int, rule: str, category: str, severity: Severity, **extra: object) -> Finding:
    return Finding(
        path=path, line=line, column=1, rule=rule, category=category, severity=severity, end_line=line,
        message=f"{rule} here", evidence=extra.pop("evidence", f"code_{line}();"), **extra,  # type: ignore[arg-type]
    )


def renames(path: str, count: int, *, rule: str = "cuda-runtime-api", start: int = 1) -> list[Finding]:
    return [make(path, start + i, rule, "cuda-runtime-api", Severity.LOW, hip="hipX") for i in range(count)]


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


def test_one_finding_costs_its_severity_range_times_its_category_factor() -> None:
    assessed = risk.assess([make("a.cu", 1, "inline-ptx-asm", "inline-ptx", Severity.HIGH)], W)
    low, high = W.severity_days[Severity.HIGH]
    factor = W.categories["inline-ptx"].factor
    assert assessed.effort == risk.Effort(low * factor, high * factor)


def test_pure_pytorch_repo_reads_trivial_or_easy() -> None:
    assert risk.assess(PYTORCH_REPO, W).verdict in {"trivial", "easy"}


def test_kernel_heavy_repo_reads_hard_or_very_hard() -> None:
    assessed = risk.assess(KERNEL_REPO, W)
    assert assessed.verdict in {"hard", "very-hard"}
    assert [d.category for d in assessed.drivers] == ["inline-ptx", "warp-size-assumption", "cpp-extension-build"]
    assert assessed.drivers[0].text.startswith("3 files with inline PTX carry ")
    assert assessed.drivers[0].text.endswith("% of the effort (3 findings)")


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


def test_repeats_in_one_file_and_category_are_damped() -> None:
    one = make("k.cu", 1, "warp-size-32", "warp-size-assumption", Severity.HIGH)
    same_file = [one, replace(one, line=2), replace(one, line=3)]
    other_files = [one, replace(one, path="a.cu"), replace(one, path="b.cu")]
    single = risk.assess([one], W).effort.high
    assert risk.assess(same_file, W).effort.high == pytest.approx(single * 3**W.repeat_exponent)
    assert risk.assess(other_files, W).effort.high == pytest.approx(3 * single)


def test_repeated_renames_are_damped_but_still_grow() -> None:
    one = risk.assess(renames("a.cu", 1), W).effort
    hundred = risk.assess(renames("a.cu", 100), W).effort
    assert one.high < hundred.high < 100 * one.high
    assert hundred.high == pytest.approx(one.high * 100**W.mechanical_exponent)


def test_damping_is_per_rule() -> None:
    mixed = renames("a.cu", 4) + renames("b.cu", 4, rule="cuda-driver-api")
    assert risk.assess(mixed, W).effort.high > risk.assess(renames("a.cu", 8), W).effort.high


def test_guarded_code_is_credited() -> None:
    plain = risk.assess(KERNEL_REPO, W).effort
    guarded = risk.assess(KERNEL_REPO, W, guarded=len(KERNEL_REPO)).effort
    assert guarded.high == pytest.approx(plain.high * (1 - W.guarded_credit / 2))


def test_vendored_findings_weigh_less() -> None:
    own = make("src/a.cu", 1, "inline-ptx-asm", "inline-ptx", Severity.HIGH)
    vendored = make("third_party/a.cu", 1, "inline-ptx-asm", "inline-ptx", Severity.HIGH, vendored=True)
    assert risk.assess([vendored], W).effort.high == pytest.approx(risk.assess([own], W).effort.high * W.vendored_factor)


def test_blockers_are_counted_apart() -> None:
    assessed = risk.assess([*KERNEL_REPO, blocker(), blocker(line=9)], W)
    high = W.severity_days[Severity.BLOCKER][1]
    factor = W.categories["tensorrt"].factor
    assert assessed.blockers == 2
    assert assessed.blocker_effort.high == pytest.approx(high * factor * 2**W.repeat_exponent)


def test_rollups_add_up_to_the_total() -> None:
    assessed = risk.assess(KERNEL_REPO, W)
    for rollups in (assessed.by_file, assessed.by_directory, assessed.by_category):
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
    assert risk.VERDICTS.index(after.verdict) >= risk.VERDICTS.index(before.verdict)
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
        assert risk.VERDICTS.index(after.verdict) >= risk.VERDICTS.index(before.verdict)


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


def test_environment_repeats_group_per_rule_across_files() -> None:
    one = make("requirements.txt", 2, "pytorch-cuda-index", "cuda-index-url", Severity.MEDIUM)
    spread = [one, replace(one, path="Dockerfile"), replace(one, path="README.md")]
    single = risk.assess([one], W).effort.high
    assert risk.assess(spread, W).effort.high == pytest.approx(single * 3**W.repeat_exponent)


def test_every_repeat_counts_at_least_the_floor() -> None:
    one = make("k.cu", 1, "warp-size-32", "warp-size-assumption", Severity.HIGH)
    many = [replace(one, line=n) for n in range(1, 201)]
    single = risk.assess([one], W).effort.high
    assert risk.assess(many, W).effort.high >= 200 * W.repeat_floor * single


def test_more_guarded_code_never_raises_the_effort() -> None:
    efforts = [risk.assess(KERNEL_REPO, W, guarded=g).effort.high for g in (0, 1, 10, 100)]
    assert efforts == sorted(efforts, reverse=True)


def test_verdict_thresholds() -> None:
    lowest = dict(W.verdicts)
    for name in risk.VERDICTS:
        assert risk.verdict(lowest[name], W) == name
    assert risk.verdict(100, W) == "very-hard"


def test_checklist_runs_environment_build_blockers_kernels_renames_validate() -> None:
    items = risk.checklist([*KERNEL_REPO, *PYTORCH_REPO, blocker()], W, gfx_targets=("gfx942",))
    assert [i.phase.id for i in items] == ["environment", "build", "blockers", "kernels", "mechanical", "validate"]
    assert items[2].paths == ("infer/trt.py",)
    assert "gfx942" in items[-1].phase.hint


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
    assert entries["gfx942"].verdict != "trivial" and entries["gfx1100"].verdict == "trivial"


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
        risk.load_weights(broken)


def test_every_category_has_weights() -> None:
    from migrate.model import CATEGORIES

    assert set(CATEGORIES) <= set(W.categories)


def test_the_worked_example_of_docs_report_md() -> None:
    findings = [
        *(make("csrc/reduce.cu", 12 + i, "inline-ptx-asm", "inline-ptx", Severity.HIGH) for i in range(2)),
        *(make("csrc/reduce.cu", 20 + i, "warp-size-32", "warp-size-assumption", Severity.HIGH) for i in range(4)),
        *renames("csrc/main.cu", 9),
    ]
    assessed = risk.assess(findings, W, guarded=4)
    assert (round(assessed.effort.low, 2), round(assessed.effort.high, 2)) == (2.10, 6.27)
    assert (assessed.score, assessed.verdict) == (34, "moderate")
    assert [(d.category, round(d.share * 100)) for d in assessed.drivers] == [
        ("warp-size-assumption", 49), ("inline-ptx", 49), ("cuda-runtime-api", 2),
    ]


def test_a_rename_raised_into_a_large_group_still_adds_effort() -> None:
    group = [make("k.cu", n, "warp-size-32", "warp-size-assumption", Severity.MEDIUM) for n in range(1, 101)]
    rename = make("k.cu", 500, "warp-size-32", "warp-size-assumption", Severity.LOW, hip="warpSize")
    before = risk.assess([*group, rename], W).effort
    after = risk.assess([*group, replace(rename, severity=Severity.MEDIUM)], W).effort
    assert after.low > before.low and after.high > before.high
