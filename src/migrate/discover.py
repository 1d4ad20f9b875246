"""Find the files of a repository worth scanning and say what kind each is."""

from __future__ import annotations

import fnmatch
import os
import stat
from array import array
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path, PurePosixPath
from sys import intern
from typing import NamedTuple, overload

from migrate import gitcmd
from migrate.errors import InputError
from migrate.lazyre import lazy_regex
from migrate.model import FileKind, Skipped, SourceFile

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "node_modules", "__pycache__",
        ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
        "build", "dist", ".eggs", "_build", "CMakeFiles", ".cache", ".idea", ".vscode",
    }
)
VENDOR_DIRS = frozenset(
    {"third_party", "third-party", "thirdparty", "3rdparty", "external", "extern", "vendor", "dependencies", "deps"}
)
# Libraries research repositories bundle as a copy (often a submodule that an archive flattens). Their
# own header tree (`include/cutlass/`) is not a bundled copy: a directory under `include` is not counted.
BUNDLED_LIBRARIES = frozenset(
    {"cutlass", "cccl", "cub", "thrust", "libcudacxx", "composable_kernel", "eigen", "pybind11", "googletest", "glm"}
)

# Fortran, free form (.f90 and later) and fixed form (.f, .for); .cuf is CUDA Fortran (names are lower-cased)
FORTRAN_SUFFIXES = (".f90", ".f95", ".f03", ".f08", ".f", ".for", ".ftn", ".f77", ".fpp", ".cuf")
_EXTENSIONS = {
    ".py": FileKind.PYTHON, ".pyi": FileKind.PYTHON,
    ".cu": FileKind.CUDA, ".cuh": FileKind.CUDA,
    ".c": FileKind.C,
    ".cc": FileKind.CPP, ".cpp": FileKind.CPP, ".cxx": FileKind.CPP, ".c++": FileKind.CPP,
    ".h": FileKind.CPP, ".hh": FileKind.CPP, ".hpp": FileKind.CPP, ".hxx": FileKind.CPP,
    ".inl": FileKind.CPP, ".ipp": FileKind.CPP, ".tpp": FileKind.CPP, ".hip": FileKind.CPP,
    ".cmake": FileKind.CMAKE, ".mk": FileKind.MAKEFILE,
    ".sh": FileKind.SHELL, ".bash": FileKind.SHELL,
    ".md": FileKind.MARKDOWN, ".rst": FileKind.MARKDOWN,
    ".dockerfile": FileKind.DOCKERFILE,
    ".in": FileKind.REQUIREMENTS,
    ".yml": FileKind.YAML, ".yaml": FileKind.YAML,
    ".vcxproj": FileKind.MSBUILD, ".props": FileKind.MSBUILD, ".csproj": FileKind.MSBUILD, ".fsproj": FileKind.MSBUILD,
    ".vbproj": FileKind.MSBUILD,
    ".m": FileKind.MATLAB, ".bzl": FileKind.BAZEL, ".bazelrc": FileKind.BAZEL, ".go": FileKind.GO,
    ".jl": FileKind.JULIA, ".rs": FileKind.RUST, ".m4": FileKind.AUTOCONF,
    ".pyx": FileKind.CYTHON, ".pxd": FileKind.CYTHON, ".pxi": FileKind.CYTHON,
    ".sass": FileKind.SASS, ".cuasm": FileKind.SASS,
    ".so": FileKind.BINARY_LIBRARY, ".a": FileKind.BINARY_LIBRARY,
    **dict.fromkeys(FORTRAN_SUFFIXES, FileKind.FORTRAN),
}
_NAMES = {
    "setup.py": FileKind.SETUP_PY, "pyproject.toml": FileKind.PYPROJECT, "setup.cfg": FileKind.SETUP_CFG,
    "pipfile": FileKind.PIPFILE, "cmakelists.txt": FileKind.CMAKE, "makefile": FileKind.MAKEFILE,
    "gnumakefile": FileKind.MAKEFILE, "dockerfile": FileKind.DOCKERFILE, "containerfile": FileKind.DOCKERFILE,
    ".gitlab-ci.yml": FileKind.CI_WORKFLOW, ".gitmodules": FileKind.GITMODULES,
    "make.config": FileKind.MAKEFILE, "make.inc": FileKind.MAKEFILE, "make.defs": FileKind.MAKEFILE,
    "make.rules": FileKind.MAKEFILE,
    "makefile.am": FileKind.MAKEFILE,  # automake's input, written by hand (Makefile.in is generated from it)
    # configure's own template when no Makefile.am writes it (ASTRA's build/linux/Makefile.in); the parser reads
    # nothing in one that automake generated (its first line says so)
    "makefile.in": FileKind.MAKEFILE,
    # Autoconf's input (configure.in is its old name) and the macro files it includes (acinclude.m4, m4/*.m4, by
    # suffix); aclocal.m4 is aclocal's output, a copy of installed macros, and the configure script is generated
    "configure.ac": FileKind.AUTOCONF, "configure.in": FileKind.AUTOCONF, "aclocal.m4": None,
    "cargo.toml": FileKind.CARGO, "build.rs": FileKind.RUST_BUILD,  # other .rs files: their nvptx device code
    "build.bazel": FileKind.BAZEL, ".bazelrc": FileKind.BAZEL,  # and tools/cuda.bazelrc by its suffix
    "package.xml": FileKind.ROS_PACKAGE,
    "pom.xml": FileKind.JVM_BUILD, "build.gradle": FileKind.JVM_BUILD, "build.gradle.kts": FileKind.JVM_BUILD,
    "devcontainer.json": FileKind.DEVCONTAINER, ".devcontainer.json": FileKind.DEVCONTAINER,
    "project.toml": FileKind.JULIA_PROJECT, "juliaproject.toml": FileKind.JULIA_PROJECT,
}
# Makefile fragments: Makefile.nvidia, Makefile_cuda, common.make, and configure's fragment templates (rules.mk.in);
# Makefile.in and Makefile.am are named in _NAMES.
_MAKEFILE_NAME = lazy_regex(r"^(?:gnu)?makefile[._-](?!(?:in|am)$)[\w.-]+$|\.(?:make|mak|mk\.in)$")
# Dockerfiles named with a separator instead of a dot: Dockerfile_dev.gpu, Dockerfile-base, dockerfile-python, and
# cuda-runtime_Dockerfile; a name ending in a data or script suffix (Dockerfile-lint.yml, dockerfile_gen.py) is that.
_DOCKERFILE_NAME = lazy_regex(r"^(?:docker|container)file[_-][\w.-]+$|^[\w.-]+[_-](?:docker|container)file$")
_NOT_DOCKERFILE_SUFFIXES = frozenset({".yml", ".yaml", ".json", ".toml", ".txt", ".cfg", ".ini", ".lock", ".j2",
                                      ".jinja", ".tmpl", ".template", ".rst", ".md"})
# DeepStream nvinfer and deepstream-app configs are INI text files named after what they configure.
_INFER_CONFIG_NAME = lazy_regex(r"(?:infer|gie|deepstream|dstest)[\w.-]*\.(?:txt|ini|cfg)$")
# ... or any name in a folder named for DeepStream (deepstream/config_yolo.txt): the parser reports nothing for an INI
# file without nvinfer keys, so a labels.txt there stays quiet.
_INFER_CONFIG_SUFFIXES = (".txt", ".ini", ".cfg")
# pip requirements files named for their purpose first (dev-requirements.txt, install-requirements.txt,
# test_requirements.txt), as pip's own docs and many projects spell them.
_PREFIXED_REQUIREMENTS = lazy_regex(r"^[a-z0-9][\w.]*[-_](?:requirements|constraints)\.(?:txt|in)$")
# Triton Inference Server model configs (protobuf text): config.pbtxt in a model repository, and the templates a
# deployment script fills in (config.pbtxt.template, config_template.pbtxt).
_TRITON_CONFIG_NAME = lazy_regex(r"^config[\w.-]*\.pbtxt(?:\.(?:template|tmpl|j2|in))?$")
# MATLAB's mex option files: those a project writes for CUDA (mex_CUDA_glnxa64.xml) and MathWorks' nvcc ones it copies
# (nvcc_g++.xml, nvcc_msvcpp2019.xml)
_MEX_OPTIONS_NAME = lazy_regex(r"^(?:mex_cuda[\w.+-]*|nvcc_[\w.+-]+)\.xml$")
# Suffixes no other test in classify() looks at, unless the name starts with one of _NAMED_FIRST: for those names
# the suffix alone decides (most of a tree's files).
# CMake's configure_file templates of sources and package configs (config.h.in with its #cmakedefine switches,
# version.cc.in, FooConfig.cmake.in, and the config.hpp.cmake spelling of a source's template): the build's own text,
# read as the file CMake writes from them. Makefile.in,
# automake's output, and other templates (MANIFEST.in, setup.py.in) stay out.
_TEMPLATE_KINDS = {suffix: kind for suffix, kind in _EXTENSIONS.items()
                   if kind in (FileKind.C, FileKind.CPP, FileKind.CUDA, FileKind.CMAKE) and suffix != ".hip"}
_PLAIN_SUFFIXES = frozenset(_EXTENSIONS) - {".in", ".yml", ".yaml", ".dockerfile"}
_NAMED_FIRST = ("makefile", "gnumakefile", "dockerfile.", "containerfile.")


def classify(relpath: str) -> FileKind | None:
    """The kind of a file from its repository-relative path, or None when we don't read it."""
    parent, _, name = relpath.rpartition("/")  # string work: this runs for every file of the repository
    if name == "BUILD":  # Bazel's package file, in capitals: a lower-case `build` is most often a shell script
        return FileKind.BAZEL
    name = name.lower()
    if name in _NAMES:
        return _NAMES[name]
    suffix = os.path.splitext(name)[1]
    if suffix == ".cmake" and _TEMPLATE_KINDS.get(inner := os.path.splitext(name[:-6])[1], FileKind.CMAKE) != FileKind.CMAKE:
        return _TEMPLATE_KINDS[inner]  # config.hpp.cmake, fft_config.h.cmake: a configure_file template of a source
    if suffix in _PLAIN_SUFFIXES and not name.startswith(_NAMED_FIRST):
        return _EXTENSIONS[suffix]
    if _MAKEFILE_NAME.search(name):
        return FileKind.MAKEFILE
    if name.startswith(("dockerfile.", "containerfile.")) or name.endswith(".dockerfile"):
        return FileKind.DOCKERFILE
    if _DOCKERFILE_NAME.search(name) and suffix not in _NOT_DOCKERFILE_SUFFIXES:
        return FileKind.DOCKERFILE
    if name.startswith(("requirements", "constraints")) and name.endswith((".txt", ".in")):
        return FileKind.REQUIREMENTS
    if _PREFIXED_REQUIREMENTS.search(name):  # dev-requirements.txt, install-requirements.txt, test_requirements.txt
        return FileKind.REQUIREMENTS
    if parent.rpartition("/")[2].lower() == "requirements" and name.endswith(".txt"):
        return FileKind.REQUIREMENTS
    if suffix in (".yml", ".yaml"):
        return _classify_yaml(PurePosixPath(relpath), name)
    if _TRITON_CONFIG_NAME.search(name):
        return FileKind.INFER_CONFIG
    if name.endswith(".in") and not name.startswith(("requirements", "constraints")):
        return _TEMPLATE_KINDS.get(os.path.splitext(name[:-3])[1])
    if suffix == ".xml" and _MEX_OPTIONS_NAME.search(name):
        return FileKind.MATLAB
    if _INFER_CONFIG_NAME.search(name) or (suffix in _INFER_CONFIG_SUFFIXES and "deepstream" in parent.lower()):
        return FileKind.INFER_CONFIG
    return _EXTENSIONS.get(suffix)


# dependencies.yaml: rapids-dependency-file-generator's source of the conda environments and pip requirements
_CONDA_NAMES = frozenset({"meta.yaml", "pixi.yaml", "dependencies.yaml"})
_CONDA_FOLDERS = frozenset({"environments", "envs"})  # conda/environments/all_cuda-129_arch-x86_64.yaml (RAPIDS)


def _classify_yaml(path: PurePosixPath, name: str) -> FileKind:
    if name.startswith(("environment", "conda", "env")) or name in _CONDA_NAMES:
        return FileKind.CONDA
    # an environment file named for its variant: kept in a folder of environments, or under a conda/ folder (also
    # conda-envs/, conda_recipes/: the MolSSI cookiecutter's devtools/conda-envs/test_env.yaml)
    folders = [p.lower() for p in path.parts[:-1]]
    if (folders and folders[-1] in _CONDA_FOLDERS) or any(f.startswith("conda") for f in folders):
        return FileKind.CONDA
    if name.startswith(("docker-compose", "compose")):
        return FileKind.COMPOSE
    if name in ("cog.yaml", "cog.yml"):
        return FileKind.COG
    parts = [p.lower() for p in path.parts]
    if ".github" in parts and "workflows" in parts:
        return FileKind.CI_WORKFLOW
    return FileKind.YAML


class Found(NamedTuple):  # not a dataclass, and no Path: a warm scan makes one per file and needs no more
    """A file discovery chose, as it saw it: a SourceFile (source_file) once the scan reads it."""

    path: str
    relpath: str
    kind: FileKind
    size: int
    vendored: bool
    explicit: bool
    seen: tuple[int, int, int]  # mtime, ctime and inode (ns) as its stat saw them: a key over a tree needs no other


class Records(Sequence[Found]):
    """What discovery found, a Found per file made as it is asked for from columns: a relpath, a kind, a size, two
    flags and the stat key each (~120 bytes a file, where a Found, its absolute path and its stat tuple took ~470
    and were kept for a whole scan: 28 MB at 60,000 files)."""

    _KINDS = tuple(FileKind)

    def __init__(self, found: Iterable[Found] = ()) -> None:
        self._root: str | None = None
        self._relpaths: list[str] = []
        self._kinds = bytearray()
        self._flags = bytearray()  # 1: vendored, 2: explicit
        self._sizes = array("q")
        self._seen = array("q")  # mtime, ctime and inode (ns), three a file
        self._paths: dict[int, str] = {}  # a path not under the root as the others are (none that discovery makes)
        for item in found:
            self.append(item)

    def append(self, found: Found) -> None:
        """Keep FOUND."""
        index = len(self._relpaths)
        if self._root is None:
            self._root = found.path.removesuffix(found.relpath)
        if self._root + found.relpath != found.path:
            self._paths[index] = found.path
        self._relpaths.append(intern(found.relpath))  # the copy the findings read back share (packed.decode)
        self._kinds.append(self._KINDS.index(found.kind))
        self._flags.append(found.vendored | found.explicit << 1)
        self._sizes.append(found.size)
        self._seen.extend(found.seen)

    def __len__(self) -> int:
        return len(self._relpaths)

    @overload
    def __getitem__(self, index: int) -> Found: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Found]: ...

    def __getitem__(self, index: int | slice) -> Found | Sequence[Found]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        relpath = self._relpaths[index]  # IndexError past the end
        path = self._paths.get(index) or f"{self._root}{relpath}"
        flags, seen = self._flags[index], self._seen
        return Found(path, relpath, self._KINDS[self._kinds[index]], self._sizes[index], bool(flags & 1),
                     bool(flags & 2), (seen[3 * index], seen[3 * index + 1], seen[3 * index + 2]))

    def __iter__(self) -> Iterator[Found]:
        return (self[index] for index in range(len(self)))

    def relpath(self, index: int) -> str:
        """The relpath of the file at INDEX, without making its Found."""
        return self._relpaths[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # equal to tuples of the same records, yet not a value of its own

    def __repr__(self) -> str:
        return f"Records({len(self)} files)"


def source_file(found: Found) -> SourceFile:
    """The SourceFile of what discovery FOUND."""
    return SourceFile(path=Path(found.path), relpath=found.relpath, kind=found.kind, size=found.size,
                      vendored=found.vendored, explicit=found.explicit)


def discover(
    root: Path,
    *,
    files: Iterable[Path] = (),
    exclude: Iterable[str] = (),
    include: Iterable[str] = (),
    max_file_size: int,
) -> Iterator[SourceFile | Skipped]:
    """Yield each file to scan under ROOT (or only FILES when given), or a Skipped entry for it."""
    for item in find(root, files=files, exclude=exclude, include=include, max_file_size=max_file_size):
        yield item if isinstance(item, Skipped) else source_file(item)


def find(
    root: Path,
    *,
    files: Iterable[Path] = (),
    exclude: Iterable[str] = (),
    include: Iterable[str] = (),
    max_file_size: int,
) -> Iterator[Found | Skipped]:
    """discover(), each file as discovery saw it (Found)."""
    if not root.exists():
        raise InputError(f"path does not exist: {root}")
    if not root.is_dir():
        raise InputError(f"not a directory: {root}")
    root = root.resolve()
    excluded = tuple(exclude)
    included = tuple(include)
    explicit = [_relative(root, f) for f in files]
    candidates = _named(root, explicit) if explicit else _candidates(root)
    for relpath, vendored, named in candidates:
        if isinstance(relpath, Skipped):
            yield relpath
            continue
        if not named and ((excluded and _matches(relpath, excluded)) or (included and not _matches(relpath, included))):
            continue
        item = _examine(root, relpath, vendored or _is_vendored(relpath), named, max_file_size)
        if item is not None:
            yield item


def _named(root: Path, relpaths: list[str]) -> Iterator[tuple[str | Skipped, bool, bool]]:
    """(relpath, vendored, named) for files named on the command line; a named directory stands for
    the files discovery finds under it (a hook given a directory must not pass it by)."""
    every: list[tuple[str | Skipped, bool, bool]] | None = None
    for relpath in relpaths:
        if relpath != "." and not os.path.isdir(root / relpath):
            yield relpath, False, True
            continue
        if every is None:
            every = list(_candidates(root))
        prefix = "" if relpath == "." else relpath + "/"
        for item in every:
            name = item[0].path if isinstance(item[0], Skipped) else item[0]
            if name.startswith(prefix) or name == relpath:
                yield item


def _relative(root: Path, path: Path) -> str:
    """PATH relative to ROOT; InputError when it (with `..` and symlinked directories resolved) lies outside."""
    absolute = Path(os.path.normpath(path if path.is_absolute() else Path.cwd() / path))
    if absolute.resolve() == root:
        return "."
    parent = absolute.parent.resolve()  # the last part may be a symlink: _examine judges it
    for candidate in (absolute, parent / absolute.name):
        try:
            relpath = candidate.relative_to(root).as_posix()
        except ValueError:
            continue
        if parent == root or _inside(parent, root):
            return relpath
    raise InputError(f"file is outside the scanned directory: {path}")


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _matches(relpath: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(relpath, p) or relpath.startswith(p.rstrip("/") + "/") for p in patterns)


def _is_vendored(relpath: str) -> bool:
    return _vendored_directory(relpath.rpartition("/")[0])


@cache  # per directory, not per file: a tree has a tenth as many
def _vendored_directory(directory: str) -> bool:
    parents = [part.lower() for part in directory.split("/")] if directory else []
    for index, part in enumerate(parents):
        if part in VENDOR_DIRS:
            return True
        if part in BUNDLED_LIBRARIES and (index == 0 or parents[index - 1] != "include"):
            return True
    return False


def _examine(root: Path, relpath: str, vendored: bool, explicit: bool, max_size: int) -> Found | Skipped | None:
    kind = classify(relpath)
    if kind is None and not explicit:
        return None
    path = os.path.join(root, relpath)  # a string for the system calls; a Path only when the file is read
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return Skipped(relpath, "file not found") if explicit else None
    except OSError as exc:
        return Skipped(relpath, f"cannot read: {exc.strerror}")
    if stat.S_ISLNK(info.st_mode):
        problem = _link_problem(root, Path(path))
        if problem == "inside":
            return None  # the target is scanned under its own name
        if problem:
            return Skipped(relpath, problem)
        info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        return None
    size = info.st_size
    if kind is None:
        return Skipped(relpath, "not a file type migrate reads")
    if size > max_size:
        # a prebuilt library past the limit is left out quietly: it is read only for nvcc's markers, and a tree that
        # commits large binaries would otherwise list each of them as a file the scan could not read
        if kind is FileKind.BINARY_LIBRARY and not explicit:
            return None
        return Skipped(relpath, f"larger than the size limit ({size:,} > {max_size:,} bytes)")
    if not (info.st_uid == _UID and info.st_mode & stat.S_IRUSR) and not os.access(path, os.R_OK):  # owner: the bits
        return Skipped(relpath, "cannot read: permission denied")
    return Found(path, relpath, kind, size, vendored, explicit, (info.st_mtime_ns, info.st_ctime_ns, info.st_ino))


_UID = os.getuid()  # the real user, whom os.access asks about: the owner's read bit answers for the owner


def _link_problem(root: Path, path: Path) -> str | None:
    """Why a symlink can't be scanned, or "inside" when its target is in the repository anyway."""
    try:
        target = path.resolve(strict=True)
    except RuntimeError:
        return "symlink loop"
    except (FileNotFoundError, OSError) as exc:
        if "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40:
            return "symlink loop"
        return "broken symlink"
    try:
        target.relative_to(root)
    except ValueError:
        return "symlink points outside the repository"
    return "inside"


def list_files(root: Path) -> Iterator[tuple[str, bool]]:
    """Every file under ROOT as (relpath, vendored), unclassified: the one lister behind scan, translate and
    apply (git's view in a work tree, from any of its directories; a filtered walk elsewhere)."""
    for relpath, vendored, _ in _candidates(root):
        if not isinstance(relpath, Skipped):
            yield relpath, vendored


def _candidates(root: Path) -> Iterator[tuple[str | Skipped, bool, bool]]:
    """(relpath or skipped directory, vendored, named) triples: git's view in a work tree, a filtered walk elsewhere."""
    listed = _git_files(root)
    if listed is None:
        yield from ((rel, False, False) for rel in _walk(root, root))
        return
    tracked, submodules = listed
    yield from ((rel, False, False) for rel in tracked)
    for sub in submodules:
        yield from ((rel, True, False) for rel in _walk(root, root / sub))


def _git_files(root: Path) -> tuple[list[str], list[str]] | None:
    """Tracked plus untracked-but-not-ignored files under ROOT (which may be any directory of a work tree), and
    submodule paths; None outside git, and for an ignored directory named explicitly (it is walked instead)."""
    if not os.path.lexists(root / ".git"):  # the top of a work tree is never ignored: one git run less
        ignored = gitcmd.run(root, "check-ignore", "-q", "--", ".").returncode  # 0 ignored, 1 not, else not in git
        if ignored != 1:
            return None
    listed = gitcmd.run(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate")
    stage = gitcmd.run(root, "ls-files", "-z", "--stage")
    if not (listed.ok and stage.ok):
        return None
    entries = gitcmd.split_z(stage.stdout)
    submodules = sorted({e.split("\t", 1)[1] for e in entries if e.startswith("160000 ")})
    files = sorted({p for p in gitcmd.split_z(listed.stdout) if p not in submodules})
    return files, submodules


def _walk(root: Path, top: Path) -> Iterator[str | Skipped]:
    """Relative paths of the files under TOP, top-down in name order, or a Skipped entry for a directory
    that cannot be listed. Iterative: a tree thousands of levels deep must not exhaust the Python stack."""
    start = top.relative_to(root).as_posix()
    pending = ["" if start == "." else start + "/"]
    while pending:
        prefix = pending.pop()
        try:
            with os.scandir(root / prefix if prefix else root) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
            yield Skipped(prefix.rstrip("/") or ".", f"cannot read directory: {reason}")
            continue
        subdirectories = []
        for entry in entries:
            if not _is_dir(entry):
                yield prefix + entry.name
            elif not entry.is_symlink() and not _skip_dir(entry.path, entry.name):
                subdirectories.append(prefix + entry.name + "/")
        pending.extend(reversed(subdirectories))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _skip_dir(path: str, name: str) -> bool:
    if name in SKIP_DIRS or name.endswith(".egg-info"):
        return True
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))
