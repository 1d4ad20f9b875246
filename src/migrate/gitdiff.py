"""Lines changed since a git ref (working tree, staged or not, plus untracked files), for --diff-base."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from migrate import gitcmd
from migrate.errors import InputError
from migrate.model import Finding

Changes = Mapping[str, "frozenset[int] | None"]  # path -> changed lines; None: the whole file is new
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13}


def changed_lines(root: Path, ref: str) -> dict[str, frozenset[int] | None]:
    """Paths (relative to ROOT) changed since REF, with the changed line numbers of each; a changed path
    whose lines cannot be told is kept whole (fail closed)."""
    if ref.startswith("-"):
        raise InputError(f"--diff-base {ref}: not a git ref")
    commit = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}",
                  what=f"--diff-base {ref}: no such commit").strip().decode()
    common = ("--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--find-renames",
              "--relative", commit, "--")  # a submodule's own config could name filters: never looked into
    patch = _git(root, "diff", "-U0", "--src-prefix=a/", "--dst-prefix=b/", *common, what=f"git diff {ref} failed")
    names = _git(root, "diff", "-z", "--name-only", *common, what=f"git diff {ref} failed")
    lines = dict(_parse(patch))
    changes: dict[str, frozenset[int] | None] = {name: lines.get(name) for name in gitcmd.split_z(names)}
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard", what="git ls-files failed")
    changes.update((path, None) for path in gitcmd.split_z(untracked))
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


def _parse(diff: bytes) -> Iterator[tuple[str, frozenset[int]]]:
    """(new path, added lines) per file of a -U0 patch; a pure rename has no lines."""
    path: str | None = None
    lines: set[int] = set()
    for text in diff.split(b"\n"):
        if text.startswith(b"diff --git "):
            if path is not None:
                yield path, frozenset(lines)
            path, lines = None, set()
        elif text.startswith((b"rename to ", b"copy to ")):
            path = os.fsdecode(_unquote(text.split(b" to ", 1)[1]))
        elif text.startswith(b"+++ "):
            target = _unquote(text[4:])
            path = os.fsdecode(target[2:]) if target.startswith(b"b/") else None
        elif path is not None and (match := _HUNK.match(text)):
            start, count = int(match.group(1)), int(match.group(2) or 1)
            lines.update(range(start, start + count))
    if path is not None:
        yield path, frozenset(lines)


def _unquote(name: bytes) -> bytes:
    """A file name from a diff header: git C-quotes unusual names and ends names holding a space with a tab."""
    if not (name.startswith(b'"') and name.endswith(b'"')):
        return name[:-1] if name.endswith(b"\t") else name
    out = bytearray()
    body, i = name[1:-1], 0
    while i < len(body):
        char = body[i]
        if char != 0x5C or i + 1 >= len(body):  # not a backslash
            out.append(char)
            i += 1
        elif body[i + 1 : i + 4].isdigit():
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
    return bytes(out)


def _git(root: Path, *args: str, what: str) -> bytes:
    done = gitcmd.run(root, *args)
    if done.returncode == gitcmd.EXIT_NOT_FOUND:
        raise InputError(f"{what}: cannot run git ({done.stderr.strip()})")
    if not done.ok:
        detail = done.stderr.strip().splitlines()
        raise InputError(f"{what}" + (f": {detail[-1]}" if detail else ""))
    return done.stdout
