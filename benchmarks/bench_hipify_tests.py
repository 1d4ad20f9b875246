"""HIPIFY's own unit tests as a measure of the builtin engine: the share of their expected lines it writes.

Usage:
  python benchmarks/bench_hipify_tests.py HIPIFY_CHECKOUT [--rocm 6.2] [--worst 15] [--misses FILE]

HIPIFY_CHECKOUT is a clone of ROCm's HIPIFY repository (read at run time, never copied into the project). Each
test under tests/unit_tests (a .cu/.cpp/.c file with a `// RUN:` line) is translated twice with the builtin engine:
with the options its RUN line gives hipify-clang mapped to the builtin engine's (`-roc`/`--roc` -> roc,
`--hip-kernel-execution-syntax` -> `--launch-syntax hipLaunchKernelGGL`; clang-only options are neutral), and
without (the defaults). Tests with an option the builtin engine has no counterpart for (`--use-hip-data-types`,
`--miopen`) are counted apart in the first figure. As in HIPIFY's run_test.sh, comments in the output are cut to
`// ` before matching. FileCheck's semantics, simplified: each `CHECK:` and `CHECK-NEXT:` line, whitespace-normalised
(`{{regex}}` kept as a regex), must occur in the output after the previous match; a missing line is a miss and the
search goes on from the same place. `CHECK-NOT` is not counted. --rocm is the release the tests assume for the
release-dependent rewrites (HIPIFY at the end of 2024 keeps `*_sync` warp builtins: ROCm 6.2 and later).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from migrate.port.translate import Options, translate_bytes  # noqa: E402

SUFFIXES = (".cu", ".cpp", ".c")
_CHECK = re.compile(r"//\s*CHECK(?:-NEXT)?:(.*)$")
_COMMENT = re.compile(r"//.+")
_SPACE = re.compile(r"\s+")
# hipify-clang's options that change what it writes, as the builtin engine's; the rest below change nothing the
# builtin engine does differently (clang's preprocessor, diagnostics, experimental or unsupported APIs: the
# builtin engine renames every name it has a HIP name for).
_MAPPED = {"--roc": ("roc", True), "-roc": ("roc", True),
           "--hip-kernel-execution-syntax": ("launch_syntax", "hipLaunchKernelGGL"),
           "--cuda-kernel-execution-syntax": ("launch_syntax", "cuda")}
_NEUTRAL = ("--amap", "--experimental", "--skip-excluded-preprocessor-conditional-blocks", "--default-preprocessor",
            "-ferror-limit=", "-D", "-I", "-std=", "-x", "-v", "-Xclang", "-fcuda-")
_UNMAPPED = ("--use-hip-data-types", "--miopen")


@dataclass(frozen=True)
class Result:
    """One test: its path, the option it has no counterpart for (if any), its expected lines and the missed ones."""

    relpath: str
    unmapped: str
    expected: int
    missed: tuple[str, ...]

    @property
    def found(self) -> int:
        return self.expected - len(self.missed)


def run_options(source: str) -> list[str]:
    """The hipify options of the test's RUN line (what follows `%hipify_args N`, and clang's after it)."""
    for line in source.splitlines():
        if "// RUN:" in line:
            words = shlex.split(line.split("// RUN:", 1)[1].replace('"', ""))
            return [w for w in words if w.startswith("-")]
    return []


def map_options(flags: list[str], rocm: str) -> tuple[Options, str]:
    """The builtin engine's options for hipify-clang's FLAGS, and the first flag without a counterpart ('' if none)."""
    settings: dict[str, object] = {"rocm": rocm}
    unmapped = ""
    for flag in flags:
        if flag in _MAPPED:
            key, value = _MAPPED[flag]
            settings[key] = value
        elif flag in _UNMAPPED or not flag.startswith(_NEUTRAL):
            unmapped = unmapped or flag
    return Options(**settings), unmapped  # type: ignore[arg-type]


def checks(source: str) -> list[str]:
    """The expected lines: each CHECK/CHECK-NEXT pattern, whitespace-normalised."""
    found = (_CHECK.search(line) for line in source.splitlines())
    return [_SPACE.sub(" ", m.group(1)).strip() for m in found if m is not None and m.group(1).strip()]


def _pattern(check: str) -> re.Pattern[str]:
    parts = re.split(r"\{\{(.*?)\}\}", check)
    return re.compile("".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def missed_lines(expected: list[str], output: str) -> list[str]:
    """The expected lines not found in OUTPUT in order (FileCheck simplified: each after the previous match)."""
    lines = [_SPACE.sub(" ", _COMMENT.sub("// ", line)).strip() for line in output.splitlines()]
    row, column, missed = 0, 0, []
    for check in expected:
        pattern = _pattern(check)
        for index in range(row, len(lines)):
            match = pattern.search(lines[index], column if index == row else 0)
            if match is not None:
                row, column = index, match.end()
                break
        else:
            missed.append(check)
    return missed


def measure(test: Path, relpath: str, rocm: str, mapped: bool) -> Result:
    """Translate one test with its options mapped (or the defaults) and count its expected lines found."""
    data = test.read_bytes()
    source = data.decode("utf-8", "replace")
    options, unmapped = map_options(run_options(source), rocm)
    if not mapped:
        options = Options(rocm=rocm)
    output = translate_bytes(data, test.name, options).translated.decode("utf-8", "replace")
    expected = checks(source)
    return Result(relpath, unmapped, len(expected), tuple(missed_lines(expected, output)))


def tests(checkout: Path) -> list[tuple[Path, str]]:
    """Every unit test with a RUN line, as (path, path relative to tests/unit_tests)."""
    top = checkout / "tests" / "unit_tests"
    if not top.is_dir():
        raise SystemExit(f"error: {top} is not a directory (expected a clone of ROCm's HIPIFY)")
    found = [p for p in sorted(top.rglob("*")) if p.suffix in SUFFIXES and p.is_file()]
    return [(p, p.relative_to(top).as_posix()) for p in found if b"// RUN:" in p.read_bytes()]


def share(results: list[Result]) -> str:
    expected = sum(r.expected for r in results)
    found = sum(r.found for r in results)
    return f"{100 * found / expected:5.1f}% ({found}/{expected})" if expected else "    - (0/0)"


def report(mapped: list[Result], plain: list[Result], worst: int) -> list[str]:
    """The table: per directory and in total, mapped (tests with an unmapped option apart) and without options."""
    counted = [r for r in mapped if not r.unmapped]
    apart = [r for r in mapped if r.unmapped]
    lines = [f"{'directory':<40} {'tests':>5}  {'options mapped':<22} {'without options':<22}"]
    for folder in sorted({r.relpath.rpartition("/")[0] or "." for r in mapped}):
        def inside(rs: list[Result]) -> list[Result]:
            return [r for r in rs if (r.relpath.rpartition("/")[0] or ".") == folder]
        lines.append(f"{folder:<40} {len(inside(mapped)):>5}  {share(inside(counted)):<22} {share(inside(plain)):<22}")
    lines.append(f"{'total':<40} {len(mapped):>5}  {share(counted):<22} {share(plain):<22}")
    flags = Counter(r.unmapped for r in apart)
    lines.append(f"apart (an option without a builtin counterpart): {len(apart)} tests, {share(apart)} "
                 f"[{', '.join(f'{f} {n}' for f, n in sorted(flags.items()))}]")
    lines.append(f"all tests with options mapped, those apart included: {share(mapped)}")
    lines.append("\nmost misses (options mapped; without options in brackets):")
    plain_by = {r.relpath: r for r in plain}
    for result in sorted(mapped, key=lambda r: (-len(r.missed), r.relpath))[:worst]:
        lines.append(f"  {len(result.missed):4d} [{len(plain_by[result.relpath].missed):4d}] of {result.expected:4d}  "
                     f"{result.relpath}{'  (' + result.unmapped + ')' if result.unmapped else ''}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="a clone of ROCm's HIPIFY repository")
    parser.add_argument("--rocm", default="6.2", help="the ROCm release the tests assume (default 6.2)")
    parser.add_argument("--worst", type=int, default=15, help="how many tests with most misses to list")
    parser.add_argument("--misses", type=Path, help="write every missed line (options mapped) to this file")
    parser.add_argument("--only", default="", help="only tests whose path contains this text")
    args = parser.parse_args()
    found = [(p, r) for p, r in tests(args.checkout) if args.only in r]
    mapped = [measure(p, r, args.rocm, True) for p, r in found]
    plain = [measure(p, r, args.rocm, False) for p, r in found]
    print("\n".join(report(mapped, plain, args.worst)))
    if args.misses:
        args.misses.write_text("".join(f"{r.relpath}\t{m}\n" for r in mapped for m in r.missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
