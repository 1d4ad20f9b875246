"""The first-party modules and build units the main path reaches only behind an off-by-default command-line flag
(`if opt.ff: from nerf.network_ff import ...` with `--ff` a store_true option): add-ons a user opts into, not part of
the port. Read with `ast` from the repository's Python files; nothing is run."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

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
    imports only behind an off-by-default command-line flag, directly or through modules that are themselves so."""
    paths = _main_path_python(root, on_main_path)
    # a first read keeps no text: most trees declare no store_true option, and a large one holds ~100 MB of Python
    flags = set().union(*(_store_true_flags(text) for path in paths if (text := _read(root / path))
                          and "store_true" in text))
    if not flags:
        return frozenset()
    sources = {path: text for path in paths if (text := _read(root / path)) is not None}
    modules = {_module_of(path): path for path in sources}
    packages = {d.replace("/", "."): d for d in build_dirs if d}
    index = _Index(sources, flags, set(modules) | set(packages))
    names = "|".join(re.escape(flag) for flag in sorted(flags))
    # `if` first, a literal the regex engine scans for fast (`elif` ends with it): a large tree has megabytes
    gate = re.compile(rf"if[ \t]+(?:[A-Za-z_]\w*\.)?(?:{names})[ \t]*:")
    gated = {m for path, text in sources.items() if _gates_an_import(gate, text)
             for site in index.in_file(path) if site.gated for m in site.modules}
    optional = _closure(gated, index, modules, packages)
    files = {modules[m] for m in optional if m in modules}
    return frozenset(files | {packages[m] + "/" for m in optional & set(packages)})


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

    def __init__(self, sources: dict[str, str], flags: set[str], known: set[str]) -> None:
        self.sources, self.flags, self.known = sources, flags, known
        self.files: dict[str, tuple[_Import, ...]] = {}
        self.found: dict[str, list[_Import]] = {}

    def in_file(self, path: str) -> tuple[_Import, ...]:
        """The imports of first-party modules in the file at PATH."""
        if path not in self.files:
            self.files[path] = tuple(_imports(path, self.sources[path], self.flags, self.known))
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


def _main_path_python(root: Path, on_main_path: Callable[[str], bool]) -> list[str]:
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


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _module_of(relpath: str) -> str:
    """The dotted module a Python file is (a package's __init__.py is the package)."""
    dotted = relpath.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def _parse(text: str) -> ast.Module | None:
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


def _imports(path: str, text: str, flags: set[str], known: set[str]) -> Iterator[_Import]:
    """The imports of first-party modules (KNOWN) in the file at PATH, each with whether a flag of FLAGS gates it."""
    tree = _parse(text) if "import" in text else None
    if tree is None:
        return
    package = _module_of(path) if path.endswith("__init__.py") else _module_of(path).rpartition(".")[0]
    for node, gated in _walk(tree, flags, gated=False):
        modules = tuple(m for m in _imported(node, package) if m in known)
        if modules:
            yield _Import(modules, gated, path)


def _walk(node: ast.AST, flags: set[str], *, gated: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import among NODE's statements, with whether it sits in the body of an `if` (or `elif`) on one of FLAGS
    (statements only: an import is never inside an expression)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node, gated
        return
    flagged = isinstance(node, ast.If) and _tests_flag(node.test, flags)
    for field in _BODIES:
        for child in getattr(node, field, ()):
            yield from _walk(child, flags, gated=gated or (flagged and field == "body"))


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


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
