#!/usr/bin/env python3
"""`migrate check` on a few changed files of a large git repo, and cold vs warm (cached) scans of it.

    python benchmarks/bench_check.py                  # generate a 10,000-file / ~100 MB repo
    python benchmarks/bench_check.py --files 3000     # a smaller one
    python benchmarks/bench_check.py --changed 10 --rounds 7
    python benchmarks/bench_check.py --fixtures 300   # 300 copies of fixtures/repos/* instead (realistic density)
    python benchmarks/bench_check.py --against ../main/src --tree CUTLASS --rounds 21   # check only: A/B in turn

Every figure is the wall time of the whole `migrate` process, as a user or pre-commit sees it.
The changed files are edited before each round, so their results never come from the cache.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scan import generate  # noqa: E402  (same directory)

NEW_CODE = "\nvoid added_{n}(int* p) {{ cudnnHandle_t h_{n}; cudaMalloc(&p, {n}); }}\n"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos"


def copy_fixtures(root: Path, copies: int) -> int:
    """COPIES copies of every fixture repository under ROOT; the number of files written."""
    for index in range(copies):
        for repo in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
            shutil.copytree(repo, root / f"copy{index:04d}" / repo.name)
    return sum(1 for p in root.rglob("*") if p.is_file())


def timed(command: list[str], cwd: Path) -> tuple[float, int]:
    """(seconds, exit code) of COMMAND; its CPU seconds (user + system) in cpu_seconds[-1]."""
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return time.perf_counter() - start, done.returncode


cpu_seconds: list[float] = []  # on a shared machine CPU time says more than wall time


def scan_stage(root: Path, cache: Path | None) -> float:
    """Seconds of the scan itself (discover, cache, parse, match), in a fresh process, without rendering."""
    probe = (
        "import sys, time\nfrom pathlib import Path\nfrom migrate.config import load_settings\n"
        "from migrate.scan import scan\nstart = time.perf_counter()\n"
        "options = {'cache_dir': sys.argv[1]} if sys.argv[1] else {'no_cache': True}\n"
        "scan(Path('.'), load_settings(Path('.'), options))\nprint(time.perf_counter() - start)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(cache or "")], cwd=root, capture_output=True, text=True)
    return float(done.stdout.strip().splitlines()[-1])


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def edit(files: list[Path], round_: int) -> None:
    for index, path in enumerate(files):
        with path.open("a") as stream:
            stream.write(NEW_CODE.format(n=round_ * 1000 + index))


def against(other: Path, tree: Path, changed: int, rounds: int) -> None:
    """`migrate check` of CHANGED `.cu` files of TREE (copied into a fresh git repository), this checkout's src/ and
    OTHER (another checkout's src/) in turn, each from compiled bytecode and its own warm cache, the files edited
    before every run: the median CPU and wall seconds of ROUNDS runs each. On a shared machine the load changes
    from minute to minute; runs in turn meet the same load."""
    sides = {"this": Path(__file__).resolve().parents[1] / "src", "other": other.resolve()}
    workdir = Path(tempfile.mkdtemp(prefix="migrate-bench-ab-"))
    try:
        repo = workdir / "repo"
        names = sorted(p.relative_to(tree) for p in tree.rglob("*.cu") if ".git" not in p.parts)[:changed]
        for name in names:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(tree / name, repo / name)
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "copied")
        targets = [repo / name for name in names]
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
        figures: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
        for round_ in range(rounds + 2):  # the first two fill each side's bytecode and cache
            for side, src in sides.items():
                edit(targets, round_ * len(sides) + list(sides).index(side))
                command = [sys.executable, "-m", "migrate", "check", *map(str, names),
                           "--cache-dir", str(workdir / f"cache-{side}")]
                start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run(command, cwd=repo, env={**env, "PYTHONPATH": str(src)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                if round_ >= 2:
                    figures[side].append((cpu, time.perf_counter() - start))
        print(f"check of {len(names)} changed files, {rounds} runs each in turn, load {os.getloadavg()[0]:.1f}:")
        for side, src in sides.items():
            cpu = statistics.median(c for c, _ in figures[side])
            wall = statistics.median(w for _, w in figures[side])
            print(f"  {side} ({src}): CPU median {cpu:.3f} s, wall median {wall:.3f} s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fixtures", type=int, default=0, help="copies of fixtures/repos/* instead of a generated tree")
    parser.add_argument("--against", type=Path, help="only check: this checkout and another's src/ in turn")
    parser.add_argument("--tree", type=Path, default=FIXTURES, help="with --against: the .cu files' tree")
    args = parser.parse_args()
    if args.against:
        against(args.against, args.tree, args.changed, args.rounds)
        return
    migrate = shutil.which("migrate", path=str(Path(sys.executable).parent)) or "migrate"
    workdir = Path(tempfile.mkdtemp(prefix="migrate-bench-check-"))
    try:
        root, cache = workdir / "repo", workdir / "cache"
        if args.fixtures:
            files = copy_fixtures(root, args.fixtures)
            print(f"repo: {args.fixtures} copies of fixtures/repos: {files:,} files, {os.cpu_count()} cores")
        else:
            generate(root, args.files, args.megabytes)
            print(f"repo: generated, {args.files:,} files, {args.megabytes} MB, {os.cpu_count()} cores")
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        stage_cold = scan_stage(root, workdir / "stage-cache")
        stage_warm = min(scan_stage(root, workdir / "stage-cache") for _ in range(3))
        stage_none = scan_stage(root, None)
        print(f"scan stage: no cache {stage_none:.2f} s; cold cache {stage_cold:.2f} s; warm {stage_warm:.2f} s "
              f"({stage_cold / stage_warm:.0f}x faster)")
        scan = [migrate, "scan", ".", "--format", "json", "--output", os.devnull, "--cache-dir", str(cache)]
        cold, _ = timed(scan, root)
        cold_cpu = cpu_seconds[-1]
        warm = min(timed(scan, root)[0] for _ in range(3))
        warm_cpu = min(cpu_seconds[-3:])
        print(f"whole `migrate scan --format json` (rendering included): cold {cold:.2f} s; warm {warm:.2f} s "
              f"({cold / warm:.1f}x faster); CPU cold {cold_cpu:.2f} s, warm {warm_cpu:.2f} s")
        targets = sorted(p for p in root.rglob("*.cu"))[: args.changed]
        names = [str(p.relative_to(root)) for p in targets]
        check = [migrate, "check", *names, "--cache-dir", str(cache)]
        changed = []
        for round_ in range(args.rounds):
            edit(targets, round_)
            changed.append(timed(check, root)[0])
        changed_cpu = statistics.median(cpu_seconds[-args.rounds:])
        unchanged = [timed(check, root)[0] for _ in range(args.rounds)]
        print(f"check {len(names)} changed files: median {statistics.median(changed):.3f} s, max {max(changed):.3f} s "
              f"(CPU median {changed_cpu:.3f} s)")
        print(f"check {len(names)} unchanged files: median {statistics.median(unchanged):.3f} s")
        edit(targets, args.rounds)
        diff = [timed([migrate, "check", "--diff-base", "HEAD", "--cache-dir", str(cache)], root)[0] for _ in range(3)]
        print(f"check --diff-base HEAD (whole repo, {len(names)} files changed): median {statistics.median(diff):.3f} s")
        cold_check, _ = timed([migrate, "check", *names, "--cache-dir", str(workdir / "empty-cache")], root)
        print(f"check {len(names)} files with an empty cache (rules not yet cached): {cold_check:.3f} s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
