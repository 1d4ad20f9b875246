"""The C preprocessor as a HIP build sees it: three-valued #if evaluation and the repository's own #defines; pure."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from migrate.lazyre import lazy_regex

# A macro's state in a HIP build: defined (with its value when it is a number), undefined, or unknown.
# `hip` says the state follows from HIP facts: only such facts may mark code as never compiled for HIP.
DEFINED, UNDEFINED, UNKNOWN = "defined", "undefined", "unknown"

_DIRECTIVE = re.compile(
    r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef)\b((?:[^\n]*\\\r?\n)*[^\n]*)", re.M
)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_NAME = re.compile(r"[A-Za-z_]\w*")
# Set by hipcc for AMD; the NVIDIA-platform names are the only HIP-named macros known to be absent.
_HIP_DEFINED = frozenset({"__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIP__", "__HIPCC__", "__HIP_ROCclr__",
                          "HIP_PLATFORM_AMD", "__AMDGCN__", "USE_ROCM"})
_HIP_UNDEFINED = frozenset({"__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"})
# Any macro named for HIP/ROCm/AMD means "this is the HIP build" (GGML_USE_HIP, WITH_ROCM, TORCH_HIP_VERSION...).
_HIP_NAMED = re.compile(r"(?:^|_)(?:HIP|HIPCC|ROCM|AMD|AMDGPU|HIPBLAS)(?:_|$)")
_NEGATED_NAME = lazy_regex(r"(?:^|_)(?:NO|DISABLE|DISABLED|WITHOUT|SKIP|NOT)(?:_|$)|NVIDIA|NVCC|CUDA")


class Directive(NamedTuple):
    """One preprocessor line: its 1-based line, keyword and argument (comments removed). A named tuple: a warm
    scan rebuilds a hundred thousand of them from the cache."""

    line: int
    keyword: str
    argument: str


@dataclass(frozen=True)
class Macro:
    """A macro's state in a HIP build; VALUE is its integer value when known."""

    state: str
    hip: bool
    value: int | None = None


def directive_at(text: str, line_start: int, line: int) -> Directive | None:
    """The conditional, #define or #undef on the line of TEXT that starts at LINE_START (the lexer found it in the
    code, so never in a comment or a string), continuation lines joined and comments removed; None if there is none."""
    match = _DIRECTIVE.match(text, line_start)
    if match is None:
        return None
    argument = match.group(2).replace("\\\n", " ").replace("\\\r\n", " ")
    return Directive(line, match.group(1), _COMMENT.sub(" ", argument).strip())


def tests_hip(name: str) -> bool:
    """A macro a conditional tests to tell the HIP build from the CUDA one: the platform macros HIP sets or
    leaves out, and any macro named for HIP/ROCm/AMD (USE_ROCM, GGML_USE_HIP, WITH_ROCM...)."""
    return name in _HIP_DEFINED or name in _HIP_UNDEFINED or _HIP_NAMED.search(name) is not None


def builtin(name: str) -> Macro | None:
    """What a HIP build knows of NAME before reading the repository (None: nothing)."""
    if name in _HIP_DEFINED:
        return Macro(DEFINED, True, 1)
    if name in _HIP_UNDEFINED:
        return Macro(UNDEFINED, True)
    if _HIP_NAMED.search(name) and not _NEGATED_NAME.search(name):
        return Macro(DEFINED, True)
    return None


Table = Mapping[str, Macro]
_UNKNOWN = Macro(UNKNOWN, False)


def lookup(name: str, table: Table) -> Macro:
    """NAME's state: the repository's own definitions first, then what HIP itself defines."""
    return table.get(name) or builtin(name) or _UNKNOWN


@dataclass(frozen=True)
class _Value:
    """A three-valued result: value None is unknown; hip says HIP facts decided it."""

    value: int | None
    hip: bool


_TOKEN = lazy_regex(r"\s*(defined|[A-Za-z_]\w*|0[xX][0-9a-fA-F]+|\d+|&&|\|\||==|!=|<=|>=|<<|>>|[()!<>+\-*/%?:~&|^,])")
_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")


def _c_int(digits: str) -> int | None:
    """A C integer literal's value: hex, octal with a leading 0 (`0040000`), or decimal; None if malformed (`09`)."""
    if digits[:2] in ("0x", "0X"):
        return int(digits, 16)
    if len(digits) > 1 and digits[0] == "0":
        return int(digits, 8) if digits.isdigit() and "8" not in digits and "9" not in digits else None
    return int(digits)


class _Parser:
    """A small recursive-descent parser for #if expressions over three-valued integers."""

    def __init__(self, text: str, table: Table) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.table = table

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self) -> str:
        token = self.peek()
        self.pos += 1
        return token

    def expression(self) -> _Value:
        left = self.conjunction()
        while self.peek() == "||":
            self.take()
            left = _or(left, self.conjunction())
        return left

    def conjunction(self) -> _Value:
        left = self.comparison()
        while self.peek() == "&&":
            self.take()
            left = _and(left, self.comparison())
        return left

    def comparison(self) -> _Value:
        left = self.unary()
        while self.peek() in _COMPARE:
            op = self.take()
            right = self.unary()
            both = left.value is not None and right.value is not None
            value = int(_COMPARE[op](left.value, right.value)) if both else None
            left = _Value(value, left.hip or right.hip)
        return left

    def unary(self) -> _Value:
        token = self.take()
        if token == "!":
            inner = self.unary()
            return _Value(None if inner.value is None else int(not inner.value), inner.hip)
        if token == "(":
            inner = self.expression()
            if self.peek() == ")":
                self.take()
            return inner
        if token == "defined":
            name = self.take()
            if name == "(":
                name = self.take()
                self.take()
            macro = lookup(name, self.table)
            return _Value(None if macro.state == UNKNOWN else int(macro.state == DEFINED), macro.hip)
        number = _NUMBER.fullmatch(token)
        if number:
            return _Value(_c_int(number.group(1)), False)
        if _NAME.fullmatch(token):
            if self.peek() == "(":  # a function-like macro call: unknown
                self._skip_call()
                return _Value(None, False)
            macro = lookup(token, self.table)
            if macro.state == UNDEFINED:
                return _Value(0, macro.hip)
            return _Value(macro.value if macro.state == DEFINED else None, macro.hip and macro.value is not None)
        return _Value(None, False)

    def _skip_call(self) -> None:
        depth = 0
        while self.peek():
            token = self.take()
            depth += {"(": 1, ")": -1}.get(token, 0)
            if depth == 0:
                return


_COMPARE = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
}


def _tokens(text: str) -> list[str]:
    found: list[str] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            return found + ["?"]  # an operator we do not model: what follows is unknown
        found.append(match.group(1))
        pos = match.end()
    return found


def _and(a: _Value, b: _Value) -> _Value:
    if a.value == 0:
        return a
    if b.value == 0:
        return b
    if a.value is None or b.value is None:
        return _Value(None, False)
    return _Value(1, a.hip or b.hip)


def _or(a: _Value, b: _Value) -> _Value:
    if a.value not in (0, None):
        return a
    if b.value not in (0, None):
        return b
    if a.value is None or b.value is None:
        return _Value(None, False)
    return _Value(0, a.hip or b.hip)


def evaluate(text: str, table: Table) -> tuple[bool | None, bool]:
    """(True/False/None for unknown, decided by HIP facts) for one #if expression."""
    parser = _Parser(text, table)
    result = parser.expression()
    if parser.peek():
        return None, False  # something we did not understand follows
    return (None if result.value is None else bool(result.value)), result.hip


_LITERAL = re.compile(r"[\s()!]*(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*[\s()]*")


def disabled_ranges(found: Iterable[Directive]) -> tuple[tuple[int, int], ...]:
    """Line ranges no build of any platform compiles: the branch of `#if 0` (numbers alone, false) up to its next
    branch or #endif, and the branches after a numbers-alone true `#if 1`. Code kept aside by hand, not a CUDA
    or HIP test: what lies there needs no port, and says nothing about one either."""
    ranges: list[tuple[int, int]] = []
    stack: list[tuple[int | None, bool]] = []  # per open #if: (line its disabled branch began, a branch was taken)
    for item in found:
        if item.keyword in ("if", "ifdef", "ifndef"):
            value = _literal(item)
            stack.append((item.line if value is False else None, value is True))
        elif item.keyword in ("elif", "elifdef", "elifndef", "else", "endif") and stack:
            began, taken = stack.pop()
            if began is not None:
                ranges.append((began, item.line))
            if item.keyword != "endif":
                value = True if item.keyword == "else" else _literal(item)
                stack.append((item.line if taken or value is False else None, taken or value is True))
    return tuple(ranges)


def _literal(item: Directive) -> bool | None:
    """The value of an #if or #elif made of numbers alone (`0`, `(1)`, `!0`), else None."""
    if item.keyword not in ("if", "elif") or not _LITERAL.fullmatch(item.argument):
        return None
    return evaluate(item.argument, {})[0]


@dataclass
class _Frame:
    """One open #if: whether its current branch compiles for HIP, and whether an earlier one surely did."""

    live: bool | None
    hip: bool
    taken: bool | None  # an earlier branch: True surely taken, None maybe, False surely not
    taken_hip: bool
    guard: str = ""  # the #ifndef name of a likely include guard


@dataclass(frozen=True)
class Outcome:
    """What a HIP build does with one file: line ranges it never compiles, and the macros it defines where."""

    dead: tuple[tuple[int, int], ...]
    defines: tuple[tuple[str, str, bool, int | None], ...]  # (name, state of its region, hip, value)


Conditions = dict[tuple[str, str], tuple[bool | None, bool]]  # (keyword, argument) -> its value under one table


def run(found: Iterable[Directive], table: Table, conditions: Conditions | None = None) -> Outcome:
    """Walk a file's directives with TABLE: the ranges never compiled for HIP, and each #define's region.
    CONDITIONS memoises each condition's value under TABLE across files (the same #if recurs in many headers)."""
    conditions = {} if conditions is None else conditions
    stack: list[_Frame] = []
    dead: list[tuple[int, int]] = []
    dead_from: int | None = None
    defines: list[tuple[str, str, bool, int | None]] = []
    states: list[_Around] = []  # for each open #if, the state of the stack up to it: no walk down the stack per line
    after = _OUTSIDE[0]
    for item in found:
        before = after  # the stack changes only below
        if item.keyword in ("if", "ifdef", "ifndef"):
            live, hip = _known(item, table, conditions)
            guard = item.argument.split()[0] if item.keyword == "ifndef" and item.argument else ""
            stack.append(_Frame(live, hip, live, hip, guard))
        elif item.keyword in ("elif", "elifdef", "elifndef", "else") and stack:
            frame = stack[-1]
            live, hip = (True, False) if item.keyword == "else" else _known(item, table, conditions)
            if frame.taken is True:
                frame.live, frame.hip = False, frame.taken_hip
            elif frame.taken is None:
                frame.live, frame.hip = (False, hip) if live is False else (None, False)
            else:
                frame.live, frame.hip = live, hip or frame.taken_hip
            if frame.taken is not True:
                frame.taken = True if live is True else (None if None in (frame.taken, live) else False)
            frame.taken_hip = frame.taken_hip or hip
        elif item.keyword == "endif" and stack:
            stack.pop()
        elif item.keyword == "define" and item.argument:
            defines.append(_define(item, stack, before, states[-1][1] if states else False))
            if stack and stack[-1].guard and item.argument.split() == [stack[-1].guard]:
                stack[-1].live = True  # an include guard: its body is the whole header, always compiled
        after = _sync(states, stack)
        if after[0] is False and after[1] and dead_from is None:
            dead_from = item.line
        elif not (after[0] is False and after[1]) and dead_from is not None:
            dead.append((dead_from, item.line))
            dead_from = None
    if dead_from is not None:
        dead.append((dead_from, 10**9))
    return Outcome(tuple(dead), tuple(defines))


def _known(item: Directive, table: Table, conditions: Conditions) -> tuple[bool | None, bool]:
    key = (item.keyword, item.argument)
    found = conditions.get(key)
    if found is None:
        found = conditions[key] = _condition(item, table)
    return found


def _condition(item: Directive, table: Table) -> tuple[bool | None, bool]:
    if item.keyword in ("ifdef", "ifndef", "elifdef", "elifndef"):
        name = item.argument.split()[0] if item.argument else ""
        macro = lookup(name, table)
        if macro.state == UNKNOWN:
            return None, False
        defined = macro.state == DEFINED
        return (defined if item.keyword.endswith("ifdef") else not defined), macro.hip
    return evaluate(item.argument, table)


_Around = tuple[tuple[bool | None, bool], bool]  # (whether the line compiles for HIP, and why), any frame tests HIP
_OUTSIDE: _Around = ((True, False), False)


def _sync(states: list[_Around], stack: list[_Frame]) -> tuple[bool | None, bool]:
    """Bring STATES in line with STACK, whose top frame alone may have changed, been pushed or popped; the state of
    the current line: False when any open branch surely does not compile for HIP."""
    del states[len(stack):]
    if not stack:
        return _OUTSIDE[0]
    below = states[len(stack) - 2] if len(stack) > 1 else _OUTSIDE
    top = _with_frame(below, stack[-1])
    if len(states) == len(stack):
        states[-1] = top
    else:
        states.append(top)
    return top[0]


def _with_frame(below: _Around, frame: _Frame) -> _Around:
    """The state of the stack below a frame, with the frame on top (the first surely-dead branch decides)."""
    (live, hip), any_hip = below
    if live is not False and frame.live is False:
        live, hip = False, frame.hip
    elif live is not False and frame.live is None:
        live = None
    return (live, hip), any_hip or frame.hip


def _define(
    item: Directive, stack: list[_Frame], state: tuple[bool | None, bool], hip_around: bool
) -> tuple[str, str, bool, int | None]:
    parts = item.argument.split(None, 1)
    name = _NAME.match(parts[0])
    macro = name.group() if name else parts[0]
    if stack and stack[-1].guard == macro and len(parts) == 1:
        return (macro, UNKNOWN, False, None)  # an include guard says nothing about the build
    number = _NUMBER.fullmatch(parts[1].strip()) if len(parts) > 1 and "(" not in parts[0] else None
    value = _c_int(number.group(1)) if number else (1 if len(parts) == 1 else None)
    hip = state[1] or hip_around
    region = {True: DEFINED, False: UNDEFINED, None: UNKNOWN}[state[0]]
    return (macro, region, hip, value)


def table_from(outcomes: Iterable[Outcome]) -> dict[str, Macro]:
    """The repository's macros in a HIP build: defined where some definition compiles, undefined when every
    definition sits in code HIP never compiles, unknown otherwise."""
    regions: dict[str, list[tuple[str, bool, int | None]]] = {}
    for outcome in outcomes:
        for name, region, hip, value in outcome.defines:
            regions.setdefault(name, []).append((region, hip, value))
    table: dict[str, Macro] = {}
    for name, found in regions.items():
        if builtin(name) is not None:
            continue
        live = [(hip, value) for region, hip, value in found if region == DEFINED]
        if live and all(hip for hip, _ in live) and len({v for _, v in live}) == 1:
            table[name] = Macro(DEFINED, True, live[0][1])
        elif all(region == UNDEFINED and hip for region, hip, _ in found):
            table[name] = Macro(UNDEFINED, True)
    return table


def settle(files: Mapping[str, tuple[Directive, ...]], *, rounds: int = 3) -> dict[str, Macro]:
    """The macro table of a whole repository: re-run until what HIP defines stops changing (bounded)."""
    return Settled(files, rounds=rounds).table


class Settled:
    """A repository's macro table (see settle) and each file's dead ranges under it, each file walked as few
    times as the table allows: a round re-walks only the files whose conditions test a macro that changed. ABSENT:
    build switches a HIP build never sets (cuda_switches), below the repository's own #defines."""

    def __init__(
        self, files: Mapping[str, tuple[Directive, ...]], *, rounds: int = 3, absent: Iterable[str] = ()
    ) -> None:
        self.files = files
        defining = {path: found for path, found in files.items() if any(d.keyword == "define" for d in found)}
        base = {name: Macro(UNDEFINED, True) for name in absent}
        self.table: dict[str, Macro] = dict(base)
        self._conditions: Conditions = {}  # under self.table
        self._outcomes: dict[str, Outcome] = {}  # under self.table
        outcomes = {path: run(found, self.table, self._conditions) for path, found in defining.items()}
        for _ in range(rounds):
            new = {**base, **table_from(outcomes.values())}  # files without a #define add nothing
            if new == self.table:
                self._outcomes = outcomes
                return
            changed = {n for n in new.keys() | self.table.keys() if new.get(n) != self.table.get(n)}
            self.table, self._conditions = new, {}
            outcomes = {
                path: run(found, new, self._conditions) if not changed.isdisjoint(_tested(found)) else outcomes[path]
                for path, found in defining.items()
            }
        self._conditions = {}  # not settled within ROUNDS: the last outcomes are under an older table

    def dead_ranges(self, path: str) -> tuple[tuple[int, int], ...]:
        """Line ranges of PATH that a HIP build never compiles."""
        outcome = self._outcomes.get(path)
        if outcome is None:
            outcome = self._outcomes[path] = run(self.files.get(path, ()), self.table, self._conditions)
        return outcome.dead

    def is_dead(self, path: str, line: int) -> bool:
        """LINE of PATH is in an #if branch a HIP build never compiles."""
        return any(start <= line <= end for start, end in self.dead_ranges(path))


_CONDITIONALS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})


def _tested(found: tuple[Directive, ...]) -> set[str]:
    """Every name the conditionals of FOUND may look up (a superset: every token of an #if, as _condition reads)."""
    names: set[str] = set()
    for item in found:
        if item.keyword in _CONDITIONALS:
            names.update(_names(item.keyword, item.argument))
    return names


@lru_cache(maxsize=65536)
def _names(keyword: str, argument: str) -> tuple[str, ...]:
    if keyword in ("ifdef", "ifndef", "elifdef", "elifndef"):
        return (argument.split()[0] if argument else "",)
    return tuple(_tokens(argument))


def dead_ranges(
    found: tuple[Directive, ...], table: Table, conditions: Conditions | None = None
) -> tuple[tuple[int, int], ...]:
    """Line ranges of one file that a HIP build never compiles (CONDITIONS: as for run, under the same TABLE)."""
    return run(found, table, conditions).dead


# A CUDA build switch and its ROCm twin differ in one vendor word: HAS_CUPTI / HAS_ROCTRACER, KOKKOS_ENABLE_CUDA /
# KOKKOS_ENABLE_HIP, BUILD_CUDA / BUILD_HIP, PLATFORM_CUDA_DEVICE / PLATFORM_HIP_DEVICE.
_CUDA_WORD = re.compile(r"CUDA|CUPTI|NVML|NVTX|NVIDIA|NCCL|CUDNN|CUBLAS")
_ROCM_WORD = re.compile(r"HIP|ROCM|AMD|AMDGPU|ROCTRACER|ROCPROFILER|RCCL|MIOPEN|ROCBLAS|HIPBLAS|RSMI")


def cuda_switches(files: Mapping[str, Iterable[Directive]]) -> frozenset[str]:
    """The CUDA-named build switches a HIP build never sets: one an #if chain tests before an #elif that tests its ROCm
    twin (`#ifdef HAS_CUPTI ... #elif defined(HAS_ROCTRACER)`: were both set, the ROCm branch would never compile),
    and that no file #defines itself (the build passes it)."""
    found: set[str] = set()
    defined: set[str] = set()
    for directives in files.values():
        chains: list[list[str]] = []  # per open #if, the names its branches so far test
        for item in directives:
            if item.keyword == "define":
                defined.update(_NAME.findall(item.argument)[:1])
            elif item.keyword in ("if", "ifdef", "ifndef"):
                chains.append(_switch_names(item))
            elif item.keyword in ("elif", "elifdef", "elifndef") and chains:
                names = _switch_names(item)
                found.update(x for x in chains[-1] if any(_twins(x, y) for y in names))
                chains[-1].extend(names)
            elif item.keyword == "endif" and chains:
                chains.pop()
    return frozenset(found - defined)


def _switch_names(item: Directive) -> list[str]:
    return [name for name in _NAME.findall(item.argument) if name != "defined"]


def _twins(cuda: str, rocm: str) -> bool:
    """CUDA names a CUDA vendor word where ROCM has a run of words naming ROCm, the rest the same (HAS_NVML /
    HAS_ROCM_SMI); never a macro HIP itself sets or leaves out (__HIP_PLATFORM_NVIDIA__)."""
    if tests_hip(cuda):
        return False
    mine, theirs = cuda.split("_"), rocm.split("_")
    for index, word in enumerate(mine):
        if not _CUDA_WORD.fullmatch(word):
            continue
        before, after = mine[:index], mine[index + 1 :]
        middle = theirs[len(before) : len(theirs) - len(after)]
        if (theirs[: len(before)] == before and theirs[len(theirs) - len(after) :] == after and middle
                and any(_ROCM_WORD.fullmatch(w) for w in middle) and not any(_CUDA_WORD.fullmatch(w) for w in middle)):
            return True
    return False

