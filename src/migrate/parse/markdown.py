"""README and docs (Markdown, reStructuredText): only shell code blocks and inline commands count, never prose."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from migrate.model import FileKind, SourceFile
from migrate.parse.document import register
from migrate.parse.manifest import Item, ManifestDocument
from migrate.parse.shell import shell_items

_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*([\w+-]*)")
# Fence info strings a README gives its install commands: GitHub's shell and shell-session names, `commandline` (the
# Stable Diffusion READMEs), and the Windows shells, whose pip / conda lines are the same commands.
_SHELL_LANGUAGES = frozenset({
    "", "sh", "bash", "shell", "console", "zsh", "ksh", "fish", "shell-session", "shellsession", "sh-session",
    "bash-session", "shell-script", "shellscript", "terminal", "commandline", "cmd", "bat", "batch", "powershell",
    "pwsh", "ps1",
})
_RST_BLOCK = re.compile(r"^(\s*)\.\.\s+(?:code-block|code|sourcecode)::\s*(\S*)\s*$")
_PROMPT = re.compile(r"^(\s*)(?:\$|>|%|\(\S+\)\s*\$)\s")
# an indented code line that runs one of these (TensorRT's trtexec and polygraphy too: a guide's engine-build step)
_INDENTED_COMMAND = re.compile(
    r"^( {4,}|\t)(?:\$\s+)?(?:pip3?|python3? -m pip|uv|conda|mamba|docker|nvidia-smi|nvcc|trtexec|polygraphy)\s"
)
# An install of a CUDA build quoted inline in prose ("Install pytorch by `pip install torch==1.11.0
# --extra-index-url https://download.pytorch.org/whl/cu113`"): a wheel index, a +cu121-style local build or a conda
# CUDA toolkit says it is an instruction to follow; a bare `pip install flash-attn` in a sentence stays prose.
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_INSTALL_HEAD = r"^\s*(?:\$\s+)?(?:pip3?|python3? -m pip|uv pip|conda|mamba)\s+install\s"
_INLINE_COMMAND = re.compile(
    _INSTALL_HEAD +
    r".*(?:--(?:extra-)?index-url|--find-links|\s-f\s|\+cu\d|/whl/cu\d|cudatoolkit|pytorch-cuda|-c\s+nvidia)"
)
# An install step of a list ("1. `pip install onnxruntime-gpu`", "- `pip install flash-attn --no-build-isolation` (for
# speed)"): the span is the whole item, at most with a closing stop or a note in parentheses, so it is an instruction
# to run; a span that a sentence goes on from ("- `pip install flash-attn` is not the Hopper path") stays prose.
_LIST_STEP = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)]|[A-Za-z][.)])\s+`([^`\n]+)`\s*[.,;:]?\s*(?:\([^()\n]*\))?\s*$")
# An install step introduced by a lead-in that ends in a colon ("- Install tiny-cuda-nn PyTorch extension: `pip install
# git+https://...`", "install it with: `pip install ...`."): the span ends the line, so it is the step the line gives.
_LEAD_IN = re.compile(r":\s*`([^`\n]+)`\s*[.;]?\s*$")
_INSTALL = re.compile(_INSTALL_HEAD)
# A block quote's markers (GitHub's `> **Note**` and `> [!TIP]` boxes, nested `> >`): a fence or an indented command
# inside one is the same install step as outside it, so a run of quoted lines is read again with the markers removed.
_QUOTE = re.compile(r"^(?: {0,3}>[ \t]?)+")


def code_blocks(lines: list[str]) -> Iterator[tuple[int, list[str]]]:
    """(0-based first line, lines) of each shell code block: fenced, rST code-block, or indented command."""
    i = 0
    while i < len(lines):
        if _QUOTE.match(lines[i]):
            end = i
            while end < len(lines) and _QUOTE.match(lines[end]):
                end += 1
            yield from _quoted_blocks(lines, i, end)
            i = end
            continue
        fence = _FENCE.match(lines[i])
        rst = _RST_BLOCK.match(lines[i])
        if fence:
            end = _fence_end(lines, i + 1, fence.group(2))
            if fence.group(3).lower() in _SHELL_LANGUAGES:
                yield i + 1, lines[i + 1 : end]
            i = end + 1
        elif rst:
            end = _indented_end(lines, i + 1, len(rst.group(1)))
            if rst.group(2).lower() in _SHELL_LANGUAGES:
                yield i + 1, lines[i + 1 : end]
            i = end
        elif _INDENTED_COMMAND.match(lines[i]):
            yield i, [lines[i]]
            i += 1
        else:
            if "`" in lines[i] and "install" in lines[i]:  # most prose lines: two substring tests
                commands = inline_commands(lines[i])
                if commands:
                    yield i, [commands]
            i += 1


def _quoted_blocks(lines: list[str], start: int, end: int) -> Iterator[tuple[int, list[str]]]:
    """The code blocks of the quoted lines START..END, read without their markers; each block line gets its marker's
    width back as spaces, so that columns stay those of the file."""
    widths = [_quote_width(line) for line in lines[start:end]]
    inner = [line[width:] for line, width in zip(lines[start:end], widths)]
    for first, block in code_blocks(inner):
        yield start + first, [" " * widths[first + k] + text for k, text in enumerate(block)]


def _quote_width(line: str) -> int:
    quote = _QUOTE.match(line)
    return quote.end() if quote else 0


def inline_commands(line: str) -> str:
    """LINE with only its inline code spans that are commands kept, in place (the backticks become `;` so that two
    spans stay two commands), or "" when it has none."""
    kept = [span for span in _INLINE_CODE.finditer(line) if _INLINE_COMMAND.match(span.group(1))]
    step = _LIST_STEP.match(line) or _LEAD_IN.search(line)
    if not kept and step and _INSTALL.match(step.group(1)):
        kept = [span for span in _INLINE_CODE.finditer(line) if span.start(1) == step.start(1)]
    if not kept:
        return ""
    chars = [" "] * len(line)
    for span in kept:
        chars[span.start()] = chars[span.end() - 1] = ";"
        chars[span.start(1) : span.end(1)] = line[span.start(1) : span.end(1)]
    return "".join(chars)


def _fence_end(lines: list[str], i: int, fence: str) -> int:
    while i < len(lines) and not lines[i].strip().startswith(fence):
        i += 1
    return i


def _indented_end(lines: list[str], i: int, indent: int) -> int:
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
        i += 1
    return i


def markdown_items(text: str) -> list[Item]:
    lines = text.splitlines()
    found: list[Item] = []
    for first, block in code_blocks(lines):
        prompted = any(_PROMPT.match(line) for line in block)
        body = "\n".join(_command_line(line, prompted) for line in block)
        starts = [0]
        for line in block:
            starts.append(starts[-1] + len(line) + 1)

        def origin(offset: int, first: int = first, starts: list[int] = starts) -> tuple[int, int]:
            index = bisect.bisect_right(starts, offset) - 1
            return first + index + 1, offset - starts[index] + 1

        found.extend(shell_items(body, origin))
    return found


def _command_line(line: str, prompted: bool) -> str:
    """The line with its prompt blanked; in a block with prompts, output lines are blanked entirely."""
    prompt = _PROMPT.match(line)
    if prompt:
        return " " * len(prompt.group()) + line[prompt.end() :]
    return " " * len(line) if prompted else line


@register(FileKind.MARKDOWN)
def parse_markdown(source: SourceFile, text: str) -> ManifestDocument:
    """Markdown / reST: the commands of shell code blocks (install lines, docker run, nvidia-smi)."""
    return ManifestDocument(source=source, text=text, manifest=markdown_items(text))
