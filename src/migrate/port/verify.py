"""Compile check: translate into a temp copy, run hipcc -fsyntax-only on each unit, map errors to findings."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from migrate.bounded import Refused, read_bytes
from migrate.discover import VENDOR_DIRS
from migrate.port.apply import plan_port, write_port
from migrate.errors import InputError, ToolNotFound
from migrate.model import Finding, Severity, Skipped
from migrate.port.translate_paths import translate_paths
from migrate.tools import ToolRun, find_tool, run_tool
from migrate.port.translate import Engine, original_line

if TYPE_CHECKING:
    from migrate.config import Settings
    from migrate.port.plan import PortOptions

UNIT_SUFFIXES = (".cu", ".hip", ".cpp", ".cc", ".cxx")
RULE_COMPILE_ERROR = "hipcc-error"
_DIAGNOSTIC = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):(?P<col>\d+): (?:fatal )?error: (?P<msg>.*)$", re.M)
_TOO_NEW = ("invalid target id", "unsupported cuda gpu architecture", "unknown target cpu", "unsupported hip gpu")
_KEPT_FLAGS = ("-I", "-D", "-U", "-isystem", "-std=", "-include")
_SPLIT_FLAGS = ("-I", "-isystem", "-D", "-include")  # also written with the value as the next argument
_PATH_FLAGS = ("-isystem", "-include", "-I")
_MAX_COMPILE_DB = 64 * 1024 * 1024


@dataclass(frozen=True)
class Unit:
    """One compiled translation unit and how the compiler answered."""

    relpath: str
    run: ToolRun

    @property
    def ok(self) -> bool:
        return self.run.ok


@dataclass(frozen=True)
class VerifyResult:
    """The compile check of a tree for one target."""

    target: str
    compiler: str
    engine: str
    units: tuple[Unit, ...]
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...] = ()
    strategy: str = "fork"

    @property
    def failed(self) -> tuple[Unit, ...]:
        return tuple(u for u in self.units if not u.ok)


def find_hipcc(explicit: str | Path | None = None) -> Path:
    """hipcc's path, or ToolNotFound with what to do."""
    found = find_tool("hipcc", explicit)
    if found is None:
        where = f"at {explicit}" if explicit else "on PATH, in $ROCM_PATH/bin or /opt/rocm/bin"
        raise ToolNotFound(f"hipcc not found {where}; install ROCm (or Debian's hipcc package) to compile-check")
    return found


def verify(
    root: Path, target: str, settings: Settings, options: PortOptions, *, hipcc: str | Path | None = None,
    jobs: int = 0,
) -> VerifyResult:
    """Port ROOT (SETTINGS: the repository's files and rules) into a temp dir by the strategy of OPTIONS, without
    side files, and compile each unit for TARGET; compiler errors become findings."""
    compiler = find_hipcc(hipcc)
    version = _version(compiler)
    options = replace(options, engine=_for_compiler(options.engine, version), side_files=False)
    with tempfile.TemporaryDirectory(prefix="migrate-verify-") as tmp:
        _check_target(compiler, target, version, Path(tmp))
        plan = plan_port(root, settings, options)
        copy = Path(tmp) / "src"
        write_port(plan, out_dir=copy)
        extra = as_torch_builds(copy, options.engine) if plan.strategy == "extension" else []
        units = _units(copy)
        flags = _flags_from_compile_db(root, copy, toolchain_dirs(compiler))
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
            runs = list(pool.map(lambda rel: _compile(compiler, target, copy, rel, flags.get(rel), extra), units))
        done = tuple(Unit(rel, run) for rel, run in zip(units, runs))
        findings = sorted({f for unit in done for f in _findings(unit, copy, root, settings.max_file_size)})
    return VerifyResult(target, version, plan.engine, done, tuple(findings), plan.skipped, plan.strategy)


def _for_compiler(engine: Engine, version: str) -> Engine:
    """Translate for the ROCm release of the compiler that checks the result, unless one was chosen."""
    found = re.match(r"HIP (\d+\.\d+)", version)
    if engine.options.rocm or found is None:
        return engine
    return replace(engine, options=replace(engine.options, rocm=found.group(1)))


def _version(compiler: Path) -> str:
    run = run_tool([compiler, "--version"], env={"HIP_PLATFORM": "amd"})
    text = run.stdout.decode("utf-8", "replace")
    hip = re.search(r"HIP version:\s*(\S+)", text)
    clang = re.search(r"clang version\s*(\S+)", text)
    parts = [f"HIP {hip.group(1)}" if hip else "", f"clang {clang.group(1)}" if clang else ""]
    return ", ".join(p for p in parts if p) or "unknown version"


def _check_target(compiler: Path, target: str, version: str, tmp: Path) -> None:
    probe = tmp / "probe.hip"
    probe.write_text("__global__ void probe() {}\n", encoding="utf-8")
    run = _hipcc(compiler, target, probe, [], tmp)
    if not run.ok and any(marker in run.stderr.lower() for marker in _TOO_NEW):
        raise InputError(
            f"target {target} is too new for the installed compiler ({version}); "
            "install a newer ROCm, or check an older target such as gfx90a"
        )


def _units(tree: Path) -> list[str]:
    found = (p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.suffix in UNIT_SUFFIXES and p.is_file())
    return sorted(rel for rel in found if not _vendored(rel))


def _vendored(relpath: str) -> bool:
    return any(part.lower() in VENDOR_DIRS for part in relpath.split("/")[:-1])


def _compile(
    compiler: Path, target: str, tree: Path, relpath: str, flags: list[str] | None, extra: list[str],
) -> ToolRun:
    path = tree / relpath
    if flags is None:
        flags = [f"-I{d}" for d in (tree / "include", tree / "src", path.parent) if d.is_dir()]
    return _hipcc(compiler, target, path, [*flags, *extra], tree)


def _hipcc(compiler: Path, target: str, path: Path, flags: list[str], cwd: Path) -> ToolRun:
    language = ["-x", "hip"] if path.suffix in (".cu", ".hip") else []
    command: list[str | Path] = [compiler, f"--offload-arch={target}", "-fsyntax-only", "-w", *flags, *language, path]
    return run_tool(command, cwd=cwd, env={"HIP_PLATFORM": "amd"})


def _flags_from_compile_db(root: Path, tree: Path, toolchain: tuple[Path, ...] = ()) -> dict[str, list[str]]:
    """Include paths and defines per unit from compile_commands.json, re-rooted into the translated copy. The file
    is the repository's: only paths inside it (or in the TOOLCHAIN's own directories) reach the compiler, whose
    errors would otherwise show the text of any file on the machine."""
    base = root.resolve()
    for candidate in (root / "compile_commands.json", root / "build" / "compile_commands.json"):
        if os.path.lexists(candidate):
            if _within(candidate.resolve(), (base,)) is None:
                return {}  # a symlink out of the tree: not read
            try:
                entries = json.loads(read_bytes(candidate, limit=_MAX_COMPILE_DB).decode("utf-8"))
            except (OSError, ValueError):
                return {}
            if not isinstance(entries, list):
                return {}
            return dict(_db_entry(base, tree, e, toolchain) for e in entries if isinstance(e, dict) and "file" in e)
    return {}


def toolchain_dirs(compiler: Path) -> tuple[Path, ...]:
    """The header and library directories that come with the compiler: its own install's, and ROCm's."""
    prefixes = {compiler.resolve().parent.parent, Path(os.environ.get("ROCM_PATH") or "/opt/rocm"), Path("/opt/rocm")}
    return tuple(sorted({(prefix / part).resolve() for prefix in prefixes for part in ("include", "lib")}))


def _db_entry(root: Path, tree: Path, entry: dict[str, object], toolchain: tuple[Path, ...]) -> tuple[str, list[str]]:
    directory = Path(str(entry.get("directory", root)))
    file = (directory / str(entry["file"])).resolve()
    raw = entry.get("arguments") or shlex.split(str(entry.get("command", "")))
    args = [str(a) for a in raw] if isinstance(raw, list) else []
    flags = []
    for index, arg in enumerate(args):
        if arg in _SPLIT_FLAGS and index + 1 < len(args):
            arg = arg + args[index + 1]
        if arg.startswith(_KEPT_FLAGS) and arg not in _SPLIT_FLAGS and not arg.startswith("-include-"):
            kept = _reroot(arg, directory, root, tree, toolchain)
            if kept is not None:
                flags.append(kept)
    rel = file.relative_to(root).as_posix() if root in file.parents else str(file)
    return rel, flags


def _reroot(flag: str, directory: Path, root: Path, tree: Path, toolchain: tuple[Path, ...]) -> str | None:
    """FLAG with a path inside ROOT moved into TREE, one in the toolchain kept; None for any other path."""
    for prefix in _PATH_FLAGS:
        if flag.startswith(prefix):
            path = Path(os.path.normpath(directory / flag[len(prefix) :])).resolve()
            inside = _within(path, (root,))
            if inside is not None:
                return f"{prefix}{tree / inside}"
            return f"{prefix}{path}" if _within(path, toolchain) is not None else None
    return flag


def _within(path: Path, directories: tuple[Path, ...]) -> Path | None:
    """PATH relative to the first of DIRECTORIES that holds it (or is it); None when none does."""
    for directory in directories:
        if path == directory or directory in path.parents:
            return path.relative_to(directory)
    return None


def _findings(unit: Unit, tree: Path, root: Path, limit: int) -> list[Finding]:
    if unit.ok:
        return []
    found = [_finding(m, unit, tree, root, limit) for m in _DIAGNOSTIC.finditer(unit.run.stderr)]
    if not found:
        message = f"hipcc failed: {unit.run.describe()}"
        found = [Finding(unit.relpath, 1, 1, RULE_COMPILE_ERROR, "other", Severity.HIGH, 1, message, "")]
    return found


def _finding(match: re.Match[str], unit: Unit, tree: Path, root: Path, limit: int) -> Finding:
    """A compiler error on its line; the evidence is the original (untranslated) line (files read up to LIMIT)."""
    file = Path(match["file"])
    path = file if file.is_absolute() else tree / file
    try:
        relpath = path.resolve().relative_to(tree.resolve()).as_posix()
    except ValueError:
        relpath = unit.relpath  # an error in a system header, reported on the unit that included it
    line = int(match["line"])
    original, ported = _read(root / relpath, limit), _read(path, limit)
    if original is not None and ported is not None:
        line = original_line(original, ported, line)
    text = original if original is not None else ported
    evidence = _line(text, line) if text is not None else ""
    message = f"hipcc: {match['msg'].strip()}"
    return Finding(relpath, line, int(match["col"]), RULE_COMPILE_ERROR, "other", Severity.HIGH, line, message, evidence)


def _read(path: Path, limit: int) -> bytes | None:
    try:
        return read_bytes(path, limit=limit)
    except (OSError, Refused):
        return None


def _line(data: bytes, line: int) -> str:
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def as_torch_builds(tree: Path, engine: Engine) -> list[str]:
    """Hipify TREE in place as a ROCm torch does at build time; the flags its hipcc gets (torch's include
    directories when torch is installed beside migrate)."""
    translate_paths([tree], engine, in_place=True)
    return ["-DUSE_ROCM=1", "-D__HIP_PLATFORM_AMD__=1", *_torch_includes()]


def _torch_includes() -> list[str]:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return []
    base = Path(spec.origin).parent / "include"
    found = [base, base / "torch" / "csrc" / "api" / "include", Path(sysconfig.get_paths()["include"])]
    return [f"-I{d}" for d in found if d.is_dir()]
