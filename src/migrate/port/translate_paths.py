"""`migrate translate`: files and directories translated to one file (-o), a mirrored tree (--out-dir) or in place,
written by the port's one writer."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from migrate import writer
from migrate.bounded import Refused, read_bytes
from migrate.defaults import DEFAULT_MAX_FILE_SIZE
from migrate.discover import discover, list_files
from migrate.model import Finding, Skipped, SourceFile
from migrate.port.apply import ApplyError, copyable, fresh_dir, write_port
from migrate.port.plan import FileChange, Plan
from migrate.port.translate import Engine, Translation, is_translatable, translate_file


@dataclass(frozen=True)
class TranslateOutcome:
    """What `migrate translate` did."""

    engine: str
    translated: tuple[str, ...]
    written: tuple[str, ...]
    destination: Path
    findings: tuple[Finding, ...] = ()
    skipped: tuple[Skipped, ...] = ()


def translate_paths(
    paths: Iterable[Path], engine: Engine, *, output: Path | None = None, out_dir: Path | None = None,
    in_place: bool = False,
) -> TranslateOutcome:
    """Translate files and directories to OUTPUT (one file), OUT_DIR (a mirrored tree) or in place; directories
    are listed as scan lists them, and a symlink is never followed."""
    given = [Path(os.path.abspath(p)) for p in paths]
    if sum((output is not None, out_dir is not None, in_place)) != 1:
        raise ApplyError("choose exactly one of -o FILE, --out-dir DIR or --in-place")
    for path in given:
        if not os.path.lexists(path):
            raise ApplyError(f"path does not exist: {path}")
    if output is not None:
        return _translate_one(given, output, engine)
    base, sources, skipped, listed = _expand(given)
    translations = [translate_file(s.path, s.relpath, engine) for s in sources if is_translatable(s.relpath)]
    changes = [FileChange(t.relpath, t.original, t.translated) for t in translations if t.changed]
    destination = base
    if out_dir is not None:
        destination = fresh_dir(out_dir, base)
        done = {t.relpath: t for t in translations if t.skipped is None}
        changes = [_mirrored(base, rel, done.get(rel)) for rel in copyable(base, listed)]
    elif changes:
        _check_no_link_above(base)
    plan = plan_from_translations(base, engine.name, translations)
    written = write_port(Plan(destination, engine.name, tuple(changes)), use_git=False).written
    return TranslateOutcome(engine.name, tuple(c.relpath for c in plan.changes), written, destination,
                            plan.findings, tuple(sorted({*plan.skipped, *skipped})))


def plan_from_translations(root: Path, engine: str, translations: Iterable[Translation]) -> Plan:
    """A plan made of already computed translations (the translate command)."""
    done = list(translations)
    changes = tuple(FileChange(t.relpath, t.original, t.translated) for t in done if t.changed)
    skipped = tuple(sorted(Skipped(t.relpath, t.skipped) for t in done if t.skipped))
    return Plan(root, engine, changes, tuple(sorted(f for t in done for f in t.findings)), skipped)


def _check_no_link_above(base: Path) -> None:
    """Refuse to write in place under BASE when a directory on the way to it is a symlink: `translate vdir/*.cu`
    with vdir a link out of the tree would rewrite the files it points at. The way is taken from the deepest
    directory that holds both BASE and the current directory (BASE itself when they share only the root)."""
    common = Path(os.path.commonpath([base, Path.cwd()]))
    top = base if common == Path(common.anchor) else common
    for directory in [base, *(parent for parent in base.parents if top in parent.parents)]:
        if directory.is_symlink():
            raise ApplyError(f"{directory} is a symlinked directory: not written through (name the real path)")


def _translate_one(given: list[Path], output: Path, engine: Engine) -> TranslateOutcome:
    if len(given) != 1 or not given[0].is_file():
        raise ApplyError("-o takes exactly one input file; use --out-dir for several files or a directory")
    done = translate_file(given[0], given[0].name, engine)
    if done.skipped:
        raise ApplyError(f"{given[0]}: {done.skipped}")
    try:
        writer.write_file(output, done.translated, mode=given[0].stat().st_mode & 0o7777)
    except OSError as exc:
        raise ApplyError(f"cannot write {output}: {exc.strerror or exc}") from None
    translated = (given[0].name,) if done.changed else ()
    return TranslateOutcome(engine.name, translated, (output.name,), output.parent, done.findings)


def _expand(given: list[Path]) -> tuple[Path, list[SourceFile], list[Skipped], list[str]]:
    """The common base directory; the sources under the paths (the one file lister's view, relative to the
    base); what was skipped; and every listed file (for a mirror)."""
    base = given[0] if len(given) == 1 and given[0].is_dir() and not given[0].is_symlink() else Path(
        os.path.commonpath([p if p.is_dir() and not p.is_symlink() else p.parent for p in given]))
    sources: list[SourceFile] = []
    skipped: list[Skipped] = []
    listed: list[str] = []
    for path in given:
        prefix = path.relative_to(base).as_posix()
        if path.is_symlink():
            skipped.append(Skipped(prefix, "symlink; not followed"))
            continue
        top, files = (path, ()) if path.is_dir() else (path.parent, (path,))
        within = top.relative_to(base).as_posix()
        for item in discover(top, files=files, max_file_size=DEFAULT_MAX_FILE_SIZE):
            if isinstance(item, Skipped):
                skipped.append(Skipped(_join(within, item.path), item.reason))
            else:
                sources.append(replace(item, relpath=_join(within, item.relpath)))
        listed += [_join(prefix, rel) for rel, _ in list_files(path)] if path.is_dir() else [prefix]
    return base, sources, skipped, sorted(set(listed))


def _join(prefix: str, relpath: str) -> str:
    return f"{prefix}/{relpath}" if prefix and prefix != "." else relpath


def _mirrored(base: Path, relpath: str, done: Translation | None) -> FileChange:
    source = base / relpath
    info = source.stat()
    try:
        data = done.translated if done is not None else read_bytes(source, limit=info.st_size)
    except Refused as exc:
        raise ApplyError(f"cannot copy {relpath}: {exc}") from None
    return FileChange(relpath, None, data, reason="translated" if done else "copied", mode=info.st_mode & 0o7777)
