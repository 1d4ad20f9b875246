"""The files' findings read as one project: the repository's own packages are no dependency, code a HIP build never
compiles moves aside, the ROCm status of the whole tree gives each finding its status, and the baseline and
--diff-base leave out what the user accepted or did not change."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from migrate import compat_headers, finding_status, preproc, rocm_status, targets, unreached
from migrate.config import Settings
from migrate.inputs import NESTED
from migrate.lazyre import lazy_regex
from migrate.matchers.cuda_arch_fallback import ARCH_FALLBACK_NOTE
from migrate.model import Evidence, Finding, RocmStatus, Severity
from migrate.ruleset import Ruleset
from migrate.scan import warp_constants
from migrate.weights import load_weights

if TYPE_CHECKING:
    from migrate.gitdiff import Changes


@dataclass(frozen=True)
class Tree:
    """What the tree as a whole tells each file's findings, known once every file is scanned: each step below is
    then a decision per path, so the findings go through a file at a time, in path order."""

    first_party: Callable[[Finding], bool]  # an import or dependency of the repository's own packages
    warp_fixed: Mapping[str, str] | None  # warp-size names #defined or declared as 32 and nothing else: how (None: no 64-lane target)
    settled: preproc.Settled  # the #if branches a HIP build never compiles
    source_lists: tuple[Evidence, ...]  # the CMake source lists
    device_pass_defined: bool  # the repository #defines __CUDA_ARCH__ itself (a HIP compat header's device pass)
    paired_atomic_defined: bool  # the repository defines atomicAdd for __half2 itself (HIP has no such overload)
    compat: Mapping[str, frozenset[str]] = field(default_factory=dict)  # per path: its HIP compat macros (others')
    compat_rules: frozenset[str] = frozenset()  # the rules such a macro answers (compat_headers.CHECKS)
    unreached: frozenset[str] = frozenset()  # headers included only where a HIP build never compiles (unreached)
    # the rules that lower a hit in a __CUDA_ARCH__ branch with a portable #else (arch_fallback), with their severity
    arch_fallback_rules: Mapping[str, Severity] = field(default_factory=dict)
    # the CMake file that finds Torch where no Python uses torch.utils.cpp_extension (the PyTorch C++ code is built by
    # CMake, and nothing hipifies it), and the rules whose findings cpp_extension's hipify would answer, each with the
    # names it renames (empty: every finding of the rule; kCUDA, which ROCm keeps, is none of them)
    torch_cmake: str | None = None
    torch_rules: Mapping[str, frozenset[str]] = field(default_factory=dict)


def tree(
    packages: frozenset[str], ruleset: Ruleset, conditionals: dict[str, tuple[preproc.Directive, ...]],
    evidence: list[Evidence], gfx_targets: tuple[str, ...], paths: Iterable[str] = (),
) -> Tree:
    """The tree-wide facts of a scan: its own PACKAGES, its CONDITIONALS and EVIDENCE (every file's), its files'
    PATHS (where a quoted include may point: a HIP compat header, a header only dead code includes)."""
    paths = tuple(paths)
    settled = preproc.Settled(conditionals, absent=preproc.cuda_switches(conditionals)
                              | rocm_status.cuda_only_defines(evidence))
    source_lists = tuple(e for e in evidence if e.kind in rocm_status.SOURCE_LISTS)
    return Tree(_first_party(packages, ruleset), _warp_fixed(conditionals, gfx_targets), settled, source_lists,
                _defines_device_pass(conditionals), any(e.kind == rocm_status.PAIRED_ATOMIC for e in evidence),
                compat_headers.seen(conditionals, paths, settled.is_dead),
                frozenset(r.id for r in ruleset.rules if compat_headers.answers(r.match)),
                unreached.headers(conditionals, settled, rocm_status.never_built(source_lists), paths),
                {r.id: r.severity for r in ruleset.rules if "arch_fallback" in r.match},
                _torch_cmake(evidence), {r.id: _renamed(r.match["torch_hipified"]) for r in ruleset.rules
                                         if r.match.get("torch_hipified")})


def _renamed(value: object) -> frozenset[str]:
    """A rule's `torch_hipified`: true (every finding) or the list of names the hipify step renames."""
    return frozenset(str(v) for v in value) if isinstance(value, list) else frozenset()


def _torch_cmake(evidence: Iterable[Evidence]) -> str | None:
    """The first CMake file that finds Torch, where no Python of the repository uses torch.utils.cpp_extension."""
    found = [e for e in evidence if e.kind in (rocm_status.TORCH_CMAKE, rocm_status.TORCH_HIPIFY)]
    if any(e.kind == rocm_status.TORCH_HIPIFY for e in found):
        return None
    return min((e.path for e in found), default=None)


def compiled(facts: Tree, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """One file's FINDINGS (in report order) without those of its own packages, warp-size names resolved: (those a
    HIP build compiles, the rest, guarded)."""
    kept = [f for f in findings if not facts.first_party(f)]
    if facts.torch_cmake is not None and facts.torch_rules:
        kept = _cmake_built(kept, facts.torch_rules, facts.torch_cmake)
    if facts.warp_fixed:
        kept = _warp_constants(kept, facts.warp_fixed)
    kept, moved = rocm_status.never_compiled(kept, facts.settled, _other_backends(), _other_backends_python())
    kept = _disabled(kept, facts.settled.files)
    kept, listed = rocm_status.cuda_only(kept, facts.source_lists)
    if facts.unreached and kept and kept[0].path in facts.unreached:  # one file's findings: all or none
        listed, kept = listed + [f.guarded() for f in kept], []
    if facts.arch_fallback_rules and _arch_defined(facts.settled):
        kept = _arch_compiled(kept, facts.arch_fallback_rules)
    provided = {DEVICE_PASS_TEST} if facts.device_pass_defined else set()
    provided |= {PAIRED_ATOMIC_ADD} if facts.paired_atomic_defined else set()
    if provided:  # what the repository's own compat code already provides on HIP
        listed += [f.guarded() for f in kept if f.rule in provided]
        kept = [f for f in kept if f.rule not in provided]
    kept, renamed = _compat_renamed(kept, facts)
    return kept, moved + listed + renamed


_CMAKE_BUILT_NOTE = (" Not in this repository: its PyTorch C++ code is built by CMake ({path} finds Torch) and no Python uses"
                     " torch.utils.cpp_extension, so no hipify step runs. A ROCm build needs the HIP names here"
                     " (ATen/hip/HIPContext.h, c10/hip/..., getCurrentHIPStream or the *MasqueradingAsCUDA names)"
                     " behind a USE_ROCM guard, or the build running torch.utils.hipify over these sources.")


def _cmake_built(findings: list[Finding], rules: Mapping[str, frozenset[str]], path: str) -> list[Finding]:
    """FINDINGS, those of RULES (PyTorch's CUDA C++ API, which cpp_extension hipifies) low, not info, where one of
    their places uses a name the rule's hipify renames: the repository builds its extension with CMake (the file at
    PATH finds Torch), where no hipify step runs."""
    note = _CMAKE_BUILT_NOTE.format(path=path)
    return [replace(f, severity=Severity.LOW, message=f.message + note)
            if f.rule in rules and f.severity is Severity.INFO and _renames(f, rules[f.rule]) else f for f in findings]


def _renames(finding: Finding, names: frozenset[str]) -> bool:
    """FINDING's places use one of NAMES as a word (no NAMES: any place does)."""
    if not names:
        return True
    texts = (finding.evidence, *(o.evidence for o in finding.occurrences))
    return any(word in names for text in texts for word in _WORD.findall(text))


_WORD = lazy_regex(r"[A-Za-z_]\w*")


_DISABLED_NOTE = "(Never compiled: the line sits in an `#if 0` block.)"


def _disabled(findings: list[Finding], files: Mapping[str, tuple[preproc.Directive, ...]]) -> list[Finding]:
    """One file's FINDINGS, those in a block no build compiles (`#if 0`) made info: code set aside by hand needs no
    port; they stay remaining, not guarded, since they are no evidence of a ROCm port either."""
    directives = files.get(findings[0].path) if findings else None
    if not directives or not any(d.keyword in ("if", "elif") and d.argument[:1] in _DIGITS for d in directives):
        return findings
    ranges = preproc.disabled_ranges(directives)
    return [replace(f, severity=Severity.INFO, message=f"{f.message} {_DISABLED_NOTE}")
            if f.severity > Severity.INFO and any(start < f.line < end for start, end in ranges) else f
            for f in findings]


_DIGITS = frozenset("0123456789(!")


def _arch_defined(settled: preproc.Settled) -> bool:
    """A HIP build of this repository defines __CUDA_ARCH__ (ggml's vendors/hip.h): its own definition compiles
    there. One under a test nothing sets for HIP (`#ifdef __INTELLISENSE__`, xmrig's editor aid) does not count."""
    macro = settled.table.get("__CUDA_ARCH__")
    return macro is not None and macro.state == preproc.DEFINED


def _arch_compiled(findings: list[Finding], rules: Mapping[str, Severity]) -> list[Finding]:
    """FINDINGS with the rule's own severity back on the hits lowered for a portable #else after a __CUDA_ARCH__
    test: this repository #defines __CUDA_ARCH__ for its HIP build (a compat header), so the test may hold there."""
    return [replace(f, severity=rules[f.rule], message=f.message.replace(" " + ARCH_FALLBACK_NOTE, ""))
            if f.rule in rules and ARCH_FALLBACK_NOTE in f.message else f for f in findings]


def _compat_renamed(findings: list[Finding], facts: Tree) -> tuple[list[Finding], list[Finding]]:
    """FINDINGS of one file without the warp calls and names, and the CUDA functions HIP lacks, that a HIP compat macro
    or device function of its project's own headers redefines there (the file's own are never reported; an info one,
    no work, stays), nor the missing runtime header where such a header renames cuda* names for it (ggml's
    vendors/hip.h): (the rest, those, guarded)."""
    names = facts.compat.get(findings[0].path) if findings else None
    if not names:
        return findings, []
    handled = [(f.rule in facts.compat_rules and f.symbol in names and f.severity > Severity.INFO)
               or (f.rule == IMPLICIT_RUNTIME_HEADER and any(n.startswith("cuda") for n in names)) for f in findings]
    return ([f for f, h in zip(findings, handled) if not h],
            [f.guarded() for f, h in zip(findings, handled) if h])


DEVICE_PASS_TEST = "cuda-arch-device-pass"
IMPLICIT_RUNTIME_HEADER = "cuda-implicit-runtime-header"  # a compat header that renames cuda* names answers it
PAIRED_ATOMIC_ADD = "atomic-add-half2"


def _defines_device_pass(conditionals: dict[str, tuple[preproc.Directive, ...]]) -> bool:
    """The repository #defines __CUDA_ARCH__ itself, as a HIP compat header does for the device pass (ggml's
    vendors/hip.h): its tests of __CUDA_ARCH__ alone are no work."""
    return any(d.keyword == "define" and d.argument.split(None, 1)[:1] == ["__CUDA_ARCH__"]
               for directives in conditionals.values() for d in directives)


def _first_party(packages: frozenset[str], ruleset: Ruleset) -> Callable[[Finding], bool]:
    """A test for the import and dependency findings of PACKAGES, those the repository defines itself: scanning
    DeepSpeed, its own `import deepspeed` and the `pip install deepspeed` of its README are no dependency on it;
    scanning NVIDIA Warp (package `warp`, distribution `warp-lang`), neither are its kernels nor `pip install
    warp-lang`."""
    if not packages:
        return _never
    from packaging.utils import canonicalize_name  # imported only here: `check` on a few files seldom needs it

    # the rules about one package's modules: their `imports`, or the `package` their names belong to (Warp's kernels
    # and launches are read by name, not by import, since a repository's own warp.py is common)
    import_rules = {r.id for r in ruleset.rules if r.match.get("imports") or r.match.get("package")}
    # ... and the rules whose package is first party wherever the repository imports it, when a project nested in it
    # builds that package (mip-splatting's submodules/simple-knn: its kernels are reported at their source)
    anywhere_rules = {r.id for r in ruleset.rules if r.match.get("built_anywhere")}
    # ... and a command that installs a source tree of the repository's own (`pip install submodules/simple-knn`,
    # where that folder's setup.py is here): the tree is first party, not a dependency to fetch
    command_rules = {r.id for r in ruleset.rules if r.match.get("built_anywhere") and r.match.get("matcher") == "manifest-command"}
    package_rules = {r.id for r in ruleset.rules if r.match.get("matcher") == "manifest-package"}
    nested = [(folder + "/", name) for folder, _, name in (p.partition(NESTED) for p in packages if NESTED in p)]
    top = {p for p in packages if NESTED not in p}
    names = {canonicalize_name(p) for p in top}
    nested_names = [(folder, canonicalize_name(name)) for folder, name in nested]

    def own(f: Finding) -> bool:
        symbol = f.symbol or ""
        if f.rule in command_rules:  # the tree named relative to the file that runs the command
            tree = posixpath.normpath(posixpath.join(posixpath.dirname(f.path), symbol.rsplit(" ", 1)[-1]))
            return any(folder == tree + "/" for folder, _ in nested)
        if f.rule in import_rules:
            root = symbol.split(".")[0]
            if f.rule in anywhere_rules and any(canonicalize_name(root) == name for _, name in nested_names):
                return True
            return root in top or any(root == name and f.path.startswith(folder) for folder, name in nested)
        if f.rule in package_rules:
            return f.symbol in names or any(f.symbol == name and f.path.startswith(folder) for folder, name in nested_names)
        return False

    return own


def _never(_finding: Finding) -> bool:
    return False


WARP_SIZE_USE = "warp-size-name-use"
_THIRTY_TWO = lazy_regex(r"\(?\s*(?:32|0x20)[uUlL]*\s*\)?")


def _warp_fixed(
    conditionals: dict[str, tuple[preproc.Directive, ...]], gfx_targets: tuple[str, ...]
) -> Mapping[str, str] | None:
    """The names the repository #defines or declares (`const int WARP_SIZE = 32;`) as 32 and as nothing else (no
    per-platform definition), when a target has 64 lanes, with how: a use of one defined in another file is low
    there, not info."""
    if all(targets.wavefront_size(t) != 64 for t in gfx_targets):
        return None
    values: dict[str, set[str]] = {}
    declared: set[str] = set()
    for directives in conditionals.values():
        for directive in directives:
            if directive.keyword in ("define", warp_constants.WARP_CONSTANT):
                name, _, value = directive.argument.strip().partition(" ")
                values.setdefault(name, set()).add(value.strip())
                if directive.keyword == warp_constants.WARP_CONSTANT:
                    declared.add(name)
    return {name: "declared as 32" if name in declared else "#defined as 32" for name, found in values.items()
            if all(_THIRTY_TWO.fullmatch(v) for v in found)}


def _warp_constants(findings: list[Finding], fixed: Mapping[str, str]) -> list[Finding]:
    """Uses of a warp-size constant defined in another file come as info; those of FIXED names are low."""
    return [replace(f, severity=Severity.LOW, message=f"{f.message} ({f.symbol} is {fixed[f.symbol]} in this repository.)")
            if f.rule == WARP_SIZE_USE and f.severity is Severity.INFO and f.symbol is not None and f.symbol in fixed
            else f for f in findings]


@cache
def _other_backends() -> re.Pattern[str]:
    return re.compile(load_weights().status["other_backends"])


def _other_backends_python() -> re.Pattern[str]:
    return re.compile(load_weights().status["other_backends_python"])


def build_files(paths: Iterable[str]) -> list[str]:
    """The build files (setup.py, CMakeLists.txt, ...) among PATHS."""
    return [path for path in paths if rocm_status.is_build_file(path)]


def status_of(evidence: list[Evidence], guarded: int, paths: Iterable[str]) -> RocmStatus:
    """The repository's ROCm status from the evidence its files (at PATHS) gave (the kinds that are used, not cited,
    left out)."""
    builds = build_files(paths)
    extensions = [e.path.rpartition("/")[0] for e in evidence if e.kind == "torch-extension"]
    libraries = [e.path.rpartition("/")[0] for e in evidence if e.kind == rocm_status.LIBRARY_BUILD]
    libraries.extend(rocm_status.project_parts(evidence))
    cited = [e for e in evidence if e.kind not in rocm_status.NOT_CITED]
    return rocm_status.assess(cited, load_weights().status, guarded=guarded, build_files=builds,
                              extension_dirs=extensions, library_dirs=libraries)


@dataclass(frozen=True)
class Settling:
    """What gives each finding its status: the repository's ROCm status, seen with the tree's kernel work."""

    known: frozenset[str]  # every path and directory (a CUDA variant's ROCm sibling)
    context: finding_status.Context
    unported: bool  # no ROCm build path at all (status none): a CUDA build switch's tests are work


def settling(status: RocmStatus, sites: dict[str, bool], paths: Iterable[str]) -> Settling:
    """The Settling of a tree with STATUS, its kernel work at SITES (finding_status.kernel_sites) and its files' PATHS."""
    context = finding_status.Context.from_status(status).seeing_sites(sites)
    return Settling(rocm_status.known_paths(paths), context,
                    status.level == rocm_status.LEVELS[0])


def settled(how: Settling, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """One file's FINDINGS, each with its status (covered, optional-gap, remaining): (those, the macro tests whose
    build already sets the macro, guarded)."""
    if how.unported:
        findings = _build_switches(findings)
    every = finding_status.statused(rocm_status.variants(findings, how.known), how.context, load_weights())
    return [f for f in every if f.status != "guarded"], [f for f in every if f.status == "guarded"]


BUILD_SWITCH = "cuda-build-switch"
_NO_ROCM_BUILD = (" (This repository has no ROCm build yet: the one to be written must define the switch, or this code"
                  " test a HIP one.)")


def _build_switches(findings: list[Finding]) -> list[Finding]:
    """Tests of a CUDA build switch (#if BUILD_CUDA) come as info, since a ROCm build may define the switch too; they
    are low in a repository with no ROCm build path at all: that build is still to be written, and it must define
    the switch or the code test one of its own."""
    return [replace(f, severity=Severity.LOW, message=f.message + _NO_ROCM_BUILD)
            if f.rule == BUILD_SWITCH and f.severity is Severity.INFO else f for f in findings]


@dataclass(frozen=True)
class Narrowing:
    """What leaves findings out of a report: the baseline's fingerprints, the lines changed since --diff-base."""

    accepted: frozenset[str] | None = None
    changes: Changes | None = None


def narrowing(settings: Settings, changes: Changes | None) -> Narrowing:
    """The Narrowing of SETTINGS (its baseline read once) and CHANGES."""
    if not settings.baseline:  # the import here: most scans and checks have no baseline
        return Narrowing(None, changes)
    from migrate.baseline import load as load_baseline

    return Narrowing(load_baseline(Path(settings.baseline)), changes)


def narrow(how: Narrowing, findings: list[Finding]) -> tuple[list[Finding], int]:
    """One file's FINDINGS (in report order) without the baseline's (counted), then without those off the lines
    changed since --diff-base."""
    baselined = 0
    if how.accepted is not None:  # the imports here: most scans and checks have neither a baseline nor a --diff-base
        from migrate.baseline import new_findings

        new = new_findings(findings, how.accepted)
        baselined, findings = len(findings) - len(new), list(new)
    if how.changes is not None:
        from migrate.gitdiff import keep_changed

        findings = list(keep_changed(findings, how.changes))
    return findings, baselined
