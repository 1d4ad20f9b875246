"""Does the repository already build for ROCm? Evidence per file (from the text the scan reads) -> a level; pure."""

from __future__ import annotations

import bisect
import fnmatch
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from migrate import preproc
from migrate.lazyre import LazyRegex, lazy_regex
from migrate.model import Evidence, FileKind, Finding, RocmStatus
from migrate.parse import ParseError

LEVELS = ("none", "partial", "supported")
# what CMake compiles where: used, not cited (hip-removed-source: a source the HIP branch takes out of a list)
SOURCE_LISTS = frozenset({"cuda-only-source", "build-source", "hip-removed-source", "hip-twin-source"})
PAIRED_ATOMIC = "paired-atomic-overload"  # the project's own atomicAdd for __half2 (HIP has none): used, not cited
# A CMakeLists.txt that builds libraries and no program: a part of one project (FasterTransformer's kernels/), never
# one of a collection's independent programs (a cuda-samples sample); used, not cited
LIBRARY_BUILD = "library-build"
# A library target a CMake file defines (`add_library(context ...)`) and the names it links
# (`target_link_libraries(tool PUBLIC context)`): a build unit that links a library another unit of the same
# repository defines, and the unit that defines it, are parts of one project (k2's tools, bindings and benchmarks
# on its core library), never independent programs; used, not cited
LIBRARY_TARGET, LIBRARY_LINK = "library-target", "library-link"
# the macros a CMake file defines (-DNAME, add_compile_definitions) only in its CUDA-only branches, and elsewhere:
# a HIP build never defines the first (unless also defined elsewhere); a name a CUDA-only branch adds to a list
# variable (`set(DEFS ${DEFS} NAME)`, `list(APPEND DEFS NAME)`: "DEFS NAME") and a list some CMake file of the
# project hands to the compile definitions (`target_compile_definitions(t PRIVATE ${DEFS})`: "DEFS") make one
# more; used, not cited
LIST_DEFINE, LIST_USE = "cuda-only-list-define", "define-list-use"
DEFINES = frozenset({"cuda-only-define", "build-define", LIST_DEFINE, LIST_USE})
# How the repository builds its PyTorch C++ code: a CMake file that finds Torch (`find_package(Torch)`: the build
# compiles the extension itself, and no hipify step runs) and Python that uses torch.utils.cpp_extension (whose build
# hipifies the sources on a ROCm PyTorch); used, not cited
TORCH_CMAKE, TORCH_HIPIFY = "torch-cmake", "torch-hipify"
NOT_CITED = SOURCE_LISTS | DEFINES | {PAIRED_ATOMIC, LIBRARY_BUILD, LIBRARY_TARGET, LIBRARY_LINK, TORCH_CMAKE,
                                      TORCH_HIPIFY}
_ADD_LIBRARY = lazy_regex(r"^[ \t]*(?:cuda_)?add_library[ \t]*\(", re.MULTILINE | re.IGNORECASE)
_ADD_EXECUTABLE = lazy_regex(r"^[ \t]*(?:cuda_)?add_executable[ \t]*\(", re.MULTILINE | re.IGNORECASE)
_PAIRED_ATOMIC_DEFINED = lazy_regex(
    r"\batomicAdd\s*\(\s*(?:const\s+)?(?:__half2|half2|__nv_bfloat162|nv_bfloat162)\s*\*\s*\w+\s*,[^;{()]*\)\s*\{")
# "hip"/"amd" not inside a word (ship, lambda); matched on lower-cased text, after a substring test that passes
# over most files in C (a case-insensitive regex over every file cost a quarter of a scan).
_HINT = lazy_regex(r"(?<![a-z])(?:hip|rocm|amd)|gfx\d|offload-arch|\bmi[123]\d\d")
_WORDS = ("hip", "rocm", "amd", "gfx", "offload-arch", "mi1", "mi2", "mi3")
_BUILD_NAMES = frozenset({"setup.py", "CMakeLists.txt", "pyproject.toml", "Makefile", "makefile", "GNUmakefile"})
_BUILDER_PATH = lazy_regex(r"(?:^|/)(?:setup\.py|[^/]*build[^/]*\.py|op_builder/[^/]+\.py|builder/[^/]+\.py)$")
Pattern = tuple[str, int, LazyRegex]


def _p(kind: str, weight: int, regex: str) -> Pattern:
    return (kind, weight, lazy_regex(regex, re.I))


_CMAKE = (
    _p("build", 3, r"enable_language\s*\(\s*HIP\b|\bproject\s*\([^)]*\bHIP\b|LANGUAGES?\b[^)]*\bHIP\b"),
    _p("build", 3, r"find_package\s*\(\s*(?:hip|hipblas|hipblaslt|rocblas|rocprim|hipcub|composable_kernel|rocm)\b"),
    _p("build", 3, r"--offload-arch|CMAKE_HIP_ARCHITECTURES|\bAMDGPU_TARGETS\b|LANGUAGE\s+HIP\b"),
    _p("build", 2, r"\boption\s*\(\s*\w*(?:HIP|ROCM)\w*"),
    # a branch on the project's own HIP switch (RAJA's `if (ENABLE_HIP)`, Kokkos' `if(Kokkos_ENABLE_HIP)`, Ginkgo's
    # `if(GINKGO_BUILD_HIP)`): a HIP build path, whatever helper (BLT, a HIP CMake module) then sets the compiler
    _p("build", 3, r"^\s*(?:else)?if\s*\(\s*\(?\s*\w*(?:ENABLE|USE|WITH|BUILD)_(?:HIP|ROCM)\s*\)"),
)
_PY_BUILD = (_p("build", 3, r"torch\.version\.hip|IS_HIP_EXTENSION|ROCM_HOME|is_rocm_pytorch|--offload-arch|"
                            r"\bhipify\b|\bBUILD_(?:HIP|ROCM)\b|\bUSE_ROCM\b"),)
_PY_RUNTIME = (_p("runtime", 1, r"torch\.version\.hip\b|\bis_hip\s*\(\)|IS_HIP_EXTENSION|\bis_rocm\w*\b|"
                                r"gcnArchName|\bHIP_VISIBLE_DEVICES\b"),)
_CI = (_p("ci", 3, r"runs-on:.*\b(?:amd|rocm|mi\d{3}\w*|gfx\d+\w*)\b|\brocm/[\w.-]+:|container:.*rocm|"
                   r"image:.*rocm|--device[ =]/dev/kfd"),)
_DOCKER = (_p("packaging", 2, r"^\s*FROM\s+\S*rocm|^\s*ARG\s+\w+=\S*rocm"), _p("packaging", 1, r"/opt/rocm|\bROCM_VERSION\b|hipcc"))
_MANIFEST = (_p("packaging", 2, r"whl/rocm|\+rocm\d|\brocm\d[\d.]*\b.*index|"
                                r"^\s*\[?\s*['\"]?(?:rocm|hip|amd)['\"]?\s*\]?\s*[=:]"),)
_SHELL = (_p("packaging", 1, r"/opt/rocm|\bhipcc\b|--offload-arch|\brocm-smi\b|whl/rocm|"
                             r"\bROCM_(?:PATH|HOME|VERSION)\b"),)
_DOCS = (_p("docs", 1, r"\b(?:rocm|amd gpus?|hip)\b.*\b(?:install|build|support|pip|docker|wheel)|"
                       r"\b(?:install|build|support|pip|docker|wheel)\w*\b.*\b(?:rocm|amd gpus?)\b"),)
# configure's own HIP switch (hypre's AC_ARG_WITH(hip, ...), UCX's --with-rocm) beside the Makefile patterns
_AUTOCONF = (_p("build", 3, r"AC_ARG_(?:WITH|ENABLE)\s*\(\s*\[?(?:hip|rocm)\b"), *_CMAKE[2:3], *_SHELL)
_BY_KIND: dict[FileKind, tuple[Pattern, ...]] = {
    FileKind.CMAKE: _CMAKE, FileKind.CI_WORKFLOW: _CI, FileKind.YAML: _CI,
    FileKind.COMPOSE: (_p("packaging", 2, r"image:.*rocm|/dev/kfd"),),
    FileKind.DOCKERFILE: _DOCKER, FileKind.REQUIREMENTS: _MANIFEST, FileKind.PYPROJECT: _MANIFEST,
    FileKind.SETUP_CFG: _MANIFEST, FileKind.PIPFILE: _MANIFEST, FileKind.CONDA: _MANIFEST, FileKind.CARGO: _MANIFEST,
    FileKind.SHELL: _SHELL, FileKind.JULIA_PROJECT: (_p("packaging", 2, r"^\s*AMDGPU\s*=\s*\"[0-9a-f-]{36}\""),),
    FileKind.MAKEFILE: (*_CMAKE[2:3], *_SHELL), FileKind.AUTOCONF: _AUTOCONF, FileKind.MARKDOWN: _DOCS,
    FileKind.SETUP_PY: _PY_BUILD,
}
_PER_FILE = 3  # evidence lines kept per file and kind: enough to cite, bounded on huge files


def evidence(kind: FileKind, relpath: str, text: str) -> tuple[Evidence, ...]:
    """The ROCm evidence in one file's text (empty unless it mentions HIP/ROCm/AMD at all)."""
    low = text.lower()
    extension = (_extension(kind, relpath, text) + _library_build(kind, relpath, text, low) + _named(kind, relpath)
                 + _library_links(kind, relpath, text, low) + _make_library_links(kind, relpath, text)
                 + _torch_build(kind, relpath, text))
    if not _mentions(low):
        return extension
    patterns = _BY_KIND.get(kind, ())
    if kind == FileKind.PYTHON:
        patterns = _PY_BUILD if _BUILDER_PATH.search(relpath) else _PY_RUNTIME
    found = list(_matches(patterns, relpath, text, low, comment="#" if kind != FileKind.MARKDOWN else ""))
    if kind == FileKind.CMAKE:
        found.extend(cmake_sources(relpath, text))
    return extension + tuple(found)


def source_evidence(
    relpath: str, text: str, includes: Iterable[tuple[str, int]], found: Iterable[preproc.Directive]
) -> tuple[Evidence, ...]:
    """The evidence in a C/C++/CUDA file, from what the lexer found in its code: a HIP source file, the first few
    hip/ headers it includes (weight 2) and conditionals that test a HIP/ROCm macro."""
    evidence = [Evidence("hip-source", relpath, 1, "HIP source file", 2)] if relpath.endswith(".hip") else []
    for path, offset in includes:
        if path.startswith("hip/") and len(evidence) < _PER_FILE:
            start = text.rfind("\n", 0, offset) + 1
            line = text[start : text.find("\n", offset) % (len(text) + 1)].strip()
            evidence.append(Evidence("hip-source", relpath, text.count("\n", 0, start) + 1, line[:120], 2))
    return tuple(evidence) + guard_evidence(relpath, found) + _paired_atomic(relpath, text)


def _paired_atomic(relpath: str, text: str) -> tuple[Evidence, ...]:
    """The file defines atomicAdd for a __half2 / __nv_bfloat162 destination itself (exllamav2's compat.cuh): its
    calls compile under hipcc, which has no such overload."""
    found = _PAIRED_ATOMIC_DEFINED.search(text) if "atomicAdd" in text else None
    if found is None:
        return ()
    line = text.count("\n", 0, found.start()) + 1
    return (Evidence(PAIRED_ATOMIC, relpath, line, found.group(0)[:120], 0),)


def _mentions(low: str) -> bool:
    """Whether _HINT occurs in the lower-case text, found by plain searches first: _HINT's leading lookbehind
    makes the regex engine try every position of every file."""
    for word in ("hip", "rocm", "amd"):
        start = low.find(word)
        while start != -1:
            if start == 0 or not "a" <= low[start - 1] <= "z":
                return True
            start = low.find(word, start + 1)
    return any(word in low for word in _WORDS[3:]) and _HINT.search(low) is not None


def _extension(kind: FileKind, relpath: str, text: str) -> tuple[Evidence, ...]:
    """A torch extension build (CUDAExtension): PyTorch hipifies its sources when built against ROCm (weight 0)."""
    if "CUDAExtension" not in text or not (kind == FileKind.SETUP_PY or _BUILDER_PATH.search(relpath)):
        return ()
    line = text.count("\n", 0, text.index("CUDAExtension")) + 1
    return (Evidence("torch-extension", relpath, line, "CUDAExtension (hipified at build time on ROCm)", 0),)


_FIND_TORCH = lazy_regex(r"^[ \t]*find_package[ \t]*\([ \t]*Torch\b", re.MULTILINE | re.IGNORECASE)
# an import or a dotted use of torch.utils.cpp_extension in code (a line that starts with `#` is a comment)
_CPP_EXTENSION = lazy_regex(r"^[ \t]*(?:from[ \t]+torch\.utils(?:\.cpp_extension)?[ \t]+import\b|import[ \t]+torch\.utils\."
                            r"cpp_extension\b|[^#\n]*\btorch\.utils\.cpp_extension\.\w)", re.MULTILINE)


def _torch_build(kind: FileKind, relpath: str, text: str) -> tuple[Evidence, ...]:
    """A CMake file that finds Torch (TORCH_CMAKE), or Python that uses torch.utils.cpp_extension (TORCH_HIPIFY):
    weight 0, the first of each file."""
    if kind == FileKind.CMAKE and "orch" in text:
        found = _FIND_TORCH.search(text)
        label = TORCH_CMAKE
    elif kind in (FileKind.PYTHON, FileKind.SETUP_PY) and "cpp_extension" in text:
        found = _CPP_EXTENSION.search(text)
        while found is not None and "cpp_extension" not in _line_at(text, found.start()):
            found = _CPP_EXTENSION.search(text, found.end())
        label = TORCH_HIPIFY
    else:
        return ()
    if found is None:
        return ()
    line = text.count("\n", 0, found.start()) + 1
    return (Evidence(label, relpath, line, _line_at(text, found.start()).strip()[:120], 0),)


def _line_at(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start:] if end == -1 else text[start:end]


_ROCM_NAME = lazy_regex(r"(?<![a-z])(?:rocm|hip|amd)(?![a-z])")


def _named(kind: FileKind, relpath: str) -> tuple[Evidence, ...]:
    """A requirements file named for ROCm (requirements_rocm.txt, requirements/runtime_rocm.txt, requirements/hip.txt):
    the packages a ROCm install takes, whatever its text says (packaging, weight 2)."""
    name = relpath.rpartition("/")[2].lower()
    if kind != FileKind.REQUIREMENTS or not _ROCM_NAME.search(name.rpartition(".")[0]):
        return ()
    return (Evidence("packaging", relpath, 1, f"{name}: the requirements of a ROCm install", 2),)


def _library_build(kind: FileKind, relpath: str, text: str, low: str) -> tuple[Evidence, ...]:
    """A CMakeLists.txt with add_library and no add_executable (weight 0)."""
    if kind != FileKind.CMAKE or "add_library" not in low or _ADD_EXECUTABLE.search(text):
        return ()
    found = _ADD_LIBRARY.search(text)
    if found is None:
        return ()
    line = text.count("\n", 0, found.start()) + 1
    return (Evidence(LIBRARY_BUILD, relpath, line, "libraries only, no program", 0),)


_LINK_KEYWORDS = frozenset({"public", "private", "interface", "debug", "optimized", "general",
                            "link_public", "link_private", "link_interface_libraries"})
_TARGET_NAME = lazy_regex(r"[A-Za-z_][\w.+-]*")
_PER_FILE_TARGETS = 64  # library names kept per CMake file: a bound on a generated file, more than a project needs


def _library_links(kind: FileKind, relpath: str, text: str, low: str) -> tuple[Evidence, ...]:
    """The library targets a CMake file defines (`add_library(NAME`: LIBRARY_TARGET) and the plain target names
    it links (`target_link_libraries(T [PUBLIC] NAME...)`: LIBRARY_LINK), each weight 0. Variables, flags,
    paths and imported targets (`CUDA::cudart`) are no target of the project's own."""
    if kind != FileKind.CMAKE or "add_library" not in low and "target_link_libraries" not in low:
        return ()
    from migrate.parse.cmake import commands  # here: a scan of sources alone never reads CMake
    from migrate.parse.manifest import Positions

    try:
        found = commands(text)
    except ParseError:
        return ()
    lines = Positions(text)
    result: list[Evidence] = []
    for name, offset, args in found:
        words = [a for a, _ in args]
        if name in ("add_library", "cuda_add_library") and words and _TARGET_NAME.fullmatch(words[0]):
            result.append(Evidence(LIBRARY_TARGET, relpath, lines.at(offset)[0], words[0], 0))
        elif name == "target_link_libraries":
            result.extend(Evidence(LIBRARY_LINK, relpath, lines.at(offset)[0], word, 0) for word in words[1:]
                          if word.lower() not in _LINK_KEYWORDS and _TARGET_NAME.fullmatch(word))
        if len(result) >= _PER_FILE_TARGETS:
            break
    return tuple(result[:_PER_FILE_TARGETS])


# A hand-written Makefile's library: the archive it builds (`ar rcs $(LIB) $(OBJ)` with LIB = lib$(NAME).a) and the
# project libraries another Makefile links (-lNAME, or the archive named as a prerequisite).
_MAKE_ASSIGN = lazy_regex(r"^[ \t]*([A-Za-z_][\w.]*)[ \t]*[:?]?=[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_MAKE_REF = lazy_regex(r"\$[({]([A-Za-z_][\w.]*)[)}]")
_MAKE_ARCHIVER = lazy_regex(r"^\t.*?(?:(?<![\w-])ar[ \t]+-?[crsuvq]+\b|\$[({]AR[)}])", re.MULTILINE)
_MAKE_ARCHIVE = lazy_regex(r"(?<![\w-])lib([A-Za-z_][\w+-]*)\.a\b")
_MAKE_LINK = lazy_regex(r"(?<![\w-])-l[ \t]?([A-Za-z_][\w+-]*)")


def _make_library_links(kind: FileKind, relpath: str, text: str) -> tuple[Evidence, ...]:
    """The archive a Makefile builds with ar (LIBRARY_TARGET) and the libraries it links by -l or names as a
    prerequisite (LIBRARY_LINK), its own simple variables expanded; weight 0."""
    if kind != FileKind.MAKEFILE or ("-l" not in text and ".a" not in text):
        return ()
    values = {m.group(1): m.group(2) for m in _MAKE_ASSIGN.finditer(text)}
    expanded = text
    for _ in range(4):  # LIB = $(LIB_DIR)/lib$(NAME).a: a few rounds reach the names
        if "$" not in expanded:
            break
        expanded = _MAKE_REF.sub(lambda m: values.get(m.group(1), m.group(0)), expanded)
    archives = set(_MAKE_ARCHIVE.findall(expanded)) if _MAKE_ARCHIVER.search(text) else set()
    linked = (set(_MAKE_LINK.findall(expanded)) | set(_MAKE_ARCHIVE.findall(expanded))) - archives
    found = [Evidence(LIBRARY_TARGET, relpath, 1, name, 0) for name in sorted(archives)]
    found += [Evidence(LIBRARY_LINK, relpath, 1, name, 0) for name in sorted(linked)]
    return tuple(found[:_PER_FILE_TARGETS])


def project_parts(found: Iterable[Evidence]) -> set[str]:
    """The build units (directories) that link a library another unit defines, and the units that define it:
    parts of one project, not a collection's independent programs."""
    defined: dict[str, set[str]] = {}
    for item in found:
        if item.kind == LIBRARY_TARGET:
            defined.setdefault(item.text, set()).add(item.path.rpartition("/")[0])
    parts: set[str] = set()
    for item in found:
        unit = item.path.rpartition("/")[0]
        others = defined.get(item.text, set()) - {unit} if item.kind == LIBRARY_LINK else set()
        if others:
            parts.add(unit)
            parts.update(others)
    return parts


def _matches(
    patterns: tuple[Pattern, ...], relpath: str, text: str, low: str, *, comment: str
) -> Iterator[Evidence]:
    kept: Counter[str] = Counter()
    lines = text.splitlines()
    for index in _hinted_lines(text, low, lines):
        line = lines[index]
        number = index + 1
        stripped = line.strip()
        commented = comment and stripped.startswith(comment) and not stripped.startswith("#include")
        if commented or not _HINT.search(line.lower()):
            continue
        for kind, weight, regex in patterns:
            if kept[kind] < _PER_FILE and regex.search(line):
                if kind == "docs" and _denied(lines, index):
                    break
                kept[kind] += 1
                yield Evidence(kind, relpath, number, stripped[:120], weight)
                break
        if all(kept[kind] >= _PER_FILE for kind, _, _ in patterns):
            return


# a docs line that says ROCm is not there: denied, planned, missing (words on the line itself)
_DENIAL = lazy_regex(r"(?i)\b(?:not|no|isn't|aren't|doesn't|don't|cannot|can't|unsupported|planned|todo|to-do|"
                     r"coming soon|missing|lacks?|in the future|future releases?|work in progress|wip)\b")
# a Markdown heading over a list of what is missing or planned ("## What's missing?", "## Roadmap", "## To-do")
_DENIED_SECTION = lazy_regex(r"(?i)\b(?:missing|to-?do|roadmap|planned|limitations?|known issues|not supported|"
                             r"unsupported|coming soon|wish ?list|future work)\b")
_HEADING_LOOKBACK = 60  # lines searched above a docs line for its heading


def _denied(lines: list[str], index: int) -> bool:
    """The docs line at INDEX says ROCm is absent rather than how to use it: a negation or a plan on the line, or
    the Markdown heading it stands under lists what is missing or planned (exllamav3's "What's missing?")."""
    if _DENIAL.search(lines[index]):
        return True
    for above in range(index - 1, max(-1, index - 1 - _HEADING_LOOKBACK), -1):
        if lines[above].lstrip().startswith("#"):
            return _DENIED_SECTION.search(lines[above]) is not None
    return False


def _hinted_lines(text: str, low: str, lines: list[str]) -> Iterator[int]:
    """Indexes, in order, of the LINES (TEXT split; LOW is TEXT lower-cased) that may mention HIP/ROCm/AMD: found
    by one search over the whole text rather than one per line (a Composable Kernel header has thousands of
    lines and a few hints)."""
    if len(low) != len(text):  # lower-casing changed a length: no offsets to map back, look at every line
        yield from range(len(lines))
        return
    ends = list(itertools.accumulate(len(line) for line in text.splitlines(keepends=True)))
    last = -1
    for match in _HINT.finditer(low):
        index = bisect.bisect_right(ends, match.start())
        if last < index < len(lines):
            yield index
            last = index


def guard_evidence(relpath: str, found: Iterable[preproc.Directive]) -> tuple[Evidence, ...]:
    """Conditionals of a C/C++/CUDA file that test a HIP/ROCm macro (the first few, each weight 1)."""
    guards = []
    for item in found:
        if item.keyword in ("if", "ifdef", "ifndef", "elif") and any(
            (m := preproc.builtin(w)) is not None and m.hip for w in re.findall(r"[A-Za-z_]\w*", item.argument)
        ):
            guards.append(Evidence("guard", relpath, item.line, f"#{item.keyword} {item.argument}"[:120], 1))
    return tuple(guards)


def is_build_file(relpath: str) -> bool:
    """setup.py, CMakeLists.txt, pyproject.toml or a Makefile: what makes a directory a build unit."""
    return relpath.rpartition("/")[2] in _BUILD_NAMES


def assess(
    found: Iterable[Evidence], params: Mapping[str, Any], *, guarded: int = 0, build_files: Iterable[str] = (),
    extension_dirs: Iterable[str] = (), library_dirs: Iterable[str] = (),
) -> RocmStatus:
    """The level from the evidence and PARAMS (risk.yaml `rocm_status`): weight per kind, counted at most
    `per_kind` times, so a thousand guards do not outweigh a HIP build."""
    items = sorted(set(found))
    counts = Counter(e.kind for e in items)
    if guarded:
        counts["guarded-sites"] = guarded
    weights: Mapping[str, int] = params["weights"]
    cap = int(params["per_kind"])
    score = sum(weights.get(kind, 0) * min(n, cap) for kind, n in counts.items())
    kinds = set(counts)
    level = "none"
    if score >= int(params["partial"]):
        level = "partial"
    # A HIP build path, CI on AMD hardware, or ROCm packaging (a `rocm`/`amd` extra, ROCm wheels or images) for
    # code that needs no build of its own (Triton, PyTorch), plus code that knows HIP.
    delivered = kinds & {"build", "ci", "packaging"}
    if score >= int(params["supported"]) and delivered and kinds & {"guard", "hip-source", "runtime"}:
        level = "supported"
    build_dirs = {e.path.rpartition("/")[0] for e in items if e.kind == "build"}
    hipify = sorted(build_dirs | set(extension_dirs)) if level != "none" else sorted(set(extension_dirs))
    return RocmStatus(
        level=level, score=score, evidence=tuple(items), counts=tuple(sorted(counts.items())),
        build_files=tuple(sorted(build_files)), hipify_dirs=tuple(hipify), library_dirs=tuple(sorted(set(library_dirs))),
    )


def cited(status: RocmStatus, kind: str, limit: int = 3) -> list[Evidence]:
    """The first few pieces of evidence of one kind, strongest first."""
    return sorted((e for e in status.evidence if e.kind == kind), key=lambda e: (-e.weight, e.path, e.line))[:limit]


def never_compiled(
    findings: Iterable[Finding], settled: preproc.Settled, other_backends: re.Pattern[str] | None = None,
    other_python: re.Pattern[str] | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """(findings a HIP build compiles, findings it never does): lines under #if branches that HIP facts and the
    repository's own #defines (across headers, SETTLED once for the tree) rule out, C/C++ of non-CUDA backends
    (RISC-V, Metal, SYCL...) and Python of other accelerator vendors' backend folders (OTHER_PYTHON)."""
    items = list(findings)
    conditionals = settled.files
    dead: dict[str, tuple[tuple[int, int], ...] | None] = {}  # per path (None: another backend's, all of it)
    kept, moved = [], []
    for finding in items:
        if finding.path not in dead:
            other = (other_backends is not None and _c_path(finding.path) and other_backends.search(finding.path)) or (
                other_python is not None and finding.path.endswith(".py") and other_python.search(finding.path))
            known = finding.path in conditionals
            dead[finding.path] = None if other else settled.dead_ranges(finding.path) if known else ()
        ranges = dead[finding.path]
        if ranges is None or any(start <= finding.line <= end for start, end in ranges):
            moved.append(finding.guarded())
        else:
            kept.append(finding)
    return kept, moved


def _c_path(path: str) -> bool:
    return path.rpartition(".")[2].lower() in {"c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "s", "inl", "m", "mm"}


# A CUDA variant's word in a path part: cuda/nvidia/cuNNN not inside a word (docker-cuda, ATOMIC-Cuda.cpp,
# Kokkos_Cuda_Team.hpp), or a capitalised word of a CamelCase name (CudaDataUtils.hpp, ApiCudaRt.hpp, CUDAHooks.cpp)
# cublas/cublasNN too: the build-type name llama.cpp-derived projects give their CUDA variant, beside hipblas
# (a serving app's backend/requirements-cublas12.txt beside requirements-hipblas.txt)
_VARIANT = lazy_regex(r"(?i:(?<![a-z])(?:cuda|nvidia|cu\d{2,3}|cublas\d*)(?![a-z]))|(?<![A-Z])(?:Cuda|Nvidia)(?=[A-Z])|"
                      r"(?<![A-Z])CUDA(?=[A-Z][a-z])")


def known_paths(paths: Iterable[str]) -> frozenset[str]:
    """Every path of PATHS and every directory above one that a ROCm sibling may be, lower-cased (ATOMIC-Hip.cpp is
    the twin of ATOMIC-Cuda.cpp, Kokkos_HIP_Team.hpp of Kokkos_Cuda_Team.hpp): what variants looks for a sibling in.
    A sibling's last part holds one of _SIBLING_WORDS (variants puts it there), so no other path is ever asked for:
    a large tree keeps a few, not one per file. A ROCm directory that holds C/C++/HIP sources of its own is known
    with _HOLDS_SOURCES after it too (src/hip/ with HIPStream.cpp: a backend, not a folder of build files)."""
    known: set[str] = set()
    for path in paths:
        low = path.lower()
        if not any(word in low for word in _SIBLING_WORDS) and "cl" not in low:
            continue
        parts = low.split("/")
        spelled = path.split("/")
        source = _BACKEND_SOURCE.search(low) is not None
        for i, part in enumerate(parts):
            if _sibling_part(part) or _OPENCL.search(spelled[i]):
                known.add("/".join(parts[: i + 1]))
                if source and i < len(parts) - 1:
                    known.add("/".join(parts[: i + 1]) + _HOLDS_SOURCES)
    return frozenset(known)


# After a known directory: it holds C/C++/HIP sources of its own (no path ends so: a file name holds no NUL).
_HOLDS_SOURCES = "/\0sources"
_BACKEND_SOURCE = lazy_regex(r"\.(?:hip|cpp|cc|cxx|c|h|hpp|hh|hxx|inl|cu|cuh)$")


_SIBLING_WORDS = ("rocm", "hip", "amd")
# An OpenCL backend's word in a path part: opencl, ocl or cl as a word of its own (libethash-cl, backend/opencl,
# src/ocl), or the capitalised head of a CamelCase name (CLKeySearchDevice, OpenCLMiner); never inside a word (include)
_OPENCL = lazy_regex(r"(?i:(?<![a-z])(?:opencl|ocl|cl)(?![a-z]))|(?<![A-Za-z])(?:CL|OpenCL|OCL)(?=[A-Z][a-z])")
_OPENCL_WORDS = ("opencl", "ocl", "cl")


def _sibling_part(part: str) -> bool:
    return any(word in part for word in _SIBLING_WORDS)


def variants(findings: Iterable[Finding], known: frozenset[str]) -> list[Finding]:
    """FINDINGS, those in a CUDA variant of a file or directory that has a ROCm sibling among KNOWN (known_paths:
    docker/docker-cuda/ beside docker/docker-rocm/, requirements/cuda.txt beside requirements/rocm.txt) marked
    covered: the ROCm variant exists. Those in a C/C++/CUDA source whose own name has a HIP twin
    (src/ATOMIC-Cuda.cpp beside src/ATOMIC-Hip.cpp) are guarded: the ROCm build compiles the twin instead, never
    this file. A directory twin may build the CUDA sources themselves (a hip/ folder of build files only), so it
    covers, and the code still needs its validation run."""
    kept = []
    sibling: dict[str, str | None] = {}  # path -> the status its ROCm sibling gives (many findings share a file)
    for finding in findings:
        if finding.status == "remaining":
            if finding.path not in sibling:
                sibling[finding.path] = _sibling_status(finding.path, known)
            status = sibling[finding.path]
            if status == "guarded":
                finding = finding.guarded()
            elif status is not None:
                finding = finding.with_status(status)
        kept.append(finding)
    return kept


def _sibling_status(path: str, known: frozenset[str]) -> str | None:
    """guarded (a source file with a HIP twin, or in a CUDA backend folder whose ROCm sibling holds sources of its own:
    src/cuda/CUDAStream.cu beside src/hip/HIPStream.cpp), covered (another ROCm sibling: a hip/ folder of build files,
    which may compile the CUDA sources themselves), optional-gap (in a CUDA backend folder whose OpenCL sibling holds
    sources of its own: libethash-cuda/ beside libethash-cl/, which ROCm's OpenCL runtime runs on AMD GPUs, so a HIP
    port of the CUDA backend is an add-on) or None (none)."""
    found = _rocm_sibling(path, known)
    if found is None:
        return "optional-gap" if _opencl_sibling(path, known) else None
    index, sibling = found
    source = _c_path(path) or path.endswith((".cu", ".cuh"))
    if index == path.count("/"):
        return "guarded" if source else "covered"
    return "guarded" if source and sibling + _HOLDS_SOURCES in known else "covered"


def _rocm_sibling(path: str, known: frozenset[str]) -> tuple[int, str] | None:
    """The index of the first part of PATH whose ROCm variant is among KNOWN, with that variant; None if none is."""
    parts = path.split("/")
    for index, part in enumerate(parts):
        if _VARIANT.search(part):
            for word in _VARIANT_WORDS:
                sibling = "/".join([*parts[:index], _VARIANT.sub(word, part)]).lower()
                if sibling in known:
                    return index, sibling
    return _default_sibling(parts, known)


# A CUDA folder named by the variant word alone (cuda/, CUDA/): beside opencl/ it is one of a suite's parallel
# implementations (rodinia's cuda/bfs beside opencl/bfs, each its own program to port), unless a backends folder holds it
_BARE_VARIANT = lazy_regex(r"(?i)^(?:cuda|nvidia|cu\d{2,3})$")
_BACKENDS = frozenset({"backend", "backends"})


def _opencl_sibling(path: str, known: frozenset[str]) -> bool:
    """Whether a directory of PATH is a CUDA backend whose OpenCL variant among KNOWN holds C/C++ sources of its own
    (a backend, not a folder of kernels or build files): a named one (libethash-cuda/, CudaSearchDevice/), or a bare
    cuda/ in a backends folder (src/backend/cuda/ beside src/backend/opencl/)."""
    parts = path.split("/")
    for index, part in enumerate(parts[:-1]):
        if _BARE_VARIANT.match(part) and (index == 0 or parts[index - 1].lower() not in _BACKENDS):
            continue
        if _VARIANT.search(part):
            for word in _OPENCL_WORDS:
                sibling = "/".join([*parts[:index], _VARIANT.sub(word, part)]).lower()
                if sibling + _HOLDS_SOURCES in known:
                    return True
    return False


_VARIANT_WORDS = (*_SIBLING_WORDS, "hipblas")
# A file its ROCm variant names by a suffix (requirements.txt beside requirements_amd.txt or requirements-rocm.txt,
# Dockerfile beside Dockerfile.rocm, docker-compose.yml beside docker-compose.rocm.yml): the unmarked file is the
# CUDA default of a choice the project already offers. Manifests only: a source's HIP twin is the build's business.
_DEFAULT_VARIANT = lazy_regex(r"(?i)^(?:requirements[^/]*\.(?:txt|in)|(?:[^/]*[._-])?dockerfile(?:\.[^/]*)?|"
                              r"(?:docker-)?compose[^/]*\.ya?ml|environment[^/]*\.ya?ml|[^/]*\.sh)$")


def _default_sibling(parts: list[str], known: frozenset[str]) -> tuple[int, str] | None:
    """The ROCm variant of the last part of PARTS spelled with a suffix (stem + [._-] + rocm/amd/hip + extension)
    among KNOWN, when that part is a manifest that names no variant of its own; None otherwise."""
    name = parts[-1]
    if not _DEFAULT_VARIANT.match(name):
        return None
    stem, dot, ext = name.partition(".")
    base = "/".join(parts[:-1] + [""]).lower()
    for word in _SIBLING_WORDS:
        for sep in "_-.":
            sibling = f"{base}{stem}{sep}{word}{dot}{ext}".lower()
            if sibling in known:
                return len(parts) - 1, sibling
    return None


_SOURCE = lazy_regex(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|cuh|inl)$")
_CUDA_TEST = lazy_regex(r"^(?:CUDA|cuda|CUDA_FOUND|CUDAToolkit_FOUND|USE_CUDA|WITH_CUDA|BUILD_CUDA|ENABLE_CUDA)$")
# HIP, ROCm or AMD as a name of its own or part of one (USE_HIP, ${ROCM_PATH}, AMDGPU_TARGETS, "hip"), never inside
# a word (relationship, CHIP) nor the x86-64 CPU name of a processor test (`CMAKE_SYSTEM_PROCESSOR MATCHES "AMD64"`)
_HIP_TEST = lazy_regex(r"(?<![A-Za-z])(?:HIP|ROCM|ROCm|AMD|[Hh]ip|[Rr]ocm|[Aa]md)(?![a-z0-9])|hipcc|hipify|amdgpu")


def cmake_sources(relpath: str, text: str) -> tuple[Evidence, ...]:
    """Source files a CMake file lists only under a CUDA-only branch (`if(GPU_LANG STREQUAL "CUDA")`), as
    `cuda-only-source` (weight 0), and those it lists elsewhere as `build-source`: a HIP build never compiles
    the first (unless also listed elsewhere). Only for CMake files that have both kinds of branch."""
    # a file without CUDA may still hand another file's definitions list to the compiler
    hands = "${" in text and "definitions" in text.lower()
    if "CUDA" not in text and not hands or not _HIP_TEST.search(text):
        return ()
    from migrate.parse.cmake import commands  # here: a scan of sources alone never reads CMake
    from migrate.parse.manifest import Positions

    try:
        found = commands(text)
    except ParseError:
        return ()
    base = relpath.rpartition("/")[0]
    lines = Positions(text)
    stack: list[bool] = []  # per open if(): is the current branch CUDA-only
    hip: list[bool] = []  # ... and is it the HIP branch (where `list(REMOVE_ITEM ...)` takes sources out)
    result = []
    # outside CUDA-only branches: the variables a define is built from, those the file sets, every name it writes
    used, assigned, written = set[str](), set[str](), set[str]()
    lists: dict[str, list[tuple[str, int, bool]]] = {}  # list variable -> (name, line, in a CUDA-only branch)
    reads: dict[str, set[str]] = {}  # list variable -> the variables it takes in outside CUDA-only branches
    consumed: dict[str, int] = {}  # list variable handed to the compile definitions -> the line
    hip_file = _HIP_FILE.search(relpath.rpartition("/")[2]) is not None  # cmake/rocm.cmake: included for HIP only
    # where a .hip source's path starts: an included .cmake file's paths are its includer's (the root's, mostly)
    twin_base = "" if relpath.endswith(".cmake") else base
    hipified: dict[str, str] = {}  # hipify(CUDA_SOURCE_DIR c HIP_SOURCE_DIR h): h -> c (relative to the root)
    for name, offset, args in found:
        words = [a for a, _ in args]
        if name == "if":
            stack.append(_cuda_only(words) or bool(stack and stack[-1]))
            hip.append(_hip_only(words) or bool(hip and hip[-1]))
        elif name in ("elseif", "else") and stack:
            stack[-1] = (_cuda_only(words) if name == "elseif" else False) or (len(stack) > 1 and stack[-2])
            hip[-1] = (_hip_only(words) if name == "elseif" else False) or (len(hip) > 1 and hip[-2])
        elif name == "endif" and stack:
            stack.pop()
            hip.pop()
        else:
            removed = name == "list" and words[:1] == ["REMOVE_ITEM"] and bool(hip and hip[-1])
            kind = "hip-removed-source" if removed else "cuda-only-source" if stack and stack[-1] else "build-source"
            for word in words:
                path = _source_path(base, word)
                if path is not None:
                    result.append(Evidence(kind, path, lines.at(offset)[0], word[:120], 0))
                elif (hip_file or hip and hip[-1]) and word.endswith(".hip") and (
                        twin := _twin_source(twin_base, word, hipified)):
                    # a .hip source the HIP branch builds (often the hipified copy of a .cu that configure writes)
                    result.append(Evidence("hip-twin-source", twin, lines.at(offset)[0], word[:120], 0))
            if name == "hipify":
                _hipify_dirs(twin_base, words, hipified)
            defined = "cuda-only-define" if stack and stack[-1] else "build-define"
            result.extend(Evidence(defined, relpath, lines.at(offset)[0], n, 0) for n in _defined_names(name, words))
            cuda = bool(stack and stack[-1])
            _list_items(name, words, lines.at(offset)[0], cuda, lists, reads)
            for variable in _VARIABLE.findall(" ".join(words)) if name in _DEFINERS else ():
                consumed.setdefault(variable, lines.at(offset)[0])
            if not (stack and stack[-1]):  # what else the file may define: any name it writes outside CUDA branches
                used.update(_VARIABLE.findall(" ".join(words[name.startswith("target_"):])) if name in _DEFINERS else ())
                written.update(t for w in words for t in _MACRO_WORD.findall(w))
                if name in ("set", "list") and words:
                    assigned.add(words[1] if name == "list" and len(words) > 1 else words[0])
    hip_branch = any(name in ("if", "elseif") and any(_HIP_TEST.search(a) for a, _ in args) for name, _, args in found)
    # a define built from a variable set elsewhere (`add_definitions(${ROCM_DEFS})`) may be any name: no CUDA-only
    # define then; one this file sets outside its CUDA branches has its names among those written
    # a list handed to the compile definitions here that takes in a variable the file does not fill is a define
    # from that variable; a list holding CUDA-only names for another file to hand must take in none
    unknown = {v: {r for r in reads.get(v, ()) if not r.startswith(_PACKAGE_DEFINES)} - assigned for v in lists}
    used.update(r for v in lists if v in consumed for r in unknown[v])
    unread = bool(used - assigned)
    reaching = {v for v, items in lists.items()
                if v in consumed or any(cuda for _, _, cuda in items) and not unknown[v]}
    result.extend(_list_evidence(relpath, lists, reaching))
    result = [e for e in result if e.kind not in _CUDA_ONLY or not unread and _name(e) not in written]
    uses = [Evidence(LIST_USE, relpath, line, v, 0) for v, line in consumed.items()]
    never = hip_branch and any(e.kind in _NEVER_HIP for e in result)
    twins = tuple(e for e in result if e.kind == "hip-twin-source")
    return tuple(result) + tuple(uses) if never else twins + tuple(uses)


# a CMake file named for the HIP build alone (cmake/rocm.cmake, cmake/hip.cmake, HipBuild.cmake): included for it only
_HIP_FILE = lazy_regex(r"(?i)^(?:[\w-]*[_-])?(?:rocm|hip)(?:[_-][\w-]*)?\.cmake$")


def _hipify_dirs(base: str, words: list[str], hipified: dict[str, str]) -> None:
    """Record the folders of a `hipify(CUDA_SOURCE_DIR c HIP_SOURCE_DIR h)` call (hipify_torch's CMake function) in
    HIPIFIED: h, as the file writes it, -> c, relative to the root."""
    keys = {k: words[i + 1] for i, k in enumerate(words[:-1]) if k in ("CUDA_SOURCE_DIR", "HIP_SOURCE_DIR")}
    cuda, hip = keys.get("CUDA_SOURCE_DIR"), keys.get("HIP_SOURCE_DIR")
    root = cuda.replace("${CMAKE_SOURCE_DIR}/", "").replace("${PROJECT_SOURCE_DIR}/", "") if cuda else ""
    folder = _source_path("" if root != cuda else base, root + "/x.cu") if cuda else None
    if hip and folder:
        hipified[hip.rstrip("/")] = folder[:-5]


def _twin_source(base: str, word: str, hipified: dict[str, str]) -> str | None:
    """The path a .hip source WORD stands for, in the folder of the CUDA sources it was hipified from where a hipify()
    call names its folder (`${GEN}/hip/linear/x.hip` for hipify(CUDA_SOURCE_DIR src/cuda HIP_SOURCE_DIR ${GEN}/hip):
    src/cuda/linear/x.hip), else as written."""
    for hip, cuda in hipified.items():
        if word.startswith(hip + "/"):
            return f"{cuda}/{word[len(hip) + 1:]}" if cuda else word[len(hip) + 1:]
    path = _source_path(base, word[:-4] + ".cu")
    return path[:-3] + ".hip" if path else None


# a package manager's variable of its dependencies' defines (Conan's CONAN_DEFINES): never the project's own names
_PACKAGE_DEFINES = ("CONAN_",)
_LIST_KEYWORDS = frozenset({"PARENT_SCOPE", "CACHE", "FORCE", "INTERNAL", "STRING"})
_CUDA_ONLY = frozenset({"cuda-only-define", LIST_DEFINE})


def _list_items(
    name: str, words: list[str], line: int, cuda: bool,
    lists: dict[str, list[tuple[str, int, bool]]], reads: dict[str, set[str]],
) -> None:
    """Record the names `set(VAR ${VAR} NAME...)` or `list(APPEND VAR NAME...)` adds to VAR (in LISTS) and,
    outside CUDA-only branches (not CUDA), the other variables it takes in (in READS)."""
    if name == "set" and len(words) > 1 and words[1] == f"${{{words[0]}}}":
        variable, items = words[0], words[2:]
    elif name == "list" and len(words) > 1 and words[0] == "APPEND":
        variable, items = words[1], words[2:]
    else:
        return
    for item in items:
        if item in _LIST_KEYWORDS:
            break
        taken = _VARIABLE.findall(item)
        if taken and not cuda:
            reads.setdefault(variable, set()).update(t for t in taken if t != variable)
        macro = None if taken else _MACRO_WORD.fullmatch(item.split("=", 1)[0])
        if macro:
            lists.setdefault(variable, []).append((macro.group(), line, cuda))


def _list_evidence(
    relpath: str, lists: dict[str, list[tuple[str, int, bool]]], reaching: set[str]
) -> Iterator[Evidence]:
    """The names lists that may reach the compile definitions hold: "VAR NAME" for those a CUDA-only branch adds,
    build-define for the others."""
    for variable in sorted(reaching):
        for macro, line, cuda in lists[variable]:
            if cuda:
                yield Evidence(LIST_DEFINE, relpath, line, f"{variable} {macro}", 0)
            else:
                yield Evidence("build-define", relpath, line, macro, 0)


def _name(item: Evidence) -> str:
    """The macro a define's evidence names (a list define's text is "VAR NAME")."""
    return item.text.rpartition(" ")[2]


_NEVER_HIP = frozenset({"cuda-only-source", "hip-removed-source", "cuda-only-define", LIST_DEFINE})
_DASH_D = lazy_regex(r"(?:^|\s)-D([A-Za-z_]\w*)")
_DEFINITIONS = frozenset({"add_compile_definitions", "target_compile_definitions"})
_DEFINERS = _DEFINITIONS | {"add_definitions"}  # (compile options from a variable are flags: OpenMP_CXX_FLAGS)
_MACRO_WORD = lazy_regex(r"[A-Za-z_]\w*")
_VARIABLE = lazy_regex(r"\$\{(\w+)\}")


def _defined_names(name: str, words: list[str]) -> Iterator[str]:
    """The macros a CMake command defines for the compiler: -DNAME in any argument (add_definitions, a flags
    variable), and the bare NAME or NAME=value items of add_compile_definitions / target_compile_definitions."""
    items = words[1:] if name == "target_compile_definitions" else words  # its first word names the target
    for word in words:
        yield from _DASH_D.findall(word)
    for word in items if name in _DEFINITIONS else ():
        macro = _MACRO_WORD.fullmatch(word.split("=", 1)[0])
        if macro and word not in ("PUBLIC", "PRIVATE", "INTERFACE"):
            yield macro.group()


def cuda_only_defines(found: Iterable[Evidence]) -> frozenset[str]:
    """The macros CMake files define only in their CUDA-only branches (never beside a HIP build): a HIP build never
    has them, so what an #if on one holds is code it never compiles (CTranslate2's CT2_WITH_CUDNN under
    `if(WITH_CUDA)` with an `elseif(WITH_HIP)` beside it)."""
    only, elsewhere, listed, handed = set(), set(), set(), set()
    for item in found:
        if item.kind == "cuda-only-define":
            only.add(item.text)
        elif item.kind == "build-define":
            elsewhere.add(item.text)
        elif item.kind == LIST_DEFINE:
            listed.add(tuple(item.text.split(" ", 1)))
        elif item.kind == LIST_USE:
            handed.add(item.text)
    only.update(macro for variable, macro in listed if variable in handed)
    return frozenset(only - elsewhere)


# the project's own HIP switch as an if() argument (WITH_HIP, USE_ROCM, BUILD_HIP, GPU_LANG STREQUAL "HIP")
_HIP_SWITCH = lazy_regex(r'^"?(?:(?:[A-Z0-9]+_)*(?:WITH|USE|ENABLE|BUILD)_(?:HIP|ROCM)|HIP)"?$')


def _cuda_only(words: list[str]) -> bool:
    return any(_CUDA_TEST.match(w) for w in words) and not any(_HIP_TEST.search(w) for w in words)


def _hip_only(words: list[str]) -> bool:
    """An if() on the project's HIP switch alone: not negated, not beside a CUDA one."""
    return any(_HIP_SWITCH.match(w) for w in words) and "NOT" not in words and not any(_CUDA_TEST.match(w) for w in words)


def _source_path(base: str, word: str) -> str | None:
    word = word.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "").replace("${PROJECT_SOURCE_DIR}/", "")
    if "${" in word or not _SOURCE.search(word) or word.startswith("/"):
        return None
    return f"{base}/{word}" if base else word


def cuda_only(findings: Iterable[Finding], found: Iterable[Evidence]) -> tuple[list[Finding], list[Finding]]:
    """(findings a HIP build compiles, findings in sources the build lists only for CUDA or its HIP branch takes out
    of a source list (`list(REMOVE_ITEM CUDA_SOURCES ...)` under `elseif(WITH_HIP)`), or in directories holding only
    such sources). Those of a source the HIP build leaves out of a folder whose other sources it builds as hipified
    twins (gaps) stay among the first, optional-gap at their own severity: the ROCm build lacks that part."""
    items = list(found)
    excluded = never_built(items)
    if excluded is None:
        return list(findings), []
    gaps: list[Callable[[str], bool]] = []  # twin_gaps, worked out for the first source never built
    decided: dict[str, str] = {}  # path -> built, gap or never (many findings share a file)
    kept, moved = [], []
    for finding in findings:
        if finding.path not in decided:
            never = excluded(finding.path)
            if never and not gaps:
                gaps.append(twin_gaps(items))
            decided[finding.path] = "built" if not never else "gap" if gaps[0](finding.path) else "never"
        state = decided[finding.path]
        if state == "never":
            moved.append(finding.guarded())
        else:
            kept.append(finding.with_status("optional-gap") if state == "gap" and finding.status == "remaining"
                        else finding)
    return kept, moved


def never_built(found: Iterable[Evidence]) -> Callable[[str], bool] | None:
    """Whether a path is a source the CMake files list only for CUDA (or the HIP branch takes out), or sits in a
    directory holding only such sources (None: no CMake file says so of any source)."""
    items = list(found)
    twins = {e.path.lower() for e in items if e.kind == "hip-twin-source"}
    only = [e.path for e in items if e.kind == "cuda-only-source" and not (twins and twins & hip_twins(e.path))]
    removed = {e.path for e in items if e.kind == "hip-removed-source"}
    if not only and not removed:
        return None
    shared = [e.path for e in items if e.kind == "build-source" and e.path not in removed]
    shared_dirs = {p.rpartition("/")[0] for p in shared}
    folders = {p.rpartition("/")[0] for p in [*only, *removed]} - {d for d in shared_dirs} - {""}

    def excluded(path: str) -> bool:
        listed = any(fnmatch.fnmatchcase(path, p) for p in only)
        if listed and any(fnmatch.fnmatchcase(path, p) for p in shared):
            listed = False
        folder = path.rpartition("/")[0]
        taken = path in removed  # the HIP branch takes it out of the list it builds, wherever else it is listed
        return taken or listed or (
            folder in folders and not any(folder == d or d.startswith(folder + "/") for d in shared_dirs))

    return excluded


_CUDA_WORD = lazy_regex(r"(?i)cuda")


def hip_twins(path: str) -> set[str]:
    """The lower-cased paths a hipify step may write PATH's copy to: CUDA's name swapped for HIP's in the folders
    and the file name, or in the file name alone, or neither, the suffix .hip (src/cuda/ops-cuda.cu:
    src/hip/ops-hip.hip, src/cuda/ops-hip.hip, src/cuda/ops-cuda.hip)."""
    stem, dot, suffix = path.lower().rpartition(".")
    if not dot or suffix not in ("cu", "cuh"):
        return set()
    folder, _, name = stem.rpartition("/")
    named = _CUDA_WORD.sub("hip", name)
    moved = _CUDA_WORD.sub("hip", folder)
    return {f"{d}/{n}.hip" if d else f"{n}.hip" for d in (folder, moved) for n in (name, named)}


def twin_gaps(found: Iterable[Evidence]) -> Callable[[str], bool]:
    """Whether a path lies in a folder (or below) one of whose CUDA-only sources the HIP branch builds as a hipified
    twin (fastllm's src/devices/cuda/fastllm-cuda.cu, built as src/devices/hip/fastllm-hip.hip): a source there that
    the HIP build leaves out is a part the ROCm build lacks, not code it never needs."""
    items = list(found)
    twins = {e.path.lower() for e in items if e.kind == "hip-twin-source"}
    if not twins:
        return lambda path: False
    roots = {e.path.rpartition("/")[0] for e in items if e.kind == "cuda-only-source" and twins & hip_twins(e.path)}
    if not roots:
        return lambda path: False
    return lambda path: any(path.startswith(root + "/") for root in roots)
