"""Does the translation compute what the original computes? Build both with nvcc (the translation on HIP's NVIDIA
platform), run both where an NVIDIA GPU is present, and compare.

Usage:
  python benchmarks/run_translated.py --hip-include DIR [--hip-include DIR ...] [--tree DIR ...] [--no-programs]
      [--work DIR] [--reuse | --translate-only] [--arch sm_90] [--json FILE] [--jobs N] [--run-timeout S]

Programs: each file of fixtures/translate/programs (unless --no-programs), and each directory under a --tree that
holds a .cu file and a `main(` in one of its .cu/.cpp files (built together; cuda-samples' layout). A program that
checks itself prints lines saying PASS/PASSED/passed or FAIL/FAILED/failed (this project's programs: a line starting
PASS or FAIL with a digest of its result; cuda-samples: "Result = PASS", "Test passed"); the outputs agree when
those lines are equal, else when the whole outputs are.

Engines: the builtin one, for the ROCm release of the HIP headers given; hipify-perl when $MIGRATE_HIPIFY_PERL (or
--hipify-perl, or PATH) has it. --hip-include takes an installed include directory (DIR/hip or DIR/include/hip
holding hip/hip_version.h, whose release is used), or checkouts of ROCm's HIP (include/hip), hipother
(hipnv/include) and clr (hipamd/include: hip_runtime_api.h includes one of its headers); for checkouts,
hip/hip_version.h, which a ROCm build generates, is written into the work directory from HIP's VERSION file.
Translations are built with -include hip/driver_types.h, as hip_runtime.h brings it in on AMD (see _PLATFORM).
Beside the engines, `kept`: the port that keeps the CUDA sources (`migrate apply --strategy header`: a compat header
and `#ifdef __HIP_PLATFORM_AMD__` branches), built with nvcc exactly as the original is, so its CUDA path is what runs:
it must compute what the original computes.

Translation needs this project's Python packages; building and running need only nvcc and the standard library:
--reuse builds from the translations an earlier run left in --work (how a machine without those packages runs it).
Builds run in parallel (--jobs); the programs then run one at a time, in their own directory, as they share the GPU.
Without a GPU (nvidia-smi lists none) the programs are built only, and the report says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "fixtures" / "translate" / "programs"
SOURCES = (".cu", ".cpp", ".cc")
HEADERS = (".cuh", ".h", ".hpp", ".inl")
TEXT = (*SOURCES, *HEADERS)
_MAIN = re.compile(rb"\bint\s+main\s*\(")
_VERDICT = re.compile(r"^.*\b(?:PASS(?:ED)?|FAIL(?:ED)?|[Pp]assed|[Ff]ailed)\b.*$", re.M)
_FAILED = re.compile(r"\b(?:FAIL(?:ED)?|[Ff]ailed)\b")
_VERSION_DEFINE = re.compile(r"^#define\s+HIP_VERSION_(MAJOR|MINOR)\s+(\d+)\s*$", re.M)
_BUILD_TIMEOUT = 600
KEPT = "kept"  # not a translation: the port that keeps the CUDA sources (apply --strategy header), built with nvcc


@dataclass(frozen=True)
class Program:
    """A program to build: its name, its directory, its sources (relative), extra include directories."""

    name: str
    directory: Path
    sources: tuple[str, ...]
    includes: tuple[Path, ...] = ()


@dataclass
class Outcome:
    """What happened to one build of a program (the original, or one engine's translation)."""

    built: bool = False
    build_error: str = ""
    ran: bool | None = None  # None: not run (no GPU, or not built)
    exit_code: int | None = None
    verdict: str = ""  # the lines saying PASS or FAIL, if the program checks itself
    stdout: str = field(default="", repr=False)


@dataclass
class Row:
    """One program: its original and each translation."""

    program: str
    original: Outcome
    translations: dict[str, Outcome]

    def agrees(self, engine: str) -> bool | None:
        mine, theirs = self.translations[engine], self.original
        if not (mine.ran and theirs.ran):
            return None
        if mine.verdict or theirs.verdict:
            return mine.verdict == theirs.verdict
        return (mine.exit_code, mine.stdout) == (theirs.exit_code, theirs.stdout)


def main() -> int:
    args = _arguments()
    work = args.work.resolve()
    programs = _programs(args)
    hip = _hip_includes(args.hip_include, work)
    if not args.reuse:
        _translate_all(programs, work, _engines(args.hipify_perl), hip.release)
    if args.translate_only:
        print(f"translations written under {work / 'translated'}")
        return 0
    engines = sorted(p.name for p in (work / "translated").iterdir()) if (work / "translated").is_dir() else []
    gpu = _gpus()
    probe = _probe(hip.flags, work, args.arch)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda p: _row(p, engines, work, hip.flags, probe, args.arch), programs))
    if gpu:  # one program at a time: they share the GPU, and some time themselves against a limit
        for program, row in zip(programs, rows):
            _run_row(row, _bin_dir(work, program), program.directory, args.run_timeout)
    _print(rows, engines, gpu, probe, hip)
    if args.json:
        args.json.write_text(json.dumps(_as_json(rows, engines, gpu, probe, hip), indent=2) + "\n")
    return 0


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hip-include", type=Path, action="append", required=True, metavar="DIR")
    parser.add_argument("--tree", type=Path, action="append", default=[], help="A tree of CUDA programs.")
    parser.add_argument("--no-programs", action="store_true", help="Leave out fixtures/translate/programs.")
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "out" / "run-translated")
    parser.add_argument("--reuse", action="store_true", help="Build the translations already in --work.")
    parser.add_argument("--translate-only", action="store_true", help="Translate into --work; build nothing.")
    parser.add_argument("--hipify-perl", default=None)
    parser.add_argument("--arch", default="sm_90", help="nvcc -arch (default sm_90: H100/H200).")
    parser.add_argument("--json", type=Path, default=None, help="Also write the results here.")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="Parallel builds.")
    parser.add_argument("--run-timeout", type=int, default=120, metavar="S", help="Seconds each run may take.")
    return parser.parse_args()


# -- what to build -------------------------------------------------------------------------------------------------


def _programs(args: argparse.Namespace) -> list[Program]:
    found = [] if args.no_programs else [Program(p.stem, PROGRAMS, (p.name,)) for p in sorted(PROGRAMS.glob("*.cu"))]
    for tree in args.tree:
        found += _tree_programs(tree.resolve())
    return found


def _tree_programs(tree: Path) -> list[Program]:
    """Each directory with a .cu file and a main() in one of its sources; the tree's Common/common/include dirs."""
    shared = tuple(d for d in (tree / "Common", tree / "common", tree / "include") if d.is_dir())
    found = []
    for directory in sorted({p.parent for p in tree.rglob("*.cu")}):
        sources = sorted(p.name for p in directory.iterdir() if p.suffix in SOURCES and p.is_file())
        if any(_MAIN.search((directory / s).read_bytes()) for s in sources):
            name = directory.relative_to(tree).as_posix().replace("/", "__")
            found.append(Program(f"{tree.name}/{name}", directory, tuple(sources), shared))
    return found


# -- translation (needs this project's packages) ---------------------------------------------------------------------


def _engines(given: str | None) -> dict[str, str | None]:
    perl = given or os.environ.get("MIGRATE_HIPIFY_PERL") or shutil.which("hipify-perl")
    return {"builtin": None, **({"hipify-perl": perl} if perl and Path(perl).is_file() else {})}


def _translate_all(programs: list[Program], work: Path, engines: dict[str, str | None], release: str) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from migrate.port.translate import Options, translate_bytes
    from migrate.tools import run_tool

    options = Options(rocm=release)
    shutil.rmtree(work / "translated", ignore_errors=True)
    shared = sorted({d for p in programs for d in p.includes})
    for engine, perl in engines.items():

        def translate(source: Path, target: Path) -> None:
            data = source.read_bytes()
            if perl is None:
                target.write_bytes(translate_bytes(data, source.name, options).translated)
            else:
                run = run_tool(["perl", perl, "-quiet-warnings", source])
                target.write_bytes(run.stdout if run.ok and run.stdout else data)

        for program in programs:  # its sources and the headers beside them
            headers = [p for p in program.directory.iterdir() if p.suffix in HEADERS and p.is_file()]
            files = [program.directory / s for s in program.sources] + headers
            _mirror(program.directory, files, _translated_dir(work, engine, program), translate)
        for directory in shared:
            files = [p for p in directory.rglob("*") if p.suffix in TEXT and p.is_file()]
            _mirror(directory, files, _translated_include(work, engine, directory), translate)
    for program in programs:  # the port that keeps the CUDA sources: nvcc builds it as it built the original
        headers = [p for p in program.directory.iterdir() if p.suffix in HEADERS and p.is_file()]
        _port_kept(program.directory, [program.directory / s for s in program.sources] + headers,
                   _translated_dir(work, KEPT, program))
    for directory in shared:
        files = [p for p in directory.rglob("*") if p.suffix in TEXT and p.is_file()]
        _port_kept(directory, files, _translated_include(work, KEPT, directory))


def _port_kept(source: Path, files: list[Path], target: Path) -> None:
    """FILES copied under TARGET and ported there as `migrate apply --strategy header` ports a tree: one compat
    header and #ifdef __HIP_PLATFORM_AMD__ branches, the CUDA code kept on the other side."""
    from migrate.config import Settings
    from migrate.port.apply import plan_port
    from migrate.port.plan import PortOptions
    from migrate.port.translate import Engine

    _mirror(source, files, target, lambda old, new: shutil.copyfile(old, new))
    plan = plan_port(target, Settings(max_file_size=1 << 24), PortOptions(Engine("builtin"), strategy="header",
                                                                           side_files=False))
    for change in plan.changes:
        (target / change.relpath).parent.mkdir(parents=True, exist_ok=True)
        (target / change.relpath).write_bytes(change.new)


def _mirror(source: Path, files: list[Path], target: Path, translate: Callable[[Path, Path], None]) -> None:
    for path in sorted(files):
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        translate(path, out)


def _translated_dir(work: Path, engine: str, program: Program) -> Path:
    return work / "translated" / engine / program.name.replace("/", "__")


def _translated_include(work: Path, engine: str, directory: Path) -> Path:
    return work / "translated-include" / engine / f"{directory.parent.name}__{directory.name}"


# -- building and running (nvcc and the standard library only) -------------------------------------------------------


@dataclass(frozen=True)
class HipHeaders:
    """The include flags for HIP's NVIDIA platform and the HIP release they are."""

    flags: tuple[str, ...]
    release: str


# On AMD, hip_runtime.h brings in hip/driver_types.h, and translations test its guard where CUDA code tested
# __DRIVER_TYPES_H__ (cuda-samples' helper_cuda.h); on the NVIDIA platform only CUDA's driver_types.h comes in.
_PLATFORM = ("-D__HIP_PLATFORM_NVIDIA__", "-include", "hip/driver_types.h")


def _hip_includes(given: list[Path], work: Path) -> HipHeaders:
    """The flags that build translations on HIP's NVIDIA platform with the given headers, and their release."""
    dirs = _include_dirs(given)
    installed = next((d / "hip" / "hip_version.h" for d in dirs if (d / "hip" / "hip_version.h").is_file()), None)
    if installed is not None:  # an installed tree: its own hip_version.h says the release
        return HipHeaders((*_PLATFORM, *(f"-I{d}" for d in dirs)), _header_release(installed) or "6.0")
    versions = [p.resolve() / "VERSION" for p in given if (p.resolve() / "VERSION").is_file()]
    release = _release(versions[-1]) if versions else ""
    generated = _write_version_header(work, release or "6.0")
    return HipHeaders((*_PLATFORM, f"-I{generated}", *(f"-I{d}" for d in dirs)), release or "6.0")


def _include_dirs(given: list[Path]) -> list[Path]:
    """The directories holding hip/ among each given path and its include, hipnv/include, hipamd/include."""
    dirs: list[Path] = []
    for path in (p.resolve() for p in given):
        for candidate in (path, path / "include", path / "hipnv" / "include", path / "hipamd" / "include"):
            if (candidate / "hip").is_dir() and candidate not in dirs:
                dirs.append(candidate)
    if not dirs:
        raise SystemExit(f"no hip/ include directory under {', '.join(map(str, given))}")
    return dirs


def _write_version_header(work: Path, release: str) -> Path:
    """hip/hip_version.h for RELEASE in the work directory (a ROCm build generates it); the directory to include."""
    generated = work / "hip-version"
    (generated / "hip").mkdir(parents=True, exist_ok=True)
    major, minor = release.split(".")
    (generated / "hip" / "hip_version.h").write_text(
        "// Written by benchmarks/run_translated.py from HIP's VERSION file (a ROCm build generates it).\n#pragma once\n"
        f"#define HIP_VERSION_MAJOR {major}\n#define HIP_VERSION_MINOR {minor}\n#define HIP_VERSION_PATCH 0\n"
        '#define HIP_VERSION_GITHASH ""\n#define HIP_VERSION_BUILD_ID 0\n#define HIP_VERSION_BUILD_NAME ""\n'
        "#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)\n")
    return generated


def _header_release(version_header: Path) -> str:
    """hip_version.h: its HIP_VERSION_MAJOR and HIP_VERSION_MINOR defines, as '6.3'; '' without both."""
    numbers = dict(_VERSION_DEFINE.findall(version_header.read_text(errors="replace")))
    return f"{numbers['MAJOR']}.{numbers['MINOR']}" if {"MAJOR", "MINOR"} <= numbers.keys() else ""


def _release(version_file: Path) -> str:
    """HIP's VERSION file: '#HIP_VERSION_MAJOR' then the number, and so on."""
    numbers = [line.strip() for line in version_file.read_text().splitlines() if line.strip().isdigit()]
    return ".".join(numbers[:2]) if len(numbers) >= 2 else ""


def _probe(flags: tuple[str, ...], work: Path, arch: str) -> str:
    """'' when an empty HIP program builds with these headers, else nvcc's first error (one cause for every program)."""
    probe = work / "probe.cu"
    probe.write_text("#include <hip/hip_runtime.h>\nint main() { return hipDeviceSynchronize() == hipSuccess ? 0 : 1; }\n")
    done = _nvcc([*flags, f"-arch={arch}", str(probe), "-o", str(work / "probe")], work)
    return "" if done.returncode == 0 else _first_error(done.stderr)


def _gpus() -> list[str]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    done = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
    return [line for line in done.stdout.splitlines() if line.startswith("GPU ")] if done.returncode == 0 else []


def _row(program: Program, engines: list[str], work: Path, hip: tuple[str, ...], probe: str, arch: str) -> Row:
    """The program built as it is and from each engine's translation (not run)."""
    bin_dir = _bin_dir(work, program)
    bin_dir.mkdir(parents=True, exist_ok=True)
    original = _build(program.directory, program, [], bin_dir / "original", arch, program.includes)
    translations = {}
    for engine in engines:
        if probe and engine != KEPT:
            translations[engine] = Outcome(build_error="not built: the HIP headers do not build with this nvcc")
            continue
        source = _translated_dir(work, engine, program)
        includes = tuple(_translated_include(work, engine, d) for d in program.includes)
        extra = [] if engine == KEPT else ["-x", "cu", *hip]  # the kept port's CUDA path: nvcc as for the original
        translations[engine] = _build(source, program, extra, bin_dir / engine, arch, includes)
    return Row(program.name, original, translations)


def _bin_dir(work: Path, program: Program) -> Path:
    return work / "bin" / program.name.replace("/", "__")


def _run_row(row: Row, bin_dir: Path, cwd: Path, timeout: int) -> None:
    """Run the original and each translation that built, one after the other, in the program's directory."""
    for name, outcome in (("original", row.original), *row.translations.items()):
        _run(outcome, bin_dir / name, cwd, timeout)


def _build(source: Path, program: Program, extra: list[str], binary: Path, arch: str,
           shared: tuple[Path, ...]) -> Outcome:
    includes = [f"-I{d}" for d in (source, *shared)]
    command = [f"-arch={arch}", "-O2", "-w", *extra, *includes, *(str(source / s) for s in program.sources),
               "-o", str(binary)]
    done = _nvcc(command, source)
    return Outcome(built=done.returncode == 0, build_error="" if done.returncode == 0 else _first_error(done.stderr))


def _nvcc(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["nvcc", *arguments], cwd=cwd, capture_output=True, text=True, errors="replace",
                              timeout=_BUILD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(["nvcc"], 124, "", f"nvcc timed out after {_BUILD_TIMEOUT}s")


def _run(outcome: Outcome, binary: Path, cwd: Path, timeout: int) -> None:
    if not outcome.built:
        return
    try:
        done = subprocess.run([str(binary)], cwd=cwd, capture_output=True, text=True, errors="replace",
                              timeout=timeout, check=False, stdin=subprocess.DEVNULL)
        # Programs that print their own path (argv[0]) would differ by the build's directory alone.
        outcome.ran, outcome.exit_code = True, done.returncode
        outcome.stdout = done.stdout.replace(str(binary), "PROGRAM")
    except subprocess.TimeoutExpired:
        outcome.ran, outcome.exit_code = True, 124
    outcome.verdict = _verdict(outcome.stdout)


def _verdict(stdout: str) -> str:
    """The lines of a program's output that say PASS or FAIL (its self-check), in order."""
    return "\n".join(line.strip() for line in _VERDICT.findall(stdout))


def _first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line.lower()), lines[-1] if lines else "failed")[:300]


# -- the report ------------------------------------------------------------------------------------------------------


def _print(rows: list[Row], engines: list[str], gpu: list[str], probe: str, hip: HipHeaders) -> None:
    print(f"GPU: {', '.join(gpu)}" if gpu else "GPU: none (nvidia-smi lists none): built only, nothing run")
    print(f"HIP headers: release {hip.release}; " + (f"do NOT build with this nvcc: {probe}" if probe else "build"))
    print("program | original | " + " | ".join(engines))
    for row in rows:
        cells = [_cell(row.original)] + [_cell(row.translations[e], row.agrees(e)) for e in engines]
        print(f"{row.program} | " + " | ".join(cells))
    for engine in ["original", *engines]:
        outcomes = [r.original if engine == "original" else r.translations[engine] for r in rows]
        summary = f"{engine}: built {sum(o.built for o in outcomes)}/{len(rows)}"
        if gpu:
            passed = sum(_check(o.verdict) == "PASS" for o in outcomes)
            summary += f", ran {sum(bool(o.ran) for o in outcomes)}, self-check passed {passed}"
            if engine != "original":
                agree = [r.agrees(engine) for r in rows]
                summary += f", agree with the original {sum(a is True for a in agree)}/{sum(a is not None for a in agree)}"
        print(summary)


def _cell(outcome: Outcome, agrees: bool | None = None) -> str:
    if not outcome.built:
        return f"build failed ({outcome.build_error[:120]})"
    if outcome.ran is None:
        return "built"
    check = _check(outcome.verdict) or "no self-check"
    agreement = "" if agrees is None else (", agrees" if agrees else ", DIFFERS")
    return f"ran (exit {outcome.exit_code}), {check}{agreement}"


def _check(verdict: str) -> str:
    """'FAIL' when a self-check line says so, 'PASS' when the others do, '' without self-check lines."""
    return "" if not verdict else "FAIL" if _FAILED.search(verdict) else "PASS"


def _as_json(rows: list[Row], engines: list[str], gpu: list[str], probe: str, hip: HipHeaders) -> dict[str, object]:
    return {
        "gpu": gpu, "hip_release": hip.release, "hip_probe_error": probe, "engines": engines,
        "programs": [{"program": r.program, "original": asdict(r.original),
                      "translations": {e: {**asdict(r.translations[e]), "agrees": r.agrees(e)} for e in engines}}
                     for r in rows],
    }


if __name__ == "__main__":
    sys.exit(main())
