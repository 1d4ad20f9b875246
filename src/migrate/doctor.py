"""What this machine has for a port: hipify, hipcc, ROCm, GPUs, the PyTorch build; never fails."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

NOT_FOUND = "not found"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GFX = re.compile(r"\bgfx[0-9a-f]{3,5}\b")
_TIMEOUT = 20.0


@dataclass(frozen=True)
class Ran:
    """An external command's outcome as data: a missing tool or a failure is not an exception."""

    command: tuple[str, ...]
    code: int  # -1: could not run (missing, timed out)
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.code == 0

    def first_line(self) -> str:
        text = _ANSI.sub("", self.stdout if self.stdout.strip() else self.stderr)
        return next((line.strip() for line in text.splitlines() if line.strip()), "")


@dataclass(frozen=True)
class Tool:
    """An executable we may use, where it is and its version line."""

    name: str
    path: str | None
    version: str = ""
    run_with: str = ""  # environment the version was taken with


@dataclass(frozen=True)
class Diagnosis:
    """Everything `migrate doctor` reports."""

    tools: tuple[Tool, ...]
    rocm_path: str | None
    rocm_version: str
    gpus: tuple[str, ...]
    gpu_note: str
    torch: str
    apply_engine: str
    verify_with: str


def diagnose(
    env: Mapping[str, str] | None = None, *, opt: Path = Path("/opt"), python: str = sys.executable
) -> Diagnosis:
    """Look at the tools, the ROCm install, the GPUs and the PyTorch build visible from ENV."""
    env = dict(os.environ if env is None else env)
    rocm = find_rocm(env, opt)
    tools = tuple(_tool(name, env, rocm) for name in ("hipify-clang", "hipify-perl", "hipcc"))
    gpus, note = find_gpus(env, rocm)
    by_name = {t.name: t for t in tools}
    return Diagnosis(
        tools=tools,
        rocm_path=str(rocm) if rocm else None,
        rocm_version=rocm_version(rocm) if rocm else _system_hip(by_name["hipcc"]),
        gpus=gpus,
        gpu_note=note,
        torch=torch_build(python, env),
        apply_engine=_apply_engine(by_name),
        verify_with=_verify_with(by_name["hipcc"], gpus),
    )


def run(command: Sequence[str], env: Mapping[str, str], *, timeout: float = _TIMEOUT) -> Ran:
    """Run COMMAND and return what happened, whatever happened."""
    try:
        done = subprocess.run(
            list(command), env=dict(env), capture_output=True, text=True, errors="replace", timeout=timeout,
            stdin=subprocess.DEVNULL, check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Ran(tuple(command), -1, stderr=str(exc))
    return Ran(tuple(command), done.returncode, done.stdout, done.stderr)


def find_rocm(env: Mapping[str, str], opt: Path = Path("/opt")) -> Path | None:
    """$ROCM_PATH, /opt/rocm, the newest /opt/rocm-*, or /opt/rocm/core-*: the first that exists."""
    candidates = [Path(env[key]) for key in ("ROCM_PATH", "ROCM_HOME", "HIP_PATH") if env.get(key)]
    candidates.append(opt / "rocm")
    candidates += sorted(opt.glob("rocm-*"), key=_version_key, reverse=True)
    candidates += sorted((opt / "rocm").glob("core-*"), key=_version_key, reverse=True)
    return next((c for c in candidates if c.is_dir()), None)


def rocm_version(rocm: Path) -> str:
    """From .info/version, rocm_version.h, or the directory name."""
    return rocm_version_source(rocm)[0]


def rocm_version_source(rocm: Path) -> tuple[str, str]:
    """The install's version and the file (or directory name) it was read from."""
    for name in (".info/version", ".info/version-dev"):
        with _quiet():
            text = (rocm / name).read_text(encoding="utf-8").strip()
            if text:
                return text, str(rocm / name)
    header = rocm / "include" / "rocm-core" / "rocm_version.h"
    with _quiet():
        parts = re.findall(r"#define\s+ROCM_VERSION_(?:MAJOR|MINOR|PATCH)\s+(\d+)", header.read_text(encoding="utf-8"))
        if len(parts) == 3:
            return ".".join(parts), str(header)
    match = re.search(r"(\d+\.\d+(?:\.\d+)?)", rocm.name)
    return (match.group(1), f"the directory name {rocm}") if match else ("unknown", str(rocm))


def find_gpus(env: Mapping[str, str], rocm: Path | None) -> tuple[tuple[str, ...], str]:
    """The gfx names of the AMD GPUs present (rocminfo, else amd-smi), and a note on how we know."""
    notes = []
    for command in (["rocminfo"], ["amd-smi", "static", "--asic"]):
        path = _which(command[0], env, rocm)
        if path is None:
            notes.append(f"{command[0]} {NOT_FOUND}")
            continue
        ran = run([path, *command[1:]], env)
        names = tuple(dict.fromkeys(_GFX.findall(_ANSI.sub("", ran.stdout))))
        if names:
            return names, f"from {command[0]}"
        reason = _last_line(ran, prefer_stdout=True) or f"exit {ran.code}"
        notes.append(f"{command[0]}: {reason}")
    return (), "none detected (" + "; ".join(notes) + ")"


def torch_build(python: str, env: Mapping[str, str]) -> str:
    """The PyTorch build in PYTHON's environment, imported in a child process (it is slow and may crash)."""
    probe = (
        "import importlib.util, json, sys\n"
        "if importlib.util.find_spec('torch') is None: print('{}'); sys.exit(0)\n"
        "import torch\n"
        "print(json.dumps({'version': torch.__version__, 'cuda': torch.version.cuda,"
        " 'hip': getattr(torch.version, 'hip', None)}))\n"
    )
    ran = run([python, "-c", probe], env, timeout=120)
    if not ran.ok:
        return f"cannot import torch in {python}: {_last_line(ran) or f'exit {ran.code}'}"
    try:
        info = json.loads(ran.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f"cannot tell: unexpected output from {python}"
    if not info:
        return f"torch {NOT_FOUND} in {python}"
    if info.get("hip"):
        return f"torch {info['version']}, ROCm/HIP build (HIP {info['hip']})"
    if info.get("cuda"):
        return f"torch {info['version']}, CUDA build (CUDA {info['cuda']}): install a ROCm wheel to run on AMD"
    return f"torch {info['version']}, CPU-only build"


def render_text(diagnosis: Diagnosis) -> str:
    """The report for a terminal."""
    rows: list[tuple[str, str]] = [("Tools", "")]
    for tool in diagnosis.tools:
        note = f"  [{tool.run_with}]" if tool.run_with else ""
        rows.append((tool.name, f"{tool.path}  {tool.version}{note}" if tool.path else NOT_FOUND))
    rows += [
        ("ROCm", ""),
        ("install", diagnosis.rocm_path or f"{NOT_FOUND} ($ROCM_PATH, /opt/rocm, /opt/rocm-*, /opt/rocm/core-*)"),
        ("version", diagnosis.rocm_version),
        ("GPUs", ""),
        ("gfx", ", ".join(diagnosis.gpus) + f"  ({diagnosis.gpu_note})" if diagnosis.gpus else diagnosis.gpu_note),
        ("PyTorch", ""),
        ("build", diagnosis.torch),
        ("What migrate would use", ""),
        ("apply", diagnosis.apply_engine),
        ("verify", diagnosis.verify_with),
    ]
    return "".join(f"{label}\n" if not text else f"  {label:<14}{text}\n" for label, text in rows)


def render_json(diagnosis: Diagnosis) -> str:
    """The report as JSON."""
    return json.dumps(dataclasses.asdict(diagnosis), indent=2) + "\n"


def _tool(name: str, env: Mapping[str, str], rocm: Path | None) -> Tool:
    path = _which(name, env, rocm)
    if path is None:
        return Tool(name, None)
    run_env = {**env, "HIP_PLATFORM": "amd"} if name == "hipcc" else env
    ran = run([path, "--version"], run_env)
    version = _version_line(ran) if ran.code != -1 else f"(cannot run: {ran.stderr})"
    return Tool(name, path, version, "HIP_PLATFORM=amd" if name == "hipcc" else "")


def _which(name: str, env: Mapping[str, str], rocm: Path | None) -> str | None:
    """On PATH first, then in the ROCm install's bin/ (hipify often lives only there)."""
    found = shutil.which(name, path=env.get("PATH", ""))
    if found or rocm is None:
        return found
    return shutil.which(name, path=os.pathsep.join(str(rocm / d) for d in ("bin", "llvm/bin")))


def _version_line(ran: Ran) -> str:
    text = _ANSI.sub("", ran.stdout + "\n" + ran.stderr)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    preferred = next((line for line in lines if "version" in line.lower() and re.search(r"\d", line)), None)
    return preferred or (lines[0] if lines else f"(no version output, exit {ran.code})")


def _system_hip(hipcc: Tool) -> str:
    """Without an install directory, HIP may still come from distribution packages."""
    if not hipcc.path:
        return NOT_FOUND
    return f"{NOT_FOUND} as a ROCm install; HIP from system packages ({hipcc.path}: {hipcc.version})"


def _apply_engine(tools: Mapping[str, Tool]) -> str:
    if tools["hipify-clang"].path:
        return f"hipify-clang ({tools['hipify-clang'].path}) for --engine auto"
    if tools["hipify-perl"].path:
        return f"hipify-perl ({tools['hipify-perl'].path}) for --engine auto: hipify-clang {NOT_FOUND}"
    return "the builtin engine (token-aware renames): neither hipify-clang nor hipify-perl found"


def _verify_with(hipcc: Tool, gpus: tuple[str, ...]) -> str:
    if not hipcc.path:
        return f"nothing: hipcc {NOT_FOUND}, so verify cannot compile-check"
    arch = ",".join(gpus) if gpus else "<each --target, default gfx942>"
    return f"HIP_PLATFORM=amd {hipcc.path} -fsyntax-only --offload-arch={arch}"


def _last_line(ran: Ran, *, prefer_stdout: bool = False) -> str:
    first, second = (ran.stdout, ran.stderr) if prefer_stdout else (ran.stderr, ran.stdout)
    text = _ANSI.sub("", first if first.strip() else second)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path.name))


def _quiet() -> contextlib.suppress:
    """Reading an optional file: a missing or unreadable one is no error."""
    return contextlib.suppress(OSError, UnicodeDecodeError, ValueError)
