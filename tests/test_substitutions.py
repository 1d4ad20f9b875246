"""Schema checks of the knowledge base (rules/data/substitutions.yaml, gpu_archs.yaml) and its use per target."""

from __future__ import annotations

import re

import pytest
import yaml

from migrate import substitutions, targets
from migrate.model import Finding, Severity
from migrate.data import data_path
from migrate.ruleset import load_builtin

_KINDS = {"python-package", "import", "docker-image", "system-library", "cuda-library", "env-var", "build-system",
          "cli-tool", "rust-crate"}
_RISKS = {"none", "low", "medium", "high", "blocker"}
_STATUSES = {"supported", "preview", "deprecated", "unofficial", "not-supported", "unknown"}
_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")
_KNOWN_PLACEHOLDERS = {"{archs}", "{archs_space}", "{archs_comma}", "{offload_arch}", "{device_extra}"}


def _raw(name: str) -> dict:
    return yaml.safe_load(data_path(name).read_text(encoding="utf-8"))


SUBSTITUTIONS = _raw("substitutions.yaml")["substitutions"]


@pytest.mark.parametrize("entry", SUBSTITUTIONS, ids=lambda e: e["id"])
def test_substitution_schema(entry: dict) -> None:
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", entry["id"])
    assert entry["kind"] in _KINDS
    assert entry["risk"] in _RISKS
    assert entry["confidence"] in {"high", "medium"}, "low-confidence entries are not proposed"
    assert entry["replaces"] and all(isinstance(r, str) and r for r in entry["replaces"])
    assert entry["sources"] and all(isinstance(s, str) and s for s in entry["sources"])
    assert isinstance(entry["as_of"], str) and entry["as_of"]
    assert entry["archs"] == "any" or all(a in targets.known() for a in entry["archs"])
    assert set(entry["target_notes"]) <= set(targets.known()) | {"rdna"}
    for key in ("rocm", "install", "caveats", "unconfirmed"):
        assert isinstance(entry[key], list) and all(isinstance(v, str) for v in entry[key])


@pytest.mark.parametrize("entry", SUBSTITUTIONS, ids=lambda e: e["id"])
def test_nothing_stale_is_proposed(entry: dict) -> None:
    for text in entry["rocm"] + entry["install"]:
        assert not re.search(r"placeholder|\bstale\b|ROCMExecutionProvider|onnxruntime-rocm|HSA_OVERRIDE", text), text
    for command in entry["install"]:
        assert set(_PLACEHOLDER.findall(command)) <= _KNOWN_PLACEHOLDERS, command


def test_dropped_entries_are_absent_and_explained() -> None:
    dropped = substitutions.dropped()
    assert {"tgi", "flashinfer", "env-hsa-override-gfx-version"} <= set(dropped)
    assert not set(dropped) & set(substitutions.knowledge_base())
    assert all(reason for reason in dropped.values())


def test_every_rule_names_known_substitutions() -> None:
    known = set(substitutions.knowledge_base())
    unknown = {(r.id, s) for r in load_builtin().rules for s in r.substitutions if s not in known}
    assert unknown == set()


def test_a_dependency_is_not_answered_with_substitutes_for_kernel_code() -> None:
    # a CUDA-only package imported or required is replaced as a package: the report's first actions must not send
    # a Python-only project to PTX or warp-intrinsic work it does not have
    kernel_work = {"inline-ptx", "warp-intrinsics"}
    named = {(r.id, s) for r in load_builtin().rules if r.category == "cuda-only-dependency"
             for s in r.substitutions if s in kernel_work}
    assert named == set()


def test_gpu_archs_schema() -> None:
    data = _raw("gpu_archs.yaml")
    assert set(data["lines"]) == {"rocm_6_3", "rocm_6_4", "rocm_7_0_to_7_2", "core_sdk_7_14_to_10_1"}
    for name, target in data["targets"].items():
        assert re.fullmatch(r"gfx[0-9a-f]+", name)
        assert target["wavefront"] in (32, 64, None)
        assert set(target["linux"]) == set(data["lines"]) and set(target["linux"].values()) <= _STATUSES
        assert target["sources"] and target["as_of"]
        assert not any("HSA_OVERRIDE_GFX_VERSION" in note for note in target["notes"])


@pytest.mark.parametrize(
    ("gfx", "size"), [("gfx90a", 64), ("gfx942", 64), ("gfx950", 64), ("gfx1100", 32), ("gfx1201", 32)]
)
def test_wavefront_size_comes_from_the_data(gfx: str, size: int) -> None:
    assert targets.wavefront_size(gfx) == size


def test_wavefront_note_gives_the_reason() -> None:
    note = targets.wavefront_note(("gfx942", "gfx1100"))
    assert "gfx942: 64-wide" in note and "gfx1100: 32-wide by default" in note


def test_support_notes_say_what_is_official() -> None:
    assert targets.support_note("gfx942") == "gfx942: supported on Linux by ROCm 7.0-7.2 and ROCm Core SDK 7.14-10.1."
    assert "not supported by current ROCm releases" in targets.support_note("gfx906")
    assert "preview support only" in targets.support_note("gfx1250")
    assert "officially supported on Linux by ROCm Core SDK 7.14-10.1" in targets.support_note("gfx1103")
    assert all("HSA_OVERRIDE" not in targets.support_note(t) for t in targets.known())


def test_unknown_target_is_an_input_error_listing_known_ones() -> None:
    from migrate.errors import InputError

    with pytest.raises(InputError, match=r"unknown target gfx4242 \(known targets: gfx906, .*gfx1201"):
        targets.validate(("gfx942", "gfx4242"))


def _finding(rule: str, path: str, subs: tuple[str, ...]) -> Finding:
    return Finding(path=path, line=1, column=1, rule=rule, category="cuda-only-dependency", severity=Severity.MEDIUM,
                   end_line=1, message="m", evidence="e", substitutions=subs)


def test_propose_collects_answers_and_fills_targets() -> None:
    findings = [
        _finding("flash-attn-dependency", "requirements.txt", ("flash-attn",)),
        _finding("flash-attn-dependency", "README.md", ("flash-attn",)),
        _finding("x", "y", ("no-such-substitution",)),
    ]
    (proposed,) = substitutions.propose(findings, ("gfx942", "gfx1100"))
    assert proposed.id == "flash-attn"
    assert proposed.answers == (("flash-attn-dependency", "README.md"), ("flash-attn-dependency", "requirements.txt"))
    assert proposed.install[0].startswith('GPU_ARCHS="gfx942;gfx1100" pip install --no-build-isolation .')
    notes = dict(proposed.target_notes)
    assert notes["gfx942"].startswith("covered; Composable Kernel backend")
    assert "Triton backend" in notes["gfx1100"]
    assert proposed.sources and proposed.as_of


def test_target_without_a_build_says_so() -> None:
    entry = substitutions.knowledge_base()["xformers"]
    shown = substitutions.for_targets(entry, ("gfx1100",))
    assert dict(shown.target_notes)["gfx1100"].startswith("no build listed for gfx1100")
    assert "PyTorch SDPA" in dict(shown.target_notes)["gfx1100"]


@pytest.mark.parametrize(
    ("command", "gfx", "expected"),
    [
        ('PYTORCH_ROCM_ARCH="{archs}" pip install .', ("gfx942", "gfx1100"), 'PYTORCH_ROCM_ARCH="gfx942;gfx1100" pip install .'),
        ('HIP_ARCHITECTURES="{archs_space}" pip install x', ("gfx942", "gfx950"), 'HIP_ARCHITECTURES="gfx942 gfx950" pip install x'),
        ("hipcc {offload_arch} -o app app.hip", ("gfx942", "gfx1100"), "hipcc --offload-arch=gfx942 --offload-arch=gfx1100 -o app app.hip"),
        ('pip install "torch[{device_extra}]"', ("gfx1100",), 'pip install "torch[device-gfx1100]"'),
        ('pip install "torch[{device_extra}]"', ("gfx942", "gfx1100"), 'pip install "torch[device-all]"'),
        ("services: {app: {devices: [/dev/kfd]}}", ("gfx942",), "services: {app: {devices: [/dev/kfd]}}"),
    ],
)
def test_fill_targets(command: str, gfx: tuple[str, ...], expected: str) -> None:
    assert substitutions.fill_targets(command, gfx) == expected


def test_torch_rocm_indexes_are_sourced_and_well_formed() -> None:
    import re

    import yaml

    from migrate.data import data_path

    table = yaml.safe_load(data_path("torch_rocm_indexes.yaml").read_text(encoding="utf-8"))
    assert table["sources"] and table["as_of"]
    assert table["index"].format(tag="rocm6.4") == "https://download.pytorch.org/whl/rocm6.4"
    assert table["torch"]["2.3"] == "rocm6.0"
    assert all(re.fullmatch(r"\d+\.\d+", minor) and re.fullmatch(r"rocm\d+(\.\d+)*", tag) for minor, tag in table["torch"].items())
