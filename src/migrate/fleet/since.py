"""What changed since an earlier audit (`--since PREVIOUS.db`): blockers that are new, repositories that became
ROCm-ready or stopped being so, verdicts that moved, repositories added or gone. Repositories match by source and ref."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from migrate.errors import InputError
from migrate.fleet.model import DONE, Outcome
from migrate.fleet.store import Store
from migrate.weights import VERDICTS


@dataclass(frozen=True)
class RepoChange:
    """How one repository's audit differs from the earlier one."""

    name: str
    identity: str
    slug: str
    before: str  # verdict then
    after: str  # verdict now
    became_ready: bool
    lost_ready: bool
    new_blockers: tuple[tuple[str, str], ...]  # (rule, path)
    fixed_blockers: int

    @property
    def direction(self) -> str:
        """easier / harder / same, by verdict."""
        order = VERDICTS.index(self.after) - VERDICTS.index(self.before)
        return "harder" if order > 0 else "easier" if order < 0 else "same"


@dataclass(frozen=True)
class Changes:
    """Everything that changed between the audit in PREVIOUS and this one."""

    previous: str
    changed: tuple[RepoChange, ...]
    added: tuple[str, ...]  # identities audited now, not then
    removed: tuple[str, ...]  # identities audited then, not now

    @property
    def became_ready(self) -> tuple[RepoChange, ...]:
        return tuple(c for c in self.changed if c.became_ready)

    @property
    def with_new_blockers(self) -> tuple[RepoChange, ...]:
        return tuple(c for c in self.changed if c.new_blockers)


def load(path: Path) -> dict[str, Outcome]:
    """The outcomes of the store at PATH, by identity (read-only; InputError when it is not a fleet store)."""
    if not path.is_file():
        raise InputError(f"--since: no such file: {path}")
    store = Store(path, readonly=True)
    try:
        return by_identity(store.outcomes().values())
    finally:
        store.close()


def by_identity(outcomes: Iterable[Outcome]) -> dict[str, Outcome]:
    """OUTCOMES by identity, a done one over a failed one."""
    found: dict[str, Outcome] = {}
    for outcome in outcomes:
        if outcome.identity not in found or outcome.status == DONE:
            found[outcome.identity] = outcome
    return found


def compare(previous_path: str, before: Mapping[str, Outcome], now: Iterable[Outcome]) -> Changes:
    """What changed from BEFORE (by identity) to NOW."""
    current = by_identity(now)
    changed = []
    for identity, outcome in current.items():
        old = before.get(identity)
        if old is None or old.status != DONE or outcome.status != DONE:
            continue
        change = _change(old, outcome)
        if change.became_ready or change.lost_ready or change.new_blockers or change.fixed_blockers \
                or change.before != change.after:
            changed.append(change)
    return Changes(
        previous=previous_path,
        changed=tuple(changed),
        added=tuple(i for i in current if i not in before),
        removed=tuple(i for i in before if i not in current),
    )


def _change(old: Outcome, new: Outcome) -> RepoChange:
    then, now = set(old.blocking), set(new.blocking)
    return RepoChange(
        name=new.name, identity=new.identity, slug=new.slug, before=old.verdict, after=new.verdict,
        became_ready=new.ready and not old.ready, lost_ready=old.ready and not new.ready,
        new_blockers=tuple(sorted(now - then)), fixed_blockers=len(then - now),
    )
