"""What a scan reads besides each file's content: the files discovery chose and those it skipped, the lines changed
since --diff-base, the repository's own Python packages, and the rules its settings ask for. Apart from the scan
(scan/), so that a warm scan, whose reports the memo hands back, imports none of the scan's modules."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

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
    return Inputs(found, tuple(skipped), changes, own_packages(root), complete, discovered_after=started)


def _changed_lines(root: Path, base: str) -> Changes:
    from migrate.gitdiff import changed_lines  # here: only --diff-base asks git for a diff

    return changed_lines(root, base)


def own_packages(root: Path) -> frozenset[str]:
    """The Python packages the repository defines: directories with an __init__.py at the top, in src/ or in
    python/ (its own `import flash_attn` is not a dependency on flash-attn)."""
    found: set[str] = set()
    for base in ("", "src", "python"):
        with contextlib.suppress(OSError), os.scandir(root / base) as entries:
            found.update(e.name for e in entries if e.is_dir() and os.path.isfile(os.path.join(e.path, "__init__.py")))
    return frozenset(found)


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
