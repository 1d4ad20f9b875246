"""Translation throughput: the builtin engine in MB/s over a generated CUDA tree (and hipify-perl, when installed).

Usage: python benchmarks/bench_translate.py [--files N] [--repeat K]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from migrate.tools import run_tool  # noqa: E402
from migrate.translate import translate_bytes  # noqa: E402

INPUTS = ROOT / "fixtures" / "translate" / "input"
PORTED = ROOT / "fixtures" / "translate" / "expected"


def make_tree(top: Path, files: int, origin: Path = INPUTS) -> list[Path]:
    """FILES sources (~20-40 KB each) made of the translation fixtures (CUDA, or already ported) with renamed kernels."""
    sources = [p.read_text() for p in sorted(origin.iterdir()) if p.suffix in (".cu", ".cuh")]
    made = []
    for index in range(files):
        body = "\n".join(s.replace("saxpy", f"saxpy_{index}_{n}") for n, s in enumerate(sources * 4))
        path = top / f"mod{index % 20:02d}" / f"unit{index:04d}.cu"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        made.append(path)
    return made


def time_builtin(paths: list[Path], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for path in paths:
            translate_bytes(path.read_bytes(), path.name)
        best = min(best, time.perf_counter() - start)
    return best


def time_hipify_perl(paths: list[Path], tool: str) -> float:
    start = time.perf_counter()
    for path in paths:
        run = run_tool([tool, path])
        if not run.ok:
            raise SystemExit(f"hipify-perl failed: {run.describe()}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-translate-") as tmp:
        paths = make_tree(Path(tmp), args.files)
        size = sum(p.stat().st_size for p in paths) / 1e6
        builtin = time_builtin(paths, args.repeat)
        print(f"tree: {len(paths)} files, {size:.1f} MB")
        print(f"builtin: {builtin:.2f} s, {size / builtin:.2f} MB/s (best of {args.repeat})")
        ported = make_tree(Path(tmp) / "ported", args.files, PORTED)
        ported_size = sum(p.stat().st_size for p in ported) / 1e6
        noop = time_builtin(ported, args.repeat)
        print(f"builtin on an already-ported tree ({ported_size:.1f} MB): {ported_size / noop:.2f} MB/s")
        perl = shutil.which("hipify-perl")
        if perl:
            seconds = time_hipify_perl(paths, perl)
            print(f"hipify-perl: {seconds:.2f} s, {size / seconds:.2f} MB/s; builtin/hipify-perl = {seconds / builtin:.2f}x")
        else:
            print("hipify-perl: not installed (no ratio)")


if __name__ == "__main__":
    main()
