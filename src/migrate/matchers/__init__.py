"""The matcher contract and registry: a matcher is a MatchFunction (a parsed file and a rule's parameters -> hits),
registered by name with @register in a module of its own; its parameter check and its FastPath hooks are optional."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from migrate.model import Severity
from migrate.parse.document import Document
from migrate.parse.lexer import Lexed


@dataclass(frozen=True)
class Hit:
    """Where a matcher fired; optional fields refine the rule's defaults for this one place."""

    line: int
    column: int
    end_line: int | None = None
    severity: Severity | None = None
    message: str | None = None  # replaces the rule's message
    note: str | None = None  # appended to the message
    hip: str | None = None
    symbol: str | None = None
    optional: bool = False  # in an optional part of the project (an extra of its package): not on its main path


_DEFAULTS = dict(vars(Hit(0, 0)))


def new_hit(line: int, column: int, symbol: str | None = None) -> Hit:
    """Hit(line, column, symbol=symbol), made without the frozen dataclass's __init__ (a setattr per field): the
    token matchers make hundreds of thousands on a large tree."""
    hit = object.__new__(Hit)
    fields = hit.__dict__
    fields.update(_DEFAULTS)
    fields["line"], fields["column"], fields["symbol"] = line, column, symbol
    return hit


class MatchFunction(Protocol):
    """What a matcher is: each place in DOC (a parsed file) where a rule whose `match:` mapping is PARAMS fires."""

    def __call__(self, doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]: ...


class TokenMatch(Protocol):
    """The same rule decided on the C/C++ lexer's pass alone (TEXT is the file's text), no tree."""

    def __call__(self, lexed: Lexed, text: str, params: Mapping[str, Any], /) -> Iterator[Hit]: ...


Validator = Callable[[Mapping[str, Any]], None]
BatchValidator = Callable[[Sequence[Mapping[str, Any]]], None]  # every rule of the matcher, after each passed alone
Needles = Callable[[Mapping[str, Any]], "list[str] | None"]


class RuleInvalid(ValueError):
    """A batch validator's verdict on one of the rules it was given: its index, and what is wrong."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


class Code:
    """What the tests that decide whether to parse a file look at: a C/C++ file's code with comments and string
    literals blanked, its #include paths and its asm templates; a Python file's text as written (its tests read
    string literals)."""

    def __init__(
        self, text: str, includes: Sequence[str], words: frozenset[str] = frozenset(), asm: Sequence[str] = (),
        path: str = "",
    ) -> None:
        self.text = text
        self.includes = includes
        self.words = words  # C/C++: the identifiers of the matchers' `identifiers` that the lexer found in the code
        self.asm = asm  # C/C++: the template of each asm statement
        self.path = path  # the file's path in the repository where the caller knows it ("" where not)

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def with_includes(self) -> str:
        """The code followed by an `#include <path>` line for each include (the code has their paths blanked)."""
        if not self.includes:
            return self.text
        return "\n".join([self.text, *(f"#include <{path}>" for path in self.includes)])


CodeTest = Callable[[Code], bool]  # whether a rule may fire in this code
Candidates = Callable[[Mapping[str, Any]], CodeTest]
Identifiers = Callable[[Mapping[str, Any]], frozenset[str]]


@dataclass(frozen=True)
class FastPath:
    """A matcher's optional hooks, each asked with a rule's parameters, that let a scan skip work: none may change
    what the matcher finds, only spare a search or a parse that would find nothing.

    needles      strings one of which must occur in a file's text for the rule to fire (None: it always runs); the
                 prefilter searches them before anything else is done with the file (a C/C++ file that is not parsed
                 runs only the tokens forms whose needles its text holds).
    candidates   a test on a file's Code (its text and what the lexer found) that must pass for a parse of the file
                 to change what the rule finds: where it fails, a rule that needs the tree finds nothing, and a rule
                 with a tokens form finds only what its tokens find. A file none of whose rules passes is not parsed.
    identifiers  the C/C++ identifiers the lexer looks for in its one pass (Code.words and the tokens form read them).
    tokens       the rule decided on the lexer's pass alone, in every C/C++ file, parsed or not (vendored code never
                 is); it must find what the matcher finds on the file's tree.
    """

    needles: Needles | None = None
    candidates: Candidates | None = None
    identifiers: Identifiers | None = None
    tokens: TokenMatch | None = None


@dataclass(frozen=True)
class Matcher:
    """A registered matcher: the function, the check of its rule parameters, and its fast-path hooks."""

    name: str
    function: MatchFunction
    validate: Validator | None = None
    fast: FastPath = FastPath()
    validate_together: BatchValidator | None = None  # what is cheaper checked for all rules at once
    prepare: BatchValidator | None = None  # what its rules need in a process before a file is matched


_REGISTRY: dict[str, Matcher] = {}
_loaded = False


def require_flags(params: Mapping[str, Any], *flags: str) -> None:
    """Check that each named option, where a rule sets it, is true or false."""
    for flag in flags:
        if not isinstance(params.get(flag, False), bool):
            raise ValueError(f"'{flag}' must be true or false")


def require_regex_and_needles(params: Mapping[str, Any], matcher: str, pattern_says: str) -> None:
    """Check a matcher's `pattern` (a regex; PATTERN_SAYS what it must be) and `needles` (strings one of which the
    text must hold)."""
    pattern = params.get("pattern")
    if not isinstance(pattern, str):
        raise ValueError(f"{matcher} needs 'pattern', {pattern_says}")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"bad 'pattern' regex: {exc}") from None
    needles = params.get("needles")
    if not (isinstance(needles, list) and needles and all(isinstance(n, str) and n for n in needles)):
        raise ValueError(f"{matcher} needs 'needles', strings one of which the text must hold")


def register(
    name: str, *, validate: Validator | None = None, needles: Needles | None = None,
    candidates: Candidates | None = None, identifiers: Identifiers | None = None, tokens: TokenMatch | None = None,
    validate_together: BatchValidator | None = None, prepare: BatchValidator | None = None,
) -> Callable[[MatchFunction], MatchFunction]:
    """Add a matcher under NAME. VALIDATE raises ValueError on bad rule parameters, VALIDATE_TOGETHER RuleInvalid
    on the first bad one of all its rules, PREPARE sets up what its rules need in a process (also when they were
    validated in another, and read back from the cache); the others are its FastPath hooks (needles, candidates
    and identifiers take a rule's parameters; TOKENS is the rule decided on tokens)."""

    def wrap(function: MatchFunction) -> MatchFunction:
        fast = FastPath(needles, candidates, identifiers, tokens)
        _REGISTRY[name] = Matcher(name, function, validate, fast, validate_together, prepare)
        return function

    return wrap


def names_in(names: frozenset[str]) -> CodeTest:
    """A code test: one of NAMES is an identifier in the code (they must be the matcher's `identifiers`)."""
    return lambda code: not names.isdisjoint(code.words)


# The module that registers each matcher: a scan imports only the matchers its rules use (a scan of CUDA files
# leaves the Python and manifest matchers, and the parsers they import, out).
MATCHER_MODULES = {
    "build-word": "build_words", "link-library": "build_words", "cmake-command": "cmake_command",
    "cuda-api": "cuda_api", "cuda-hip-alias": "cuda_alias", "inline-asm": "cuda_asm", "float-atomic": "cuda_atomics", "cuda-compare": "cuda_compare",
    "cuda-include": "cuda_include", "cuda-first-include": "cuda_first_include", "cuda-kernel": "cuda_kernel", "cuda-names": "cuda_names",
    "cuda-library-names": "cuda_library_names", "cuda-library-files": "cuda_library_names",
    "ptx-strings": "cuda_ptx_strings", "c-string": "cuda_strings", "weak-alias": "cuda_weak_alias",
    "openacc-pragma": "cuda_openacc", "sass-listing": "sass_listing", "cuda-binary": "cuda_binary",
    "cuda-operand": "cuda_operand", "cuda-mask-words": "cuda_mask_words",
    "cuda-backward-gemm": "cuda_backward_gemm", "gfx-target-list": "gfx_target_list",
    "cuda-namespace": "cuda_namespace", "cuda-query": "cuda_query", "warp-size": "cuda_warp",
    "dependent-member-template": "cuda_typename", "dependent-type-temporary": "cuda_typename",
    "manifest-command": "manifest_command", "manifest-env": "manifest_env", "manifest-fact": "manifest_fact",
    "manifest-image": "manifest_image", "manifest-index": "manifest_index", "manifest-package": "manifest_package",
    "compute-capability": "python_capability", "python": "python_code", "torch-version-use": "python_version",
    "device-name-gate": "python_device_name", "dtype-chain": "python_dtype_chain",
    "python-test": "python_test", "warp-count": "python_warp_count", "block-size-choice": "python_block_sizes",
    "cuda-versioned-name": "python_versioned_name", "hipified-name-clash": "setup_hipified_names",
}


def prepare(rules: Sequence[Mapping[str, Any]]) -> None:
    """Each matcher's `prepare` hook with its rules among RULES (their `match:` mappings), the matcher imported."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for params in rules:
        grouped.setdefault(params["matcher"], []).append(params)
    for name, group in grouped.items():
        matcher = get(name)
        if matcher is not None and matcher.prepare is not None:
            matcher.prepare(group)


def get(name: str) -> Matcher | None:
    """The matcher registered under NAME (its module imported on first use), or None."""
    if name not in _REGISTRY:
        module = MATCHER_MODULES.get(name)
        if module is None:
            _load_all()
        else:
            importlib.import_module(f"{__name__}.{module}")
    return _REGISTRY.get(name)


def names() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    import pkgutil  # here: only listing every matcher walks the package

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True
