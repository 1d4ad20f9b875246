"""The data that flows between the stages: files, rules, findings, results."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

SCHEMA = "rocm-migrate/scan/1"

CATEGORIES = (
    "python-cuda-api",
    "torch-version-check",
    "cuda-only-dependency",
    "cuda-index-url",
    "custom-cuda-kernel",
    "cpp-extension-build",
    "inline-ptx",
    "warp-size-assumption",
    "cuda-driver-api",
    "cuda-library",
    "unsupported-api",
    "tensorrt",
    "triton-kernel",
    "nvidia-docker",
    "nvidia-runtime-tool",
    "cuda-build-config",
    "env-var",
    "other",
)


class Severity(enum.IntEnum):
    """How much a finding stands in the way of running on ROCm."""

    INFO = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    BLOCKER = 4

    @property
    def label(self) -> str:
        return _SEVERITY_LABELS[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(s.label for s in cls)
            raise ValueError(f"unknown severity {text!r} (expected one of {names})") from None


_SEVERITY_LABELS = {s: s.name.lower() for s in Severity}  # label is read per finding per report: precomputed
_BY_LABEL = {label: s for s, label in _SEVERITY_LABELS.items()}


class FileKind(str, enum.Enum):
    """What a discovered file is, decided from its name alone."""

    PYTHON = "python"
    CUDA = "cuda"
    CPP = "cpp"
    C = "c"
    REQUIREMENTS = "requirements"
    PYPROJECT = "pyproject"
    SETUP_PY = "setup-py"
    SETUP_CFG = "setup-cfg"
    PIPFILE = "pipfile"
    CONDA = "conda"
    DOCKERFILE = "dockerfile"
    COMPOSE = "compose"
    KUBERNETES = "kubernetes"
    CMAKE = "cmake"
    MAKEFILE = "makefile"
    SHELL = "shell"
    CI_WORKFLOW = "ci-workflow"
    MARKDOWN = "markdown"
    YAML = "yaml"
    COG = "cog"  # Replicate cog.yaml
    GITMODULES = "gitmodules"  # .gitmodules (git config syntax)
    INFER_CONFIG = "infer-config"  # INI-style inference configs (DeepStream nvinfer / deepstream-app)
    CARGO = "cargo"  # Cargo.toml (Rust package manifest)
    RUST_BUILD = "rust-build"  # build.rs (a Rust package's build script)
    RUST = "rust"  # other Rust sources (.rs: device code for the nvptx64 target only)
    MSBUILD = "msbuild"  # Visual Studio projects and property sheets (.vcxproj, .props; .csproj, .fsproj, .vbproj)
    MATLAB = "matlab"  # MATLAB scripts (.m) and mex option files (mex_CUDA_*.xml, nvcc_*.xml)
    BAZEL = "bazel"  # Bazel BUILD files and Starlark macros (BUILD, BUILD.bazel, *.bzl)
    GO = "go"  # Go sources (what they bind through cgo, PTX in their strings)
    ROS_PACKAGE = "ros-package"  # package.xml (a ROS / ROS 2 package manifest: its <depend> entries)
    JVM_BUILD = "jvm-build"  # pom.xml, build.gradle, build.gradle.kts (Maven / Gradle dependencies)
    FORTRAN = "fortran"  # Fortran sources (CUDA Fortran, OpenACC directives)
    CYTHON = "cython"  # Cython sources (.pyx, .pxd, .pxi: the CUDA they declare and call)
    JULIA = "julia"  # Julia sources (.jl: the CUDA.jl they use, warp and NVVM intrinsics)
    JULIA_PROJECT = "julia-project"  # Julia package manifests (Project.toml, JuliaProject.toml)
    SASS = "sass"  # SASS listings and assembler sources (.sass, .cuasm: NVIDIA machine code; CSS Sass shares .sass)
    BINARY_LIBRARY = "binary-library"  # prebuilt libraries in the tree (.so, .a): read for the CUDA device code they hold
    AUTOCONF = "autoconf"  # Autoconf inputs (configure.ac, configure.in, acinclude.m4, m4/*.m4): macros and shell
    DEVCONTAINER = "devcontainer"  # devcontainer.json / .devcontainer.json: the images a dev container is built on


@dataclass(frozen=True)
class SourceFile:
    """A file chosen by discovery: where it is and what kind it is."""

    path: Path
    relpath: str
    kind: FileKind
    size: int
    vendored: bool = False
    explicit: bool = False


@dataclass(frozen=True)
class Rule:
    """One rule from rules/*.yaml, validated at load time."""

    id: str
    title: str
    category: str
    languages: tuple[str, ...]
    severity: Severity
    message: str
    hip: str | None
    match: dict[str, Any] = field(hash=False, compare=False)
    substitutions: tuple[str, ...] = ()
    by_wavefront: tuple[tuple[int, Severity], ...] = ()
    per_file: bool = False  # report the first place in a file only (library usage: one decision per file)
    effort: tuple[float, float] | None = None  # engineer-days per finding; None: the risk model's default
    rocm_path: bool = False  # marks the project's own ROCm handling: never a guarded CUDA site, wherever it stands
    source: str = ""


class Occurrence(NamedTuple):
    """One place a once-per-file finding stands for (library usage is decided once, changed everywhere). A tuple:
    a large tree has hundreds of thousands, and a frozen dataclass takes five times the memory (its __dict__)."""

    line: int
    column: int
    end_line: int
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "end_line": self.end_line, "evidence": self.evidence}

    @classmethod
    def from_dict(cls, data: Any) -> Occurrence:
        """The occurrence to_dict gave DATA; ValueError for anything else."""
        if not (type(data) is dict and data.keys() == _OCCURRENCE_KEYS and type(data["line"]) is int
                and type(data["column"]) is int and type(data["end_line"]) is int and type(data["evidence"]) is str):
            raise ValueError("not an occurrence")
        return cls(data["line"], data["column"], data["end_line"], data["evidence"])


_OCCURRENCE_KEYS = {"line", "column", "end_line", "evidence"}


@dataclass(frozen=True, order=True)
class Finding:
    """One thing found at one place; complete when created, sortable, comparable."""

    path: str
    line: int
    column: int
    rule: str
    category: str = field(compare=False)
    severity: Severity = field(compare=False)
    end_line: int = field(compare=False)
    message: str = field(compare=False)
    evidence: str = field(compare=False)
    hip: str | None = field(compare=False, default=None)
    substitutions: tuple[str, ...] = field(compare=False, default=())
    vendored: bool = field(compare=False, default=False)
    symbol: str | None = field(compare=False, default=None)
    effort: tuple[float, float] | None = field(compare=False, default=None)  # the rule's override, if any
    # guarded / covered / optional-gap (a CUDA-only add-on, a package of an optional extra) / remaining
    status: str = field(compare=False, default="remaining")
    occurrences: tuple[Occurrence, ...] = field(compare=False, default=())  # per_file rules: every place, first = line

    def key(self) -> tuple[str, int, int, str]:
        """The report order as a sort key: far cheaper than dataclass comparisons on large scans."""
        return (self.path, self.line, self.column, self.rule)

    def with_status(self, status: str) -> Finding:
        """This finding with another status. A copy of its fields: dataclasses.replace runs __init__ again, 5x
        slower, and every scan gives most findings of a large tree a status."""
        clone = object.__new__(Finding)
        clone.__dict__.update(self.__dict__)
        clone.__dict__["status"] = status
        return clone

    def guarded(self) -> Finding:
        """This finding in code a ROCm build never compiles (or that already handles ROCm): info, status guarded.
        It is still reported, so that a reader sees every CUDA-only site was considered."""
        clone = self.with_status("guarded")
        clone.__dict__["severity"] = Severity.INFO
        return clone

    def to_dict(self) -> dict[str, Any]:
        """Every field, the optional ones only when set: the JSON report's finding, and what the cache keeps."""
        data: dict[str, Any] = {
            "rule": self.rule,
            "category": self.category,
            "severity": self.severity.label,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "message": self.message,
            "evidence": self.evidence,
            "hip": self.hip,
        }
        if self.substitutions:
            data["substitutions"] = list(self.substitutions)
        if self.vendored:
            data["vendored"] = True
        if self.symbol is not None:
            data["symbol"] = self.symbol
        if self.effort is not None:
            data["effort"] = list(self.effort)
        data["status"] = self.status
        if self.occurrences:
            data["occurrences"] = [o.to_dict() for o in self.occurrences]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Finding:
        """The finding to_dict gave DATA; ValueError for anything else (the cache reads files others could write).
        Explicit type tests, no helper per field: a warm scan of a large tree reads 100,000 findings."""
        if not (type(data) is dict and _FINDING_KEYS <= data.keys() <= _FINDING_KEYS_ALL
                and type(data["rule"]) is str and type(data["category"]) is str and type(data["path"]) is str
                and type(data["line"]) is int and type(data["column"]) is int and type(data["end_line"]) is int
                and type(data["message"]) is str and type(data["evidence"]) is str and type(data["status"]) is str
                and (data["hip"] is None or type(data["hip"]) is str) and type(data["severity"]) is str
                and data["severity"] in _BY_LABEL):
            raise ValueError("not a finding")
        substitutions = data.get("substitutions", [])
        symbol, effort, vendored = data.get("symbol"), data.get("effort"), data.get("vendored", False)
        if not (type(substitutions) is list and all(type(s) is str for s in substitutions)
                and (symbol is None or type(symbol) is str) and type(vendored) is bool
                and (effort is None or type(effort) is list and len(effort) == 2
                     and all(type(e) in (int, float) for e in effort))):
            raise ValueError("not a finding")
        places = data.get("occurrences", [])
        if type(places) is not list:
            raise ValueError("not a finding")
        return cls(data["path"], data["line"], data["column"], data["rule"], data["category"],
                   _BY_LABEL[data["severity"]], data["end_line"], data["message"], data["evidence"], data["hip"],
                   tuple(substitutions), vendored, symbol, (effort[0], effort[1]) if effort is not None else None,
                   data["status"], tuple(Occurrence.from_dict(o) for o in places))


_FINDING_KEYS = {"rule", "category", "severity", "path", "line", "column", "end_line", "message", "evidence", "hip",
                 "status"}
_FINDING_KEYS_ALL = _FINDING_KEYS | {"substitutions", "vendored", "symbol", "effort", "occurrences"}


class InReportOrder(Sequence[Finding]):
    """Findings known distinct and in report order (a scan's, read back from disk): taken as they are, never
    copied into a list of them all."""


def ordered(findings: Iterable[Finding]) -> Sequence[Finding]:
    """Distinct findings in report order; of equal ones the first, as a set keeps (hashing 100,000 findings by
    their dataclass __hash__ costs more than their keys)."""
    if isinstance(findings, InReportOrder):
        return findings
    items = list(findings)
    if in_order(items):  # a scan's findings are already in order
        return items
    distinct: dict[tuple[str, int, int, str], Finding] = {}
    for finding in items:
        distinct.setdefault(finding.key(), finding)
    return [distinct[key] for key in sorted(distinct)]


def in_order(items: list[Finding]) -> bool:
    """ITEMS strictly ascending by key, each key made as it is compared (a list of them all is 90 bytes a finding)."""
    previous: tuple[str, int, int, str] | None = None
    for finding in items:
        key = finding.key()
        if previous is not None and not previous < key:
            return False
        previous = key
    return True


@dataclass(frozen=True, order=True)
class Skipped:
    """A file the scan could not read or parse, and why."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Any) -> Skipped:
        """The skip to_dict gave DATA; ValueError for anything else."""
        if not (type(data) is dict and data.keys() == {"path", "reason"} and type(data["path"]) is str
                and type(data["reason"]) is str):
            raise ValueError("not a skipped file")
        return cls(data["path"], data["reason"])


@dataclass(frozen=True)
class FileResult:
    """What one file gave: its findings, or why it was skipped."""

    relpath: str
    findings: tuple[Finding, ...] = ()
    skipped: Skipped | None = None
    guarded: int = 0
    partial: bool = False  # the file was scanned, but `skipped` names a part of it that was left out
    guarded_findings: tuple[Finding, ...] = ()  # the guarded hits themselves (status guarded)
    directives: tuple[tuple[int, str, str], ...] = ()  # C preprocessor lines: (line, keyword, argument)
    evidence: tuple[Evidence, ...] = ()  # what this file shows of an existing ROCm port
    unscanned: bool = False  # the scan's time budget ran out before this file was read
    packed: bytes = b""  # the findings encoded (scan/spill.py), as a worker sends them; `findings` is then empty

    def to_dict(self) -> dict[str, Any]:
        """Every field but `unscanned` (a file not reached gives no result to keep), for the cache."""
        return {
            "relpath": self.relpath, "findings": [f.to_dict() for f in self.findings],
            "skipped": self.skipped.to_dict() if self.skipped else None, "guarded": self.guarded,
            "partial": self.partial, "guarded_findings": [f.to_dict() for f in self.guarded_findings],
            "directives": [list(d) for d in self.directives], "evidence": [e.to_dict() for e in self.evidence],
        }

    @classmethod
    def from_dict(cls, data: Any) -> FileResult:
        """The result to_dict gave DATA; ValueError for anything else."""
        if not (type(data) is dict and data.keys() == _RESULT_KEYS and type(data["relpath"]) is str
                and type(data["guarded"]) is int and type(data["partial"]) is bool
                and all(type(data[k]) is list for k in ("findings", "guarded_findings", "directives", "evidence"))):
            raise ValueError("not a file result")
        directives = data["directives"]
        if not all(type(d) is list and len(d) == 3 and type(d[0]) is int and type(d[1]) is str and type(d[2]) is str
                   for d in directives):
            raise ValueError("not a file result")
        return cls(
            data["relpath"], tuple(Finding.from_dict(f) for f in data["findings"]),
            skipped=None if data["skipped"] is None else Skipped.from_dict(data["skipped"]), guarded=data["guarded"],
            partial=data["partial"], guarded_findings=tuple(Finding.from_dict(f) for f in data["guarded_findings"]),
            directives=tuple((d[0], d[1], d[2]) for d in directives),
            evidence=tuple(Evidence.from_dict(e) for e in data["evidence"]),
        )


_RESULT_KEYS = {"relpath", "findings", "skipped", "guarded", "partial", "guarded_findings", "directives", "evidence"}


@dataclass(frozen=True)
class Substitution:
    """A ROCm substitute the report proposes, with its provenance (rules/data/substitutions.yaml)."""

    id: str
    replaces: str
    rocm: str
    install: tuple[str, ...] = ()
    archs: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    as_of: str = ""
    answers: tuple[tuple[str, str], ...] = ()  # (rule id, path) pairs of the findings it answers
    kind: str = ""
    risk: str = ""
    confidence: str = ""
    rocm_versions: str = ""
    target_notes: tuple[tuple[str, str], ...] = ()  # (gfx target, what this substitute means there)
    unconfirmed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "replaces": self.replaces,
            "rocm": self.rocm,
            "install": list(self.install),
            "archs": list(self.archs),
            "targets": [{"target": gfx, "note": note} for gfx, note in self.target_notes],
            "risk": self.risk,
            "caveats": list(self.caveats),
            "unconfirmed": list(self.unconfirmed),
            "confidence": self.confidence,
            "sources": list(self.sources),
            "as_of": self.as_of,
            "answers": [{"rule": rule, "path": path} for rule, path in self.answers],
        }


@dataclass(frozen=True)
class ScanResult:
    """Everything a scan found, in a deterministic order."""

    root: str
    targets: tuple[str, ...]
    files_scanned: int
    findings: Sequence[Finding]  # a tuple, or a large scan's findings read back from disk (scan/spill.py)
    skipped: tuple[Skipped, ...]
    guarded: int = 0
    vendored_paths: tuple[str, ...] = ()
    substitutions: tuple[Substitution, ...] = ()
    baselined: int = 0  # findings left out because the baseline accepts them
    guarded_findings: tuple[Finding, ...] = ()  # findings in code a HIP build never compiles (or other backends)
    rocm: RocmStatus | None = None  # how far the repository already builds for ROCm
    unscanned: int = 0  # files left out (skipped, with the reason) when the scan's time budget ran out


@dataclass(frozen=True, order=True)
class Evidence:
    """One sign that a repository already builds or runs on ROCm, where it is and what it weighs."""

    kind: str  # build / guard / hip-source / runtime / ci / packaging / docs
    path: str
    line: int
    text: str = field(compare=False)
    weight: int = field(compare=False, default=1)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "line": self.line, "text": self.text, "weight": self.weight}

    @classmethod
    def from_dict(cls, data: Any) -> Evidence:
        """The evidence to_dict gave DATA; ValueError for anything else."""
        if not (type(data) is dict and data.keys() == {"kind", "path", "line", "text", "weight"}
                and type(data["kind"]) is str and type(data["path"]) is str and type(data["line"]) is int
                and type(data["text"]) is str and type(data["weight"]) is int):
            raise ValueError("not a piece of evidence")
        return cls(data["kind"], data["path"], data["line"], data["text"], data["weight"])


@dataclass(frozen=True)
class RocmStatus:
    """The repository's ROCm status: none / partial / supported, with the evidence behind it."""

    level: str
    score: int
    evidence: tuple[Evidence, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()  # evidence kind -> how many places
    build_files: tuple[str, ...] = ()  # relpaths of setup.py / CMakeLists.txt / pyproject.toml / Makefile
    hipify_dirs: tuple[str, ...] = ()  # directories whose build hipifies CUDA sources (torch extensions, HIP CMake)
    # directories whose CMakeLists.txt builds libraries and no program, or links a library another of the
    # repository's build units defines (or defines one another links): parts of one project, never its programs
    library_dirs: tuple[str, ...] = ()
