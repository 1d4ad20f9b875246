"""The parts of a project a user opts into, not part of the port: first-party modules and build units the main path
reaches only behind an off-by-default command-line flag (`if opt.ff: from nerf.network_ff import ...` with `--ff` a
store_true option) or, for a build unit, inside a `try` with a fallback; extensions setup.py builds only for a device
switch's CUDA value; requirements/<extra>.txt files. Read with `ast` from the repository's files; nothing is run."""

from __future__ import annotations

import ast
import os
import re
import sys
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from migrate.bounded import read_text
from migrate.discover import SKIP_DIRS

_MAX_FILE_BYTES = 1_000_000
_MAX_FILES = 20_000  # a larger tree is not read: the verdict then prices every part as required


@dataclass(frozen=True)
class _Import:
    """One import statement's first-party modules (dotted), whether a flag gates it, the file it sits in."""

    modules: tuple[str, ...]
    gated: bool
    path: str


def flag_gated(root: Path, build_dirs: Iterable[str], on_main_path: Callable[[str], bool]) -> frozenset[str]:
    """The relpaths (Python files, and build-unit directories with a trailing '/') under ROOT that the main path
    imports only behind an off-by-default command-line flag, or (for a build unit's own package: a compiled extension)
    only inside a `try` whose handler catches the failed import and falls back, directly or through modules that are
    themselves so."""
    paths = main_path_python(root, on_main_path)
    packages = {d.replace("/", "."): d for d in build_dirs if d}
    tried = _try_gate(packages)
    # a first read keeps no text: most trees declare no store_true option and try no build unit's import, and a large
    # one holds ~100 MB of Python
    flags: set[str] = set()
    fallback = False
    for path in paths:
        text = read_python(root / path)
        if text and "store_true" in text:
            flags |= _store_true_flags(text)
        fallback = fallback or bool(text and tried is not None and "try" in text and _gates_an_import(tried, text))
    if not flags and not fallback:
        return frozenset()
    sources = {path: text for path in paths if (text := read_python(root / path)) is not None}
    modules = {_module_of(path): path for path in sources}
    asserted = _asserted_present(sources.values()) if fallback else frozenset()
    index = _Index(sources, flags, set(modules) | set(packages), frozenset(packages), asserted)
    names = "|".join(re.escape(flag) for flag in sorted(flags))
    # `if` first, a literal the regex engine scans for fast (`elif` ends with it): a large tree has megabytes
    gates = [re.compile(rf"if[ \t]+(?:[A-Za-z_]\w*\.)?(?:{names})[ \t]*:")] if flags else []
    gates += [tried] if fallback and tried is not None else []
    gated = {m for path, text in sources.items() if any(_gates_an_import(gate, text) for gate in gates)
             for site in index.in_file(path) if site.gated for m in site.modules}
    gated |= {p for p in packages if any(m.startswith(p + ".") for m in gated)}
    optional = _closure(gated, index, modules, packages)
    files = {modules[m] for m in optional if m in modules}
    return frozenset(files | {packages[m] + "/" for m in optional & set(packages)})


def _try_gate(packages: dict[str, str]) -> re.Pattern[str] | None:
    """`try:` with an import of a build unit's package in the lines after it (a cheap test before parsing)."""
    if not packages:
        return None
    names = "|".join(re.escape(p) for p in sorted(packages))
    return re.compile(rf"try[ \t]*:(?=(?:[^\n]*\n){{1,4}}?[ \t]+(?:from|import)[ \t]+(?:{names})\b)")


def _closure(gated: set[str], index: _Index, modules: dict[str, str], packages: dict[str, str]) -> set[str]:
    """The modules of GATED whose every import is gated or sits in an optional module, and what they alone import."""
    candidates, optional = set(gated), set[str]()
    changed = bool(candidates)  # the common case: no flag chooses a first-party import, nothing more is parsed
    while changed:
        changed = False
        for module in sorted(candidates - optional):
            sites = index.importers(module)
            if sites and all(s.gated or _module_of(s.path) in optional for s in sites):
                optional.add(module)
                changed = True
                path = modules.get(module)
                candidates |= {m for site in index.in_file(path) for m in site.modules} if path else set()
                candidates |= {m for m in packages if m.startswith(module + ".")}
    return optional


def _gates_an_import(gate: re.Pattern[str], text: str) -> bool:
    """TEXT has an `if` on a flag with an import in the few lines after it (a cheap test before parsing)."""
    for found in gate.finditer(text):
        following = text[found.end() : found.end() + _GATE_CHARS]
        if _INDENTED_IMPORT.search(following):
            return True
    return False


_INDENTED_IMPORT = re.compile(r"^[ \t]+(?:from|import)[ \t]", re.MULTILINE)
_GATE_CHARS = 400


class _Index:
    """The first-party imports of the files, each file parsed once and only when asked for."""

    def __init__(self, sources: dict[str, str], flags: set[str], known: set[str],
                 packages: frozenset[str] = frozenset(), asserted: frozenset[str] = frozenset()) -> None:
        self.sources, self.flags, self.known, self.packages = sources, flags, known, packages
        self.asserted = asserted
        self.files: dict[str, tuple[_Import, ...]] = {}
        self.found: dict[str, list[_Import]] = {}

    def in_file(self, path: str) -> tuple[_Import, ...]:
        """The imports of first-party modules in the file at PATH."""
        if path not in self.files:
            self.files[path] = tuple(_imports(path, self.sources[path], self.flags, self.known, self.packages,
                                              self.asserted))
        return self.files[path]

    def importers(self, module: str) -> list[_Import]:
        """Every import of MODULE or of a module inside it, in the files (but its own)."""
        if module not in self.found:
            word, prefix = module.rpartition(".")[2], module + "."
            self.found[module] = [site for path, text in self.sources.items() if word in text
                                  for site in self.in_file(path)
                                  if any(m == module or m.startswith(prefix) for m in site.modules)
                                  and _module_of(path) != module and not _module_of(path).startswith(prefix)]
        return self.found[module]


def main_path_python(root: Path, on_main_path: Callable[[str], bool]) -> list[str]:
    """The relpaths of the Python files under ROOT on the main path; none in a tree of more than _MAX_FILES (an import
    the read left out could make a required part look optional). Strings, not Paths: a Path each was ~0.4 KB."""
    found: list[str] = []
    for count, relpath in enumerate(_python_paths(root), start=1):
        if count > _MAX_FILES:
            return []
        if on_main_path(relpath):
            found.append(relpath)
    return found


def _python_paths(root: Path) -> Iterator[str]:
    """The relpaths of the Python files under ROOT, symlinks never followed. Iterative: a tree thousands of levels
    deep must not exhaust the Python stack."""
    pending = [""]
    while pending:
        prefix = pending.pop()
        try:
            with os.scandir(root / prefix if prefix else root) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir() and entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                pending.append(prefix + entry.name + "/")
            elif entry.name.endswith(".py") and entry.is_file():
                yield prefix + entry.name


def read_python(path: Path) -> str | None:
    """The text of a file the build reads (Python, setup.cfg, pyproject.toml); None past 1 MB or unreadable."""
    return read_text(path, limit=_MAX_FILE_BYTES)


def _module_of(relpath: str) -> str:
    """The dotted module a Python file is (a package's __init__.py is the package)."""
    dotted = relpath.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def parse_python(text: str) -> ast.Module | None:
    """The module TEXT is, None where Python itself could not load it."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a file Python itself could not load
        return None


def _store_true_flags(text: str) -> set[str]:
    """The destinations of the store_true options TEXT declares (`add_argument('--ff', action='store_true')`): read
    from the text of each call, up to the next one (no parse: training scripts run to thousands of lines)."""
    starts = [m.start() for m in _ADD_ARGUMENT.finditer(text)]
    found: set[str] = set()
    for begin, end in zip(starts, [*starts[1:], len(text)]):
        call = text[begin : min(end, begin + _CALL_CHARS)]
        option, dest = _OPTION.search(call), _DEST.search(call)
        if option and _STORE_TRUE.search(call):
            found.add(dest.group(1) if dest else option.group(1).replace("-", "_"))
    return found


_ADD_ARGUMENT = re.compile(r"\badd_argument\(")
_OPTION = re.compile(r"""\(\s*(?:['"]-\w['"]\s*,\s*)?['"]--([A-Za-z_][\w-]*)['"]""")
_DEST = re.compile(r"""\bdest\s*=\s*['"](\w+)['"]""")
_STORE_TRUE = re.compile(r"""\baction\s*=\s*['"]store_true['"]""")
_CALL_CHARS = 600


def _imports(
    path: str, text: str, flags: set[str], known: set[str], packages: frozenset[str],
    asserted: frozenset[str] = frozenset(),
) -> Iterator[_Import]:
    """The imports of first-party modules (KNOWN) in the file at PATH, each with whether a flag of FLAGS gates it, or a
    `try` with a fallback holds an import of a build unit's package (PACKAGES) under a name the code never ASSERTED
    to be present."""
    tree = parse_python(text) if "import" in text else None
    if tree is None:
        return
    package = _module_of(path) if path.endswith("__init__.py") else _module_of(path).rpartition(".")[0]
    for node, gated, tried in _walk(tree, flags, gated=False, tried=False):
        modules = tuple(m for m in _imported(node, package) if m in known)
        if modules:
            built = tried and not _bound(node) & asserted and any(
                m == p or m.startswith(p + ".") for m in modules for p in packages)
            yield _Import(modules, gated or built, path)


def _walk(
    node: ast.AST, flags: set[str], *, gated: bool, tried: bool
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import among NODE's statements, with whether it sits in the body of an `if` (or `elif`) on one of FLAGS,
    and whether in the body of a `try` whose handler catches a failed import (statements only: an import is never
    inside an expression)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node, gated, tried
        return
    flagged = isinstance(node, ast.If) and _tests_flag(node.test, flags)
    fallback = isinstance(node, ast.Try) and any(_catches_import(h) for h in node.handlers)
    for field in _BODIES:
        for child in getattr(node, field, ()):
            yield from _walk(child, flags, gated=gated or (flagged and field == "body"),
                             tried=tried or (fallback and field == "body"))


def _bound(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The names an import statement binds (`import a.b` binds `a`)."""
    if isinstance(node, ast.Import):
        return {alias.asname or alias.name.partition(".")[0] for alias in node.names}
    return {alias.asname or alias.name for alias in node.names}


def _asserted_present(texts: Iterable[str]) -> frozenset[str]:
    """The names some `assert` of TEXTS requires to be there (`assert _C is not None, "the CUDA extension is
    required"`): an import of them in a `try` that falls back to None is no fallback, the code stops without it."""
    found: set[str] = set()
    for text in texts:
        tree = parse_python(text) if "assert" in text and _IS_NOT_NONE.search(text) else None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Assert):
                found |= {c.left.id for c in ast.walk(node.test) if isinstance(c, ast.Compare)
                          and isinstance(c.left, ast.Name) and isinstance(c.ops[0], ast.IsNot)
                          and isinstance(c.comparators[0], ast.Constant) and c.comparators[0].value is None}
    return frozenset(found)


_IS_NOT_NONE = re.compile(r"\bis[ \t]+not[ \t]+None\b")
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"})


def _catches_import(handler: ast.ExceptHandler) -> bool:
    """HANDLER catches a failed import and goes on: a bare `except:`, or one naming ImportError or a class above it,
    that does more than raise again."""
    if all(isinstance(statement, ast.Raise) for statement in handler.body):
        return False  # no fallback: the import is required, with a better message
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS for n in names)


def _tests_flag(test: ast.expr, flags: set[str]) -> bool:
    """TEST reads a flag: `opt.ff`, `args.use_x`, or a bare name of one."""
    if isinstance(test, ast.Attribute):
        return test.attr in flags
    return isinstance(test, ast.Name) and test.id in flags


def _imported(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[str]:
    """The dotted modules an import names (for `from a import b`: a and a.b), relative ones resolved in PACKAGE."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    base = node.module or ""
    if node.level:
        parts = package.split(".") if package else []
        parent = ".".join(parts[: len(parts) - node.level + 1]) if node.level - 1 <= len(parts) else ""
        base = f"{parent}.{base}".strip(".") if base else parent
    if base:
        yield base
    for alias in node.names:
        yield f"{base}.{alias.name}".strip(".")


# A build extension chosen by a device switch whose other values include ROCm (`if get_target_device() == 'cuda':
# ext_modules = [CMakeExtension(...)]` beside `requirements/runtime_{device}.txt` and a runtime_rocm.txt): the
# C/C++/CUDA that extension builds is a CUDA-only backend; the ROCm install runs the project without it.
_CUDA_VALUES = frozenset({"cuda", "nvidia"})
_ROCM_VALUES = frozenset({"rocm", "hip", "amd"})
_SETUP_NAMES = ("setup.py",)


def device_built(root: Path, build_dirs: Iterable[str]) -> frozenset[str]:
    """The directories ('' the root) whose C/C++/CUDA sources only an extension chosen by a device switch's CUDA value
    builds, read from the setup.py files of ROOT and of its build units (BUILD_DIRS), where the switch has a ROCm value
    too (compared with 'rocm' in the file, or naming a file that exists with 'rocm' in its place)."""
    found: set[str] = set()
    for directory in sorted({"", *build_dirs}):
        text = read_python(root / directory / "setup.py") if directory else read_python(root / "setup.py")
        if text and "Extension" in text and "cuda" in text.lower():
            found |= _device_only(root, directory, text)
    return frozenset(found)


def _device_only(root: Path, directory: str, text: str) -> set[str]:
    """The source directories of the extensions DIRECTORY's setup.py TEXT builds only under a CUDA device value."""
    tree = parse_python(text)
    if tree is None:
        return set()
    switches = _Switches(_switch_helpers(tree), *_build_names(tree))
    switched: set[str] = set()
    others: set[str] = set()
    for node, switch in _extension_calls(tree, switches, None):
        where = switched if switch is not None and _has_rocm_value(root, directory, tree, switch) else others
        where.update(_sources(node, directory))
    # a folder is optional where no extension every device builds takes sources from it or from below it; so is a
    # parent of switched folders whose every subfolder is switched (the headers they share), on the same terms
    parents = {p for d in switched if (p := d.rpartition("/")[0]) not in ("", directory)
               and _subfolders(root / p) <= {f.rpartition("/")[2] for f in switched if f.rpartition("/")[0] == p}}
    return {d for d in switched | parents if not any(not d or o == d or o.startswith(d + "/") for o in others)}


def _subfolders(folder: Path) -> set[str]:
    try:
        return {entry.name for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)}
    except OSError:
        return {""}  # unreadable: never a subset of the switched names


def _switch_helpers(tree: ast.Module) -> dict[str, ast.expr]:
    """Functions that return one comparison of a device value with 'cuda' (`def _is_cuda(): return DEVICE == "cuda"`),
    by name: the value they test."""
    helpers = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and len(node.body) == 1 and isinstance(node.body[0], ast.Return):
            value = node.body[0].value
            tested = _cuda_switch(value, _Switches()) if value is not None else None
            if tested is not None:
                helpers[node.name] = tested
    return helpers


# Truth tests of the PyTorch build a setup.py runs under: `if CUDA_VERSION:` where CUDA_VERSION is read from
# torch.version.cuda, `if not ROCM_VERSION:`, `if torch.version.cuda:`. Such a switch has a ROCm value when the file
# reads torch.version.hip or holds a ROCm-named variable (AutoAWQ-style kernels builds, torchao's use_cuda/use_rocm).
_TORCH_BUILD = ast.Constant("torch-build")
_TORCH_CUDA = "torch.version.cuda"
_TORCH_HIP = "torch.version.hip"
_ROCM_NAME = re.compile(r"(?i)(?:^|_)(?:rocm|hip)(?:_|$)")


@dataclass(frozen=True)
class _Switches:
    """What a setup.py tests its device with: helper functions that compare a device value with 'cuda' (by name: the
    value), the names it reads from torch.version.cuda (true on a CUDA build) and its ROCm-named ones and those read
    from torch.version.hip (true on a ROCm build)."""

    helpers: dict[str, ast.expr] = field(default_factory=dict)
    cuda_names: frozenset[str] = frozenset()
    rocm_names: frozenset[str] = frozenset()


def _build_names(tree: ast.Module) -> tuple[frozenset[str], frozenset[str]]:
    """(the names TREE assigns from torch.version.cuda, its ROCm names: ROCm-named or read from torch.version.hip)."""
    cuda: set[str] = set()
    rocm: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, ast.unparse(node.value)
            reads_cuda, reads_hip = _TORCH_CUDA in value, _TORCH_HIP in value
            if _ROCM_NAME.search(name) or reads_hip and not reads_cuda:
                rocm.add(name)
            elif reads_cuda and not reads_hip:
                cuda.add(name)
    return frozenset(cuda), frozenset(rocm)


def _truth_switch(test: ast.expr, switches: _Switches) -> bool:
    """TEST is true only on a CUDA build of PyTorch: a name read from torch.version.cuda, torch.version.cuda itself
    (`is not None` or not), or the negation of a ROCm one."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) and isinstance(
            test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        test = test.left
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        return ast.unparse(inner) == _TORCH_HIP or isinstance(inner, ast.Name) and inner.id in switches.rocm_names
    return ast.unparse(test) == _TORCH_CUDA or isinstance(test, ast.Name) and test.id in switches.cuda_names


def _cuda_switch(test: ast.expr, switches: _Switches) -> ast.expr | None:
    """The device value TEST compares with 'cuda' (`X == 'cuda'`, a helper that does, either inside an `and`), or
    _TORCH_BUILD for a truth test of a CUDA build of PyTorch."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next((v for v in (_cuda_switch(t, switches) for t in test.values) if v is not None), None)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and not test.args:
        return switches.helpers.get(test.func.id)
    if _truth_switch(test, switches):
        return _TORCH_BUILD
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        left, right = test.left, test.comparators[0]
        for value, other in ((right, left), (left, right)):
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value.lower() in _CUDA_VALUES:
                return other
    return None


def _extension_calls(
    node: ast.AST, switches: _Switches, switch: ast.expr | None
) -> Iterator[tuple[ast.Call, ast.expr | None]]:
    """Every call of an *Extension class under NODE, with the device value whose CUDA branch it sits in (None)."""
    if isinstance(node, ast.If):
        tested = _cuda_switch(node.test, switches)
        for child in node.body:
            yield from _extension_calls(child, switches, tested if tested is not None else switch)
        for child in node.orelse:
            yield from _extension_calls(child, switches, switch)
        return
    if isinstance(node, ast.Call) and _callee(node.func).endswith("Extension"):
        yield node, switch
    for inner in ast.iter_child_nodes(node):
        yield from _extension_calls(inner, switches, switch)


def _callee(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _has_rocm_value(root: Path, directory: str, tree: ast.Module, switch: ast.expr) -> bool:
    """The device value SWITCH is compared with a ROCm value somewhere in TREE, or names a file (in an f-string) that
    exists with a ROCm value in its place (`f'requirements/runtime_{device}.txt'` beside runtime_rocm.txt)."""
    if switch is _TORCH_BUILD:
        return any(ast.unparse(node) == _TORCH_HIP for node in ast.walk(tree) if isinstance(node, ast.Attribute)) or any(
            isinstance(node, ast.Name) and _ROCM_NAME.search(node.id) for node in ast.walk(tree))
    wanted = ast.dump(switch)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            sides = (node.left, node.comparators[0])
            if any(ast.dump(s) == wanted for s in sides) and any(
                isinstance(s, ast.Constant) and isinstance(s.value, str) and s.value.lower() in _ROCM_VALUES
                for s in sides
            ):
                return True
        if isinstance(node, ast.JoinedStr) and any(
            isinstance(v, ast.FormattedValue) and ast.dump(v.value) == wanted for v in node.values
        ):
            for value in _ROCM_VALUES:
                name = "".join(str(v.value) if isinstance(v, ast.Constant) else value for v in node.values
                               if isinstance(v, (ast.Constant, ast.FormattedValue)))
                if (root / directory / name).is_file():
                    return True
    return False


def _sources(call: ast.Call, directory: str) -> set[str]:
    """The directories of the sources an extension call builds: its literal `sources` list's, or for a CMake extension
    its literal source directory (default: the setup.py's own)."""
    prefix = directory + "/" if directory else ""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    sources = keywords.get("sources") or (call.args[1] if len(call.args) > 1 else None)
    if isinstance(sources, (ast.List, ast.Tuple)):
        paths = [e.value for e in sources.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return {(prefix + p).rpartition("/")[0] or directory for p in paths}
    if "CMake" in _callee(call.func):
        for key in ("source_dir", "sourcedir", "cmake_lists_dir"):
            value = keywords.get(key)
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return {(prefix + value.value.strip("./")).rstrip("/")}
        return {directory}
    return set()


# requirements/<extra>.txt beside a main install declared elsewhere (pyproject's dependencies, setup.py's
# install_requires, a requirements.txt): one extra's packages (requirements/bitsandbytes.txt, requirements/optional.txt)
# that a user opts into. Files named for the install itself stay main (requirements/runtime.txt, common.txt, cuda.txt).
_MAIN_NAMES = re.compile(r"(?:requirements|runtime|common|base|core|main|install|default|prod|production|build|cuda|"
                         r"gpu|mminstall)(?:[_.-][^/]*)?\.txt")


def requirement_extras(root: Path, build_dirs: Iterable[str]) -> frozenset[str]:
    """The relpaths of the requirements/<extra>.txt files under ROOT (at the root or in a build unit, BUILD_DIRS)
    whose directory declares its main install elsewhere."""
    found: set[str] = set()
    for directory in sorted({"", *build_dirs}):
        base = root / directory if directory else root
        folder = base / "requirements"
        if not folder.is_dir() or not _declares_install(base):
            continue
        prefix = f"{directory}/requirements/" if directory else "requirements/"
        found |= {prefix + p.name for p in folder.glob("*.txt") if p.is_file() and not _MAIN_NAMES.fullmatch(p.name)}
    return frozenset(found)


def _declares_install(base: Path) -> bool:
    """BASE declares the packages its install takes outside requirements/: a requirements.txt, setup.py's or
    setup.cfg's install_requires, or a non-empty [project] dependencies list."""
    if (base / "requirements.txt").is_file():
        return True
    setup = (read_python(base / "setup.py") or "") + (read_python(base / "setup.cfg") or "")
    return "install_requires" in setup or bool(_project_dependencies(read_python(base / "pyproject.toml") or ""))


def _project_dependencies(text: str) -> list[object]:
    """The [project] table's dependencies in pyproject.toml TEXT (none where it does not parse)."""
    if "dependencies" not in text:
        return []
    if sys.version_info >= (3, 11):  # here: most trees never ask
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        project = tomllib.loads(text).get("project", {})
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    found = project.get("dependencies", []) if isinstance(project, dict) else []
    return found if isinstance(found, list) else []


def chosen_only(root: Path, candidates: Iterable[str], on_main_path: Callable[[str], bool]) -> frozenset[str]:
    """The Python files of CANDIDATES that main-path code under ROOT imports, but only inside a block (an `if` on a
    setting's value, a function, a `try`), never at module level: one implementation a configuration chooses among
    others (`elif opt.backbone == 'grid_tcnn': from nerf.network_grid_tcnn import NeRFNetwork`), not the core model."""
    wanted = {_module_of(c): c for c in candidates if c.endswith(".py")}
    if not wanted:
        return frozenset()
    names = {m.rpartition(".")[2] for m in wanted}
    seen: dict[str, bool] = {}  # module -> imported at module level somewhere
    for path in main_path_python(root, on_main_path):
        text = read_python(root / path)
        if not text or not any(name in text for name in names):
            continue
        package = _module_of(path) if path.endswith("__init__.py") else _module_of(path).rpartition(".")[0]
        for match in _IMPORT_LINE.finditer(text):
            for module in _line_modules(match, package):
                if module in wanted:
                    seen[module] = seen.get(module, False) or not match.group(1)
    return frozenset(wanted[m] for m, top in seen.items() if not top)


def in_branches(root: Path, places: Iterable[tuple[str, int]]) -> frozenset[tuple[str, int]]:
    """The (path, line) PLACES of Python files under ROOT that sit in the body of an `if` or `elif` branch (not its
    test), or in a conditional expression's values: code a setting switches on (`if
    lora_args.q_lora: model = prepare_model_for_kbit_training(model)`, an 8-bit optimizer under `elif
    optimizer_type.endswith("8bit"):`, `"CPUExecutionProvider" if not cuda else "CUDAExecutionProvider"`), not what
    every run does."""
    by_path: dict[str, set[int]] = {}
    for path, line in places:
        by_path.setdefault(path, set()).add(line)
    found: set[tuple[str, int]] = set()
    for path, lines in by_path.items():
        text = read_python(root / path)
        tree = parse_python(text) if text else None
        if tree is None:
            continue
        spans = []
        for node in _holding(tree, lines):  # parsed here in the parent, after the workers: only what holds a line
            if isinstance(node, ast.If) and node.body:
                spans.append((node.body[0].lineno, _last_line(node)))
            elif isinstance(node, ast.IfExp):
                spans += [(v.lineno, v.end_lineno or v.lineno) for v in (node.body, node.orelse)]
        found.update((path, line) for line in lines if any(start <= line <= end for start, end in spans))
    return frozenset(found)


def _holding(tree: ast.AST, lines: set[int]) -> Iterator[ast.AST]:
    """The nodes of TREE, as ast.walk gives them, less the statements whose lines (their decorators' too) hold none
    of LINES, and all below them: a branch there spans none of LINES (most of a large file's statements)."""
    ordered = sorted(lines)
    todo: deque[ast.AST] = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, ast.stmt) and node.end_lineno is not None:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            at = bisect_left(ordered, first)
            if at == len(ordered) or ordered[at] > node.end_lineno:
                continue
        todo.extend(ast.iter_child_nodes(node))
        yield node


def _last_line(node: ast.If) -> int:
    """The last line of an `if` statement's branches (its body, its elif and else)."""
    return max(getattr(n, "end_lineno", None) or n.lineno for n in (*node.body, *node.orelse))


_IMPORT_LINE = re.compile(r"^([ \t]*)(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+([\w., \t()]+)|import[ \t]+([\w., \t]+))",
                          re.MULTILINE)


def _line_modules(match: re.Match[str], package: str) -> Iterator[str]:
    """The dotted modules an import line names (a `from` line's base and base.name for each name)."""
    base, names, plain = match.group(2), match.group(3), match.group(4)
    if plain is not None:
        for part in plain.split(","):
            yield part.split(" as ")[0].strip()
        return
    dots = len(base) - len(base.lstrip("."))
    if dots:
        parent = package.split(".") if package else []
        parent = parent[: len(parent) - (dots - 1)] if dots > 1 else parent
        base = ".".join([*parent, base.lstrip(".")]).strip(".")
    yield base
    for part in names.strip("() \t").split(","):
        name = part.split(" as ")[0].strip()
        if name:
            yield f"{base}.{name}"


def unimported_extensions(root: Path, build_dirs: Iterable[str], on_main_path: Callable[[str], bool]) -> frozenset[str]:
    """The subpackage directories (gsplat/experimental) holding an extension a setup.py builds beside another one
    (`CUDAExtension("gsplat.experimental.render.kernels.csrc", ...)` beside `CUDAExtension("gsplat.csrc", ...)`) that
    no main-path module outside the subpackage imports: research code shipped beside the library, which its users
    import themselves; the library's own path never loads it."""
    found: set[str] = set()
    for directory in sorted({"", *build_dirs}):
        text = read_python(root / directory / "setup.py") if directory else read_python(root / "setup.py")
        if not text or "Extension" not in text:
            continue
        tree = parse_python(text)
        modules = _extension_modules(tree) if tree is not None else []
        prefix = directory + "/" if directory else ""
        owners = {".".join(m.split(".")[:2]) for m in modules if m.count(".") >= 2}
        if len(modules) < 2 or len(owners) == len(modules):  # no extension of the package itself beside them
            continue
        found |= {prefix + owner.replace(".", "/") for owner in owners if not _imported_outside(root, prefix, owner,
                                                                                               on_main_path)}
    return frozenset(found)


def _extension_modules(tree: ast.Module) -> list[str]:
    """The module names (a string literal first argument or name=) of every *Extension call in TREE."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node.func).endswith("Extension"):
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            first = node.args[0] if node.args else keywords.get("name")
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.append(first.value)
    return names


def _imported_outside(root: Path, prefix: str, owner: str, on_main_path: Callable[[str], bool]) -> bool:
    """Main-path Python outside OWNER's directory imports OWNER (or a module under it), absolutely or relatively."""
    inside = prefix + owner.replace(".", "/") + "/"
    top, _, sub = owner.partition(".")
    absolute = re.compile(rf"^[ \t]*(?:from|import)[ \t]+{re.escape(owner)}\b|^[ \t]*from[ \t]+{re.escape(top)}"
                          rf"[ \t]+import[ \t]+(?:\([ \t\n]*)?(?:[\w \t,]*,[ \t]*)?{re.escape(sub)}\b", re.MULTILINE)
    relative = re.compile(rf"^[ \t]*from[ \t]+\.+{re.escape(sub)}\b|^[ \t]*from[ \t]+\.+[ \t]+import[ \t]+"
                          rf"(?:[\w \t,]*,[ \t]*)?{re.escape(sub)}\b", re.MULTILINE)
    for path in main_path_python(root, on_main_path):
        if path.startswith(inside):
            continue
        text = read_python(root / path)
        if text and sub in text and (absolute.search(text) or (path.startswith(prefix + top + "/")
                                                                and relative.search(text))):
            return True
    return False
