"""The fleet's store, DIR/fleet.db (SQLite): every repository's outcome and reports, each committed the moment it
arrives, so a killed run loses no finished result and a resumed one repeats none; and the runs that wrote them."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from migrate import __version__
from migrate.errors import InputError
from migrate.fleet.model import Outcome

SCHEMA = "rocm-migrate/fleet-store/1"
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL, tool TEXT NOT NULL, cluster TEXT NOT NULL,
  jobs INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS results (
  key TEXT PRIMARY KEY, identity TEXT NOT NULL, name TEXT NOT NULL, slug TEXT NOT NULL, status TEXT NOT NULL,
  reason TEXT NOT NULL, verdict TEXT NOT NULL, rocm_status TEXT NOT NULL, risk_score INTEGER NOT NULL,
  effort_low REAL NOT NULL, effort_high REAL NOT NULL, seconds REAL NOT NULL, peak_mb REAL NOT NULL,
  run INTEGER NOT NULL REFERENCES runs(id), finished REAL NOT NULL, outcome TEXT NOT NULL, reports BLOB NOT NULL);
"""


class Store:
    """One fleet.db, open for a run (read-write) or for --since (read-only)."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        try:
            if readonly:
                self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
            else:
                self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")  # a result committed is on disk, whatever kills us next
                self._db.executescript(_TABLES)
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA,))
            found = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.Error as exc:
            raise InputError(f"{path} is not a fleet store: {exc}") from None
        if found is None or found[0] != SCHEMA:
            self._db.close()
            raise InputError(f"{path} is a fleet store of another version ({found[0] if found else 'unknown'})")

    def close(self) -> None:
        self._db.close()

    def begin_run(self, *, cluster: str, jobs: int) -> int:
        """Record a run starting; its id."""
        cursor = self._db.execute("INSERT INTO runs (started, tool, cluster, jobs) VALUES (?, ?, ?, ?)",
                                  (time.time(), __version__, cluster, jobs))
        return int(cursor.lastrowid or 0)

    def end_run(self, run: int) -> None:
        self._db.execute("UPDATE runs SET finished = ? WHERE id = ?", (time.time(), run))

    def put(self, run: int, outcome: Outcome, reports: dict[str, str]) -> None:
        """Store OUTCOME and its REPORTS in one transaction (a later outcome of the same key replaces it)."""
        blob = zlib.compress(json.dumps(reports, ensure_ascii=False).encode("utf-8", "surrogatepass"), 6)
        row = (outcome.key, outcome.identity, outcome.name, outcome.slug, outcome.status, outcome.reason,
               outcome.verdict, outcome.rocm_status, outcome.score, outcome.low, outcome.high, outcome.seconds,
               outcome.peak_mb, run, time.time(), json.dumps(outcome.to_dict(), ensure_ascii=False), blob)
        with self._transaction():
            self._db.execute(f"INSERT OR REPLACE INTO results VALUES ({', '.join('?' * len(row))})", row)

    def outcomes(self) -> dict[str, Outcome]:
        """Every stored outcome, by key."""
        rows = self._db.execute("SELECT outcome FROM results ORDER BY finished")
        return {o.key: o for o in (Outcome.from_dict(json.loads(text)) for (text,) in rows)}

    def runs_of(self) -> dict[str, int]:
        """The run that stored each key."""
        return dict(self._db.execute("SELECT key, run FROM results"))

    def reports(self, key: str) -> dict[str, str]:
        """The reports stored with KEY (format -> text); empty for a failed repository."""
        found = self._db.execute("SELECT reports FROM results WHERE key = ?", (key,)).fetchone()
        if found is None:
            return {}
        return dict(json.loads(zlib.decompress(found[0]).decode("utf-8", "surrogatepass")))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
