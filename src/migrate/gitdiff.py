"""Lines changed since a git ref (working tree, staged or not, plus untracked files), for --diff-base."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from migrate.errors import InputError
from migrate.model import Finding

Changes = Mapping[str, "frozenset[int] | None"]  # path -> changed lines; None: the whole file is new
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines(root: Path, ref: str) -> dict[str, frozenset[int] | None]:
    """Paths (relative to ROOT) changed since REF, with the changed line numbers of each."""
    _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", what=f"--diff-base {ref}: no such commit")
    diff = _git(
        root, "-c", "core.quotepath=off", "diff", "-U0", "--no-color", "--no-ext-diff", "--find-renames",
        "--relative", ref, "--", what=f"git diff {ref} failed",
    )
    changes: dict[str, frozenset[int] | None] = dict(_parse(diff))
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard", what="git ls-files failed")
    changes.update((path, None) for path in untracked.split("\0") if path)
    return changes


def keep_changed(findings: Iterable[Finding], changes: Changes) -> tuple[Finding, ...]:
    """The findings that touch a changed line."""
    kept = []
    for finding in findings:
        if finding.path not in changes:
            continue
        lines = changes[finding.path]
        if lines is None or any(n in lines for n in range(finding.line, max(finding.line, finding.end_line) + 1)):
            kept.append(finding)
    return tuple(kept)


def toplevel(path: Path) -> Path | None:
    """The work tree containing PATH, or None outside git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def _parse(diff: str) -> Iterable[tuple[str, frozenset[int]]]:
    path: str | None = None
    lines: set[int] = set()
    for text in diff.splitlines():
        if text.startswith("+++ "):
            if path is not None:
                yield path, frozenset(lines)
            target = _unquote(text[4:])
            path, lines = (None if target == "/dev/null" else target[2:]), set()
        elif path is not None and (match := _HUNK.match(text)):
            start, count = int(match.group(1)), int(match.group(2) or 1)
            lines.update(range(start, start + count))
    if path is not None:
        yield path, frozenset(lines)


def _unquote(name: str) -> str:
    """git quotes names with unusual characters C-style; undo that."""
    if not (name.startswith('"') and name.endswith('"')):
        return name
    raw = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", "replace").decode("utf-8", "replace")


def _git(root: Path, *args: str, what: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, errors="replace", check=False)
    except OSError as exc:
        raise InputError(f"{what}: cannot run git ({exc.strerror or exc})") from None
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        raise InputError(f"{what}" + (f": {detail[-1]}" if detail else ""))
    return done.stdout
