"""What `apply` changes beside C/C++/CUDA sources: Python fixes, ROCm requirements, Dockerfile and compose files."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml

from migrate.bounded import Refused, read_bytes, read_source
from migrate.data import load_yaml
from migrate.model import FileKind, Finding, Severity, SourceFile
from migrate.parse import ParseError
from migrate.parse.cmake import commands
from migrate.port.guards import nvidia_arch_path
from migrate.port.hipccflags import hipcc_word, path_map
from migrate.port.plan import FileChange, Fix
from migrate.port.pyswitch import capability_helpers, switch_fixes
from migrate.substitutions import knowledge_base

if TYPE_CHECKING:
    from migrate.config import Settings
    from migrate.port.plan import PortOptions

HIP_CHECK = "(torch.version.cuda or torch.version.hip)"
_CUDA_LOCAL = re.compile(r"\+cu\d+")
_CUDA_INDEX = re.compile(r"https?://download\.pytorch\.org/whl/(?:nightly/)?cu\d+/?")
_INDEX_URL = re.compile(r"--index-url\s+(\S+)")
_TORCH_PIN = re.compile(r"^\s*torch\s*(?:==|~=|===)\s*(\d+)\.(\d+)", re.M | re.I)
_FROM = re.compile(r"^(?P<lead>\s*FROM\s+(?:--platform=\S+\s+)?)(?P<image>\S+)(?P<rest>.*)$", re.I)
_CUDA_IMAGES = (re.compile(r"^(?:docker\.io/)?nvidia/cuda(?::|$)"), re.compile(r"^nvcr\.io/nvidia/cuda(?::|$)"))
_TORCH_IMAGES = (re.compile(r"^(?:docker\.io/)?pytorch/pytorch:.*cuda"), re.compile(r"^nvcr\.io/nvidia/pytorch(?::|$)"))
_COMPOSE_GPU = re.compile(r"^\s*(?:runtime:\s*nvidia|driver:\s*nvidia|capabilities:.*\bgpu\b)", re.M)
_SMI = "nvidia-smi"
_INDEX_ANSWERED = frozenset({"torch-cuda-wheels"})  # the ROCm index swap already answers these lines
_PY_NEWLINE = re.compile(rb"\r\n|\r|\n")  # the line ends of Python's tokenizer (str.splitlines knows more)
RULE_SAFE = "fix-torch-version-hip"
RULE_UNSAFE = "fix-nvidia-smi"
RULE_SIDE_TAKEN = "side-file-exists"


def side_changes(
    root: Path, sources: Sequence[SourceFile], settings: Settings, options: PortOptions, *,
    scan_findings: Sequence[Finding] = (), rocm_supported: bool = False,
) -> tuple[list[FileChange], list[Finding]]:
    """The non-source changes of a port for the GPU targets of SETTINGS, and findings for the fixes left unapplied
    (a repository that already builds for ROCm keeps its torch.version.cuda tests: they are its CUDA/ROCm
    switches)."""
    cuda_only = _cuda_only_lines(scan_findings)
    python = {s.relpath: text for s in sources if s.kind is FileKind.PYTHON and not s.vendored
              and (text := _read(s)) is not None}
    helpers = capability_helpers(python)
    by_path: dict[str, list[Finding]] = {}
    for finding in scan_findings:
        by_path.setdefault(finding.path, []).append(finding)
    changes: list[FileChange] = []
    findings: list[Finding] = []
    for source in sources:
        if source.vendored:
            continue
        if source.kind is FileKind.PYTHON:
            if source.relpath not in python or nvidia_arch_path(source.relpath):
                continue
            change, left = _python(source.relpath, python[source.relpath], options.unsafe_fixes, helpers,
                                   by_path.get(source.relpath, []), rocm_supported, settings.targets)
            changes.extend(change)
            findings.extend(left)
        elif source.kind is FileKind.REQUIREMENTS:
            changes.extend(_requirements(source, options.in_place, cuda_only.get(source.relpath, {})))
        elif source.kind is FileKind.DOCKERFILE:
            changes.extend(_dockerfile(source, options.in_place))
        elif source.kind is FileKind.COMPOSE:
            changes.extend(_compose(source))
        elif source.kind is FileKind.CMAKE and PurePosixPath(source.relpath).name == "CMakeLists.txt":
            changes.extend(_cmake(source, settings.targets))
        elif source.kind is FileKind.MAKEFILE and not source.relpath.endswith(".rocm"):
            changes.extend(_makefile(source, settings.targets))
    kept: list[FileChange] = []
    for side in changes:
        on_disk = _against_disk(root, side, settings.max_file_size)
        if isinstance(on_disk, Finding):
            findings.append(on_disk)
        elif on_disk.old != on_disk.new:
            kept.append(on_disk)
    return kept, findings


def _against_disk(root: Path, change: FileChange, limit: int) -> FileChange | Finding:
    """A side file that already exists is an edit of it, not a new file; a finding when it exists but is not a file
    we read (larger than LIMIT, a FIFO, a device): the port leaves it alone and says so."""
    existing = root / change.relpath
    if change.old is not None or existing.is_symlink() or not os.path.lexists(existing):
        return change
    try:
        return replace(change, old=read_bytes(existing, limit=limit))
    except (OSError, Refused) as exc:
        why = exc if isinstance(exc, Refused) else exc.strerror or exc
        message = f"{change.relpath} exists and is not a file migrate reads ({why}): not written; move it and re-run"
        return Finding(change.relpath, 1, 1, RULE_SIDE_TAKEN, "other", Severity.MEDIUM, 1, message, "")


def _read(source: SourceFile) -> str | None:
    try:
        data = read_source(source)
        return None if b"\0" in data[:8192] else data.decode("utf-8")
    except (OSError, Refused, UnicodeDecodeError):
        return None


def _change(relpath: str, old: bytes | None, new: str, reason: str) -> FileChange:

    return FileChange(relpath, old, new.encode("utf-8"), reason=reason)


# -- Python --------------------------------------------------------------------------------------------------------


def python_fixes(text: str, *, cuda_checks: bool = True) -> list[Fix]:
    """Safe: torch.version.cuda as a condition also accepts HIP (with CUDA_CHECKS). Unsafe: nvidia-smi commands ->
    amd-smi."""
    if "torch.version.hip" in text and _SMI not in text:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    dual = "torch.version.hip" in text or not cuda_checks  # already dual-path: leave its checks alone
    fixes = [] if dual else [_fix_condition(n) for n in _checks_without_value_use(tree)]
    fixes += [_fix_smi(n) for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_smi_command(n)]
    return sorted(fixes, key=lambda f: (f.line, f.start))


def _is_torch_cuda(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute) and node.attr == "cuda"
        and isinstance(node.value, ast.Attribute) and node.value.attr == "version"
        and isinstance(node.value.value, ast.Name) and node.value.value.id == "torch"
    )


def _checks_without_value_use(tree: ast.AST) -> list[ast.Attribute]:
    """The truth tests of torch.version.cuda in scopes (function or module) that never read it as a version string:
    where a scope does (`torch.version.cuda.split(".")`, `Version(torch.version.cuda)`), its test guards that read,
    and accepting HIP would only move the error to a None used as a string."""
    tested = list(_condition_uses(tree))
    scope_of = _scopes(tree)
    tested_ids = {id(node) for node in tested}
    reading = {scope_of[id(node)] for node in ast.walk(tree)
               if _is_torch_cuda(node) and id(node) not in tested_ids and id(node) in scope_of}
    return [node for node in tested if scope_of.get(id(node)) not in reading]


def _scopes(tree: ast.AST) -> dict[int, int]:
    """Each torch.version.cuda node (by id) to the id of its innermost function or lambda (the module's otherwise);
    an f-string's use only shows the value, so it is left out."""
    found: dict[int, int] = {}
    stack: list[tuple[ast.AST, int]] = [(tree, id(tree))]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, ast.JoinedStr):
            continue
        if _is_torch_cuda(node):
            found[id(node)] = scope
            continue
        inner = id(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return found


def _condition_uses(tree: ast.AST) -> Iterator[ast.Attribute]:
    """torch.version.cuda where only its truth (or None-ness) is tested."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            yield from _tested(node.test)


def _tested(expr: ast.expr) -> Iterator[ast.Attribute]:
    if _is_torch_cuda(expr):
        yield expr  # type: ignore[misc]
    elif isinstance(expr, ast.BoolOp):
        for value in expr.values:
            yield from _tested(value)
    elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        yield from _tested(expr.operand)
    elif isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], (ast.Is, ast.IsNot)):
        right = expr.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            yield from _tested(expr.left)


def _fix_condition(node: ast.Attribute) -> Fix:
    message = "torch.version.cuda is None on ROCm builds: the check now accepts torch.version.hip too"
    return Fix(node.lineno, node.col_offset, node.end_col_offset or node.col_offset, HIP_CHECK, True, message)


def _is_smi_command(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or not node.args:
        return False
    first = node.args[0]
    if isinstance(first, (ast.List, ast.Tuple)) and first.elts:
        first = first.elts[0]
    return isinstance(first, ast.Constant) and isinstance(first.value, str) and (
        first.value == _SMI or first.value.startswith(_SMI + " ")
    ) and first.lineno == first.end_lineno


def _fix_smi(node: ast.Call) -> Fix:
    first = node.args[0]
    if isinstance(first, (ast.List, ast.Tuple)):
        first = first.elts[0]
    start = first.col_offset + 1  # past the opening quote
    message = "nvidia-smi -> amd-smi: the options and the output format differ; check what the code parses"
    return Fix(first.lineno, start, start + len(_SMI), "amd-smi", False, message)


def _python(
    relpath: str, text: str, unsafe_fixes: bool, helpers: frozenset[str], findings: Sequence[Finding],
    rocm_supported: bool, targets: Sequence[str],
) -> tuple[list[FileChange], list[Finding]]:
    """The safe Python fixes (and the unsafe ones when asked) and the ROCm switches (pyswitch.py, for the GPU
    TARGETS) of one file."""
    fixes = python_fixes(text, cuda_checks=not rocm_supported) if "torch.version.cuda" in text or _SMI in text else []
    if "torch" in text:
        fixes += switch_fixes(text, relpath, helpers=helpers, findings=findings, targets=targets)
    applied = [f for f in fixes if f.safe or unsafe_fixes]
    left = [_unapplied(relpath, f, text) for f in fixes if f not in applied]
    if not applied:
        return [], left
    new = _apply_fixes(text, applied)
    try:
        compile(new, relpath, "exec", dont_inherit=True)  # compiled, never run: the edit must still parse
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], left
    return [_change(relpath, text.encode("utf-8"), new, "Python fixes")], left


def _apply_fixes(text: str, fixes: list[Fix]) -> str:
    """Each fix placed by byte offset from the parser's own line numbering (LF, CRLF or CR end a line; a form
    feed or U+2028 does not), last first so earlier offsets stay valid."""
    data = text.encode("utf-8")
    starts = _line_starts(data)
    for fix in sorted(fixes, key=lambda f: (f.line, f.start), reverse=True):
        offset = starts[fix.line - 1]
        data = data[: offset + fix.start] + fix.text.encode("utf-8") + data[offset + fix.end :]
    return data.decode("utf-8")


def _line_starts(data: bytes) -> list[int]:
    return [0, *(match.end() for match in _PY_NEWLINE.finditer(data))]


def _parser_line(text: str, number: int) -> str:
    data = text.encode("utf-8")
    start = _line_starts(data)[number - 1]
    end = _PY_NEWLINE.search(data, start)
    return data[start : end.start() if end else len(data)].decode("utf-8")


def _unapplied(relpath: str, fix: Fix, text: str) -> Finding:
    evidence = _parser_line(text, fix.line).strip()
    return Finding(relpath, fix.line, fix.start + 1, RULE_UNSAFE, "nvidia-runtime-tool", Severity.INFO, fix.line,
                   f"unsafe fix not applied (pass --unsafe-fixes): {fix.message}", evidence, hip="amd-smi")


# -- requirements --------------------------------------------------------------------------------------------------


def _rocm_index(text: str) -> tuple[str, str | None]:
    """The ROCm wheel index that serves the torch release the requirements pin, else the current one;
    and a note when the pinned release has no ROCm index the knowledge base knows of."""
    pin = _TORCH_PIN.search(text)
    if pin is None:
        return _current_rocm_index(), None
    minor = f"{pin.group(1)}.{pin.group(2)}"
    table = _torch_indexes()
    if minor in table["torch"]:
        return table["index"].format(tag=table["torch"][minor]), None
    note = f"# torch {minor}: no ROCm wheel index known (as of {table['as_of']}); pin a torch release that has one\n"
    return _current_rocm_index(), note


@cache
def _torch_indexes() -> dict[str, Any]:
    return load_yaml("torch_rocm_indexes.yaml")  # type: ignore[no-any-return]


def _current_rocm_index() -> str:
    """The ROCm wheel index of the knowledge base's first torch install command."""
    for command in knowledge_base()["torch-cuda-wheels"].install:
        found = _INDEX_URL.search(command)
        if found:
            return found.group(1)
    raise LookupError("the knowledge base has no ROCm wheel index for torch")


def _cuda_only_lines(findings: Sequence[Finding]) -> dict[str, dict[int, str]]:
    """path -> line -> the ROCm substitute, for requirement lines the scan found CUDA-only."""
    base = knowledge_base()
    found: dict[str, dict[int, str]] = {}
    for finding in findings:
        subs = [base[s] for s in finding.substitutions if s in base and s not in _INDEX_ANSWERED]
        if finding.category == "cuda-only-dependency" and subs:
            found.setdefault(finding.path, {})[finding.line] = subs[0].rocm[0] if subs[0].rocm else subs[0].id
    return found


def rocm_requirements(text: str, cuda_only: dict[int, str] | None = None) -> str | None:
    """The requirements with CUDA wheel indexes and +cu121-style labels swapped for ROCm, CUDA-only packages
    commented out with their substitute; None when nothing changes."""
    index, note = _rocm_index(text)
    out = [note] if note else []
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if cuda_only and number in cuda_only:
            out.append(f"# CUDA-only; on ROCm use: {cuda_only[number]}\n# {line}")
            continue
        new = _CUDA_INDEX.sub(index, line)
        if new != line and "--extra-index-url" in new:
            new = new.replace("--extra-index-url", "--index-url", 1)  # PyPI must not win over the +rocm builds
        out.append(_CUDA_LOCAL.sub("", new))
    result = "".join(out)
    if result != text and index not in result:
        result = f"--index-url {index}\n" + result  # a +cu121-style pin came from a CUDA index PyPI cannot replace
    return None if result == text else result


def _requirements(source: SourceFile, in_place: bool, cuda_only: dict[int, str]) -> list[FileChange]:
    text = _read(source)
    if text is None or source.relpath.endswith("-rocm.txt"):
        return []
    new = rocm_requirements(text, cuda_only)
    if new is None:
        return []
    if in_place:
        return [_change(source.relpath, text.encode("utf-8"), new, "ROCm wheel index")]
    header = f"# ROCm variant of {PurePosixPath(source.relpath).name}, written by `migrate apply`.\n"
    return [_change(_sibling(source.relpath, "-rocm"), None, header + new, "ROCm requirements")]


def _sibling(relpath: str, tag: str) -> str:
    path = PurePosixPath(relpath)
    return str(path.with_name(path.stem + tag + path.suffix))


# -- Dockerfile ----------------------------------------------------------------------------------------------------


def _image(entry_id: str, pattern: str) -> str:
    for command in knowledge_base()[entry_id].install:
        found = re.search(pattern, command)
        if found:
            return found.group(1)
    raise LookupError(f"the knowledge base has no image for {entry_id}")


def rocm_dockerfile(text: str) -> str | None:
    """FROM lines on NVIDIA CUDA or PyTorch-CUDA images moved to ROCm images; None when there are none."""
    out = []
    for line in text.splitlines(keepends=True):
        found = _FROM.match(line.rstrip("\r\n"))
        image = found.group("image") if found else ""
        if any(p.match(image) for p in _CUDA_IMAGES):
            line = line.replace(image, _image("nvidia-cuda-base-images", r"^FROM\s+(\S+)"), 1)
        elif any(p.match(image) for p in _TORCH_IMAGES):
            line = line.replace(image, _image("pytorch-images", r"docker pull\s+(\S+)"), 1)
        out.append(line)
    result = "".join(out)
    return None if result == text else result.replace("CUDA_HOME=/usr/local/cuda", "ROCM_PATH=/opt/rocm")


def _dockerfile(source: SourceFile, in_place: bool) -> list[FileChange]:
    text = _read(source)
    new = rocm_dockerfile(text) if text is not None else None
    if text is None or new is None:
        return []
    if in_place:
        return [_change(source.relpath, text.encode("utf-8"), new, "ROCm base image")]
    path = PurePosixPath(source.relpath)
    lower = path.name.lower()
    name = _sibling(path.name, ".rocm") if lower.endswith(".dockerfile") else f"{path.name}.rocm"
    header = f"# ROCm variant of {path.name}, written by `migrate apply`. Run with --device /dev/kfd --device /dev/dri.\n"
    return [_change(str(path.with_name(name)), None, header + new, "ROCm Dockerfile")]


# -- docker compose ------------------------------------------------------------------------------------------------


def compose_override(text: str) -> str | None:
    """A compose override giving each NVIDIA-GPU service the AMD devices; None when no service uses a GPU."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict):
        return None
    gpu = sorted(name for name, spec in services.items() if _COMPOSE_GPU.search(yaml.safe_dump(spec or {})))
    if not gpu:
        return None
    lines = ["# AMD GPU devices for the services that reserve NVIDIA GPUs, written by `migrate apply`.",
             "# Use: docker compose -f <compose file> -f <this file> up  (remove the nvidia runtime/reservations",
             "# on an AMD host, or compose asks for the NVIDIA runtime).", "services:"]
    for name in gpu:
        lines += [f"  {name}:", "    devices:", "      - /dev/kfd", "      - /dev/dri", "    group_add:",
                  "      - video", "      - render", "    security_opt:", "      - seccomp=unconfined"]
    return "\n".join(lines) + "\n"


def _compose(source: SourceFile) -> list[FileChange]:
    text = _read(source)
    new = compose_override(text) if text is not None else None
    if new is None:
        return []
    path = PurePosixPath(source.relpath)
    target = path.with_name(path.stem + ".rocm" + path.suffix)
    return [_change(str(target), None, new, "compose AMD devices")]


# -- CMake ---------------------------------------------------------------------------------------------------------

CMAKE_HIP_TARGETS = {
    "CUDA::cudart": ("hip", "hip::host"), "CUDA::cudart_static": ("hip", "hip::host"),
    "CUDA::cuda_driver": ("hip", "hip::host"), "CUDA::cublas": ("hipblas", "roc::hipblas"),
    "CUDA::cusparse": ("hipsparse", "roc::hipsparse"), "CUDA::curand": ("hiprand", "hip::hiprand"),
    "CUDA::cufft": ("hipfft", "hip::hipfft"), "CUDA::cusolver": ("hipsolver", "roc::hipsolver"),
}
_GUARD = """# ROCm/HIP port (migrate apply): -DUSE_HIP=OFF keeps the CUDA build.
option(USE_HIP "Build the GPU code with HIP for AMD GPUs" ON)
if(USE_HIP)
  enable_language(HIP)
  if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)
    set(CMAKE_HIP_ARCHITECTURES "{archs}")
  endif(){standard}
else()
  enable_language(CUDA)
endif()
"""


def rocm_cmake(text: str, gfx_targets: Sequence[str]) -> str | None:
    """CMakeLists with CUDA in project(): HIP behind a USE_HIP option, the CUDA build kept; None otherwise."""
    if "USE_HIP" in text:
        return None
    try:
        found = commands(text)
    except ParseError:
        return None
    project = next((c for c in found if c[0] == "project" and any(a == "CUDA" for a, _ in c[2])), None)
    if project is None:
        return None
    edits = _cmake_edits(text, found, project, gfx_targets)
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    sources = sorted({a for name, _, args in found if name in ("add_executable", "add_library", "target_sources")
                      for a, _ in args if a.endswith(".cu")})
    if sources:
        out += ("" if out.endswith("\n") else "\n") + (
            f"\nif(USE_HIP)\n  set_source_files_properties({' '.join(sources)} PROPERTIES LANGUAGE HIP)\nendif()\n")
    return out


Command = tuple[str, int, list[tuple[str, int]]]


def _cmake_edits(
    text: str, found: list[Command], project: Command, gfx_targets: Sequence[str]
) -> list[tuple[int, int, str]]:
    """Drop CUDA from project(), add the USE_HIP guard, and make find_package and CUDA:: targets conditional."""
    cuda_offset = next(offset for arg, offset in project[2] if arg == "CUDA")
    start = cuda_offset
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    standard = re.search(r"set\(\s*CMAKE_CUDA_STANDARD\s+(\d+)", text)
    extra = f"\n  set(CMAKE_HIP_STANDARD {standard.group(1)})" if standard else ""
    guard = "\n" + _GUARD.format(archs=";".join(gfx_targets), standard=extra).rstrip("\n")
    project_end = _command_end(text, project[1])
    edits = [(start, cuda_offset + 4, ""), (project_end, project_end, guard)]
    used = sorted({arg for name, _, args in found if name == "target_link_libraries" for arg, _ in args
                   if arg in CMAKE_HIP_TARGETS})
    for name, offset, args in found:
        if name == "find_package" and args and args[0][0] == "CUDAToolkit":
            end = _command_end(text, offset)
            packages = sorted({CMAKE_HIP_TARGETS[t][0] for t in used} | {"hip"})
            finds = "".join(f"  find_package({p} REQUIRED)\n" for p in packages)
            edits.append((offset, end, f"if(USE_HIP)\n{finds}else()\n  {text[offset:end]}\nendif()"))
        if name == "target_link_libraries":
            for arg, where in args:
                if arg in CMAKE_HIP_TARGETS:
                    hip = CMAKE_HIP_TARGETS[arg][1]
                    edits.append((where, where + len(arg), f"$<IF:$<BOOL:${{USE_HIP}}>,{hip},{arg}>"))
    return edits


def _command_end(text: str, offset: int) -> int:
    """The offset just past the ')' closing the command that starts at OFFSET."""
    depth = 0
    i = text.index("(", offset)
    while i < len(text):
        char = text[i]
        if char == '"':
            i = text.index('"', i + 1) if '"' in text[i + 1 :] else len(text)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _cmake(source: SourceFile, gfx_targets: Sequence[str]) -> list[FileChange]:
    text = _read(source)
    new = rocm_cmake(text, gfx_targets) if text is not None else None
    if text is None or new is None:
        return []
    return [_change(source.relpath, text.encode("utf-8"), new, "CMake: HIP behind USE_HIP")]


# -- Makefiles -----------------------------------------------------------------------------------------------------

_CUDA_VAR_LIB64 = re.compile(r"(\$[({]CUDA_(?:HOME|PATH|DIR|ROOT)[)}])/lib64")


def rocm_makefile(text: str, gfx_targets: Sequence[str]) -> str | None:
    """A hipcc variant of a Makefile that calls nvcc: flags mapped, arch flags -> --offload-arch; None otherwise."""
    if not re.search(r"\bnvcc\b", text):
        return None
    offload = " ".join(f"--offload-arch={gfx}" for gfx in gfx_targets)
    out = [_hipcc_line(line, offload) for line in text.splitlines(keepends=True)]
    return "".join(out)


def _hipcc_line(line: str, offload: str) -> str:
    if line.lstrip().startswith("#"):
        return line
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    for old, new in path_map().items():
        body = body.replace(old, new)
    body = _CUDA_VAR_LIB64.sub(r"\1/lib", body)
    parts = re.split(r"(\s+)", body)  # words at even indexes, the whitespace between them at odd ones
    placed = drop_next = False
    for index in range(0, len(parts), 2):
        if drop_next or not parts[index]:
            drop_next, parts[index] = False, ""
            continue
        word = hipcc_word(parts[index])
        parts[index], drop_next = " ".join(word.words), word.drop_next
        if word.arch:
            parts[index], placed = ("" if placed else offload), True
    joined = "".join(parts)
    return (re.sub(r"(?<=\S)[ \t]{2,}", " ", joined).rstrip() if joined != body else joined) + ending


def _makefile(source: SourceFile, gfx_targets: Sequence[str]) -> list[FileChange]:
    text = _read(source)
    new = rocm_makefile(text, gfx_targets) if text is not None else None
    if text is None or new is None or new == text:
        return []
    name = PurePosixPath(source.relpath)
    header = f"# hipcc variant of {name.name}, written by `migrate apply`: make -f {name.name}.rocm\n"
    return [_change(str(name.with_name(name.name + ".rocm")), None, header + new, "Makefile for hipcc")]
