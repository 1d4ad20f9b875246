#!/usr/bin/env python3
"""Fleet throughput: repositories per minute of `migrate fleet` against a sequential loop of `migrate scan`, and
how it scales from 1 to N local workers.

    python benchmarks/bench_fleet.py --corpus /work/eval/corpus_a                  # every checkout there
    python benchmarks/bench_fleet.py --corpus DIR --workers 1,2,4 --limit 20
    python benchmarks/bench_fleet.py --corpus DIR --screenshot docs/fleet-report.png

The repositories are the subdirectories of --corpus, read at run time (none is kept in this repository). Every
measurement starts from an empty cache and an empty output folder, so each repository is scanned cold; the
sequential loop writes the same two reports per repository as the fleet does (JSON and HTML). --warm adds a
second fleet run on the warm cache (a re-audit of unchanged repositories). Figures: docs/fleet.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,2200")


def migrate() -> list[str]:
    """The migrate command of this checkout's virtualenv, else the one on PATH, else this Python's migrate."""
    local = ROOT / ".venv" / "bin" / "migrate"
    if local.exists():
        return [str(local)]
    found = shutil.which("migrate")
    return [found] if found else [sys.executable, "-c", "from migrate.cli import main; main()"]


def checkouts(corpus: Path, limit: int | None) -> list[Path]:
    found = sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith("."))
    return found[:limit] if limit else found


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (this command and everything it waited for) of COMMAND."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def sequential(repos: list[Path], work: Path) -> tuple[float, float, dict[str, str]]:
    """The shell loop a user would write: one `migrate scan` per repository, JSON and HTML reports."""
    cache, out = work / "seq-cache", work / "seq-out"
    out.mkdir()
    wall = cpu = 0.0
    verdicts = {}
    for repo in repos:
        report = out / f"{repo.name}.json"
        spent = timed([*migrate(), "scan", str(repo), "--format", "json", "--output", str(report),
                       "--report", str(out / f"{repo.name}.html"), "--cache-dir", str(cache)])
        wall, cpu = wall + spent[0], cpu + spent[1]
        verdicts[repo.name] = json.loads(report.read_text())["summary"]["verdict"]
    return wall, cpu, verdicts


def fleet(corpus: Path, listed: Path, work: Path, workers: int, cache: Path) -> tuple[float, float, Path]:
    out = work / f"fleet-{workers}-{time.monotonic_ns()}"
    spent = timed([*migrate(), "fleet", str(listed), "--out", str(out), "--workers", str(workers),
                   "--cache-dir", str(cache)])
    return spent[0], spent[1], out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a folder of checkouts")
    parser.add_argument("--limit", type=int, default=None, help="only the first N checkouts (by name)")
    parser.add_argument("--workers", default=f"1,{os.cpu_count() or 1}", help="worker counts to measure, e.g. 1,2,4")
    parser.add_argument("--warm", action="store_true", help="also a fleet run on the warm cache")
    parser.add_argument("--no-sequential", action="store_true", help="skip the sequential loop")
    parser.add_argument("--screenshot", type=Path, help="save a PNG of the last fleet report (headless Chromium)")
    args = parser.parse_args()
    repos = checkouts(args.corpus, args.limit)
    counts = sorted({int(n) for n in args.workers.split(",")})
    print(f"{len(repos)} repositories from {args.corpus}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}")
    work = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    listed = work / "repos.txt"
    listed.write_text("".join(f"{repo}\n" for repo in repos))
    rows = []
    verdicts: dict[str, str] = {}
    try:
        if not args.no_sequential:
            wall, cpu, verdicts = sequential(repos, work)
            rows.append(("sequential migrate scan", "-", wall, cpu))
        out = work
        for workers in counts:
            wall, cpu, out = fleet(args.corpus, listed, work, workers, work / f"cache-{workers}")
            rows.append(("migrate fleet", str(workers), wall, cpu))
            if args.warm and workers == counts[-1]:
                again = fleet(args.corpus, listed, work, workers, work / f"cache-{workers}")
                rows.append(("migrate fleet, warm cache", str(workers), again[0], again[1]))
        _print(rows, len(repos))
        _agree(out, verdicts)
        if args.screenshot:
            _screenshot(out / "fleet.html", args.screenshot)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")


def _print(rows: list[tuple[str, str, float, float]], count: int) -> None:
    base = rows[0][2] if rows and rows[0][0].startswith("sequential") else None
    print(f"{'run':28} {'workers':>7} {'wall s':>8} {'CPU s':>8} {'repos/min':>10} {'vs loop':>8}")
    for name, workers, wall, cpu in rows:
        ratio = f"{base / wall:.2f}x" if base else "-"
        print(f"{name:28} {workers:>7} {wall:8.1f} {cpu:8.1f} {count * 60 / wall:10.1f} {ratio:>8}")


def _agree(out: Path, verdicts: dict[str, str]) -> None:
    """The fleet's verdicts are the sequential scans' (the same scan, run elsewhere)."""
    data = json.loads((out / "fleet.json").read_text())
    failed = [r["name"] for r in data["repositories"] if r["status"] != "done"]
    differ = [r["name"] for r in data["repositories"] if verdicts and r.get("verdict") != verdicts.get(r["name"])]
    print(f"fleet: {data['summary']['done']} done, {len(failed)} failed {failed or ''}; "
          f"verdicts differing from the loop: {differ or 'none'}")


def _screenshot(page: Path, png: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        sys.exit("no chromium for --screenshot")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={png.resolve()}",
                        page.as_uri()], check=True, capture_output=True, timeout=120)
    print(f"screenshot: {png}")


if __name__ == "__main__":
    main()
