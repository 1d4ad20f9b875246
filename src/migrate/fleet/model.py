"""The fleet's data: a Job (one repository to audit, with its limits) and its Outcome (what the audit found)."""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from dataclasses import asdict, dataclass, fields
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from migrate.defaults import DEFAULT_TARGETS

DONE, FAILED = "done", "failed"
_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Job:
    """One repository to audit: a local directory or a git URL (with an optional ref), and its limits."""

    source: str  # an absolute local path, or a URL git can fetch
    ref: str = ""  # branch, tag or commit of a URL; empty: the remote's HEAD
    name: str = ""
    targets: tuple[str, ...] = DEFAULT_TARGETS
    timeout: float = 900.0  # seconds for the clone and the scan together
    memory: int = 4 << 30  # bytes of address space the scan process may use
    remote: bool = False  # cloned (shallow) before the scan; else scanned where it is

    @property
    def identity(self) -> str:
        """What names the repository across audits (--since matches on it): the source as shown, and its ref."""
        return f"{redacted(self.source)} {self.ref}".strip()

    @property
    def key(self) -> str:
        """The store's key: the repository and what changes its results (targets), not its limits."""
        text = "\0".join((self.source, self.ref, ",".join(self.targets)))
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]

    @property
    def slug(self) -> str:
        """A file-name-safe folder name for this repository's own reports (and its clone)."""
        readable = _SLUG_UNSAFE.sub("-", self.name).strip("-.")[:60] or "repository"
        return f"{readable}-{self.key[:8]}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        """The Job to_dict wrote."""
        return cls(**{**data, "targets": tuple(data["targets"])})


def redacted(source: str) -> str:
    """SOURCE with the password (or token) of a URL's user part replaced by ***."""
    if "://" not in source:
        return source
    parts = urlsplit(source)
    secret = parts.password is not None or (parts.scheme in ("http", "https") and "@" in parts.netloc)
    if not secret:
        return source
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


@dataclass(frozen=True)
class TargetEffort:
    """The verdict and effort of one repository for one GPU target."""

    target: str
    verdict: str
    score: int
    low: float
    high: float
    blockers: int


@dataclass(frozen=True)
class Blocker:
    """One rule among a repository's worst remaining work: how often, where first."""

    rule: str
    title: str
    severity: str
    category: str
    findings: int
    files: int
    where: str  # path:line of its first finding


@dataclass(frozen=True)
class Outcome:
    """What auditing one repository gave: its verdict, ROCm status and effort, or why it failed."""

    key: str
    identity: str  # the source as shown (no password) and its ref
    name: str
    slug: str
    status: str  # done / failed
    reason: str = ""
    verdict: str = ""
    rocm_status: str = ""
    score: int = 0
    low: float = 0.0
    high: float = 0.0
    targets: tuple[TargetEffort, ...] = ()
    top_blockers: tuple[Blocker, ...] = ()
    blocking: tuple[tuple[str, str], ...] = ()  # (rule, path) of every remaining high or blocker finding
    families: tuple[tuple[str, int], ...] = ()  # category -> findings at medium or above that are work to do
    libraries: tuple[str, ...] = ()  # ROCm substitutes (knowledge-base ids) that answer such work
    findings: int = 0
    by_severity: tuple[tuple[str, int], ...] = ()
    files_scanned: int = 0
    commit: str = ""
    seconds: float = 0.0
    peak_mb: float = 0.0

    @property
    def ready(self) -> bool:
        """ROCm-ready: the repository already builds for ROCm and no target has a blocker left."""
        return self.status == DONE and self.rocm_status == "supported" and all(t.blockers == 0 for t in self.targets)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """The Outcome to_dict wrote (JSON lists back to tuples)."""
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["targets"] = tuple(TargetEffort(**t) for t in values.get("targets", ()))
        values["top_blockers"] = tuple(Blocker(**b) for b in values.get("top_blockers", ()))
        for name in ("blocking", "families", "by_severity"):
            values[name] = tuple(tuple(pair) for pair in values.get(name, ()))
        values["libraries"] = tuple(values.get("libraries", ()))
        return cls(**values)


def failed(job: Job, reason: str, *, seconds: float = 0.0, peak_mb: float = 0.0) -> Outcome:
    """The Outcome of a job that gave no report, and why."""
    return Outcome(key=job.key, identity=job.identity, name=job.name, slug=job.slug, status=FAILED,
                   reason=reason, seconds=round(seconds, 2), peak_mb=round(peak_mb, 1))


@dataclass(frozen=True)
class ScanOptions:
    """How every job of a run scans: the cache, the scan's own processes, and where clones go."""

    cache_dir: str | None = None  # None: the user's cache directory on the worker
    no_cache: bool = False
    jobs: int = 1  # processes inside one scan: the fleet runs scans side by side already
    clone_dir: str | None = None  # None: a folder in the worker's temp directory


def request(job: Job, options: ScanOptions) -> bytes:
    """What a job process reads on stdin (migrate.fleet.job)."""
    return json.dumps({"job": job.to_dict(), "options": asdict(options)}).encode("utf-8", "surrogatepass")


def memory_reason(limit: int) -> str:
    """Why a job stopped at its memory cap."""
    return f"reached the memory cap of {limit / (1 << 20):,.0f} MiB"


def pack(outcome: Outcome, reports: dict[str, str]) -> bytes:
    """What a job sends back: its outcome and its reports (format -> text), as compressed JSON."""
    document = {"outcome": outcome.to_dict(), "reports": reports}
    return zlib.compress(json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass"), 6)


def unpack(payload: bytes) -> tuple[Outcome, dict[str, str]]:
    """The outcome and reports pack() wrote."""
    document = json.loads(zlib.decompress(payload).decode("utf-8", "surrogatepass"))
    return Outcome.from_dict(document["outcome"]), dict(document["reports"])
