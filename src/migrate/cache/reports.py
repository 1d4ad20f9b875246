"""The report memo: the reports of the last scan of a tree, handed back whole while nothing it read has changed."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
from collections.abc import Collection, Iterable
from pathlib import Path

from migrate.bounded import Refused, check_private, read_bytes
from migrate.cache.store import (
    FORMAT, MAX_FILE, atomic_write, dumps, load_json, namespace, private_dir, prune, seen_stamp, stat_stamp,
)
from migrate.config import Settings
from migrate.discover import Found
from migrate.model import Severity
from migrate.ruleset import Ruleset


@dataclasses.dataclass(frozen=True)
class ReportMemo:
    """The reports of the last scan of a tree, kept whole: a scan of the same files (by their stat stamps), rules,
    settings and code hands them back without reading a result. Layout: CACHE_DIR/reports/<namespace>/<key>/, one
    UTF-8 file per report and `worst.json` (the highest severity found, for --fail-on)."""

    place: Path

    def get(
        self, names: list[str], *, files: Collection[str] = ()
    ) -> tuple[dict[str, str | Path], Severity | None] | None:
        """The reports NAMES (those in FILES as the path of the file that keeps them, unread), and the worst
        severity, when all were kept for this key; else None."""
        kept = load_json(self.place / "worst.json")
        worst = kept.get("worst", -1) if isinstance(kept, dict) and kept.get("format") == FORMAT else -1
        if not (worst is None or type(worst) is int and worst in Severity.__members__.values()):
            return None
        texts: dict[str, str | Path] = {}
        for name in names:
            path = self.place / f"{name}.txt"
            try:
                if name in files:
                    check_private(os.stat(path))
                    texts[name] = path
                else:
                    texts[name] = read_bytes(path, limit=MAX_FILE, private=True).decode()
            except (OSError, Refused, UnicodeDecodeError):
                return None
        return texts, None if worst is None else Severity(worst)

    def keep(self, name: str, pieces: Iterable[str]) -> Path | None:
        """Keep the report NAME, written from PIECES as they come, for put() to complete the entry; its file, or
        None when it could not be written."""
        path = self.place / f"{name}.txt"
        with contextlib.suppress(OSError, Refused):
            private_dir(self.place)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.place / "worst.json")  # the entry is incomplete until put() writes it again
            atomic_write(path, pieces)
            return path
        return None

    def discard(self) -> None:
        """Remove what keep() wrote for this key (the scan saw a change: the entry is never completed)."""
        shutil.rmtree(self.place, ignore_errors=True)

    def put(self, texts: dict[str, str], worst: Severity | None) -> None:
        """Keep TEXTS (name -> report) for this key, beside those keep() wrote, and drop what older scans of the
        tree kept. Failures are ignored."""
        with contextlib.suppress(OSError, Refused):
            private_dir(self.place)
            for name, text in texts.items():
                atomic_write(self.place / f"{name}.txt", text.encode())
            kept = {"format": FORMAT, "worst": None if worst is None else int(worst)}
            atomic_write(self.place / "worst.json", dumps(kept))
            for entry in os.scandir(self.place.parent):
                if entry.name != self.place.name and not entry.name.startswith("."):
                    shutil.rmtree(entry.path, ignore_errors=True)
            prune(self.place.parent.parent)


def open_memo(
    root: Path, ruleset: Ruleset, settings: Settings, files: Iterable[Found], extra: Iterable[str], *,
    since: int | None = None,
) -> ReportMemo | None:
    """The report memo for a scan of FILES whose result also depends on EXTRA (the root as written, skipped
    files, the repository's packages...), keyed by the files' stamps now, or with SINCE by those discovery saw
    after SINCE; None without a cache directory, with a baseline file that cannot be read, or when a file changed
    too recently for its stamp to be trusted."""
    if not settings.cache_dir:
        return None
    digest = hashlib.sha256()
    for part in extra:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    if settings.baseline:
        try:
            digest.update(hashlib.sha256(read_bytes(settings.baseline, limit=MAX_FILE)).digest())
        except (OSError, Refused):  # the scan reports what is wrong with it
            return None
    lines = []
    for file in files:
        stamp = stat_stamp(file) if since is None else seen_stamp(file, since)
        if stamp is None:
            return None
        lines.append(f"{file.relpath}\0{stamp}\n")
    digest.update("".join(lines).encode("utf-8", "surrogateescape"))
    place = Path(settings.cache_dir) / "reports" / namespace(root, ruleset, settings) / digest.hexdigest()[:32]
    return ReportMemo(place)
