"""The files' findings read as one project: the repository's own packages are no dependency, code a HIP build never
compiles moves aside, the ROCm status of the whole tree gives each finding its status, and the baseline and
--diff-base leave out what the user accepted or did not change."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from migrate import finding_status, preproc, rocm_status, targets
from migrate.config import Settings
from migrate.lazyre import lazy_regex
from migrate.model import Evidence, Finding, RocmStatus, Severity, SourceFile
from migrate.ruleset import Ruleset
from migrate.weights import load_weights

if TYPE_CHECKING:
    from migrate.gitdiff import Changes


def without_first_party(findings: list[Finding], packages: frozenset[str], ruleset: Ruleset) -> list[Finding]:
    """Drop import and dependency findings of PACKAGES, those the repository defines itself: scanning DeepSpeed,
    its own `import deepspeed` and the `pip install deepspeed` of its README are not a dependency on DeepSpeed."""
    if not packages:
        return findings
    from packaging.utils import canonicalize_name  # imported only here: `check` on a few files seldom needs it

    import_rules = {r.id for r in ruleset.rules if r.match.get("imports")}
    package_rules = {r.id for r in ruleset.rules if r.match.get("matcher") == "manifest-package"}
    names = {canonicalize_name(p) for p in packages}
    return [f for f in findings
            if not (f.rule in import_rules and f.symbol and f.symbol.split(".")[0] in packages)
            and not (f.rule in package_rules and f.symbol in names)]


WARP_SIZE_USE = "warp-size-name-use"
_THIRTY_TWO = lazy_regex(r"\(?\s*(?:32|0x20)[uUlL]*\s*\)?")


def warp_constants(
    findings: list[Finding], conditionals: dict[str, tuple[preproc.Directive, ...]], gfx_targets: tuple[str, ...]
) -> list[Finding]:
    """Uses of a warp-size constant defined in another file come as info; they are low (on a 64-lane target) where
    the repository #defines the name as 32 and as nothing else (no per-platform definition)."""
    if not any(f.rule == WARP_SIZE_USE and f.severity is Severity.INFO for f in findings):
        return findings
    if all(targets.wavefront_size(t) != 64 for t in gfx_targets):
        return findings
    values: dict[str, set[str]] = {}
    for directives in conditionals.values():
        for directive in directives:
            if directive.keyword == "define":
                name, _, value = directive.argument.strip().partition(" ")
                values.setdefault(name, set()).add(value.strip())
    fixed = {name for name, found in values.items() if all(_THIRTY_TWO.fullmatch(v) for v in found)}
    return [replace(f, severity=Severity.LOW, message=f"{f.message} ({f.symbol} is #defined as 32 in this repository.)")
            if f.rule == WARP_SIZE_USE and f.severity is Severity.INFO and f.symbol in fixed else f for f in findings]


def never_compiled(
    findings: list[Finding], conditionals: dict[str, tuple[preproc.Directive, ...]], evidence: list[Evidence]
) -> tuple[list[Finding], list[Finding]]:
    """(findings a HIP build compiles, the rest): #if branches HIP rules out, other vendors' backends, and
    sources the CMake build lists only for CUDA."""
    findings, moved = rocm_status.never_compiled(findings, conditionals, _other_backends())
    lists = [e for e in evidence if e.kind in rocm_status.SOURCE_LISTS]
    findings, listed = rocm_status.cuda_only(findings, lists)
    findings, defined = device_pass_defined(findings, conditionals)
    return findings, moved + listed + defined


DEVICE_PASS_TEST = "cuda-arch-device-pass"


def device_pass_defined(
    findings: list[Finding], conditionals: dict[str, tuple[preproc.Directive, ...]]
) -> tuple[list[Finding], list[Finding]]:
    """(findings, tests of __CUDA_ARCH__ alone moved to guarded): no work where the repository #defines __CUDA_ARCH__
    itself, as a HIP compat header does for the device pass (ggml's vendors/hip.h)."""
    if not any(f.rule == DEVICE_PASS_TEST for f in findings):
        return findings, []
    if not any(d.keyword == "define" and d.argument.split(None, 1)[:1] == ["__CUDA_ARCH__"]
               for directives in conditionals.values() for d in directives):
        return findings, []
    return ([f for f in findings if f.rule != DEVICE_PASS_TEST],
            [f.guarded() for f in findings if f.rule == DEVICE_PASS_TEST])


@cache
def _other_backends() -> re.Pattern[str]:
    return re.compile(load_weights().status["other_backends"])


def status_of(evidence: list[Evidence], guarded: int, sources: list[SourceFile]) -> RocmStatus:
    """The repository's ROCm status from the evidence its files gave."""
    builds = [s.relpath for s in sources if rocm_status.is_build_file(s.relpath)]
    extensions = [e.path.rpartition("/")[0] for e in evidence if e.kind == "torch-extension"]
    return rocm_status.assess(evidence, load_weights().status, guarded=guarded, build_files=builds,
                              extension_dirs=extensions)


BUILD_SWITCH = "cuda-build-switch"


def build_switches(findings: list[Finding], status: RocmStatus) -> list[Finding]:
    """Tests of a CUDA build switch (#if BUILD_CUDA) come as info, since a ROCm build may define the switch too; they
    are low where the repository has no ROCm build path at all (status none): that build is still to be written,
    and it must define the switch or the code test one of its own."""
    if status.level != rocm_status.LEVELS[0]:
        return findings
    note = (" (This repository has no ROCm build yet: the one to be written must define the switch, or this code"
            " test a HIP one.)")
    return [replace(f, severity=Severity.LOW, message=f.message + note)
            if f.rule == BUILD_SWITCH and f.severity is Severity.INFO else f for f in findings]


def with_status(findings: list[Finding], status: RocmStatus) -> list[Finding]:
    """Each finding's status (covered, optional-gap, remaining) in the light of the repository's ROCm status."""
    return list(finding_status.with_status(findings, finding_status.Context.from_status(status), load_weights()))


def narrow(
    findings: tuple[Finding, ...], settings: Settings, changes: Changes | None
) -> tuple[tuple[Finding, ...], int]:
    """Leave out the baseline's findings (counted), then those off the lines changed since --diff-base."""
    baselined = 0
    if settings.baseline:  # the imports here: most scans and checks have neither a baseline nor a --diff-base
        from migrate.baseline import load as load_baseline, new_findings

        new = new_findings(findings, load_baseline(Path(settings.baseline)))
        baselined, findings = len(findings) - len(new), new
    if changes is not None:
        from migrate.gitdiff import keep_changed

        findings = keep_changed(findings, changes)
    return findings, baselined
