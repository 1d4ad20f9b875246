"""Test code a ROCm port narrows, loosens or gates: block sizes a test is parametrised over, tolerances keyed on a
dtype, checks that decide whether a test runs (FP8 support), tests that make a call a port gates (a CUDA graph capture,
a faked CUDA toolkit version)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import check_keys, check_regex
from migrate.matchers.python_literals import searches
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_KEYS = {"matcher", "needles", "paths", "if_file", "unless_file", "unless_words", "parametrize", "tolerances", "calls",
         "test_calls", "uses", "tests"}
_MODES = ("parametrize", "tolerances", "calls", "test_calls")
_PARAMETRIZE_KEYS = {"names", "at_most"}
_TOLERANCE_KEYS = {"dtypes", "names"}
_TEST_CALLS_KEYS = {"calls", "args"}


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "python-test")
    needles = params.get("needles")
    if not (isinstance(needles, list) and needles and all(isinstance(n, str) for n in needles)):
        raise ValueError("python-test matcher needs 'needles' (literal words for the prefilter)")
    for key in ("paths", "if_file", "unless_file"):
        check_regex(params, key, required=key == "paths")
    words = params.get("unless_words", [])
    if not (isinstance(words, list) and all(isinstance(w, str) and w == w.lower() for w in words)):
        raise ValueError("python-test matcher: 'unless_words' must be a list of lower-case words")
    if sum(mode in params for mode in _MODES) != 1:
        raise ValueError("python-test matcher needs exactly one of 'parametrize', 'tolerances', 'calls' and "
                         "'test_calls'")
    for key in ("uses", "tests"):
        if key in params and (type(params[key]) is not bool or "calls" not in params):
            raise ValueError(f"python-test matcher: {key!r} is true or false, and goes with 'calls' only")
    if "calls" in params:
        check_regex(params, "calls", required=True)
    elif "test_calls" in params:
        entry = params["test_calls"]
        check_keys(entry, _TEST_CALLS_KEYS, "python-test test_calls")
        check_regex(entry, "calls", required=True)
        check_regex(entry, "args", required=False)
    elif "parametrize" in params:
        entry = params["parametrize"]
        check_keys(entry, _PARAMETRIZE_KEYS, "python-test parametrize")
        check_regex(entry, "names", required=True)
        if type(entry.get("at_most")) is not int:
            raise ValueError("python-test parametrize needs 'at_most' (an integer)")
    else:
        entry = params["tolerances"]
        check_keys(entry, _TOLERANCE_KEYS, "python-test tolerances")
        check_regex(entry, "dtypes", required=True)
        check_regex(entry, "names", required=True)
    for regex in _mode_words(params):
        try:
            _word_regex(regex)
        except re.error as exc:
            raise ValueError(f"python-test matcher: {regex!r} cannot be searched as a word ({exc}); write flags "
                             "scoped, as (?i:...)") from None


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted(set(params["needles"]))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """A file worth parsing: a test file (where the path is known), the rule's words, no ROCm check, and the words
    its mode looks for (a parameter name; a tolerance name and a reduced-precision dtype; a callee)."""
    paths = re.compile(params["paths"])
    words = [_word_regex(regex) for regex in _mode_words(params)]
    return lambda code: (not code.path or paths.search(code.path) is not None) and _text_wanted(
        code.text, params) and all(searches(word.pattern, code.text) for word in words)


def _mode_words(params: Mapping[str, Any]) -> list[str]:
    """Regexes for words that a file must hold for the rule's mode to find anything in it."""
    if "parametrize" in params:
        return [params["parametrize"]["names"]]
    if "tolerances" in params:
        return [params["tolerances"]["names"], params["tolerances"]["dtypes"]]
    callee, prefix = params["calls"] if "calls" in params else params["test_calls"]["calls"], "(?:^|\\.)"
    return [callee[len(prefix):-1]] if callee.startswith(prefix) and callee.endswith("$") else []


def _word_regex(regex: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w)(?:{regex})(?!\w)")


def _text_wanted(text: str, params: Mapping[str, Any]) -> bool:
    if not any(n in text for n in params["needles"]):
        return False
    if "if_file" in params and not searches(params["if_file"], text):
        return False
    return not _rocm_checked(text, params)


def _rocm_checked(text: str, params: Mapping[str, Any]) -> bool:
    """The file matches `unless_file`; tried only where one of `unless_words` occurs (any case), as most files
    name neither and a case-blind regex over a whole file costs more than the rest of the rule."""
    if "unless_file" not in params:
        return False
    words = params.get("unless_words")
    if words:
        lower = text.lower()
        if not any(word in lower for word in words):
            return False
    return searches(params["unless_file"], text)


@register("python-test", validate=_validate, needles=_needles, candidates=_code_test)
def match_python_test(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each parametrisation or tolerance branch the rule describes, in a test file that does not check for ROCm."""
    if not isinstance(doc, PythonDocument) or not _wanted(doc, params):
        return
    ends: dict[int, int] = {}
    if "calls" in params:
        found = _calls(doc, params["calls"])
        calls = [node for node, _ in found]
        if params.get("uses"):
            found += _uses(doc, calls)
        if params.get("tests"):
            headers = _tests_making(doc, found)
            found += [(top, symbol) for top, symbol, _ in headers]
            ends = {id(top): end for top, _, end in headers}
    elif "test_calls" in params:
        found = _test_calls(doc, params["test_calls"])
    elif "parametrize" in params:
        found = _parametrized(doc, params["parametrize"])
    else:
        found = _tolerances(doc, params["tolerances"])
    seen: set[int] = set()
    for node, symbol in sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset)):
        if node.lineno not in seen:
            seen.add(node.lineno)
            yield Hit(node.lineno, node.col_offset + 1, end_line=ends.get(id(node)), symbol=symbol)


def _wanted(doc: PythonDocument, params: Mapping[str, Any]) -> bool:
    """A test file (by its path) that holds the rule's words and no ROCm check of its own."""
    return re.search(params["paths"], doc.source.relpath) is not None and _text_wanted(doc.text, params)


Found = list[tuple[ast.expr | ast.stmt, str]]


def _calls(doc: PythonDocument, callee: str) -> Found:
    """Calls whose dotted callee (or method name) the regex finds: `FP8GlobalStateManager.is_fp8_available()`."""
    regex = re.compile(callee)
    return [(site.node, site.name or f".{site.method}") for site in doc.calls
            if regex.search(site.name or f".{site.method}")]


def _uses(doc: PythonDocument, calls: list[ast.expr | ast.stmt]) -> Found:
    """The tests that read a name a wanted call was assigned to (`fp8_available, reason = is_fp8_available()`, then
    `if fp8 and not fp8_available:` or `@pytest.mark.skipif(not fp8_available, ...)`): where a port adds its gate."""
    names = {name for call in calls if (name := _result_name(doc.parents.get(call)))}
    if not names:
        return []
    tests: list[ast.expr] = [node.test for node in doc.of_type(ast.If)]
    tests += [site.node.args[0] for site in doc.calls if site.method == "skipif" and site.node.args]
    found: Found = []
    for test in tests:
        name = next((n.id for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in names), None)
        if name is not None:
            found.append((test, name))
    return found


def _tests_making(doc: PythonDocument, found: Found) -> list[tuple[ast.expr | ast.stmt, str, int]]:
    """The test functions (`def test_*`) that make a found call, themselves or through functions of the module they
    call by name (`check_equal(...)`), each as its header: from its first decorator to its `def` line, where a port
    puts the skip or the ROCm gate of a test it does not loosen."""
    making: dict[int, tuple[Function, str]] = {}
    for node, symbol in found:
        for function in _enclosing_functions(doc, node):
            making.setdefault(id(function), (function, symbol))
    headers: dict[int, tuple[ast.expr | ast.stmt, str, int]] = {}
    for function, symbol in _through_callers(doc, making):
        if function.name.startswith("test"):
            headers[id(function)] = (_header_top(function), symbol, function.lineno)
            owner = doc.parents.get(function)  # a unittest class is skipped whole as often as one test
            if isinstance(owner, ast.ClassDef) and owner.name.startswith("Test"):
                headers.setdefault(id(owner), (_header_top(owner), symbol, owner.lineno))
    return list(headers.values())


def _header_top(node: Function | ast.ClassDef) -> ast.expr | ast.stmt:
    """The first line of a definition's header: its first decorator, or the definition itself."""
    return min(node.decorator_list, key=lambda d: d.lineno, default=node)


def _result_name(parent: ast.AST | None) -> str | None:
    """`available` in `available = check()` and in `available, reason = check()` (the first of a tuple)."""
    if not isinstance(parent, ast.Assign) or len(parent.targets) != 1:
        return None
    target = parent.targets[0]
    if isinstance(target, ast.Tuple) and target.elts:
        target = target.elts[0]
    return target.id if isinstance(target, ast.Name) else None


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _test_calls(doc: PythonDocument, entry: Mapping[str, Any]) -> Found:
    """Test functions (`def test_*`) that make a wanted call, themselves or through functions of the module they call
    by name (`_run_graphed(...)`, `self._capture(...)`), reported at the `def` line a port puts its skip above."""
    callee, args = re.compile(entry["calls"]), re.compile(entry["args"]) if "args" in entry else None
    making: dict[int, tuple[Function, str]] = {}
    for site in doc.calls:
        name = site.name or f".{site.method}"
        if callee.search(name) and (args is None or args.search(_arguments(site.node))):
            for function in _enclosing_functions(doc, site.node):
                making.setdefault(id(function), (function, name))
    return [(function, symbol) for function, symbol in _through_callers(doc, making)
            if function.name.startswith("test")]


def _through_callers(doc: PythonDocument, making: dict[int, tuple[Function, str]]) -> list[tuple[Function, str]]:
    """MAKING and the functions of the module that call one of them by name, to a fixed point."""
    functions: list[Function] = doc.of_type(ast.FunctionDef, ast.AsyncFunctionDef)
    while True:  # a function that calls a making one by name makes the call too (to a fixed point)
        names = {function.name: symbol for function, symbol in making.values()}
        added = [(f, symbol) for f in functions if id(f) not in making and (symbol := _calls_one_of(f, names))]
        if not added:
            break
        making.update((id(f), (f, symbol)) for f, symbol in added)
    return list(making.values())


def _arguments(call: ast.Call) -> str:
    """The first two positional arguments as source text (`'BNB_CUDA_VERSION', '110'`, `torch.version, 'cuda'`)."""
    return ", ".join(ast.unparse(arg) for arg in call.args[:2])


def _enclosing_functions(doc: PythonDocument, node: ast.AST) -> Iterator[Function]:
    function = doc.enclosing(node, ast.FunctionDef, ast.AsyncFunctionDef)
    while isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield function
        function = doc.enclosing(function, ast.FunctionDef, ast.AsyncFunctionDef)


def _calls_one_of(function: Function, names: Mapping[str, str]) -> str | None:
    """The symbol of the first function of NAMES that FUNCTION calls as `name(...)` or `self.name(...)`."""
    for item in ast.walk(function):
        name = _local_callee(item) if isinstance(item, ast.Call) else None
        if name is not None and name in names and name != function.name:
            return names[name]
    return None


def _local_callee(call: ast.Call) -> str | None:
    """`helper` in `helper(...)`, `self.helper(...)` and `cls.helper(...)`; None for other callees."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        return func.attr
    return None


def _parametrized(doc: PythonDocument, entry: Mapping[str, Any]) -> Found:
    """`@pytest.mark.parametrize("blocksize", [64, 128, ...])` with a value at or below `at_most` for a wanted name."""
    names, limit = re.compile(entry["names"]), entry["at_most"]
    found: Found = []
    for call in _parametrize_decorators(doc):
        if len(call.args) < 2 or not isinstance(call.args[1], (ast.List, ast.Tuple)):
            continue
        argnames = _argnames(call.args[0])
        for index, name in enumerate(argnames):
            values = [_item(value, index, len(argnames)) for value in call.args[1].elts]
            if names.fullmatch(name) and any(_small(v, limit) for v in values):
                found.append((call.args[0], name))
                break
    return found + _looped(doc, names, limit)


def _looped(doc: PythonDocument, names: re.Pattern[str], limit: int) -> Found:
    """`for blocksize in [128, 64]:` (a loop or a comprehension in a test) with a value at or below `at_most`."""
    loops: list[ast.For | ast.comprehension] = doc.of_type(ast.For, ast.comprehension)
    return [(loop.target, loop.target.id) for loop in loops
            if isinstance(loop.target, ast.Name) and names.fullmatch(loop.target.id)
            and isinstance(loop.iter, (ast.List, ast.Tuple)) and any(_small(v, limit) for v in loop.iter.elts)]


def _parametrize_decorators(doc: PythonDocument) -> Iterator[ast.Call]:
    """`@pytest.mark.parametrize(...)` on test functions and classes (read from the decorators, not every call)."""
    for node in doc.of_type(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", None) == "parametrize":
                yield decorator


def _argnames(node: ast.expr) -> list[str]:
    """The parameter names of a parametrize call: "a, b" or ["a", "b"]."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [part.strip() for part in node.value.split(",")]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _item(value: ast.expr, index: int, width: int) -> ast.expr | None:
    """The value of parameter INDEX in one entry of the values list (a tuple for several names, pytest.param(...))."""
    if isinstance(value, ast.Call) and getattr(value.func, "attr", None) == "param":
        elements = value.args
    elif width > 1 and isinstance(value, (ast.Tuple, ast.List)):
        elements = value.elts
    else:
        return value if width == 1 else None
    return elements[index] if index < len(elements) else None


def _small(node: ast.expr | None, limit: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and 0 < node.value <= limit


def _tolerances(doc: PythonDocument, entry: Mapping[str, Any]) -> Found:
    """Tolerances chosen by a reduced-precision dtype: an if/elif arm, a dict keyed by dtype, a test class's dtype
    and thresholds, a conditional expression."""
    dtypes, names = re.compile(entry["dtypes"]), re.compile(entry["names"])
    found: Found = []
    elifs = {id(node.orelse[0]) for node in doc.of_type(ast.If) if len(node.orelse) == 1
             and isinstance(node.orelse[0], ast.If)}
    for node in doc.of_type(ast.If):
        if id(node) not in elifs:
            hit = _chain_hit(node, dtypes, names)
            if hit is not None:
                found.append(hit)
    for table in doc.of_type(ast.Dict):
        key = next((k for k in table.keys if isinstance(k, (ast.Attribute, ast.Name)) and _dtype_name(k, dtypes)),
                   None)  # keyed by the dtype itself: a table keyed by "float16" strings holds timings as often
        if key is not None and all(_numeric(v) for v in table.values) and _has_fraction(table):
            found.append((key, _dtype_name(key, dtypes) or ""))
    found.extend(_class_tolerances(doc, dtypes, names))
    found.extend(_conditional_tolerances(doc, dtypes, names))
    return found


def _conditional_tolerances(doc: PythonDocument, dtypes: re.Pattern[str], names: re.Pattern[str]) -> Found:
    """`atol=5e-2 if dtype == torch.bfloat16 else 1e-3`, as a keyword or assigned to a tolerance variable."""
    chosen: list[tuple[str, ast.expr]] = [(k.arg, k.value) for k in doc.of_type(ast.keyword) if k.arg]
    for node in doc.of_type(ast.Assign):
        chosen.extend((t.id, node.value) for t in node.targets if isinstance(t, ast.Name))
    found: Found = []
    for name, value in chosen:
        if isinstance(value, ast.IfExp) and names.fullmatch(name):
            symbol = _mentions_dtype(value.test, dtypes)
            if symbol:
                found.append((value, symbol))
    return found


def _class_tolerances(doc: PythonDocument, dtypes: re.Pattern[str], names: re.Pattern[str]) -> Found:
    """A test class that sets a reduced-precision `dtype = torch.half` and its own tolerance (`thresholds = ...`),
    reported at the dtype."""
    found: Found = []
    for node in doc.of_type(ast.ClassDef):
        assigns = [(s.targets[0], s.value) for s in node.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                   and isinstance(s.targets[0], ast.Name)]
        dtype = next(((value, name) for _, value in assigns if (name := _dtype_name(value, dtypes))), None)
        if dtype and any(isinstance(t, ast.Name) and names.fullmatch(t.id) for t, _ in assigns):
            found.append(dtype)  # at the dtype: the class line a port gates sits just above it
    return found


def _chain_hit(node: ast.If, dtypes: re.Pattern[str], names: re.Pattern[str]) -> tuple[ast.expr, str] | None:
    """The test of the first arm of an if/elif chain that is on a reduced-precision dtype and sets a tolerance (one
    finding per chain)."""
    branch: ast.If | None = node
    while branch is not None:
        symbol = _mentions_dtype(branch.test, dtypes)
        if symbol and any(_sets_tolerance(s, names) for s in branch.body):
            return branch.test, symbol
        branch = branch.orelse[0] if len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If) else None
    return None


def _mentions_dtype(test: ast.expr, dtypes: re.Pattern[str]) -> str | None:
    return next((name for item in ast.walk(test) if (name := _dtype_name(item, dtypes))), None)


def _dtype_name(node: ast.AST, dtypes: re.Pattern[str]) -> str | None:
    """`torch.bfloat16`, `jnp.float16`, `float8_e4m3fn`, "bf16": a dtype the regex matches whole, as an attribute,
    a name or a string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name: str | None = node.value
    else:
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    return name if name and dtypes.fullmatch(name) else None


def _sets_tolerance(statement: ast.stmt, names: re.Pattern[str]) -> bool:
    """An assignment to a tolerance (`atol = ...`, `tols["atol"] = ...`) or a call/return passing `atol=`/`rtol=`."""
    for item in ast.walk(statement):
        if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store) and names.fullmatch(item.id):
            return True
        if isinstance(item, ast.Subscript) and isinstance(item.ctx, ast.Store) and isinstance(
                item.slice, ast.Constant) and names.fullmatch(str(item.slice.value)):
            return True
        if isinstance(item, ast.keyword) and item.arg and names.fullmatch(item.arg):
            return True
    return False


def _numeric(node: ast.expr) -> bool:
    """A tolerance value: a number, or a tuple, list, dict or `dict(atol=..., rtol=...)` of numbers."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_numeric(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(_numeric(v) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return not node.args and bool(node.keywords) and all(_numeric(k.value) for k in node.keywords)
    return False


def _has_fraction(table: ast.Dict) -> bool:
    """Some value is a number below 1 (a tolerance), not a table of sizes or counts keyed by dtype."""
    return any(isinstance(n, ast.Constant) and type(n.value) is float and 0 <= n.value < 1
               for value in table.values for n in ast.walk(value))
