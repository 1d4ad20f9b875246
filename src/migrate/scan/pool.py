"""The files' results, scanned in this process or, for many files, by a pool of forked workers, until a deadline."""

from __future__ import annotations

import gc
import os
import signal
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from migrate.config import Settings
from migrate.model import FileKind, FileResult, SourceFile
from migrate.packed import encode
from migrate.parse.lexer import warm
from migrate.ruleset import Ruleset
from migrate.scan import prefilter
from migrate.scan.file import TOKEN_KINDS, Shortcuts, scan_file

if TYPE_CHECKING:
    from multiprocessing.pool import IMapIterator

Progress = Callable[[int, int], None]
PARALLEL_FROM = 64  # below this many files a process pool costs more than it saves


def computed(
    sources: Sequence[SourceFile], ruleset: Ruleset, settings: Settings, progress: Progress | None, deadline: float,
    shortcuts: Shortcuts, meanwhile: Callable[[], None] | None = None,
) -> Iterator[tuple[int, FileResult]]:
    """Each source's result with its index in SOURCES, in the order they are done, until DEADLINE (a file started
    before it may finish). SOURCES may make each SourceFile as it is asked for (a large tree's are not kept).
    MEANWHILE, when the files go to workers, is called once they have started: this process's own work, done beside
    theirs instead of after."""
    total = len(sources)
    jobs = worker_count(settings)
    if jobs <= 1 or total < PARALLEL_FROM:
        for index, source in enumerate(sources):
            if time.monotonic() >= deadline:
                return
            yield index, scan_file(source, ruleset, settings, shortcuts)
            if progress:
                progress(index + 1, total)
        return
    sizes, kinds, first_party = _survey(sources)
    for kind in kinds:  # made once here (their matchers imported), shared by the forked workers
        table = prefilter.table(ruleset, kind)
        if kind in TOKEN_KINDS:
            warm(table.tokens.words)
    if first_party:  # first-party C/C++ may need a tree
        from migrate.parse.cuda import warm_bundle  # here: a scan without C/C++ never imports tree-sitter

        warm_bundle()
    import multiprocessing  # here: `check` on a few files never starts a pool

    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    with context.Pool(jobs, initializer=_init_worker, initargs=(ruleset, settings, shortcuts)) as pool:
        done = 0
        batches = pool.imap_unordered(_worker_scan, _units(sources, sizes, jobs))
        if meanwhile:
            meanwhile()
        while (unit := _next_batch(batches, deadline)) is not None:
            for index, result in zip(*unit):
                done += 1
                yield index, result
            if progress:
                progress(done, total)
    # leaving the block terminates the workers, those still busy past the deadline too


def worker_count(settings: Settings) -> int:
    """settings.jobs (0: one per core), never more than the cores this process may use: `jobs` may come
    from the scanned repository's own configuration."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(settings.jobs or cores, cores))


def _next_batch(
    batches: IMapIterator[tuple[list[int], list[FileResult]]], deadline: float
) -> tuple[list[int], list[FileResult]] | None:
    """The next batch of results the workers finish before DEADLINE; None when they are all done or time is up."""
    from multiprocessing import TimeoutError as PoolTimeout

    try:
        return batches.next(timeout=max(0.0, deadline - time.monotonic()))
    except (StopIteration, PoolTimeout):
        return None


# Bytes of sources in one work unit at most: a unit's results reach the parent whole (a 60,000-file tree's units were
# 1,900 files each: up to ~55 MB of findings pickled, as much again unpickled), so a unit grows with the tree unless
# capped; at 2 MB a unit's results stay a few MB, and a tree of 1 GB makes ~500 units (a millisecond each to send).
BATCH_MOST = 2 * 1024 * 1024


def _batches(sources: Sequence[SourceFile], jobs: int) -> Iterator[list[SourceFile]]:
    """Work units of similar byte size (about BATCH_MOST at most, a larger file alone), largest files first: the cost
    follows bytes, not file count, and starting the big ones early keeps one 2 MB header from leaving the other cores
    idle at the end."""
    for _, batch in _units(sources, _survey(sources)[0], jobs):
        yield batch


def _survey(sources: Sequence[SourceFile]) -> tuple[array[int], set[FileKind], bool]:
    """In one read of SOURCES: their sizes, their kinds, whether first-party C/C++ is among them."""
    sizes = array("q")
    kinds: set[FileKind] = set()
    first_party = False
    for source in sources:
        sizes.append(source.size)
        kinds.add(source.kind)
        first_party = first_party or (source.kind in TOKEN_KINDS and not source.vendored)
    return sizes, kinds, first_party


# The last units' share of the budget: the last of them leave a worker idle until the others finish theirs, and the
# smallest files come last, each costing more than its bytes (a 2 MB unit of CUTLASS + CCCL's 1,800 smallest files
# took 0.6 CPU s where one of 16 large files took 0.4)
LAST_SHARE = 4


def _units(sources: Sequence[SourceFile], sizes: array[int], jobs: int) -> Iterator[tuple[list[int], list[SourceFile]]]:
    """_batches' units, each with its files' indices in SOURCES (of SIZES); a unit's SourceFiles are made as it is
    sent, so that a large tree's are never all kept. The last round of units (the files of the last JOBS budgets)
    is cut finer, so that the workers finish close together."""
    left = sum(sizes)
    budget = min(BATCH_MOST, max(64 * 1024, left // (jobs * 16)))
    indices: list[int] = []
    size = 0
    for index in sorted(range(len(sizes)), key=sizes.__getitem__, reverse=True):
        indices.append(index)
        size += sizes[index]
        left -= sizes[index]
        if size >= (budget if left >= jobs * budget else budget // LAST_SHARE):
            yield indices, [sources[i] for i in indices]
            indices, size = [], 0
    if indices:
        yield indices, [sources[i] for i in indices]


_worker_state: tuple[Ruleset, Settings, Shortcuts] | None = None
# A worker's files leave almost no cycles (about 400 objects over all of CUTLASS + CCCL), but the objects they make
# (ASTs, hits, findings) set off ~1,600 collections at the default thresholds (700, 10, 10): 0.7 of its ~22 CPU s.
# These run ~200 (0.15 s); what a cycle holds waits a little longer.
WORKER_GC_THRESHOLDS = (20_000, 50, 1_000)


def _init_worker(ruleset: Ruleset, settings: Settings, shortcuts: Shortcuts) -> None:
    global _worker_state
    _worker_state = (ruleset, settings, shortcuts)
    gc.enable()  # forked inside the parent's paused() block
    gc.freeze()  # what the parent built (rules, compiled regexes) is never garbage: keep collections short
    gc.set_threshold(*WORKER_GC_THRESHOLDS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent alone handles it


def _worker_scan(unit: tuple[list[int], list[SourceFile]]) -> tuple[list[int], list[FileResult]]:
    assert _worker_state is not None
    indices, sources = unit
    return indices, [_packed(scan_file(source, *_worker_state)) for source in sources]


def _packed(result: FileResult) -> FileResult:
    """RESULT with its findings encoded: the parent keeps the bytes as they come, and decodes them only to use them
    (unpickled, a finding costs the parent three times the decoding and ~0.5 KB until the scan ends)."""
    if not result.findings:
        return result
    return replace(result, findings=(), packed=encode(result.findings))
