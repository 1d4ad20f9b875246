"""Compiled extensions a project builds only on request and runs without: a setup.py that builds its *Extension
modules when the user passes a flag of its own (`python setup.py install --enable-cuda-ext`, `pip install .
--global-option ext`: a literal tested against sys.argv), whose Python loads each such module only where a failure to
load is caught and the code goes on (`try: import fused_ln` / `except ImportError: HAS_FUSED_LN = False`; `try:
torch.ops.load_library(CUAEV_SO)` / `except Exception:`). The default install has no such module, so the project's own
Python path is what runs, on ROCm too: the directories of the extension's sources are an add-on, like an extension a
device switch builds for CUDA only (optional_parts). An extension the default build compiles (`try: from pkg import
_C` / `except: warn("CPU mode only")` in a setup.py without such a flag) stays part of the port, and so does one behind
an environment switch, read no further (`MAMBA_SKIP_CUDA_BUILD` is off by default and skips the build when on).
Read with `ast` from the repository's files; nothing is run."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from migrate.optional_parts import main_path_python, parse_python, read_python

# setuptools' own commands and options: a setup.py that reads them from sys.argv chooses nothing for the user
_COMMANDS = frozenset({
    "install", "develop", "build", "build_ext", "build_py", "build_clib", "bdist", "bdist_wheel", "bdist_egg", "sdist",
    "egg_info", "dist_info", "editable_wheel", "clean", "test", "check", "upload", "register", "--inplace", "-i",
    "--user", "--help", "-h", "--version", "--force", "-f", "--verbose", "-v", "--quiet", "-q", "--dry-run", "-n",
})
# a flag that turns the default build off (`--no-cuda`, `--skip-ext`, `--cpu-only`) says the extension builds unasked
_NEGATIVE = re.compile(r"(?i)(?:^|[-_])(?:no|skip|disable|without|cpu)(?:[-_]|$)")
# a loader that hands back a stand-in when the module is missing (MONAI's optional_import("pkg._C"))
_FALLBACK_LOADERS = frozenset({"optional_import", "try_import"})
_LOADERS = _FALLBACK_LOADERS | {"load_library", "import_module", "CDLL", "LoadLibrary"}
_CAUGHT = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError", "RuntimeError"})


def opt_in_built(root: Path, build_dirs: Iterable[str], on_main_path: Callable[[str], bool]) -> frozenset[str]:
    """The directories whose sources only such extensions build, read from the setup.py files of ROOT and of its
    build units (BUILD_DIRS); none where a directory also feeds an extension the project needs."""
    build_dirs = set(build_dirs)
    wanted: dict[str, set[str]] = {}  # module name -> its source directories, of setup.py files with a user switch
    needed: set[str] = set()  # source directories of every other extension
    for directory in sorted({"", *build_dirs}):
        text = read_python(root / directory / "setup.py")
        tree = parse_python(text) if text and "Extension" in text else None
        if tree is None:
            continue
        switched = _has_user_switch(tree)
        for name, dirs in _extensions(tree, directory):
            if switched and name:
                wanted.setdefault(name, set()).update(dirs)
            else:
                needed |= dirs
    if not wanted:
        return frozenset()
    loads = _loads(root, set(wanted), on_main_path)
    optional = {d for name, dirs in wanted.items() if loads.get(name) and all(loads[name]) for d in dirs}
    needed |= {d for name, dirs in wanted.items() if not (loads.get(name) and all(loads[name])) for d in dirs}
    optional = {d for d in optional
                if not any(n == d or n.startswith(d + "/") or d.startswith(n + "/") for n in needed)}
    # ... and a folder of sources above them whose every subfolder is one (the headers they share: csrc/type_shim.h),
    # not a Python package that holds them (pkg/ above pkg/csrc)
    parents = {p for d in optional if (p := d.rpartition("/")[0]) and p not in build_dirs
               and _subfolders(root / p) <= {f.rpartition("/")[2] for f in optional if f.rpartition("/")[0] == p}}
    return frozenset(optional | {p for p in parents if not any(n == p or n.startswith(p + "/") for n in needed)})


def _subfolders(folder: Path) -> set[str]:
    """The subfolders of FOLDER; one no folder matches where it holds Python or cannot be read (it stays required)."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return {""}
    if any(entry.suffix == ".py" for entry in entries):
        return {""}
    return {entry.name for entry in entries if entry.is_dir() and not entry.name.startswith(".")}


def _has_user_switch(tree: ast.Module) -> bool:
    """TREE tests a literal of its own against sys.argv (`"ext" in sys.argv`, `arg == "--cuda-ext"` in a loop over
    it, `sys.argv.remove("ext")`) that asks for more, not less."""
    loops = {node.target.id for node in ast.walk(tree) if isinstance(node, ast.For) and _over_argv(node.iter)
             and isinstance(node.target, ast.Name)}
    loops |= {node.target.elts[1].id for node in ast.walk(tree) if isinstance(node, ast.For) and _over_argv(node.iter)
              and isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2
              and isinstance(node.target.elts[1], ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            sides = (node.left, node.comparators[0])
            literal = next((s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)), None)
            if literal is None or literal in _COMMANDS or _NEGATIVE.search(literal):
                continue
            if isinstance(node.ops[0], ast.In) and _is_argv(node.comparators[0]):
                return True
            if isinstance(node.ops[0], ast.Eq) and any(isinstance(s, ast.Name) and s.id in loops for s in sides):
                return True
        if isinstance(node, ast.Call) and _dotted(node.func) == "sys.argv.remove" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value not in _COMMANDS and (
                    not _NEGATIVE.search(first.value)):
                return True
    return False


def _over_argv(node: ast.expr) -> bool:
    return _is_argv(node) or (isinstance(node, ast.Call) and _dotted(node.func) == "enumerate" and bool(node.args)
                              and _is_argv(node.args[0]))


def _is_argv(node: ast.expr) -> bool:
    return _dotted(node) == "sys.argv"


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _extensions(tree: ast.Module, directory: str) -> Iterator[tuple[str, set[str]]]:
    """(module name, or '' where it is not a literal; the directories of its literal sources) of every *Extension
    call in TREE, and of every dict(name=..., sources=...) where an *Extension call takes its arguments from one."""
    prefix = directory + "/" if directory else ""
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    extensions = [c for c in calls if _dotted(c.func).rpartition(".")[2].endswith("Extension")]
    if any(k.arg is None for c in extensions for k in c.keywords):  # CUDAExtension(**kwargs): its arguments in a dict
        extensions += [c for c in calls
                       if _dotted(c.func) == "dict" and {"name", "sources"} <= {k.arg for k in c.keywords}]
    for node in extensions:
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        first = node.args[0] if node.args else keywords.get("name")
        name = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
        sources = keywords.get("sources") or (node.args[1] if len(node.args) > 1 else None)
        paths = [e.value for e in sources.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)] if (
            isinstance(sources, (ast.List, ast.Tuple))) else []
        yield name, {(prefix + p.removeprefix("./")).rpartition("/")[0] or directory for p in paths}


def _loads(root: Path, names: set[str], on_main_path: Callable[[str], bool]) -> dict[str, list[bool]]:
    """For each module of NAMES, whether each of its loads in main-path Python is caught: an import of it, a loader
    call naming it, or torch.ops.load_library / ctypes of a path whose literal ends in its last name + '.so'."""
    words = {name: name.rpartition(".")[2] for name in names}
    found: dict[str, list[bool]] = {}
    # a tree too large to read gives no file: its extensions stay required
    for relpath in main_path_python(root, on_main_path):
        if relpath.rpartition("/")[2] == "setup.py":
            continue
        text = read_python(root / relpath)
        if not text or not any(word in text for word in words.values()):
            continue
        tree = parse_python(text)
        if tree is not None:
            for name, caught in _load_sites(tree, words):
                found.setdefault(name, []).append(caught)
    return found


def _load_sites(tree: ast.Module, words: dict[str, str]) -> Iterator[tuple[str, bool]]:
    """(module, caught) for each load in TREE of a module of WORDS (module -> its last name). A file that tries a
    module and falls back decides once: its loads of it inside function bodies follow that decision (a class the
    tried branch hands out loads the module again in its constructor)."""
    paths = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
             for target in node.targets if isinstance(target, ast.Name)}
    sites = [(name, caught, inside) for node, caught, inside in _walk(tree, False, False)
             for name in _loaded(node, words, paths)]
    tried = {name for name, caught, _ in sites if caught}
    for name, caught, inside in sites:
        yield name, caught or (inside and name in tried)


def _loaded(node: ast.AST, words: dict[str, str], paths: dict[str, ast.expr]) -> Iterator[str]:
    """The modules of WORDS that NODE loads: an import of it, a loader call naming it, or torch.ops.load_library /
    ctypes of a path whose literal (or a module-level name's) ends in its last name + '.so'."""
    if isinstance(node, ast.Import):
        yield from (n for n in words if any(a.name == n or a.name.startswith(n + ".") for a in node.names))
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        yield from (n for n in words if node.module == n or any(f"{node.module}.{a.name}" == n for a in node.names))
    elif isinstance(node, ast.Call) and node.args:
        callee = _dotted(node.func).rpartition(".")[2]
        if callee not in _LOADERS:
            return
        argument = node.args[0]
        if isinstance(argument, ast.Name) and argument.id in paths:
            argument = paths[argument.id]
        literals = {c.value for c in ast.walk(argument) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        yield from (name for name, word in words.items()
                    if name in literals or (callee not in _FALLBACK_LOADERS and any(s.endswith(word + ".so")
                                                                                    for s in literals)))


def _walk(node: ast.AST, caught: bool, inside: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    """Every node under NODE, with whether it sits in the body of a `try` whose handler catches a failed load and
    goes on, or a loader that hands back a stand-in, and whether it sits in a function body."""
    for child in ast.iter_child_nodes(node):
        within = inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        if isinstance(child, ast.Try):
            tried = caught or any(_catches(h) for h in child.handlers)
            for statement in child.body:
                yield statement, tried, within
                yield from _walk(statement, tried, within)
            for part in (*child.handlers, *child.orelse, *child.finalbody):
                yield part, caught, within
                yield from _walk(part, caught, within)
            continue
        fallback = isinstance(child, ast.Call) and _dotted(child.func).rpartition(".")[2] in _FALLBACK_LOADERS
        yield child, caught or fallback, within
        yield from _walk(child, caught, within)


def _catches(handler: ast.ExceptHandler) -> bool:
    """HANDLER catches a failed load and goes on (does more than raise again)."""
    if all(isinstance(statement, ast.Raise) for statement in handler.body):
        return False
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in _CAUGHT for n in names)
