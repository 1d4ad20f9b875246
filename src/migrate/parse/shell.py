"""Shell scripts, and the shell snippets inside Dockerfiles, Makefiles, CI files and README code blocks.

A small POSIX-shell word splitter (quotes, escapes, comments, operators, heredocs) that keeps each
word's offset, then one pass per simple command: leading VAR=value assignments, the tool, its
arguments, and the packages and index URLs of `pip install` / `uv pip install` / `conda install`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import COMMAND, ENV, IMAGE, INDEX, PACKAGE, READ, Item, ManifestDocument, Positions
from migrate.parse.manifest import LOCATION, arch_flag_items, location_items, requirement_item

Origin = Callable[[int], tuple[int, int]]
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_OPERATORS = ("&&", "||", ";;", "<<-", "<<", ">>", "$(", "|", ";", "&", "(", ")", "`", "<", ">")
_SEPARATORS = frozenset({"\n", "&&", "||", ";;", "|", ";", "&", "(", ")", "$(", "`"})
_REDIRECTS = frozenset({"<", ">", ">>", "<<", "<<-"})
_WORD_END = frozenset(" \t\r\n;&|()<>`")
_OPERATOR_START = frozenset(op[0] for op in _OPERATORS)
_PLAIN = re.compile(r"[^ \t\r\n;&|()<>`'\"\\$]+")
# words before the command that runs: wrappers, and the keywords of compound commands (`if ! pip install flash-attn;
# then`, `while ! nvidia-smi; do`), whose condition is a command too
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "nice", "then", "do", "else", "!", "{",
                       "if", "elif", "while", "until"})
_DECLARE = frozenset({"export", "declare", "local", "readonly", "typeset", "set"})
_PRINTERS = frozenset({"echo", "printf", "logger"})  # what they expand is only shown, unless piped or substituted
_CAPTURING = frozenset({"|", "$(", "`"})
_EXPANSION = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_PIP_VALUE_OPTIONS = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root", "--src", "--platform",
     "--python-version", "--implementation", "--abi", "--upgrade-strategy", "--trusted-host", "-C",
     "--config-settings", "--global-option", "--no-binary", "--only-binary", "--progress-bar", "--python",
     "-p", "--cache-dir", "--log", "--torch-backend", "--group", "--extra", "--index-strategy", "--report"}
)
_PIP_INDEX_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--index", "--default-index"}
)
_CONDA_VALUE_OPTIONS = frozenset({"-n", "--name", "-p", "--prefix", "--file", "--override-channels-file"})
# Tools whose arguments name container images (docker run IMAGE, apptainer pull docker://IMAGE, srun --container-image=).
_CONTAINER_TOOLS = frozenset(
    {"docker", "podman", "nerdctl", "singularity", "apptainer", "enroot", "srun", "sbatch", "salloc", "skopeo", "crane",
     "shifter", "shifterimg", "podman-hpc"}
)
# A batch script's scheduler directive naming the job's image: `#SBATCH --image=nersc/pytorch:ngc-22.02-v0` (Shifter at
# NERSC), `#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.01-py3` (Pyxis/enroot). Only a line that starts with
# exactly one `#` is a directive: `##SBATCH` is the usual way to switch one off.
_DIRECTIVE = re.compile(r"^[ \t]*#SBATCH[ \t]+(.+)$", re.M)
_IMAGE_OPTIONS = ("--image", "--container-image")
# registry/name[:tag]: a slash and a tag or digest (nvidia/cuda:12.4.1-devel), or a registry host with a dot.
IMAGE_REFERENCE = re.compile(
    r"^(?:docker://)?(?:(?:[a-z0-9-]+\.)+[a-z0-9-]+(?::\d+)?[/#])?[a-z0-9._-]+(?:/[a-z0-9._-]+)+"
    r"(?::[A-Za-z0-9_][\w.-]*|@sha256:[0-9a-f]+)?$"
)
# enroot names an imported image registry+org+name+tag.sqsh; clusters often rename it registry_org_name_tag.sqsh
_ENROOT_NGC = re.compile(r"(?:^|/)(?:nvcr\.io[_+])?nvidia[_+]([a-z0-9-]+)[_+]([\w.-]+)\.sqsh$")


@dataclass(frozen=True)
class Word:
    """A shell word (quotes removed) or an operator, with its offset in the snippet."""

    text: str
    offset: int
    operator: bool = False


def tokenize(text: str) -> list[Word]:
    """Split shell text into words and operators; comments and heredoc bodies vanish."""
    words: list[Word] = []
    heredocs: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\" and text.startswith("\n", i + 1):
            i += 2
        elif char == "\n":
            words.append(Word("\n", i, True))
            i = _skip_heredocs(text, i + 1, heredocs)
            heredocs = []
        elif char in " \t\r":
            i += 1
        elif char == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        else:
            operator = next((op for op in _OPERATORS if text.startswith(op, i)), None) if char in _OPERATOR_START else None
            if operator:
                words.append(Word(operator, i, True))
                i += len(operator)
                if operator in ("<<", "<<-"):
                    i = _heredoc_word(text, i, operator == "<<-", heredocs, words)
                continue
            word, end = _word(text, i)
            words.append(Word(word, i))
            if "$(" in word and '"' in text[i:end]:
                words.extend(_quoted_substitutions(text, i, end))
            i = end
    return words


def _quoted_substitutions(text: str, start: int, end: int) -> Iterator[Word]:
    """The command substitutions inside the double-quoted parts of the word TEXT[START:END] (`"$(which nvcc)"`,
    `NVCC = "$(shell which nvcc)"`), as the `$(` ... `)` words the unquoted form gives: the shell runs them too."""
    i, quoted, end = start, False, min(end, len(text))  # an unclosed quote runs to the end of the text
    while i < end:
        char = text[i]
        if char == "\\":
            i += 2
        elif char == "'" and not quoted:
            close = text.find("'", i + 1)
            i = end if close < 0 else close + 1
        elif char == '"':
            quoted, i = not quoted, i + 1
        elif quoted and text.startswith("$(", i) and not text.startswith("$((", i):
            close = _closing_parenthesis(text, i + 2, end)
            if close < 0:
                return
            yield Word("$(", i, True)
            yield from (Word(w.text, w.offset + i + 2, w.operator) for w in tokenize(text[i + 2 : close]))
            yield Word(")", close, True)
            i = close + 1
        else:
            i += 1


def _closing_parenthesis(text: str, i: int, end: int) -> int:
    """The offset of the `)` that closes a `$(` whose body starts at I, or -1 before END."""
    depth = 1
    while i < end:
        if text[i] == "\\":
            i += 1
        elif text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _word(text: str, start: int) -> tuple[str, int]:
    out: list[str] = []
    i, n = start, len(text)
    while i < n and text[i] not in _WORD_END:
        char = text[i]
        if char == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end
            out.append(text[i + 1 : end])
            i = end + 1
        elif char == '"':
            i = _double_quoted(text, i + 1, out)
        elif char == "\\" and i + 1 < n:
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
        elif text.startswith("$(", i):
            break
        else:
            plain = _PLAIN.match(text, i)  # a run of ordinary characters at once: the common case
            end = plain.end() if plain else i + 1
            out.append(text[i:end])
            i = end
    return "".join(out), max(i, start + 1)


def _double_quoted(text: str, i: int, out: list[str]) -> int:
    n = len(text)
    while i < n and text[i] != '"':
        if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return i + 1


def _heredoc_word(text: str, i: int, strip_tabs: bool, heredocs: list[tuple[str, bool]], words: list[Word]) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    delimiter, end = _word(text, i)
    if delimiter:
        heredocs.append((delimiter, strip_tabs))
        words.append(Word(delimiter, i))
    return end


def _skip_heredocs(text: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    for delimiter, strip_tabs in heredocs:
        while i < len(text):
            end = text.find("\n", i)
            line = text[i : len(text) if end < 0 else end]
            i = len(text) if end < 0 else end + 1
            if (line.lstrip("\t") if strip_tabs else line).rstrip("\r") == delimiter:
                break
    return i


def commands(words: list[Word]) -> Iterator[tuple[list[Word], bool]]:
    """The simple commands, redirections and their targets removed: (words, whether the output is captured by a
    pipe or a command substitution). A command substitution is a command of its own, and the command around it goes
    on after its `)` (`docker run --user $(id -u):$(id -g) nvidia/cuda:12.1.0-devel`: the image is docker's)."""
    current: list[Word] = []
    captured = skip_next = False
    outer: list[tuple[list[Word], bool] | None] = []  # per open parenthesis: the command a `$(` interrupted
    for word in words:
        if skip_next and not word.operator:
            skip_next = False
            continue
        skip_next = False
        if word.operator and word.text in _REDIRECTS:
            skip_next = True
        elif word.operator and word.text == "$(":
            outer.append((current, captured))  # resumed at its `)`, yielded once whole
            current, captured = [], True
        elif word.operator and word.text in _SEPARATORS:
            # a `)` that closes nothing ends a case pattern (`nvcc)`, `*)`): a choice the script tests, not a command
            if current and not (word.text == ")" and not outer):
                yield current, captured or word.text == "|"
            resumed = outer.pop() if word.text == ")" and outer else None
            if word.text == "(":
                outer.append(None)
            current, captured = resumed or ([], word.text in _CAPTURING)
        elif not word.operator:
            current.append(word)
    if current:
        yield current, captured


def shell_items(text: str, origin: Origin) -> list[Item]:
    """Every item of a shell snippet; ORIGIN maps an offset in TEXT to its (line, column) in the file."""
    found: list[Item] = []
    tools: dict[str, str] = {}  # variable -> the tool path a bare assignment gave it (TRTEXEC=/usr/src/.../trtexec)
    installers = installer_functions(text)
    for command, captured in commands(tokenize(text)):
        command = _resolved(command, tools)
        if len(command) > 1 and command[0].text in installers:  # `run_pip torch --index-url URL`: a pip install
            command = [Word("pip", command[0].offset), Word("install", command[0].offset), *command[1:]]
        found.extend(command_items(command, origin, captured=captured))
    found.extend(directive_images(text, origin))
    return found


# A function that passes its arguments on to a pip install (`run_pip_quiet() { out=$(pip install "$@" 2>&1) ...; }`,
# `_pip() { "$VENV/bin/pip" install "$@"; }`, one calling another such function): install scripts call it with the
# packages and the index URL, so each call is read as `pip install ARGS`.
_FUNCTION_HEAD = re.compile(
    r"^([ \t]*)(?:function[ \t]+([A-Za-z_][\w:.-]*)(?:[ \t]*\(\))?|([A-Za-z_][\w:.-]*)[ \t]*\(\))[ \t]*", re.M
)
_FORWARDED = frozenset({"$@", "${@}", "$*", "${*}"})


def installer_functions(text: str) -> frozenset[str]:
    """Names of the functions TEXT defines that run `pip install` (any spelling) with the arguments they were given."""
    if "install" not in text or ("$@" not in text and "${@}" not in text and "$*" not in text):
        return frozenset()
    bodies = {head.group(2) or head.group(3): _function_body(text, head) for head in _FUNCTION_HEAD.finditer(text)}
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, body in bodies.items():
            if name not in found and _forwards_install(body, found):
                found.add(name)
                changed = True
    return frozenset(found)


def _function_body(text: str, head: re.Match[str]) -> str:
    """The text from HEAD to its closing brace: the rest of the line for a one-line definition, else up to the first
    line that starts with `}` at the definition's indentation or less."""
    line_end = text.find("\n", head.end())
    line_end = len(text) if line_end < 0 else line_end
    if "}" in text[head.end() : line_end]:
        return text[head.end() : line_end]
    indent = len(head.group(1))
    close = re.compile(r"^[ \t]{0,%d}\}" % indent, re.M).search(text, line_end)
    return text[head.end() : close.start() if close else len(text)]


def _forwards_install(body: str, known: set[str]) -> bool:
    for command, _captured in commands(tokenize(body)):
        words = [w.text for w in command]
        while words and (words[0] in _WRAPPERS or ASSIGNMENT.match(words[0])):
            words = words[1:]
        if len(words) < 2 or not _FORWARDED.intersection(words[1:]):
            continue
        tool = words[0].rsplit("/", 1)[-1]
        if tool in known or _installer(tool, tuple(words[1:])) == "pip":
            return True
    return False


def directive_images(text: str, origin: Origin) -> Iterator[Item]:
    """The images `#SBATCH --image=` / `--container-image` directives give a batch job (tokenize drops comments)."""
    if "#SBATCH" not in text:
        return
    for directive in _DIRECTIVE.finditer(text):
        words = tokenize(directive.group(1))
        for i, word in enumerate(words):
            option, equals, value = word.text.partition("=")
            if option not in _IMAGE_OPTIONS:
                continue
            if not equals and i + 1 < len(words) and not words[i + 1].operator:
                word, value = words[i + 1], words[i + 1].text
            elif not equals:
                continue
            image = image_reference(value)
            if image:
                start = directive.start(1) + word.offset + (len(word.text) - len(value))
                yield Item(IMAGE, image, *origin(start))


# `NAME=/path/to/tool` on a line of its own, later run as `$NAME args` or `${NAME} args`: the tool is the path's
# last part (a script that keeps its TensorRT or CUDA tools' paths in variables runs them that way)
_TOOL_PATH = re.compile(r"^(?:[\w.+-]*/)+([A-Za-z_][\w.+-]*)$")
_RUN_VARIABLE = re.compile(r"^\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))$")


def _resolved(command: list[Word], tools: dict[str, str]) -> list[Word]:
    """COMMAND with a first word that runs a variable set to a tool's path replaced by that path; a command that is
    one assignment of a path records it in TOOLS."""
    assignment = ASSIGNMENT.match(command[0].text) if len(command) == 1 else None
    if assignment:
        path = _TOOL_PATH.match(assignment.group(2))
        if path:
            tools[assignment.group(1)] = assignment.group(2)
        else:
            tools.pop(assignment.group(1), None)
        return command
    run = _RUN_VARIABLE.match(command[0].text)
    name = run and (run.group(1) or run.group(2))
    if name and name in tools:
        return [Word(tools[name], command[0].offset), *command[1:]]
    return command


def command_items(command: list[Word], origin: Origin, *, captured: bool = False) -> Iterator[Item]:
    """Items of one simple command: assignments, the tool and its arguments, pip/conda packages, and the variables
    it expands (not those an `echo` only shows: CAPTURED says its output is piped or substituted)."""
    yield from arch_flag_items([(w.text, *origin(w.offset)) for w in command])
    i = 0
    while i < len(command):
        word = command[i]
        assignment = ASSIGNMENT.match(word.text)
        if assignment:
            yield from assignment_items(assignment.group(1), assignment.group(2), origin(word.offset))
        elif word.text in _DECLARE:
            yield from _declared(command[i + 1 :], origin)
            break
        elif (word.text in _WRAPPERS and not _looks_up(command, i)) or (
            word.text.startswith("-") and i > 0 and command[i - 1].text in _WRAPPERS
        ):
            pass
        else:
            yield from _invocation(command[i:], origin)
            break
        i += 1
    if captured or command[min(i, len(command) - 1)].text not in _PRINTERS:
        yield from _expansions(command, origin)


def _looks_up(command: list[Word], i: int) -> bool:
    """`if command -v NAME` (or -V, after elif / while / until): a probe for NAME, kept as a run of the keyword
    (the probe rules, nvcc-probe, read it so), not a run of NAME."""
    return (command[i].text in ("if", "elif", "while", "until") and i + 2 < len(command)
            and command[i + 1].text == "command" and command[i + 2].text in ("-v", "-V"))


def assignment_items(name: str, value: str, where: tuple[int, int]) -> Iterator[Item]:
    """NAME=VALUE: the variable, and the image VALUE names when it is one (BASE_IMAGE=nvcr.io/nvidia/pytorch), or
    the wheel it downloads (WHEEL_URL=https://.../flash_attn-2.7.4+cu12torch2.6-...whl, later `pip install $WHEEL_URL`:
    the line that spells the build is the one a port edits)."""
    yield Item(ENV, name, *where, value=value)
    if name in INDEX_VARIABLES:
        yield from index_values(name, value, where)
        return
    image = image_reference(value)
    if image:
        yield Item(IMAGE, image, where[0], where[1] + len(name) + 1)
    elif _WHEEL_URL.match(value):
        wheel = requirement_item(value, where[0], where[1] + len(name) + 1, strict=False)
        if wheel is not None:
            yield wheel
    elif _CONDA_SPEC_NAME.match(name) and _CONDA_SPEC.match(value):
        yield conda_item(value, where[0], where[1] + len(name) + 1)


# the variables pip and uv read their package indexes from (`export PIP_EXTRA_INDEX_URL="URL URL"`, a Dockerfile's
# `ENV PIP_INDEX_URL=URL`): each URL is an index the way `--extra-index-url URL` gives one
INDEX_VARIABLES = frozenset(
    {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX",
     "UV_DEFAULT_INDEX", "UV_FIND_LINKS"}
)
_INDEX_URL = re.compile(r"[^\s'\"]+")


def index_values(name: str, value: str, where: tuple[int, int]) -> Iterator[Item]:
    """The index URLs a pip/uv index variable holds (space-separated), each where it is spelled."""
    start = where[1] + len(name) + 1
    for url in _INDEX_URL.finditer(value):
        if "://" in url.group(0) or url.group(0).startswith("$"):
            yield Item(INDEX, url.group(0), where[0], start + url.start(), value=name)


_WHEEL_URL = re.compile(r"^https?://[^\s$]+\.whl$")  # spelled out whole: a templated file name reads as no package
# A conda package spec kept in a variable that a recipe reads (a conda build script's
# `export CONDA_CUDATOOLKIT_CONSTRAINT="pytorch-cuda==11.8.*"`, read by `{{ environ.get(...) }}` in its meta.yaml):
# the line that pins it
_CONDA_SPEC_NAME = re.compile(r"^CONDA_\w+_(?:CONSTRAINTS?|PACKAGES?|PKGS?|SPECS?|DEPS?)$")
_CONDA_SPEC = re.compile(r"^[A-Za-z][\w.-]*(?:::[\w.-]+)?(?:\s*[=<>!~]\S*)?$")


def _expansions(command: list[Word], origin: Origin) -> Iterator[Item]:
    for word in command:
        if "$" in word.text:
            passed = ASSIGNMENT.match(word.text)
            for match in _EXPANSION.finditer(word.text):
                if not (passed and passed.group(1) == match.group(1)):  # X="$X" hands the value on unread
                    yield Item(READ, match.group(1), *origin(word.offset + match.start()))


def _declared(words: list[Word], origin: Origin) -> Iterator[Item]:
    for word in words:
        assignment = ASSIGNMENT.match(word.text)
        if assignment:
            yield from assignment_items(assignment.group(1), assignment.group(2), origin(word.offset))


def _invocation(words: list[Word], origin: Origin) -> Iterator[Item]:
    first = words[0].text
    tool = first if first.startswith("-") else first.rsplit("/", 1)[-1]  # an option (a Makefile value) is no tool path
    args = tuple(w.text for w in words[1:])
    yield Item(
        COMMAND, tool, *origin(words[0].offset), value=" ".join(args), args=args,
        positions=tuple(origin(w.offset) for w in words[1:]),
    )
    if tool in _CONTAINER_TOOLS:
        yield from image_arguments(words[1:], origin)
    installer = _installer(tool, args)
    if installer == "pip":
        start = [w.text for w in words].index("install") + 1 if "install" in args else 2
        yield from pip_arguments(words[start:], origin)
    elif installer == "conda":
        yield from _conda_arguments(words[2:], origin)


def image_arguments(words: list[Word], origin: Origin) -> Iterator[Item]:
    """Image references among a container tool's arguments (`--container-image=` values too)."""
    for word in words:
        text = word.text.partition("=")[2] if word.text.startswith("--") else word.text
        image = image_reference(text)
        if image:
            start = word.offset + (len(word.text) - len(text))
            yield Item(IMAGE, image, *origin(start))


def image_reference(text: str) -> str | None:
    """The image TEXT names: a reference (nvidia/cuda:12.4.1-devel, nvcr.io/nvidia/pytorch), or an enroot squashfs
    file imported from NGC (/enroot/nvcr.io_nvidia_pytorch_23.06-py3.sqsh, nvidia+pytorch+23.06-py3.sqsh)."""
    text = text.removeprefix("docker:") if not text.startswith("docker://") else text  # shifter's docker:NAME:TAG
    if text.endswith(".sqsh"):
        ngc = _ENROOT_NGC.search(text)
        return f"nvcr.io/nvidia/{ngc.group(1)}:{ngc.group(2)}" if ngc else None
    if "/" in text and not text.startswith(("/", ".", "~", "-", "$")) and _is_image(text):
        return _image_name(text)
    return None


def _is_image(text: str) -> bool:
    """An image reference with a tag, digest, docker:// or registry host (`data/x` is a path)."""
    return bool(IMAGE_REFERENCE.match(text)) and (":" in text or "@" in text or text.startswith(("docker://", "nvcr.io")))


def _image_name(text: str) -> str:
    """`docker://nvcr.io#nvidia/pytorch:24.01` -> `nvcr.io/nvidia/pytorch:24.01` (enroot writes a #)."""
    return text.removeprefix("docker://").replace("#", "/", 1)


# pip3.11, and pip${PYTHON_VERSION} / python3.$MINOR as Dockerfiles and CI scripts that build several Pythons spell them
_VERSION_SUFFIX = r"(?:3(?:\.(?:\d+|\$\{?\w+\}?))?|\$\{?\w+\}?)?"
_PIP_TOOL = re.compile(rf"^pip{_VERSION_SUFFIX}$")
_PYTHON_TOOL = re.compile(rf"^python{_VERSION_SUFFIX}$")


def _installer(tool: str, args: tuple[str, ...]) -> str | None:
    if _PIP_TOOL.match(tool) and args[:1] == ("install",):
        return "pip"
    if _PYTHON_TOOL.match(tool) and args[:3] == ("-m", "pip", "install"):
        return "pip"
    if tool == "uv" and (args[:2] == ("pip", "install") or args[:1] == ("add",)):
        return "pip"
    if tool in ("conda", "mamba", "micromamba") and args[:1] in (("install",), ("create",)):
        return "conda"
    return None


# a package name whose CUDA-build suffix is a variable, nothing after it (matched by the rules' `-cu*` globs)
_CUDA_SUFFIXED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*-cu(?:da)?(?:\$\{[A-Za-z_][^}\s]*\}|\$[A-Za-z_]\w*)+[A-Za-z0-9]*$")


def pip_arguments(words: list[Word], origin: Origin) -> Iterator[Item]:
    """Packages and index URLs among the arguments of `pip install`."""
    i = 0
    while i < len(words):
        text = words[i].text
        option, _, inline = text.partition("=") if text.startswith("--") else (text, "", "")
        value_word = None if inline or i + 1 >= len(words) else words[i + 1]
        if option in _PIP_INDEX_OPTIONS:
            url, where = (inline, words[i]) if inline else ((value_word.text, value_word) if value_word else ("", None))
            if where is not None:
                yield Item(INDEX, url, *origin(where.offset), value=option)
            i += 1 if inline else 2
        elif option in _PIP_VALUE_OPTIONS:
            i += 1 if inline else 2
        elif LOCATION.match(text) and "://" in text and not text.split("#", 1)[0].endswith(".whl"):
            yield from location_items(text, *origin(words[i].offset))
            i += 1
        elif _CUDA_SUFFIXED.match(text):  # spconv-cu${CUDA}, cupy-cuda${CUDA_MAJOR}x: the name's CUDA build, templated
            yield Item(PACKAGE, text.lower(), *origin(words[i].offset), value=text)
            i += 1
        elif text.startswith("-") or "$" in text.split("==", 1)[0] or text.startswith((".", "/", "~")) or not text:
            i += 1  # a variable in the name or range; one in a pinned version is read (torch==${V}+cu${CUDA})
        else:
            item = requirement_item(text, *origin(words[i].offset), strict=False)
            if item is not None:
                yield item
            i += 1


def _conda_arguments(words: list[Word], origin: Origin) -> Iterator[Item]:
    i = 0
    while i < len(words):
        text = words[i].text
        if text in ("-c", "--channel") and i + 1 < len(words):
            yield Item(INDEX, words[i + 1].text, *origin(words[i + 1].offset), value="conda-channel")
            i += 2
        elif text in _CONDA_VALUE_OPTIONS:
            i += 2
        elif text.startswith("-") or "$" in text:
            i += 1
        else:
            yield conda_item(text, *origin(words[i].offset))
            i += 1


# name=version=build, the exact pin `conda env export` writes (pytorch=2.0.1=py3.9_cuda11.8_cudnn8.7.0_0)
_CONDA_BUILD = re.compile(r"^[^=\s<>!~\[]+=[^=\s<>!~,|]+=([^=\s]+)$")


def conda_item(spec: str, line: int, column: int) -> Item:
    """A conda package spec (`pytorch-cuda=12.1`, `nvidia::cuda-toolkit`, `cudatoolkit >=11`) as an item; an exact
    pin's build string is its `local` label, as a pip version's +cu118 is (py39_cu118, cuda112py38h..., cuda)."""
    channel, _, rest = spec.rpartition("::")
    name = re.split(r"[\s=<>!~\[]", rest.strip(), maxsplit=1)[0].lower()
    build = _CONDA_BUILD.match(rest.strip())
    return Item(PACKAGE, name, line, column, value=spec, args=("conda",), url=channel,
                local=build.group(1) if build else "")


@register(FileKind.SHELL)
def parse_shell(source: SourceFile, text: str) -> ManifestDocument:
    """A shell script: every command, assignment and package install in it."""
    positions = Positions(text)
    return ManifestDocument(source=source, text=text, manifest=shell_items(text, positions.at))

