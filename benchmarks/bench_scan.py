#!/usr/bin/env python3
"""Scan throughput: files/s, MB/s and peak RSS (main process plus workers) of `migrate scan`.

    python benchmarks/bench_scan.py                 # generate a 15,000-file / ~250 MB tree, scan it
    python benchmarks/bench_scan.py --path ~/src/x  # also scan a real checkout (repeatable)
    python benchmarks/bench_scan.py --path ~/src/x --no-generated --check  # only it, plus the findings check
    python benchmarks/bench_scan.py --files 3000    # a smaller generated tree

Each tree's scans are followed, in the same run, by a baseline (`rg --count` of CUDA words, else `grep -rcE`) and
`migrate check` on ten of its `.cu` files, copied into a fresh git repository and edited before each of five runs;
one line then gives issue 25's figures beside their targets.

--check scans each tree twice more in this process: with the fast path (vendored C/C++/CUDA on tokens) and
with a full tree-sitter parse of every file, and prints how many C/C++/CUDA files each parsed, whether the
first-party findings are identical and, per token-level rule, the vendored findings of both. Real trees are read
from wherever they are at run time; none is kept in this repository (docs/performance.md has the figures).

The generated tree mixes Python (40%), CUDA (20%) and C++ (40%) sources; a quarter of the Python and
C++ files touch CUDA, and in every file that does, about one chunk of code in six is CUDA-specific
(the rest is device maths or plain code), as in a typical research repository.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import resource
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

PYTHON_CUDA = '''
import torch
import torch.nn.functional as F


def step_{n}(model, batch, scaler):
    """One mixed-precision step on the GPU."""
    x = batch.cuda(non_blocking=True)
    with torch.cuda.amp.autocast():
        loss = F.mse_loss(model(x), x)
    scaler.scale(loss).backward()
    if torch.version.cuda and float(torch.version.cuda) < 11.8:
        torch.cuda.synchronize()
    return loss.item()
'''
PYTHON_PLAIN = '''
import json
from dataclasses import dataclass


@dataclass
class Record{n}:
    """A row of the results table."""

    name: str
    score: float

    def to_json(self) -> str:
        values = {{"name": self.name, "score": round(self.score, {d})}}
        return json.dumps(values, sort_keys=True)


def best_{n}(records):
    return max(records, key=lambda r: r.score) if records else None
'''
CUDA = '''
__global__ void kernel_{n}(const float* __restrict__ x, float* y, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(y, v);
}}

void launch_{n}(const float* host, float* result, int n) {{
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, sizeof(float));
  cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice);
  kernel_{n}<<<(n + 255) / 256, 256>>>(x, y, n);
  cudaMemcpy(result, y, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(x);
  cudaFree(y);
}}
'''
CPP_PLAIN = '''
namespace util_{n} {{
template <typename T>
T clamp_value(T value, T low, T high) {{
  return value < low ? low : (value > high ? high : value);
}}

struct Histogram {{
  std::vector<int> bins;
  explicit Histogram(int size) : bins(size, 0) {{}}
  void add(double x, double lo, double hi) {{
    int index = static_cast<int>((x - lo) / (hi - lo) * bins.size());
    bins[clamp_value<int>(index, 0, static_cast<int>(bins.size()) - 1)] += {d};
  }}
}};
}}  // namespace util_{n}
'''
DEVICE_MATH = '''
__device__ __forceinline__ float blend_{n}(float a, float b, float t) {{
  float u = fminf(fmaxf(t, 0.f), 1.f);
  float s = u * u * (3.f - 2.f * u);
  return a + (b - a) * s * {d}.0f;
}}

template <int TILE>
__device__ void tile_update_{n}(float* tile, const float* src, int stride) {{
  #pragma unroll
  for (int k = 0; k < TILE; ++k) {{
    float v = src[k * stride];
    tile[k] = blend_{n}(tile[k], v, 0.5f) * expf(-v * v);
  }}
}}
'''
CPP_CUDA = '''
void copy_back_{n}(float* host, const float* device, size_t n, cudaStream_t stream) {{
  cudaMemcpyAsync(host, device, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
}}
'''


def _body(template: str, target_bytes: int, rng: random.Random, header: str = "", filler: str = "") -> str:
    """TEMPLATE chunks up to TARGET_BYTES; with FILLER, one chunk in six is TEMPLATE and the rest filler,
    so CUDA-specific lines are as sparse as in real code."""
    parts = [header]
    size = len(header)
    while size < target_bytes:
        use_filler = filler and rng.randrange(6) != 0
        chunk = (filler if use_filler else template).format(n=rng.randrange(10**6), d=rng.randrange(1, 9))
        parts.append(chunk)
        size += len(chunk)
    return "".join(parts)


def generate(root: Path, files: int, total_mb: int, seed: int = 7) -> None:
    """Write FILES sources of about TOTAL_MB megabytes under ROOT."""
    rng = random.Random(seed)
    per_file = total_mb * 1024 * 1024 // files
    for index in range(files):
        folder = root / f"pkg{index % 50:02d}" / f"mod{index % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        share = index % 10
        touches_cuda = index % 4 == 0
        if share < 4:
            template = PYTHON_CUDA if touches_cuda else PYTHON_PLAIN
            path, text = folder / f"m{index}.py", _body(template, per_file, rng, filler=PYTHON_PLAIN)
        elif share < 6:
            header = "#include <cuda_runtime.h>\n"
            path, text = folder / f"k{index}.cu", _body(CUDA, per_file, rng, header, filler=DEVICE_MATH)
        else:
            header = "#include <vector>\n" + ("#include <cuda_runtime.h>\n" if touches_cuda else "")
            template = CPP_CUDA if touches_cuda else CPP_PLAIN
            path, text = folder / f"u{index}.cpp", _body(template, per_file, rng, header, filler=CPP_PLAIN)
        path.write_text(text)


def _tree_rss_kib(pid: int) -> int:
    """The peak resident memory (VmHWM) of PID and its descendants, summed, from /proc: an upper bound of the
    tree's peak that sampling cannot miss, since each process keeps its own peak."""
    total = 0
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
        except OSError:
            pass
        stack.extend(children.get(current, []))
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(command: list[str]) -> tuple[float, float, int, int]:
    """(seconds, CPU seconds, the summed peak RSS KiB of the process tree, exit code) of COMMAND."""
    cpu = _children_cpu()
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()

    def poll() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kib(process.pid))
            time.sleep(0.25)  # walking /proc costs CPU the scan needs on a 2-core machine

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    process.wait()
    elapsed = time.perf_counter() - start
    done.set()
    poller.join()
    return elapsed, _children_cpu() - cpu, peak, process.returncode


def tree_size(root: Path) -> tuple[int, int]:
    """Files and bytes of ROOT outside .git (git's own objects are not the tree)."""
    count = size = 0
    for dirpath, folders, names in os.walk(root):
        folders[:] = [f for f in folders if f != ".git"]
        for name in names:
            count += 1
            size += os.path.getsize(os.path.join(dirpath, name))
    return count, size


CUDA_WORDS = "cuda|__global__|<<<"  # what a developer greps for to see how much CUDA a tree holds


def baseline(root: Path, rounds: int = 3) -> tuple[str, float]:
    """(command, best wall seconds of ROUNDS) of counting CUDA_WORDS in ROOT's files with ripgrep, else grep -r: the
    floor a scan is compared with (both skip .git; ripgrep also what .gitignore excludes, as a scan does)."""
    rg = shutil.which("rg")
    if rg:
        command = [rg, "--count", "--no-messages", CUDA_WORDS, str(root)]
    else:
        command = ["grep", "-rcE", "--exclude-dir=.git", CUDA_WORDS, str(root)]
    best = min(_timed(command) for _ in range(rounds))
    return " ".join([Path(command[0]).name, *command[1:]]), best


def _timed(command: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


NEW_LINE = "\nvoid bench_added_{n}(float* p) {{ cudaMalloc(&p, {n}); }}\n"


def check_latency(root: Path, migrate: str, changed: int = 10, rounds: int = 5) -> tuple[float, float, int] | None:
    """(median wall seconds, median CPU seconds, files) of `migrate check` on CHANGED CUDA files of ROOT, each edited
    before each of ROUNDS runs (their results then never come from the cache). The files are copied into a fresh git
    repository under their own paths: ROOT is never written. The CPU seconds (the process and the git it runs) are
    what compares on a machine others share, where the wall time stretches with their load."""
    names = sorted(p.relative_to(root) for p in root.rglob("*.cu") if ".git" not in p.parts)[:changed]
    if not names:
        return None
    work = Path(tempfile.mkdtemp(prefix="migrate-bench-check-"))
    try:
        repo = work / "repo"
        for name in names:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / name, repo / name)
        identity = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        for args in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-qm", "copied"]):
            subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
        command = [migrate, "check", *map(str, names), "--cache-dir", str(work / "cache")]
        _timed(command, repo)  # the rules are validated and cached once, as on any machine that ran migrate before
        seconds, cpu = [], []
        for round_ in range(rounds):
            for index, name in enumerate(names):
                with open(repo / name, "a") as handle:
                    handle.write(NEW_LINE.format(n=round_ * 100 + index))
            before = _children_cpu()
            seconds.append(_timed(command, repo))
            cpu.append(_children_cpu() - before)
        return statistics.median(seconds), statistics.median(cpu), len(names)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench(root: Path, jobs: int, *, latency: bool = True) -> None:
    """Time cold (no cache, cold cache) and warm scans of ROOT as whole processes, ripgrep over it in the same run,
    and `migrate check` on ten of its files; print the figures beside issue 25's targets."""
    count, size = tree_size(root)
    migrate = shutil.which("migrate", path=str(Path(sys.executable).parent)) or "migrate"
    print(f"tree {root}: {count:,} files, {size / 2**20:.0f} MiB; cores: {os.cpu_count()}")
    command = [migrate, "scan", str(root), "--format", "json", "--output", os.devnull, "--jobs", str(jobs)]
    cache = tempfile.mkdtemp(prefix="migrate-bench-cache-")
    runs = [("no cache", ["--no-cache"]), ("cold cache", ["--cache-dir", cache]), ("warm cache", ["--cache-dir", cache])]
    figures = {}
    for label, extra in runs:
        seconds, cpu, peak_kib, code = measure(command + extra)
        figures[label] = seconds, peak_kib
        print(f"  {label}: {seconds:.2f} s ({cpu:.1f} CPU s), {count / seconds:,.0f} files/s, "
              f"{size / 2**20 / seconds:.1f} MB/s, peak RSS {peak_kib / 1024:.0f} MB (sum of each process's peak), exit {code}")
    shutil.rmtree(cache, ignore_errors=True)
    grep, floor = baseline(root)
    print(f"  baseline: {grep}: {floor:.2f} s (best of 3)")
    cold, peak = figures["no cache"][0], max(p for _, p in figures.values())
    warm = figures["warm cache"][0]
    line = (f"  issue 25: cold {cold:.1f} s (target <= 10 s), {cold / floor:.0f}x the baseline (<= 37x), peak "
            f"{peak / 2**20:.2f} GB (<= 0.5 GB), warm {cold / warm:.0f}x faster than cold (>= 30x)")
    found = check_latency(root, migrate) if latency else None
    if found:
        line += f", check of {found[2]} changed files {found[0]:.3f} s median of 5 (<= 0.15 s; {found[1]:.3f} CPU s)"
    print(line)


def check(root: Path, jobs: int) -> bool:
    """Scan ROOT with the fast path and with a full parse; print the comparison, True when first-party is equal."""
    import migrate.scan.file
    from migrate.config import Settings
    from migrate.ruleset import load_builtin
    from migrate.scan import Shortcuts, scan
    from migrate.scan.prefilter import token_form

    results = {}
    parse = migrate.scan.file.parse
    for label, tokens in (("fast path", True), ("full parse", False)):
        parsed = multiprocessing.Value("i", 0)  # shared memory: the forked workers count too
        migrate.scan.file.parse = _counting(parse, parsed)
        cpu = time.process_time() + _children_cpu()
        results[label] = scan(root, Settings(jobs=jobs), shortcuts=Shortcuts(tokens=tokens)).findings
        print(f"  {label}: {len(results[label]):,} findings, {parsed.value:,} C/C++/CUDA files parsed, "
              f"{time.process_time() + _children_cpu() - cpu:.1f} CPU s")
    migrate.scan.file.parse = parse
    fast, full = results["fast path"], results["full parse"]
    equal = [f for f in fast if not f.vendored] == [f for f in full if not f.vendored]
    print(f"  first-party findings identical: {'yes' if equal else 'NO'} ({sum(not f.vendored for f in fast):,})")
    code = {"cuda", "cpp", "c"}
    tree_rules = {r.id for r in load_builtin().rules if code & set(r.languages) and token_form(r) is None}
    fast_rules = collections.Counter(f.rule for f in fast if f.vendored)
    full_rules = collections.Counter(f.rule for f in full if f.vendored)
    print("  vendored findings by rule (full parse -> tokens; '-' marks a rule that needs the tree):")
    for rule in sorted(set(fast_rules) | set(full_rules)):
        mark = " -" if rule in tree_rules else ""
        print(f"    {rule:28} {full_rules[rule]:7,} -> {fast_rules[rule]:7,}{mark}")
    return equal


def _counting(parse: Any, parsed: Any) -> Any:
    """PARSE, adding one to the shared PARSED for each C/C++/CUDA file it parses."""
    from migrate.model import FileKind

    def counted(source: Any, text: str) -> Any:
        if source.kind in (FileKind.CUDA, FileKind.CPP, FileKind.C):
            with parsed.get_lock():
                parsed.value += 1
        return parse(source, text)

    return counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, action="append", default=[], help="also scan this tree (repeatable)")
    parser.add_argument("--no-generated", action="store_true", help="do not generate and scan the synthetic tree")
    parser.add_argument("--check", action="store_true", help="compare the fast path with a full parse")
    parser.add_argument("--files", type=int, default=15_000)
    parser.add_argument("--megabytes", type=int, default=250)
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--no-latency", action="store_true", help="do not time `migrate check` on ten changed files")
    args = parser.parse_args()
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set: every migrate process compiles its modules again (~0.1 s); an "
              "installed migrate has them compiled")
    workdir = None
    roots = list(args.path)
    if not args.no_generated:
        workdir = Path(tempfile.mkdtemp(prefix="migrate-bench-"))
        roots.insert(0, workdir / "tree")
        started = time.perf_counter()
        generate(roots[0], args.files, args.megabytes)
        print(f"generated in {time.perf_counter() - started:.1f} s")
    equal = True
    try:
        for root in roots:
            bench(root, args.jobs, latency=not args.no_latency)
            if args.check:
                equal = check(root, args.jobs) and equal
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(0 if equal else 1)


if __name__ == "__main__":
    main()
