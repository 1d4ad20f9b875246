"""Helpers the Python matchers share: parameter checks, dotted-name prefixes, fallbacks and ROCm guards."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from migrate.matchers import CodeTest
from migrate.matchers.python_literals import searches
from migrate.model import Severity
from migrate.parse.python import PythonDocument

_COMMON_WORDS = frozenset(
    {"load", "jit", "to", "version", "utils", "language", "ops", "run", "call", "which", "system", "extra", "math"}
)
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"})
_FLAG = re.compile(r"available|^_?(?:has|use|with|enable|is)_|installed|^_?(?:HAS|USE|WITH|ENABLE|IS)_|find_spec|_imported$", re.I)


def as_list(value: Any) -> list[Any]:
    """A rule parameter that may be one value or a list of them."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def names_needles(names: list[str]) -> list[str]:
    """The prefilter words of a matcher whose every finding references one of the dotted NAMES."""
    return sorted(set(last_parts(names)))


def names_code_test(names: list[str]) -> CodeTest:
    """The candidate test of a matcher whose every finding references one of the dotted NAMES."""
    return lambda code: any(has_name(code.text, name) for name in names)


def check_keys(params: Mapping[str, Any], known: set[str], what: str) -> None:
    if not isinstance(params, Mapping):
        raise ValueError(f"{what} must be a mapping")
    unknown = set(params) - known
    if unknown:
        raise ValueError(f"{what}: unknown key(s) {', '.join(sorted(unknown))}")


def check_regex(params: Mapping[str, Any], key: str, *, required: bool) -> None:
    if key not in params:
        if required:
            raise ValueError(f"missing '{key}'")
        return
    if not isinstance(params[key], str):
        raise ValueError(f"'{key}' must be a regular expression string")
    re.compile(params[key])


def check_words(params: Mapping[str, Any], key: str, message: str) -> None:
    """PARAMS[KEY] is one identifier or a list of them; else ValueError(MESSAGE)."""
    words = as_list(params.get(key))
    if not words or not all(isinstance(w, str) and w.isidentifier() for w in words):
        raise ValueError(message)


def check_bounds(params: Mapping[str, Any], what: str) -> None:
    """PARAMS has integers `at_least` and `at_most`."""
    if not (type(params.get("at_least")) is int and type(params.get("at_most")) is int):
        raise ValueError(f"{what} needs 'at_least' and 'at_most' (integers)")


def prefixed(name: str, prefix: str) -> bool:
    """`torch.cuda.amp.autocast` is under `torch.cuda`; `torch.cudax` is not."""
    return name == prefix or name.startswith(prefix + ".")


def last_parts(names: Iterable[str]) -> list[str]:
    """A prefilter word for each dotted name. Every component of a resolved name is written somewhere in the
    file (in the import statement or in the chain itself), so any one will do: take the last that is not a
    common word, for the prefilter's sake."""
    return [_rare_part(name) for name in names]


def _rare_part(name: str) -> str:
    parts = name.split(".")
    return next((p for p in reversed(parts) if p not in _COMMON_WORDS and len(p) > 2), parts[-1])


def has_fallback(doc: PythonDocument, node: ast.AST) -> bool:
    """An optional import: inside try/except ImportError, or under an availability check. A handler that only
    imports the same package under another name (`import spconv.pytorch as spconv` / `except: import spconv`,
    flash-attn 2's names / flash-attn 1's) is no fallback: the code needs the package either way. One that raises a
    friendlier ImportError still is: that is how an optional extra's code path says it is optional."""
    child, parent = node, doc.parents.get(node)
    while parent is not None:
        if (isinstance(parent, ast.Try) and child in parent.body and _catches_import_error(parent)
                and not _no_way_around(parent, _import_roots(node)) and not _flag_asserted(doc, parent)):
            return True
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and _is_flag(doc, parent.test):
            return True
        if isinstance(parent, ast.If) and child in parent.body and _branches(doc, parent) >= _BACKEND_CHOICES:
            return True
        child, parent = parent, doc.parents.get(parent)
    return False


# An import in one branch of an if/elif chain of this many branches and more is one backend among several the user
# chooses (a model runner's `if pt: ... elif onnx: ... elif xml: ... elif engine: import tensorrt`): a path taken when
# chosen, like an import under an availability check.
_BACKEND_CHOICES = 4


def _branches(doc: PythonDocument, node: ast.If) -> int:
    """How many branches the if/elif chain NODE belongs to has (a final `else` counts as one)."""
    while isinstance(parent := doc.parents.get(node), ast.If) and parent.orelse == [node]:
        node = parent
    count = 1
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node, count = node.orelse[0], count + 1
    return count + (1 if node.orelse else 0)


def _import_roots(node: ast.AST) -> frozenset[str]:
    """The top-level packages an absolute import statement NODE names (none for anything else)."""
    if isinstance(node, ast.Import):
        return frozenset(alias.name.split(".")[0] for alias in node.names)
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return frozenset({node.module.split(".")[0]})
    return frozenset()


def _no_way_around(node: ast.Try, roots: frozenset[str]) -> bool:
    """Every import-error handler of NODE imports ROOTS again, and does nothing else."""
    return bool(roots) and all(_needs(handler.body, roots) for handler in node.handlers)


def _needs(body: list[ast.stmt], roots: frozenset[str]) -> bool:
    """BODY imports ROOTS, besides at most constant flags (`self.spconv_ver = 2`), `pass` and a raise."""
    needed = False
    for stmt in body:
        if isinstance(stmt, ast.Try):
            if not (_needs(stmt.body, roots) and all(_needs(h.body, roots) for h in stmt.handlers)):
                return False
            needed = True
        elif _import_roots(stmt) and _import_roots(stmt) <= roots:
            needed = True
        elif not (isinstance(stmt, (ast.Pass, ast.Raise)) or isinstance(stmt, (ast.Assign, ast.AnnAssign))
                  and isinstance(stmt.value, ast.Constant) and stmt.value.value is not None):
            return False
    return needed


def _flag_asserted(doc: PythonDocument, node: ast.Try) -> bool:
    """The availability flag NODE's body sets (`FLASH_ATTN_2_AVAILABLE = True`) is asserted on a path no user option
    picks (`else: assert FLASH_ATTN_2_AVAILABLE` in Wan's attention): the import is no fallback, the code needs the
    package there. An assert under a mode the caller names (`elif mode == "flash": assert ...`) keeps the fallback."""
    flags = {target.id for stmt in node.body if isinstance(stmt, ast.Assign)
             and isinstance(stmt.value, ast.Constant) and stmt.value.value is True
             for target in stmt.targets if isinstance(target, ast.Name)}
    asserts: list[ast.Assert] = doc.of_type(ast.Assert) if flags else []
    return any(isinstance(item.test, ast.Name) and item.test.id in flags and not _under_named_mode(doc, item)
               for item in asserts)


def _under_named_mode(doc: PythonDocument, node: ast.AST) -> bool:
    """NODE sits in a branch whose test compares something with a string (`mode == "flash"`, `backend in ("fa",)`)."""
    parent = doc.parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.If) and any(
                isinstance(item, ast.Compare) and any(isinstance(c, ast.Constant) and isinstance(c.value, str)
                                                      for c in [item.left, *item.comparators])
                for item in ast.walk(parent.test)):
            return True
        parent = doc.parents.get(parent)
    return False


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(t, ast.Name) and t.id in _IMPORT_ERRORS for t in types):
            return True
    return False


def _is_flag(doc: PythonDocument, test: ast.expr) -> bool:
    """TEST reads an availability flag: a name (`HAS_FLASH_ATTN`, `is_xformers_available()`) or a string key of a
    dict the code keeps its package probes in (`env_info["has_flash_attn"]`, `cfg.get("use_flash_attn")`)."""
    for item in ast.walk(test):
        name = item.id if isinstance(item, ast.Name) else item.attr if isinstance(item, ast.Attribute) else _key(item)
        if name and _FLAG.search(name):
            return True
    return False


def _key(node: ast.AST) -> str | None:
    """The string key NODE looks up: `d["has_x"]` or `d.get("has_x", ...)`; None for anything else."""
    if isinstance(node, ast.Subscript):
        key: ast.AST | None = node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        key = node.args[0]
    else:
        return None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def hip_adjusted(doc: PythonDocument, node: ast.AST) -> tuple[Severity | None, str | None]:
    """A lower severity (and why) when code already checks for ROCm around NODE."""
    state = doc.hip_state(node)
    if state == "expression":
        return Severity.INFO, "The same expression already handles ROCm (torch.version.hip); nothing to port."
    if state == "after-guard":
        return Severity.LOW, "A ROCm check (torch.version.hip) earlier in this function may already cover it; verify."
    if nvidia_only(doc, node):
        return Severity.INFO, _NVIDIA_ONLY_MESSAGE
    return None, None


_NVIDIA_ONLY_MESSAGE = (
    "This runs only where the code's own NVIDIA test holds (is_nvidia / IS_NVIDIA, torch.version.cuda, not is_hip): "
    "on ROCm that test is false and the code takes its other path; nothing to port here."
)
# a flag that names the NVIDIA platform itself (flash-linear-attention's is_nvidia, IS_NVIDIA_GPU); not is_cuda or
# tensor.is_cuda, which ROCm's torch answers True
# IS_NVIDIA_HOPPER / IS_NVIDIA_BLACKWELL name an NVIDIA generation: false on ROCm as well
_NVIDIA_FLAG = re.compile(
    r"(?i)^_?(?:(?:is|use|on|has)_nvidia(?:_[a-z0-9]+)*|nvidia(?:_(?:gpu|device|platform|backend))?)$")


def in_nvidia_predicate(doc: PythonDocument, node: ast.AST) -> bool:
    """Is NODE a truth test in the body of the project's own NVIDIA predicate (`def is_nvidia(): if
    torch.version.cuda: return True`): a function named for the NVIDIA platform, which answers False on ROCm as meant."""
    parent = doc.parents.get(node)
    truth = (isinstance(parent, (ast.If, ast.IfExp, ast.While)) and node is parent.test
             or isinstance(parent, (ast.BoolOp, ast.Return))
             or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
             or isinstance(parent, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops)
             and all(isinstance(c, ast.Constant) and c.value is None for c in parent.comparators)
             or isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "bool")
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = doc.parents.get(parent)
    return truth and parent is not None and _NVIDIA_FLAG.match(parent.name) is not None


def nvidia_only(doc: PythonDocument, node: ast.AST, depth: int = 0) -> bool:
    """Is NODE reached only when an NVIDIA test holds: an operand of `and` beside one, or the body of an if / a
    conditional expression whose test is one (within its function); or in a function that exists only under such a
    test (`if IS_NVIDIA_BLACKWELL: def safe_dot(...)`), or that the module uses only there (`if IS_NVIDIA:
    softplus = softplus_nv`)."""
    child, parent = node, doc.parents.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            if any(_nvidia_test(doc, value) for value in parent.values if value is not child):
                return True
        elif isinstance(parent, ast.IfExp) and child is parent.body and _nvidia_test(doc, parent.test):
            return True
        elif isinstance(parent, ast.If) and child in parent.body and _nvidia_test(doc, parent.test):
            return True
        child, parent = parent, doc.parents.get(parent)
    if depth >= 2 or not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return nvidia_only(doc, parent, depth + 1) or _used_only_on_nvidia(doc, parent, depth + 1)


def _used_only_on_nvidia(doc: PythonDocument, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int) -> bool:
    """A module-level function that the file names somewhere and only where an NVIDIA test holds."""
    if doc.parents.get(function) is not doc.module:
        return False
    uses = doc.loads.get(function.name, ())
    return bool(uses) and all(nvidia_only(doc, use, depth) for use in uses)


def _nvidia_test(doc: PythonDocument, test: ast.expr) -> bool:
    """True when TEST holds only on NVIDIA: an NVIDIA flag, torch.version.cuda, or the negation of a ROCm test."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_nvidia_test(doc, value) for value in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return doc.mentions_hip(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _is_none(test.comparators[0]):
        if isinstance(test.ops[0], ast.Is):
            return doc.mentions_hip(test.left)  # torch.version.hip is None
        if isinstance(test.ops[0], ast.IsNot):
            return _nvidia_test(doc, test.left)  # torch.version.cuda is not None
        return False
    if isinstance(test, ast.Call) and not test.args and not test.keywords:
        test = test.func  # is_nvidia()
        if _platform_is_cuda(doc, test):
            return True
    if isinstance(test, (ast.Name, ast.Attribute)):
        if doc.dotted(test) == "torch.version.cuda":
            return True
        return bool(_NVIDIA_FLAG.match(test.id if isinstance(test, ast.Name) else test.attr))
    return False


# `is_cuda()` beside `is_hip()`: a platform pair (sglang's utils, vLLM's current_platform, xDiT's envs) in which
# is_cuda names NVIDIA's build; alone, is_cuda() often means torch.cuda.is_available(), which ROCm answers True
_CUDA_PLATFORM = re.compile(r"^_?is_cuda$")
_HIP_PLATFORMS = frozenset({"is_hip", "_is_hip", "is_rocm", "_is_rocm"})


def _platform_is_cuda(doc: PythonDocument, func: ast.expr) -> bool:
    """FUNC, called with no arguments, is the CUDA half of a project's CUDA/ROCm platform pair."""
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if not _CUDA_PLATFORM.match(name):
        return False
    if not (doc.identifiers.isdisjoint(_HIP_PLATFORMS) and doc.aliases.keys().isdisjoint(_HIP_PLATFORMS)):
        return True
    return isinstance(func, ast.Name) and _defined_as_nvidia(doc, func.id)


def _defined_as_nvidia(doc: PythonDocument, name: str) -> bool:
    """The module's own `def is_cuda()` answers for NVIDIA's build: it reads torch.version.cuda, or compares Triton's
    target backend with "cuda" (Triton's AMD backend is "hip")."""
    for function in doc.module.body:
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.name == name:
            return any(doc.dotted(node) == "torch.version.cuda" or _backend_is_cuda(node) for node in ast.walk(function))
    return False


def _backend_is_cuda(node: ast.AST) -> bool:
    return (isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "backend"
            and any(isinstance(c, ast.Constant) and c.value == "cuda" for c in node.comparators))


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


# --- candidates: what a file's text must hold for a rule to have any chance (docs/performance.md, "Python files") ---
# Every test below is necessary, never sufficient: a resolved name is written in the text part by part (in an import
# or in the chain itself), and a string's value is written between quotes. They ignore what a parse would ignore
# too (comments, strings), so they only decide which files need a parse.

_GAP = r"(?:\s|\\|#[^\n]*(?![^\n]))*"  # what may stand between two tokens: blanks, line continuations, comments
_WORD_CHAR = re.compile(r"\w")
_STRING_START = frozenset("\"'}:")  # before a string value: a quote, or `}`/`:` for the fixed parts of an f-string
_ANCHOR = re.compile(r"[$^]|\\[bBAZ]|\(\?[=!<]")


def has_word(text: str, word: str) -> bool:
    """WORD occurs in TEXT not inside a longer identifier (a search for the literal, then a look at its neighbours):
    what `_literal(word).finditer` finds, by plain search (a regex of a literal and `\\b` searches more slowly).
    Kept for the last text: a file's rules ask about the same words (`torch`, `cuda`) many times."""
    if _LAST_TEXT[0] is not text:
        _LAST_TEXT[0] = text
        _WORDS_FOUND.clear()
    found = _WORDS_FOUND.get(word)
    if found is None:
        found = _WORDS_FOUND[word] = _has_word(text, word)
    return found


_LAST_TEXT: list[str | None] = [None]
_WORDS_FOUND: dict[str, bool] = {}  # has_word's answers for the last text


def _has_word(text: str, word: str) -> bool:
    if not word:
        return any(m.start() == 0 or not _WORD_CHAR.match(text, m.start() - 1) for m in _literal(word).finditer(text))
    size, end, last = len(word), len(text), _WORD_CHAR.match(word, len(word) - 1) is not None
    start = text.find(word)
    while start != -1:
        after = start + size
        if (after < end and _WORD_CHAR.match(text, after) is not None) == last:  # no \b after the word
            start = text.find(word, start + 1)
        elif start == 0 or not _WORD_CHAR.match(text, start - 1):
            return True
        else:  # the regex goes on after the whole match
            start = text.find(word, after)
    return False


def has_name(text: str, name: str) -> bool:
    """TEXT may hold a reference that resolves to dotted NAME (or below it): every part as a word, and the last one
    after a dot (`torch.cuda`, `import torch.cuda`) or in an import list (`from torch import cuda`)."""
    parts = name.split(".")
    if not all(has_word(text, part) for part in parts):
        return False
    return len(parts) == 1 or has_attribute(text, parts[-1]) or _imported_name(parts[-1]).search(text) is not None


def has_attribute(text: str, attribute: str) -> bool:
    """`.ATTRIBUTE` as an attribute access (blanks and comments allowed after the dot): first as written most often,
    right after the dot (a search for a literal), then with what may stand between them (a search from every dot)."""
    if attribute not in text:
        return False
    return _attribute(attribute, "").search(text) is not None or _attribute(attribute).search(text) is not None


@lru_cache(maxsize=None)
def string_candidate(regex: str) -> tuple[re.Pattern[str], bool] | None:
    """What the text must contain for a string literal's value to match REGEX (None when nothing can be derived),
    and whether it must start the value: a literal prefix after `^` (right after the opening quote), else REGEX
    less one leading `^`/`\\b` and one trailing `$`/`\\b`, when no other anchor or lookaround is left."""
    prefix = _anchored_prefix(regex)
    if prefix:
        return re.compile(re.escape(prefix)), True
    inner = regex[1:] if regex.startswith("^") else regex[2:] if regex.startswith("\\b") else regex
    if inner.endswith("$") and not inner.endswith("\\$"):
        inner = inner[:-1]
    elif inner.endswith("\\b") and not inner.endswith("\\\\b"):
        inner = inner[:-2]
    return None if not inner or has_anchor(inner) else (re.compile(inner), False)


def has_string(text: str, found: tuple[re.Pattern[str], bool] | None) -> bool:
    """The pattern of string_candidate occurs in TEXT (at the start of a string value when it must); True for None."""
    if found is None:
        return True
    pattern, at_start = found
    if not at_start:
        return searches(pattern.pattern, text)
    return any(m.start() > 0 and text[m.start() - 1] in _STRING_START for m in pattern.finditer(text))


def has_anchor(regex: str) -> bool:
    """REGEX holds an anchor or a lookaround, so searching a file's text with it is no test of a string or name."""
    return _ANCHOR.search(regex) is not None


def _anchored_prefix(regex: str) -> str | None:
    """The literal that starts every match of `^literal...` (None with a top-level `|` or a quantified end)."""
    match = re.match(r"\^([\w-]+)(.?)", regex)
    if match is None or _top_level_branch(regex):
        return None
    literal = match.group(1) if match.group(2) not in ("?", "*", "{") else match.group(1)[:-1]
    return literal if len(literal) >= 3 else None


def _top_level_branch(regex: str) -> bool:
    depth, escaped, in_class = 0, False, False
    for char in regex:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return True
    return False


@lru_cache(maxsize=None)
def _literal(word: str) -> re.Pattern[str]:
    return re.compile(re.escape(word) + r"\b")


@lru_cache(maxsize=None)
def _attribute(attribute: str, gap: str = _GAP) -> re.Pattern[str]:
    return re.compile(rf"\.{gap}{re.escape(attribute)}\b")


@lru_cache(maxsize=None)
def _imported_name(name: str) -> re.Pattern[str]:
    """NAME in the list of an import (`from m import a, b as c, NAME`, parenthesised or not)."""
    item = rf"[\w.]+{_GAP}(?:as\b{_GAP}\w+{_GAP})?,{_GAP}"
    return re.compile(rf"import\b{_GAP}(?:\({_GAP})?(?:{item})*{re.escape(name)}\b")
