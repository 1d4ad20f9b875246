"""Each finding's status (guarded, covered, optional-gap, remaining) in the light of the repository's ROCm status
and build units (Context): what a scan gives its findings, without the rest of the risk model (risk.py)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from migrate import opt_in_builds
from migrate.model import Finding, RocmStatus, ScanResult, Severity
from migrate.opt_in_builds import OptIn
from migrate.weights import Weights, category_of, load_weights, on_main_path

_C_SUFFIXES = frozenset({"cu", "cuh", "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "inl", "ipp", "tpp", "hip"})
_KERNEL_ROOTS = frozenset({"csrc", "src", "kernels", "cuda", "native", "lib"})


@dataclass(frozen=True)
class Context:
    """What the scan knows of the project: its build units, where the build hipifies, the ROCm level."""

    build_dirs: tuple[str, ...] = ()
    hipify_dirs: tuple[str, ...] = ()
    library_dirs: frozenset[str] = frozenset()  # build units that build libraries only: never a collection's programs
    ported: frozenset[str] = frozenset()  # components with ROCm evidence of their own
    rocm_builds: tuple[str, ...] = ()  # directories whose build file already has a ROCm branch ("" the root)
    level: str = "none"
    rocm_code: frozenset[str] = frozenset()  # components whose own code has ROCm branches (guards, HIP sources)
    rocm_files: Mapping[str, int] = field(default_factory=dict)  # rocm_code's components: how many files have them
    replaced: frozenset[str] = frozenset()  # CUDA kernel components a separate ROCm backend stands in for
    # rocm_code's components with a blocker outside their ROCm branches: a hipcc build of them stops there, so their
    # ROCm path is partial or stale, not a port that runs (a few USE_ROCM guards around unguarded mma.sync PTX)
    stale: frozenset[str] = frozenset()
    # Python files and build-unit directories ('dir/') the main path reaches only behind an off-by-default flag
    flagged: frozenset[str] = frozenset()
    extras: frozenset[str] = frozenset()  # requirements/<extra>.txt files: an extra's packages, not the main install
    rocm_image: bool = False  # the repository ships a ROCm container image (a Dockerfile on a ROCm base)
    # directories ('' the root) whose C/C++/CUDA only an extension chosen by a device switch's CUDA value builds, or
    # one that setup.py builds only on the user's request and the Python runs without (opt_in_extensions)
    device_built: frozenset[str] = frozenset()
    opt_in: OptIn = OptIn()  # code only an off-by-default CMake option compiles (`option(WITH_X ... OFF)`)
    # Python files with an import of a package with no ROCm build that the main path imports only inside a block
    chosen: frozenset[str] = frozenset()
    # subpackage directories holding a second extension that no main-path module outside them imports (research code)
    unimported: frozenset[str] = frozenset()
    # (path, line) of Python places inside an `if` branch or a conditional expression's value: a package's use (at
    # medium and above, or training with it: risk.yaml's score.training_uses) that a setting switches on
    switched: frozenset[tuple[str, int]] = frozenset()
    _components: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # path -> component
    _by_directory: dict[tuple[str, bool], str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, result: ScanResult, weights: Weights | None = None) -> Context:
        """The context of a scan (the default context when it carries no ROCm status), with the parts its tree
        imports only behind a command-line flag (read from the tree when it is still there)."""
        if result.rocm is None:
            return cls()
        weights = weights or load_weights()
        context = cls.from_status(result.rocm).seeing(result.findings, weights)
        ahead = _taken(result.root, context.build_dirs, weights)
        flagged, device_built, extras = ahead.flag_gated if ahead else _flag_gated(result.root, context.build_dirs,
                                                                                   weights)
        c_paths, unported, trains = _paths_read(result.findings, weights)  # one read: a large scan's come back from disk
        opted = _opted_in(result.root, context.build_dirs, c_paths, ahead.opt_in if ahead else None)
        chosen = _chosen(result.root, unported, weights)
        unimported = ahead.unimported if ahead else _unimported(result.root, context.build_dirs, weights)
        switched = _switched(result.root, trains)
        return replace(context, flagged=flagged, device_built=device_built, extras=extras, opt_in=opted, chosen=chosen,
                       unimported=unimported, switched=switched)

    @classmethod
    def from_status(cls, status: RocmStatus) -> Context:
        """The context a repository's ROCm status gives: its build units, hipified directories and ported parts."""
        bare = cls(build_dirs=_build_dirs(status.build_files), hipify_dirs=status.hipify_dirs, level=status.level,
                   library_dirs=frozenset(status.library_dirs))
        kinds = {"build", "guard", "hip-source", "runtime"}
        ported = frozenset(bare.component(e.path) for e in status.evidence if e.kind in kinds)
        rocm_builds = tuple(sorted({e.path.rpartition("/")[0] for e in status.evidence if e.kind == "build"}))
        files: dict[str, set[str]] = defaultdict(set)
        for e in status.evidence:
            if e.kind in {"guard", "hip-source"}:
                files[bare.component(e.path)].add(e.path)
        image = any(e.kind == "packaging" and _container_file(e.path) for e in status.evidence)
        return replace(bare, ported=ported, rocm_builds=rocm_builds, rocm_code=frozenset(files),
                       rocm_files={c: len(paths) for c, paths in files.items()}, rocm_image=image)

    def seeing(self, findings: Iterable[Finding], weights: Weights) -> Context:
        """This context with the CUDA kernel components a separate ROCm backend stands in for: where the repository
        has ROCm code, but none in a component with CUDA kernel work on the main path, the kernels a build with a
        ROCm branch compiles for CUDA are replaced on ROCm (flash-attention's CK sources), not ported."""
        if self.level == "none" or not self.rocm_code:
            return self
        return self.seeing_sites(kernel_sites(findings, weights))

    def seeing_sites(self, sites: Mapping[str, bool]) -> Context:
        """seeing, from the kernel_sites of the findings (a scan gathers them a file at a time)."""
        if self.level == "none" or not self.rocm_code:
            return self
        blocked = {self.component(path) for path, blocker in sites.items() if blocker}
        if {self.component(path) for path in sites} & self.rocm_code:
            return replace(self, stale=frozenset(blocked & self.rocm_code))
        return replace(self, replaced=frozenset(k for k in blocked if self._build_of(k) in self.rocm_builds))

    def _build_of(self, component: str) -> str:
        """The directory of COMPONENT's build file ("" the root's)."""
        return "" if component == "." else (_nearest(component + "/", self._build_set) or "")

    def runs(self, component: str, weights: Weights) -> bool:
        """COMPONENT already builds and runs on ROCm: in a supported repository, one with ROCm evidence of its own
        (unless a separate backend replaces it); in a partly ported one, one with ROCm branches in `own_rocm_files`
        of its own files and a build that hipifies it, and no blocker outside those branches (stale). What is left
        there is review, not porting, and it needs no new build."""
        key = (component, weights.own_rocm_files)  # all that it reads of WEIGHTS
        known = self._running
        if key not in known:
            known[key] = self._runs(component, weights.own_rocm_files)
        return known[key]

    def _runs(self, component: str, own_rocm_files: int) -> bool:
        if component in self.replaced or (self.level == "partial" and component in self.stale):
            return False
        if self.level == "supported":
            return component in self.ported
        hipified = "" in self._hipify_set or _nearest(component + "/", self._hipify_set) is not None
        own = self.rocm_files.get(component, 0) >= own_rocm_files
        return self.level == "partial" and own and hipified

    def component(self, path: str) -> str:
        """The build unit of PATH: its nearest directory with a build file, else its kernel directory
        (csrc/<name>, src/<name>: a packaged copy such as deepspeed/ops/csrc/<name> is the same unit; where <name> is
        itself a kernel folder's word, as in kernels/cuda, the whole path to it), else its top-level package."""
        known = self._components
        found = known.get(path)
        if found is None:  # asked once per finding: memoised by path, then by what the answer depends on
            if len(known) >= _PATHS_KEPT:
                known.clear()
            found = known[path] = self._component_of(path.rpartition("/")[0], is_c(path))
        return found

    def _component_of(self, directory: str, c_source: bool) -> str:
        """The component of a file in DIRECTORY (C/C++/CUDA or not): a tree has far fewer of these than files."""
        known = self._by_directory
        found = known.get((directory, c_source))
        if found is None:
            if len(known) >= _PATHS_KEPT:
                known.clear()
            found = known[(directory, c_source)] = self._component(directory, c_source)
        return found

    def _component(self, directory: str, c_source: bool) -> str:
        nearest = _nearest(directory + "/", self._build_set)
        if nearest:
            return nearest
        parts = directory.split("/") if directory else []
        if not parts:
            return "."
        if c_source:
            for index, part in enumerate(parts):
                if part in _KERNEL_ROOTS:
                    # kernels/cuda names no kernel: the package above it does (scene/kernels/cuda, sensors/kernels/cuda)
                    generic = index + 1 < len(parts) and parts[index + 1] in _KERNEL_ROOTS
                    return "/".join(parts[: index + 2] if generic else parts[index : index + 2])
            return "/".join(parts[:2])
        return parts[0]

    def is_flagged(self, path: str) -> bool:
        """PATH is in a part the main path reaches only behind an off-by-default command-line flag."""
        if not self.flagged:
            return False
        return path in self.flagged or any(path.startswith(part) for part in self.flagged if part.endswith("/"))

    def is_device_built(self, path: str) -> bool:
        """PATH is C/C++/CUDA, or CMake, that only the CUDA value of a device switch builds (a CUDA-only backend:
        the ROCm install runs the project without it)."""
        if not self.device_built or not (is_c(path) or _cmake(path)):
            return False
        return any(not d or path.startswith(d + "/") for d in self.device_built)

    def built_for_rocm(self, path: str) -> bool:
        """A build file in PATH's directory or above already has a ROCm branch."""
        return any(not d or path.startswith(d + "/") for d in self.rocm_builds)

    def hipifies(self, path: str) -> bool:
        """The build turns PATH's CUDA names into HIP ones (a torch extension, a HIP CMake build)."""
        known = self._hipified
        if path not in known:
            if len(known) >= _PATHS_KEPT:
                known.clear()
            known[path] = is_c(path) and ("" in self._hipify_set or _nearest(path, self._hipify_set) is not None)
        return known[path]

    def place(self, path: str) -> _Place:
        """What a finding's status reads of PATH (status_of): asked once per finding, many per file."""
        known = self._places
        found = known.get(path)
        if found is None:
            if len(known) >= _PLACES_KEPT:
                known.clear()
            found = known[path] = _place(self, path)
        return found

    @cached_property
    def _places(self) -> dict[str, _Place]:
        return {}

    @cached_property
    def _build_set(self) -> frozenset[str]:
        return frozenset(self.build_dirs)

    @cached_property
    def _hipify_set(self) -> frozenset[str]:
        return frozenset(self.hipify_dirs)

    @cached_property
    def _hipified(self) -> dict[str, bool]:
        return {}  # hipifies' answers by path: asked once per finding, many per file

    @cached_property
    def _running(self) -> dict[tuple[str, int], bool]:
        return {}  # runs' answers by component: asked once or twice per finding


# The answers by path kept at most: findings come in path order, so a file's are answered from a few entries, and
# a memo of every path held a key and an entry per file of a large tree until the end (two contexts: the scan's and
# the assessment's).
_PATHS_KEPT = 4_096
# The places kept at most: a report's findings are read in path order several times over (the pricing, the floors,
# the rollups: 7 reads), so a memo smaller than a large tree's paths with findings is emptied on every read (~80 bytes
# a place; CUTLASS + CCCL's 11,000 files with findings: under 2 MB)
_PLACES_KEPT = 16_384


def _flag_gated(
    root: str, build_dirs: tuple[str, ...], weights: Weights
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """optional_parts.flag_gated, device_built (with opt_in_extensions.opt_in_built) and requirement_extras of the tree
    at ROOT; nothing where it is gone (a stored result read again)."""
    if not Path(root).is_dir():
        return frozenset(), frozenset(), frozenset()
    from migrate import opt_in_extensions, optional_parts  # here: `migrate check` and renderers never need them

    def main(path: str) -> bool:
        return on_main_path(path, weights)

    built = optional_parts.device_built(Path(root), build_dirs)
    return (optional_parts.flag_gated(Path(root), build_dirs, main),
            built | opt_in_extensions.opt_in_built(Path(root), build_dirs, main),
            optional_parts.requirement_extras(Path(root), build_dirs))


def _paths_read(
    findings: Iterable[Finding], weights: Weights
) -> tuple[set[str], set[str], set[tuple[str, int]]]:
    """(the C/C++/CUDA files with remaining findings above info, the Python files with an import of a package with no
    ROCm build: risk.yaml's score.unported rules, the Python places of a package to replace: a finding with substitutes at
    medium and above, or one that trains with it, score.training_uses)."""
    c_paths: set[str] = set()
    unported: set[str] = set()
    trains: set[tuple[str, int]] = set()
    for f in findings:
        if f.status == "remaining" and f.severity > Severity.INFO and is_c(f.path):
            c_paths.add(f.path)
            continue
        if f.rule in weights.unported_rules and f.path.endswith(".py"):
            unported.add(f.path)
        if f.substitutions and f.path.endswith(".py") and on_main_path(f.path, weights):  # the floors read no other
            heavy = f.severity >= Severity.MEDIUM  # a package to replace: where it sits tells a switch from the path
            trains.update((f.path, line) for line, text in ((f.line, f.evidence), *((o.line, o.evidence)
                          for o in f.occurrences)) if heavy or weights.training_uses.search(text))
    return c_paths, unported, trains


def _switched(root: str, places: set[tuple[str, int]]) -> frozenset[tuple[str, int]]:
    """optional_parts.in_branches of PLACES; nothing where the tree is gone."""
    if not places or not Path(root).is_dir() or len({path for path, _ in places}) > _MAX_SWITCHED_FILES:
        return frozenset()
    from migrate import optional_parts

    return optional_parts.in_branches(Path(root), places)


# more Python files than this with a package to replace are not parsed again in the parent (CUTLASS + CCCL's 403 DSL
# files: ~0.5 s after the workers): every place then counts as on the path, as it did before switches were read
_MAX_SWITCHED_FILES = 300


def _opted_in(root: str, build_dirs: tuple[str, ...], paths: set[str], ahead: opt_in_builds.Ahead | None) -> OptIn:
    """opt_in_builds.opt_in of the tree at ROOT for PATHS (with what was read AHEAD); nothing where the tree is gone
    (a stored result read again)."""
    if not paths or not Path(root).is_dir():
        return OptIn()
    return opt_in_builds.opt_in(Path(root), build_dirs, paths, ahead)


def _build_dirs(build_files: Iterable[str]) -> tuple[str, ...]:
    """The build units' directories of BUILD_FILES, the root's left out, the deepest first."""
    return tuple(sorted({p.rpartition("/")[0] for p in build_files} - {""}, key=len, reverse=True))


@dataclass(frozen=True)
class _Ahead:
    """What Context.of reads of the tree at ROOT with BUILD_DIRS and WEIGHTS that the findings do not decide."""

    root: str
    build_dirs: tuple[str, ...]
    weights: Weights
    flag_gated: tuple[frozenset[str], frozenset[str], frozenset[str]]
    unimported: frozenset[str]
    opt_in: opt_in_builds.Ahead | None


_AHEAD: list[_Ahead] = []  # read_ahead's last reading, until a Context.of of the same tree takes it


def read_ahead(root: str, build_files: Iterable[str], paths: Iterable[str], weights: Weights) -> None:
    """Read now what Context.of reads of the tree at ROOT (its BUILD_FILES, its files at PATHS) whatever its findings
    are: a large scan does it while its workers run, and the next Context.of of that tree, with the same build units
    and WEIGHTS, takes it instead of reading the tree after them. A reading that fails keeps nothing (Context.of then
    reads the tree itself, and meets the failure there)."""
    _AHEAD.clear()
    build_dirs = _build_dirs(build_files)
    try:
        opted = opt_in_builds.read_ahead(Path(root), build_dirs, paths) if Path(root).is_dir() else None
        _AHEAD.append(_Ahead(root, build_dirs, weights, _flag_gated(root, build_dirs, weights),
                             _unimported(root, build_dirs, weights), opted))
    except Exception:  # noqa: BLE001 - raised again where Context.of reads the tree itself
        return


def _taken(root: str, build_dirs: tuple[str, ...], weights: Weights) -> _Ahead | None:
    """read_ahead's reading of the tree at ROOT with BUILD_DIRS and WEIGHTS (None when it read another), taken: a
    later Context.of reads the tree again."""
    ahead = _AHEAD.pop() if _AHEAD else None
    if ahead is None or ahead.root != root or ahead.build_dirs != build_dirs or ahead.weights is not weights:
        return None
    return ahead


def _unimported(root: str, build_dirs: tuple[str, ...], weights: Weights) -> frozenset[str]:
    """optional_parts.unimported_extensions of the tree at ROOT; nothing where it is gone."""
    if not Path(root).is_dir():
        return frozenset()
    from migrate import optional_parts

    return optional_parts.unimported_extensions(Path(root), build_dirs, lambda path: on_main_path(path, weights))


def _chosen(root: str, paths: set[str], weights: Weights) -> frozenset[str]:
    """optional_parts.chosen_only of PATHS, the Python files with an import of a package with no ROCm build; nothing
    where there is none, or the tree is gone."""
    if not paths or not Path(root).is_dir():
        return frozenset()
    from migrate import optional_parts

    return optional_parts.chosen_only(Path(root), paths, lambda path: on_main_path(path, weights))


def _nearest(path: str, directories: frozenset[str]) -> str | None:
    """The deepest of DIRECTORIES that holds PATH (a walk up its parents: a repository of many build units
    must not cost a loop over all of them per finding)."""
    directory = path.rpartition("/")[0]
    while directory:
        if directory in directories:
            return directory
        directory = directory.rpartition("/")[0]
    return None


def _container_file(path: str) -> bool:
    name = path.rpartition("/")[2].lower()
    return name.startswith(("dockerfile", "containerfile")) or name.endswith((".dockerfile", ".containerfile"))


def _cmake(path: str) -> bool:
    name = path.rpartition("/")[2]
    return name == "CMakeLists.txt" or name.endswith(".cmake")


def is_c(path: str) -> bool:
    """C, C++ or CUDA source or header, by suffix."""
    return path.rpartition(".")[2].lower() in _C_SUFFIXES


# Tests of a macro that the project's own build sets (WITH_CUDA): its ROCm branch sets it too. Not __CUDA_ARCH__ or
# CUDA_VERSION, which hipcc leaves undefined.
_BUILD_MACRO_RULES = frozenset({"cuda-macro-cpu-fallback"})


def status_of(finding: Finding, context: Context, weights: Weights) -> str:
    """guarded (never compiled for HIP, or a build macro test whose build already has a ROCm branch), covered
    (nothing to do on ROCm), optional-gap (a CUDA-only add-on of a supported repository, or a package of an
    optional extra) or remaining."""
    if finding.status != "remaining":
        return finding.status
    if finding.severity == Severity.INFO:
        return "covered"
    place = context.place(finding.path)  # what the answer reads of the path, worked out once per path
    if place.hipified and finding.severity <= weights.mechanical_max and finding.rule not in weights.not_renamed:
        return "covered"  # a rename the build's hipify makes (not a value it leaves as it is)
    if place.rocm_build and finding.rule in _BUILD_MACRO_RULES:
        return "guarded"  # a build macro test in code whose build already has a ROCm branch (it sets the macro)
    if place.optional:
        # an add-on the user opts into with a command-line flag; the packages of an extra (requirements/<extra>.txt);
        # a CUDA-only backend a device switch builds; a second extension the library's own path never imports
        return "optional-gap"
    if context.opt_in.holds(finding.path, finding.line):
        return "optional-gap"  # code only an off-by-default build option compiles (cuDNN, flash-attention kernels)
    return place.otherwise


@dataclass(frozen=True, slots=True)
class _Place:
    """What status_of reads of a finding's path in a Context, in the order it reads them."""

    hipified: bool  # the build hipifies it (a rename there is covered)
    rocm_build: bool  # C/C++/CUDA whose build already has a ROCm branch (a build macro test there is guarded)
    optional: bool  # flagged, an extra's requirements, device-built, or in an unimported extension
    otherwise: str  # the status of what none of the above holds: its component's


def _place(context: Context, path: str) -> _Place:
    c_source = is_c(path)
    optional = (context.is_flagged(path) or path in context.extras or context.is_device_built(path)
                or bool(context.unimported and c_source and any(path.startswith(d + "/") for d in context.unimported)))
    component = context.component(path)
    if component in context.replaced:
        otherwise = "remaining"  # the CUDA kernels a separate ROCm backend replaces: the product, not an add-on
    elif context.level == "supported" and context.ported and component != "." and component not in context.ported:
        otherwise = "optional-gap"
    else:
        otherwise = "remaining"
    return _Place(context.hipifies(path), c_source and context.built_for_rocm(path), optional, otherwise)


def kernel_sites(findings: Iterable[Finding], weights: Weights) -> dict[str, bool]:
    """The paths of FINDINGS' first-party kernel work on the main path, each with whether a blocker is among it:
    all that Context.seeing reads of them."""
    sites: dict[str, bool] = {}
    for f in findings:
        if f.status != "guarded" and not f.vendored and is_kernel_work(f, weights) and on_main_path(f.path, weights):
            sites[f.path] = sites.get(f.path, False) or f.severity == Severity.BLOCKER
    return sites


def statused(findings: Iterable[Finding], context: Context, weights: Weights) -> tuple[Finding, ...]:
    """FINDINGS, each with its status in CONTEXT, which has already seen them all (a scan's, a file at a time)."""
    return tuple(_in_status(f, status_of(f, context, weights)) for f in findings)


def _in_status(finding: Finding, status: str) -> Finding:
    """FINDING in STATUS: a guarded one also reads info, as every guarded finding does."""
    if status == finding.status:
        return finding
    return finding.guarded() if status == "guarded" else finding.with_status(status)


def is_kernel_work(finding: Finding, weights: Weights) -> bool:
    """Kernel work beyond a rename, in C/C++/CUDA: its component needs a HIP build and a validation run."""
    kernels = weights.categories[category_of(finding, weights)].phase == "kernels"
    return kernels and finding.severity > weights.mechanical_max and is_c(finding.path)
