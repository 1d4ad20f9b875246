"""Translation: the builtin engine against hipify-perl on the same trees, for speed and for what compiles after.

Usage:
  python benchmarks/bench_translate.py [--files N] [--repeat K]          # generated tree from the fixtures
  python benchmarks/bench_translate.py --tree DIR [--tree DIR ...] --compile [--rocm 5.2] [--max-units N]

hipify-perl comes from --hipify-perl, $MIGRATE_HIPIFY_PERL or PATH (AMD's script; never part of the project).
--compile runs `hipcc -fsyntax-only --offload-arch=gfx90a` (HIP_PLATFORM=amd) on every .cu unit of each translated
tree that does not include PyTorch or pybind11 headers itself, and counts the units that compile.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from migrate.tools import run_tool  # noqa: E402
from migrate.port.translate import Options, make_options, translate_bytes  # noqa: E402

INPUTS = ROOT / "fixtures" / "translate" / "input"
PORTED = ROOT / "fixtures" / "translate" / "expected"
SOURCES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".cxx", ".c", ".inl")
_FRAMEWORK = re.compile(rb"#\s*include\s*[<\"](?:torch/|ATen/|c10/|pybind11/|caffe2/)")


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


def time_builtin(paths: list[Path], repeat: int, options: Options = Options()) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for path in paths:
            translate_bytes(path.read_bytes(), path.name, options)
        best = min(best, time.perf_counter() - start)
    return best


def time_hipify_perl(paths: list[Path], tool: str) -> float:
    start = time.perf_counter()
    for path in paths:
        run = run_tool(["perl", tool, "-quiet-warnings", path])
        if not run.ok:
            raise SystemExit(f"hipify-perl failed: {run.describe()}")
    return time.perf_counter() - start


def find_perl(given: str | None) -> str | None:
    found = given or os.environ.get("MIGRATE_HIPIFY_PERL") or shutil.which("hipify-perl")
    return found if found and Path(found).is_file() else None


def sources_of(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.suffix in SOURCES and p.is_file() and not p.is_symlink())


def translated_copy(tree: Path, out: Path, translate: Callable[[Path], bytes]) -> float:
    """Copy TREE to OUT with every source translated; returns the seconds spent translating."""
    shutil.copytree(tree, out, symlinks=True)
    spent = 0.0
    for path in sources_of(out):
        start = time.perf_counter()
        data = translate(path)
        spent += time.perf_counter() - start
        path.write_bytes(data)
    return spent


def compile_units(tree: Path, units: list[str]) -> dict[str, bool]:
    def one(rel: str) -> bool:
        path = tree / rel
        includes = [f"-I{d}" for d in (path.parent, tree, tree / "include", tree / "csrc") if d.is_dir()]
        command = ["hipcc", "--offload-arch=gfx90a", "-fsyntax-only", "-w", "-std=c++17", *includes, "-x", "hip", str(path)]
        return run_tool(command, env={"HIP_PLATFORM": "amd"}, timeout=300).ok

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(units, pool.map(one, units)))


def compare_trees(trees: list[Path], perl: str, options: Options, compile_: bool, max_units: int) -> None:
    start = time.perf_counter()
    translate_bytes(b"void f() { cudaDeviceSynchronize(); }\n", "warm.cu", options)  # load the map and the parser
    startup = time.perf_counter() - start
    print(f"builtin start-up (once per process: name map, rules, parser): {startup:.2f} s")
    totals = {"builtin": [0.0, 0, 0], "hipify-perl": [0.0, 0, 0]}
    with tempfile.TemporaryDirectory(prefix="bench-translate-") as tmp:
        for index, tree in enumerate(trees):
            units = [p.relative_to(tree).as_posix() for p in sorted(tree.rglob("*.cu"))
                     if not _FRAMEWORK.search(p.read_bytes())][:max_units]
            size = sum(p.stat().st_size for p in sources_of(tree)) / 1e6
            engines: dict[str, Callable[[Path], bytes]] = {
                "builtin": lambda p: translate_bytes(p.read_bytes(), p.name, options).translated,
                "hipify-perl": lambda p: _perl_output(perl, p, options),
            }
            for name, translate in engines.items():
                out = Path(tmp) / name / f"{index}-{tree.name}"
                seconds = translated_copy(tree, out, translate)
                results = compile_units(out, units) if compile_ else {}
                ok = sum(results.values())
                failed = sorted(unit for unit, passed in results.items() if not passed)
                totals[name][0] += seconds
                totals[name][1] += ok
                totals[name][2] += len(units)
                print(f"{tree.name}: {name}: {size:.2f} MB in {seconds:.2f} s" + (f"; {ok}/{len(units)} units compile" if compile_ else ""))
                if failed:
                    print(f"  failed: {' '.join(failed)}")
    for name, (seconds, ok, count) in totals.items():
        print(f"TOTAL {name}: {seconds:.2f} s" + (f"; {ok}/{count} units compile" if compile_ else ""))
    perl_seconds, builtin_seconds = totals["hipify-perl"][0], totals["builtin"][0]
    print(f"builtin/hipify-perl speed ratio: {perl_seconds / builtin_seconds:.1f}x "
          f"({perl_seconds / (builtin_seconds + startup):.1f}x with the start-up)")


def _perl_output(perl: str, path: Path, options: Options) -> bytes:
    flags = (["-roc"] if options.roc else []) + (["-hip-kernel-execution-syntax"] if options.launch_syntax != "cuda" else [])
    run = run_tool(["perl", perl, "-quiet-warnings", *flags, path])
    return run.stdout if run.ok and run.stdout else path.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, action="append", default=[], help="A real source tree to compare on.")
    parser.add_argument("--compile", action="store_true", help="Also count the .cu units hipcc accepts after each engine.")
    parser.add_argument("--rocm", default=None, help="ROCm release for the builtin engine (Debian's hipcc: 5.2).")
    parser.add_argument("--max-units", type=int, default=10_000, help="At most this many units per tree.")
    parser.add_argument("--hipify-perl", default=None)
    args = parser.parse_args()
    perl = find_perl(args.hipify_perl)
    options = make_options(rocm=args.rocm)
    if args.tree:
        if perl is None:
            raise SystemExit("hipify-perl not found: pass --hipify-perl or set MIGRATE_HIPIFY_PERL")
        compare_trees(args.tree, perl, options, args.compile, args.max_units)
        return
    with tempfile.TemporaryDirectory(prefix="bench-translate-") as tmp:
        paths = make_tree(Path(tmp), args.files)
        size = sum(p.stat().st_size for p in paths) / 1e6
        builtin = time_builtin(paths, args.repeat, options)
        print(f"tree: {len(paths)} files, {size:.1f} MB")
        print(f"builtin: {builtin:.2f} s, {size / builtin:.2f} MB/s (best of {args.repeat})")
        ported = make_tree(Path(tmp) / "ported", args.files, PORTED)
        ported_size = sum(p.stat().st_size for p in ported) / 1e6
        noop = time_builtin(ported, args.repeat, options)
        print(f"builtin on an already-ported tree ({ported_size:.1f} MB): {ported_size / noop:.2f} MB/s")
        if perl:
            seconds = time_hipify_perl(paths, perl)
            print(f"hipify-perl: {seconds:.2f} s, {size / seconds:.2f} MB/s; builtin/hipify-perl = {seconds / builtin:.2f}x")
        else:
            print("hipify-perl: not found (no ratio); pass --hipify-perl or set MIGRATE_HIPIFY_PERL")


if __name__ == "__main__":
    main()
