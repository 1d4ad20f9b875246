"""What a scan reads besides each file's content: the files discovery chose and those it skipped, the lines changed
since --diff-base, the repository's own Python packages, and the rules its settings ask for. Apart from the scan
(scan/), so that a warm scan, whose reports the memo hands back, imports none of the scan's modules."""

from __future__ import annotations

import ast
import contextlib
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from migrate import bounded
from migrate.cache import load_ruleset
from migrate.config import Settings, check_rule_ids
from migrate.data import rules_dir
from migrate.discover import Found, Records, find, source_file
from migrate.model import Skipped, SourceFile
from migrate.ruleset import Ruleset, load, load_builtin, remember_builtin

if TYPE_CHECKING:
    from migrate.gitdiff import Changes


@dataclass(frozen=True)
class Inputs:
    """What a scan reads besides the rules: the files discovery chose and those it skipped, the lines changed
    since --diff-base, and the Python packages the repository defines itself."""

    found: Sequence[Found]  # discovery's Records: each Found made as it is read
    skipped: tuple[Skipped, ...]
    changes: Changes | None
    packages: frozenset[str]
    complete: bool  # the whole tree: no files named, no --diff-base
    discovered_after: int = 0  # time.time_ns() before discovery: the stat of each file found was taken after it

    @cached_property
    def sources(self) -> tuple[SourceFile, ...]:
        """The files found, to be read (made when first asked for: the memo's key needs only what was found)."""
        return tuple(source_file(f) for f in self.found)


def inputs(root: Path, settings: Settings, files: Iterable[Path] = ()) -> Inputs:
    """The files a scan of ROOT (or of FILES inside it) reads, and what else its result depends on."""
    found = Records()
    skipped: list[Skipped] = []
    named = list(files)
    started = time.time_ns()
    for item in find(
        root, files=named, exclude=settings.exclude, include=settings.include, max_file_size=settings.max_file_size
    ):
        if isinstance(item, Skipped):
            skipped.append(item)
        else:
            found.append(item)
    changes = _changed_lines(root, settings.diff_base) if settings.diff_base else None
    if changes is not None:
        found = Records(f for f in found if f.relpath in changes)
    complete = not named and changes is None
    packages = own_packages(root) | nested_packages(root, (f.relpath for f in found))
    return Inputs(found, tuple(skipped), changes, packages, complete, discovered_after=started)


def _changed_lines(root: Path, base: str) -> Changes:
    from migrate.gitdiff import changed_lines  # here: only --diff-base asks git for a diff

    return changed_lines(root, base)


def own_packages(root: Path) -> frozenset[str]:
    """The Python packages the repository defines: directories with an __init__.py at the top, in src/ or in
    python/ (its own `import flash_attn` is not a dependency on flash-attn), and the distribution its top-level
    pyproject.toml, setup.cfg or setup.py names (NVIDIA Warp's `warp-lang`)."""
    found: set[str] = set()
    for base in ("", "src", "python"):
        with contextlib.suppress(OSError), os.scandir(root / base) as entries:
            found.update(e.name for e in entries if e.is_dir() and os.path.isfile(os.path.join(e.path, "__init__.py")))
    found.update(distribution_names(root))
    with contextlib.suppress(ValueError, SyntaxError, RecursionError):
        found.update(_extension_modules(_packaging_text(root / "setup.py")))
    return frozenset(found)


def _extension_modules(text: str) -> set[str]:
    """The top-level modules setup.py's extensions build (`CUDAExtension(name="amp_C", ...)`,
    `CppExtension("fused_layer_norm_cuda", [...])`): apex's own `import amp_C` is no dependency on apex."""
    if "Extension" not in text:
        return set()
    names: set[str] = set()
    for call in (n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)):
        func = call.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if not called.endswith("Extension"):
            continue
        given = [k.value for k in call.keywords if k.arg == "name"] + call.args[:1]
        names.update(v.value.split(".")[0] for v in given[:1] if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return names


NESTED = ":"  # "SUBDIR:package": a package of a project nested at SUBDIR (its own setup.py or pyproject.toml)


def nested_packages(root: Path, relpaths: Iterable[str]) -> frozenset[str]:
    """The packages of the Python projects nested in ROOT (a vendored AutoGPTQ under dependencies/, a bindings/torch
    with its own setup.py), as "SUBDIR:package": that project's own imports of them are no dependency either."""
    found: set[str] = set()
    for relpath in relpaths:
        parent, _, name = relpath.rpartition("/")
        if parent and name in ("setup.py", "pyproject.toml"):
            found.update(f"{parent}{NESTED}{p}" for p in own_packages(root / parent))
    return frozenset(found)


def distribution_names(root: Path) -> set[str]:
    """The distribution names ROOT's own packaging files give: `[project] name`, setup.cfg's `[metadata] name`
    and the literal `name=` of setup.py's setup() call (a name held in a module-level variable too)."""
    names: set[str] = set()
    # each parser imported only where its file has text (an empty one names nothing): tomllib and configparser
    # cost ~4 ms of a `migrate check` of a tree without them
    pyproject = _packaging_text(root / "pyproject.toml")
    if pyproject:
        import tomllib

        with contextlib.suppress(ValueError):
            project = tomllib.loads(pyproject).get("project")
            if isinstance(project, dict) and isinstance(project.get("name"), str):
                names.add(project["name"])
    setup_cfg = _packaging_text(root / "setup.cfg")
    if setup_cfg:
        import configparser

        with contextlib.suppress(ValueError, configparser.Error):
            config = configparser.ConfigParser(interpolation=None)
            config.read_string(setup_cfg)
            names.add(config.get("metadata", "name"))
    with contextlib.suppress(ValueError, SyntaxError, RecursionError):
        names.update(_setup_py_names(_packaging_text(root / "setup.py")))
    return {n.strip() for n in names if n.strip()}


def _packaging_text(path: Path) -> str:
    """A packaging file's text, empty when it is missing, not a regular file (a FIFO must not block the scan) or
    larger than a packaging file is."""
    return bounded.read_text(path, limit=_PACKAGING_BYTES) or ""


_PACKAGING_BYTES = 1_000_000


def _is_setup(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "setup") or (isinstance(func, ast.Attribute) and func.attr == "setup")


def _setup_py_names(text: str) -> set[str]:
    """The string a setup() call's `name=` keyword gives, directly or through a module-level NAME = "..."."""
    if "setup" not in text or "name" not in text:
        return set()
    tree = ast.parse(text)
    assigned = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}
    names: set[str] = set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_setup(n.func)):
        for keyword in (k for k in call.keywords if k.arg == "name"):
            value = keyword.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                names.add(value.value)
            elif isinstance(value, ast.Name) and value.id in assigned:
                names.add(assigned[value.id])
    return names


def ruleset_for(settings: Settings) -> Ruleset:
    """The built-in rules plus the user's extra rule directories, less the disabled ones (cached when allowed)."""
    ruleset = load_ruleset(settings, lambda: _load_rules(settings))
    if not settings.extra_rule_dirs and not settings.disabled_rules:
        remember_builtin(ruleset)  # the assessment reads the built-in rules: from here, not the rule files again
    return ruleset


def _load_rules(settings: Settings) -> Ruleset:
    if settings.extra_rule_dirs:
        every = load([rules_dir(), *(Path(d) for d in settings.extra_rule_dirs)])
    else:
        every = load_builtin()
    check_rule_ids(settings, {rule.id for rule in every.rules})
    if not settings.disabled_rules:
        return every
    return Ruleset(tuple(r for r in every.rules if r.id not in settings.disabled_rules))
