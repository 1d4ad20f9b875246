"""Python code described by data: imports, dotted names, calls and their arguments, decorators, strings in code."""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import (
    as_list,
    check_keys,
    check_regex,
    has_attribute,
    has_anchor,
    has_fallback,
    has_name,
    has_string,
    has_word,
    hip_adjusted,
    last_parts,
    prefixed,
    string_candidate,
)
from migrate.matchers.python_build_sources import HOST_ONLY_NOTE, host_only_build
from migrate.matchers.python_literals import searches
from migrate.model import Severity
from migrate.parse import Document
from migrate.parse.python import CallSite, ImportSite, PythonDocument

_KEYS = {
    "matcher", "imports", "names", "exclude_names", "calls", "decorators", "strings", "needles",
    "fallback_severity", "hip_aware", "numbers", "unless_file", "if_file", "unless_function", "switches", "switch_defaults", "values",
    "identifiers", "opt_in_function", "opt_in_branch", "package", "built_anywhere", "without_cuda_sources",
    "star_aliases", "unless_path",
}
_VALUE_KEYS = {"name", "above", "symbol"}
_CALL_KEYS = {"name", "method", "callee", "arg", "keyword", "regex", "symbol", "without", "without_keyword"}
_STRING_KEYS = {"regex", "roles", "assigned_to", "in_collection", "symbol", "outside_calls", "compared_to_method", "compared",
                "formatted"}
_IDENTIFIER_KEYS = {"regex", "symbol", "imported"}
_ROLES = {"code", "argv", "prose", "doc"}
_MAX_DEPTH, _MAX_TEXTS, _MAX_WORDS = 32, 16, 64
FALLBACK_MESSAGE = (
    "Optional import with a fallback in place (try/except ImportError or an availability check): "
    "the code still runs on ROCm without it; port or replace it for speed, not to make it work."
)
OPT_IN_MESSAGE = (
    "Used only inside a function named for this backend (forward_xformers, replace_*_attn_to_xformers): the code "
    "takes that path when the user turns it on; on ROCm leave it off (SDPA) or install the package's ROCm build."
)
BRANCH_MESSAGE = (
    "Used only in a branch taken when the user asks for this backend (`if trt_file is not None:`, `if args.trt:`): "
    "the default path runs without it; on ROCm leave that option off or give it a ROCm counterpart."
)


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "python")
    if not any(params.get(k) for k in ("imports", "names", "calls", "decorators", "strings", "numbers", "switches",
                                       "values", "identifiers")):
        raise ValueError("python matcher needs at least one of imports, names, calls, decorators, strings, numbers, "
                         "switches, values, identifiers")
    if type(params.get("built_anywhere", False)) is not bool:
        raise ValueError("python matcher: 'built_anywhere' is true or false")
    if not isinstance(params.get("package", ""), str):
        raise ValueError("python matcher: 'package' is one module name (whose own repository's uses are first party)")
    for key in ("imports", "names", "exclude_names", "decorators", "needles"):
        if key in params and not all(isinstance(v, str) for v in as_list(params[key])):
            raise ValueError(f"python matcher: '{key}' must be a list of dotted names")
    aliases = params.get("star_aliases", {})
    if not isinstance(aliases, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in aliases.items()):
        raise ValueError("python matcher: 'star_aliases' maps a short name to a module ({wp: warp})")
    for call in params.get("calls", []):
        _validate_call(call)
    for string in params.get("strings", []):
        check_keys(string, _STRING_KEYS, "python strings entry")
        check_regex(string, "regex", required=True)
        check_regex(string, "assigned_to", required=False)
        check_regex(string, "formatted", required=False)
        if not isinstance(string.get("compared_to_method", ""), str):
            raise ValueError("python strings entry: 'compared_to_method' is a method name (type)")
        if type(string.get("compared", False)) is not bool:
            raise ValueError("python strings entry: 'compared' is true or false")
        if type(string.get("in_collection", False)) is not bool:
            raise ValueError("python strings entry: 'in_collection' is true or false")
        if string.get("in_collection") and "assigned_to" not in string:
            raise ValueError("python strings entry: 'in_collection' goes with 'assigned_to'")
        if not set(as_list(string.get("roles", ["code", "argv"]))) <= _ROLES:
            raise ValueError(f"python strings entry: roles must be among {sorted(_ROLES)}")
    for identifier in params.get("identifiers", []):
        check_keys(identifier, _IDENTIFIER_KEYS, "python identifiers entry")
        check_regex(identifier, "regex", required=True)
        if type(identifier.get("imported", False)) is not bool:
            raise ValueError("python identifiers entry: 'imported' is true or false")
    for value in params.get("values", []):
        check_keys(value, _VALUE_KEYS, "python values entry")
        if not (isinstance(value.get("name"), str) and type(value.get("above")) is int):
            raise ValueError("python values entry needs 'name' (a keyword or variable) and 'above' (an integer)")
    if "fallback_severity" in params:
        Severity.parse(str(params["fallback_severity"]))
    check_regex(params, "unless_file", required=False)
    check_regex(params, "unless_path", required=False)  # applied where findings are made (scan/findings.py)
    check_regex(params, "unless_function", required=False)
    check_regex(params, "opt_in_function", required=False)
    check_regex(params, "opt_in_branch", required=False)
    check_regex(params, "if_file", required=False)
    check_regex(params, "switches", required=False)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in as_list(params.get("numbers"))):
        raise ValueError("python matcher: 'numbers' must be a list of numbers")
    needs_words = params.get("strings") or params.get("numbers") or params.get("switches") or params.get(
        "identifiers") or any("callee" in c for c in params.get("calls", []))
    if needs_words and not params.get("needles"):
        raise ValueError("python matcher: a rule with 'strings', 'numbers', 'switches', 'identifiers' or a 'callee' "
                         "regex needs 'needles' (literal words for the prefilter)")


def _validate_call(call: Any) -> None:
    if not isinstance(call, dict):
        raise ValueError("python calls entry must be a mapping")
    check_keys(call, _CALL_KEYS, "python calls entry")
    check_regex(call, "regex", required=False)
    check_regex(call, "callee", required=False)
    check_regex(call, "without", required=False)
    if "arg" in call and "regex" not in call:
        raise ValueError("python calls entry: 'arg' needs a 'regex' for the argument")
    if "regex" in call and not ("arg" in call or "keyword" in call):
        raise ValueError("python calls entry: 'regex' goes with 'arg' and/or 'keyword'")
    if "arg" in call and not isinstance(call["arg"], int):
        raise ValueError("python calls entry: 'arg' is a position (0 = first argument)")
    if not any(k in call for k in ("name", "method", "callee", "keyword")):
        raise ValueError("python calls entry needs 'name', 'method', 'callee' or 'keyword'")


def _needles(params: Mapping[str, Any]) -> list[str]:
    """The rule's own `needles` when given (the author knows a word every match needs), else words derived
    from the names it looks for."""
    if params.get("needles"):
        return sorted(set(as_list(params["needles"])))
    words = []
    for key in ("imports", "names", "decorators"):
        words.extend(last_parts(as_list(params.get(key, []))))
    for call in params.get("calls", []):
        words.extend(last_parts(as_list(call.get("name", []))))
        words.extend(f".{m}(" for m in as_list(call.get("method", [])))
        if "name" not in call and "method" not in call:
            words.extend(as_list(call["keyword"]))
    words.extend(value["name"] for value in params.get("values", []))
    return sorted(set(words))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """The test a Python file's text must pass for the rule to fire (see python_common)."""
    return lambda code: _has_candidate(code.text, params)


def _has_candidate(text: str, params: Mapping[str, Any]) -> bool:
    """The text may hold something the rule describes: an import, a name, a call or a string."""
    if not _file_wanted(text, params):
        return False
    names = [*as_list(params.get("names")), *as_list(params.get("decorators"))]
    if any(has_name(text, name) for name in names):
        return True
    if "import *" in text and any(has_name(text, name) for name in _short_decorators(params)):
        return True
    if any(all(has_word(text, part) for part in name.split(".")) for name in as_list(params.get("imports"))):
        return True
    if params.get("numbers") or any(_string_entry(text, e) for e in params.get("strings", [])):
        return True
    if "switches" in params and _names_a_switch(text, params["switches"]):
        return True
    if any(_names_a_switch(text, entry["regex"]) for entry in params.get("identifiers", [])):
        return True
    if any(has_word(text, value["name"]) for value in params.get("values", [])):
        return True
    return any(_call_entry(text, entry) for entry in params.get("calls", []))


def _file_wanted(text: str, params: Mapping[str, Any]) -> bool:
    """The file passes the rule's `unless_file` (no match) and `if_file` (a match) tests."""
    if "unless_file" in params and searches(params["unless_file"], text):
        return False
    return "if_file" not in params or searches(params["if_file"], text)


def _call_entry(text: str, entry: Mapping[str, Any]) -> bool:
    if "regex" in entry and not (_string_entry(text, entry) or _takes_literal_bool(entry["regex"])):
        return False
    if "name" in entry:
        return any(has_name(text, name) for name in as_list(entry["name"]))
    if "method" in entry:
        return any(has_attribute(text, method) for method in as_list(entry["method"]))
    if "callee" in entry:
        return _callee_written(text, entry["callee"])
    return any(has_word(text, k) for k in as_list(entry["keyword"]))


def _takes_literal_bool(regex: str) -> bool:
    """The argument regex matches the text of a literal True / False (`_jit_set_nvfuser_enabled(True)`): no string
    in the file stands for it, so the string test cannot rule the call out."""
    return any(re.search(regex, text) for text in ("True", "False"))


def _callee_written(text: str, callee: str) -> bool:
    """The last part of a callee `(?:^|\\.)name$` regex is written in the text (a resolved name's parts all are)."""
    body = callee.removeprefix("(?:^|\\.)").removesuffix("$")
    if body == callee or has_anchor(body):
        return True  # a shape this test does not know: no saving, but no miss
    return re.search(rf"\b(?:{body})\b", text) is not None


def _names_a_switch(text: str, switches: str) -> bool:
    """A word of the text is a switch (`HAS_FLASH_ATTN`), as `switches` matches an identifier whole."""
    return searches(rf"(?<!\w)(?:{switches})(?!\w)", text)


def _string_entry(text: str, entry: Mapping[str, Any]) -> bool:
    """A string the entry's `regex` may match: always true when no test can be derived from the regex."""
    return has_string(text, string_candidate(entry["regex"]))


@register("python", validate=_validate, needles=_needles, candidates=_code_test)
def match_python(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Every import, reference, call, decorator or string in code that the rule describes."""
    if not isinstance(doc, PythonDocument) or not any(word in doc.text for word in _needles(params)):
        return
    if not _file_wanted(doc.text, params):
        return  # the file already handles the AMD side (a peak table that lists MI300X), or is not about it
    hits = [*_imports(doc, params), *_names(doc, params), *_calls(doc, params)]
    hits += [*_decorators(doc, params), *_strings(doc, params), *_numbers(doc, params), *_switches(doc, params)]
    hits += [*_values(doc, params), *_identifiers(doc, params)]
    seen: set[int] = set()
    inside = params.get("unless_function")
    for node, symbol, line in sorted(hits, key=lambda h: (h[2], h[0].col_offset)):
        if line in seen or (inside and _inside_function(doc, node, inside)):
            continue
        seen.add(line)
        yield _hit(doc, params, node, symbol, line)


def _inside_function(doc: PythonDocument, node: ast.AST, regex: str) -> bool:
    """Is NODE in a function (or a function nested in one) whose name REGEX matches (an environment report)?"""
    scope = doc.enclosing(node, ast.FunctionDef, ast.AsyncFunctionDef)
    while isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if re.search(regex, scope.name):
            return True
        scope = doc.enclosing(scope, ast.FunctionDef, ast.AsyncFunctionDef)
    return False


def _inside_branch(doc: PythonDocument, node: ast.AST, regex: str) -> bool:
    """Is NODE in the body of an `if` (or `elif`) whose test names a variable or attribute REGEX matches whole (the
    option that turns a backend on: `if trt_file is not None:`, `elif args.tensorrt:`)?"""
    child, parent = node, doc.parents.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(parent, ast.If) and any(child is statement for statement in parent.body):
            for item in ast.walk(parent.test):
                name = item.id if isinstance(item, ast.Name) else item.attr if isinstance(item, ast.Attribute) else None
                if name and re.fullmatch(regex, name):
                    return True
        child, parent = parent, doc.parents.get(parent)
    return False


def _hit(doc: PythonDocument, params: Mapping[str, Any], node: ast.expr | ast.stmt, symbol: str | None,
         line: int) -> Hit:
    severity = message = None
    fallback = params.get("fallback_severity")
    opt_in = params.get("opt_in_function")
    if fallback and _optional(doc, params, node):
        severity, message = Severity.parse(fallback), FALLBACK_MESSAGE
    elif fallback and opt_in and _inside_function(doc, node, opt_in):
        severity, message = Severity.parse(fallback), OPT_IN_MESSAGE
    elif fallback and params.get("opt_in_branch") and _inside_branch(doc, node, params["opt_in_branch"]):
        severity, message = Severity.parse(fallback), BRANCH_MESSAGE
    elif params.get("hip_aware"):
        severity, message = hip_adjusted(doc, node)
    note = None
    if params.get("without_cuda_sources") and host_only_build(doc):
        severity, note = Severity.parse(str(params["without_cuda_sources"])), HOST_ONLY_NOTE
    single = line == node.lineno
    return Hit(
        line,
        node.col_offset + 1 if single else 1,
        end_line=node.end_lineno if single else line,
        severity=severity,
        message=message,
        note=note,
        symbol=symbol,
    )


def _optional(doc: PythonDocument, params: Mapping[str, Any], node: ast.expr | ast.stmt) -> bool:
    """An import with a fallback, or a use of a module every import of which in this file has one."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return has_fallback(doc, node)
    imports = [site.node for site, _ in _import_sites(doc, params)]
    if isinstance(node, ast.Assign) and any(i is node for i in imports):
        return True  # an optional-import helper's call: it returns a stand-in when the package is missing
    return bool(imports) and all(isinstance(i, ast.Assign) or has_fallback(doc, i) for i in imports)


Found = Iterator[tuple[ast.expr | ast.stmt, str, int]]  # the node, its symbol, the line to report


def _imports(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    for site, wanted in _import_sites(doc, params):
        yield site.node, wanted, site.node.lineno


def _import_sites(doc: PythonDocument, params: Mapping[str, Any]) -> Iterator[tuple[ImportSite, str]]:
    wanted = as_list(params.get("imports", []))
    excluded = as_list(params.get("exclude_names", []))
    for site in doc.imports if wanted else ():
        modules = _imported(site, excluded)
        match = next((m for m in modules for w in wanted if prefixed(m, w)), None)
        if match:
            yield site, next(w for w in wanted if prefixed(match, w))


def _imported(site: ImportSite, excluded: list[str]) -> tuple[str, ...]:
    """The modules of an import less those under `exclude_names`; a `from a.b import c` judged by what it takes
    (`a.b.c`), so `from polygraphy.backend.onnx import fold_constants` is left out when polygraphy.backend.onnx is."""
    if not excluded:
        return site.modules
    taken = site.modules[1:] if isinstance(site.node, ast.ImportFrom) and len(site.modules) > 1 else site.modules
    return tuple(m for m in taken if not any(prefixed(m, x) for x in excluded))


def _names(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    """References under the wanted names whose first part an import binds (a variable called `tensorrt` is none)."""
    excluded = as_list(params.get("exclude_names", []))
    for wanted in as_list(params.get("names", [])):
        if wanted.partition(".")[0] not in doc.import_roots:
            continue  # nothing imports its module: spare building the reference table
        for ref in doc.refs_by_prefix.get(wanted, ()):
            if _bound_by_import(doc, ref.node) and not any(prefixed(ref.dotted, x) for x in excluded):
                yield ref.node, ref.dotted, ref.node.lineno


def _bound_by_import(doc: PythonDocument, node: ast.expr) -> bool:
    if isinstance(node, ast.Name) and (not isinstance(node.ctx, ast.Load) or _is_presence_test(doc, node)):
        return False  # `nvitop = None` or `if pynvml is None:` around an optional import uses nothing
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in doc.aliases


def _calls(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    for entry in params.get("calls", []):
        names = as_list(entry.get("name", []))
        methods = as_list(entry.get("method", []))
        regex = re.compile(entry["regex"]) if "regex" in entry else None
        callee = re.compile(entry["callee"]) if "callee" in entry else None
        without = re.compile(entry["without"]) if "without" in entry else None
        for site in _candidates(doc, entry):
            if (names and site.name not in names) or (methods and site.method not in methods):
                continue
            if callee and not callee.search(site.name or f".{site.method}"):
                continue
            if regex is None and "keyword" in entry and not _has_keyword(site.node, entry["keyword"]):
                continue
            if without and _passes(site.node, without):
                continue
            if "without_keyword" in entry and _has_keyword(site.node, entry["without_keyword"]):
                continue  # another rule's shape of the same call (RawModule(path=...) loads a binary, not source)
            where = _place(site.node, entry) if regex is None else _matching_argument(site.node, entry, regex)
            if where is not None:
                yield where, entry.get("symbol") or site.name or f".{site.method}()", where.lineno
        if not names and not methods and "callee" not in entry and "keyword" in entry:
            yield from _keyword_entries(doc, entry, regex)


def _keyword_entries(doc: PythonDocument, entry: Mapping[str, Any], regex: re.Pattern[str] | None) -> Found:
    """The keyword written as a key: `{"load_in_4bit": True}` or `kwargs["load_in_4bit"] = True` (kwargs for a call)."""
    keywords = set(as_list(entry["keyword"]))
    pairs: list[tuple[ast.expr, ast.expr]] = []
    for node in doc.of_type(ast.Dict):
        pairs.extend((k, v) for k, v in zip(node.keys, node.values) if k is not None)
    for node in doc.of_type(ast.Assign):
        pairs.extend((t.slice, node.value) for t in node.targets if isinstance(t, ast.Subscript))
    for key, value in pairs:
        if not (isinstance(key, ast.Constant) and key.value in keywords) or _is_off(value):
            continue
        if regex is None or any(regex.search(t) for t in argument_texts(value)):
            yield key, entry.get("symbol") or str(key.value), key.lineno


def _is_presence_test(doc: PythonDocument, node: ast.Name) -> bool:
    """`if pynvml:`, `not pynvml`, `pynvml is None`: a check that an optional top-level module loaded (a value
    such as CUDA_HOME tested the same way is a use)."""
    if "." in doc.aliases.get(node.id, "."):
        return False
    parent = doc.parents.get(node)
    if isinstance(parent, (ast.If, ast.While, ast.IfExp)) and parent.test is node:
        return True
    if isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
        return True
    return isinstance(parent, ast.Compare) and any(
        isinstance(side, ast.Constant) and side.value is None for side in (parent.left, *parent.comparators)
    )


def _candidates(doc: PythonDocument, entry: Mapping[str, Any]) -> list[CallSite]:
    """The calls an entry could match, looked up by callee name, method or keyword."""
    for kind in ("name", "method", "keyword"):
        if kind in entry:
            return [site for value in as_list(entry[kind]) for site in doc.calls_by.get((kind, value), ())]
    return doc.calls  # a callee regex alone: every call


def _has_keyword(call: ast.Call, keywords: Any) -> bool:
    """The call passes one of KEYWORDS, set to anything but a literal False or None (`load_in_8bit=False` is no use)."""
    return any(k.arg in as_list(keywords) and not _is_off(k.value) for k in call.keywords)


def _passes(call: ast.Call, regex: re.Pattern[str]) -> bool:
    """An argument of the call (by position or keyword) has a literal text REGEX matches."""
    values = [*call.args, *(k.value for k in call.keywords)]
    return any(regex.search(text) for value in values for text in argument_texts(value))


def _place(call: ast.Call, entry: Mapping[str, Any]) -> ast.expr:
    """Where a call found by its keyword is reported: at that keyword (`load_in_8bit=True` on its own line of a long
    call), else at the call."""
    if any(k in entry for k in ("name", "method", "callee")):
        return call
    keywords = as_list(entry["keyword"])
    return next((k.value for k in call.keywords if k.arg in keywords and not _is_off(k.value)), call)


def _is_off(node: ast.expr) -> bool:
    """A literal False, None or 0: the switch is off (`load_in_8bit=False`, `n_gpu_layers=0` keeps llama.cpp on the CPU)."""
    return isinstance(node, ast.Constant) and (node.value is False or node.value is None
                                               or (type(node.value) is int and node.value == 0))


def _matching_argument(call: ast.Call, entry: Mapping[str, Any], regex: re.Pattern[str]) -> ast.expr | None:
    """The argument (by position or keyword) whose literal text matches, so the hit points at it."""
    candidates: list[ast.expr] = []
    if "arg" in entry and len(call.args) > entry["arg"]:
        candidates.append(call.args[entry["arg"]])
    candidates.extend(k.value for k in call.keywords if k.arg in as_list(entry.get("keyword", [])))
    return next((c for c in candidates if any(regex.search(t) for t in argument_texts(c))), None)


def argument_texts(node: ast.expr, depth: int = 0) -> list[str]:
    """The literal texts an argument may stand for: strings, f-strings' fixed parts, a literal True/False as "True" /
    "False", a literal integer as its digits, a list's first item and its items joined as a command line, both arms of `a if c else b`, `a + b`;
    bounded so that generated code cannot blow it up."""
    if depth > _MAX_DEPTH:
        return []
    deeper = depth + 1
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Constant) and isinstance(node.value, bool) and depth == 0:
        return [str(node.value)]  # a switch passed as a literal: `_jit_set_nvfuser_enabled(True)`
    if isinstance(node, ast.Constant) and type(node.value) is int and depth == 0:
        return [str(node.value)]  # a size passed as a literal: a warp of 32 threads
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)]  # type: ignore[misc]
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:  # the program, and the whole command line
        first = argument_texts(node.elts[0], deeper)
        words = [(argument_texts(item, deeper) or ["{}"])[0] for item in node.elts[:_MAX_WORDS]]
        return [*first, " ".join(words)] if len(words) > 1 else first
    if isinstance(node, ast.IfExp):
        return argument_texts(node.body, deeper) + argument_texts(node.orelse, deeper)
    if isinstance(node, ast.BoolOp):
        return [t for value in node.values for t in argument_texts(value, deeper)][:_MAX_TEXTS]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # CUDA_HOME + "/bin/nvcc"
        lefts = argument_texts(node.left, deeper) or ["{}"]
        rights = argument_texts(node.right, deeper) or ["{}"]
        return [a + b for a in lefts for b in rights][:_MAX_TEXTS]
    if isinstance(node, ast.Call):  # shlex.split("nvidia-smi -L") or "nvidia-smi -L".split()
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Constant):
            return argument_texts(node.func.value, deeper)
        return argument_texts(node.args[0], deeper) if node.args else []
    return []


def _decorators(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    wanted = as_list(params.get("decorators", []))
    star = _star_aliases(doc, params) if wanted else {}
    for item in doc.decorated if wanted else ():
        first, dot, rest = item.name.partition(".")
        name = f"{star[first]}{dot}{rest}" if first in star else item.name
        if name in wanted:
            yield item.node, name, item.node.lineno


def _star_aliases(doc: PythonDocument, params: Mapping[str, Any]) -> dict[str, str]:
    """`star_aliases: {wp: warp}`: in a file that binds no `wp` itself but star-imports a module of its project
    (`from warp_utils import *`, which re-exports that module's `import warp as wp`), the conventional short name
    stands for the module: `@wp.kernel` there is warp.kernel."""
    table: Mapping[str, str] = params.get("star_aliases") or {}
    if not table or not any(a.name == "*" for node in doc.of_type(ast.ImportFrom) for a in node.names):
        return {}
    return {short: module for short, module in table.items() if short not in doc.aliases}


def _short_decorators(params: Mapping[str, Any]) -> list[str]:
    """The rule's decorators spelt with their star aliases' short names (warp.kernel as wp.kernel), for the prefilter."""
    table: Mapping[str, str] = params.get("star_aliases") or {}
    return [f"{short}{name[len(module):]}" for name in as_list(params.get("decorators")) for short, module in table.items()
            if name.startswith(module + ".")]


def _switches(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    """The tests of if / while / conditional expressions / asserts (and the and/or assigned or returned) that name a
    flag or predicate `switches` matches whole (`if HAS_FLASH_ATTN:`, `x if is_flash_attn_2_available() else y`,
    `assert _flash_attn_version >= required`), and with `switch_defaults` where such a flag is turned on by a
    literal True: where code chooses a feature."""
    if "switches" not in params:
        return
    regex = re.compile(params["switches"])
    if params.get("switch_defaults"):
        yield from _switched_on(doc, regex)
    keys = any(isinstance(s.value, str) and regex.fullmatch(s.value) for s in doc.strings)
    if not keys and not any(regex.fullmatch(name) for name in doc.identifiers):
        return  # most files name no such flag: spare walking every test
    tests = [node.test for node in doc.of_type(ast.If, ast.While, ast.IfExp, ast.Assert)]
    tests += [node.value for node in doc.of_type(ast.Assign, ast.Return) if isinstance(node.value, ast.BoolOp)]
    for test in tests:  # `use_sliding = _flash_supports_window_size and window is not None` decides as well
        for item in ast.walk(test):
            name = item.id if isinstance(item, ast.Name) else item.attr if isinstance(item, ast.Attribute) else None
            if keys and name is None:  # a config's key read in the test: `if cfg.get("use_flash_attn", False):`
                name = _config_key(item)
            if name and regex.fullmatch(name):
                yield test, name, test.lineno
                break


def _config_key(node: ast.AST) -> str | None:
    """The key a test reads from a config: `cfg.get("key", ...)`, `getattr(args, "key", ...)`, `cfg["key"]`."""
    key: ast.expr | None = None
    if isinstance(node, ast.Call):
        callee = node.func
        if isinstance(callee, ast.Attribute) and callee.attr == "get" and node.args:
            key = node.args[0]
        elif isinstance(callee, ast.Name) and callee.id == "getattr" and len(node.args) > 1:
            key = node.args[1]
    elif isinstance(node, ast.Subscript):
        key = node.slice
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def _switched_on(doc: PythonDocument, regex: re.Pattern[str]) -> Found:
    """Where a switch is turned on by a literal True: the keyword `use_flash_attn=True`, the parameter default
    `use_flash_attn: bool = True`, the assignment or field `USE_FLASH_ATTN = True` (the default that chooses), and a
    config's default by its key: `cfg.get("use_flash_attn", True)`, `getattr(args, "use_flash_attn", True)`,
    `setdefault("use_flash_attn", True)`, `{"use_flash_attn": True}`."""
    given: list[tuple[str, ast.expr]] = []
    for call in doc.of_type(ast.Call):
        given.extend((k.arg, k.value) for k in call.keywords if k.arg)
        given.extend((key.value, value) for key, value in zip(call.args, call.args[1:])
                     if isinstance(key, ast.Constant) and isinstance(key.value, str))
    for mapping in doc.of_type(ast.Dict):
        given.extend((key.value, value) for key, value in zip(mapping.keys, mapping.values)
                     if isinstance(key, ast.Constant) and isinstance(key.value, str))
    for function in doc.of_type(ast.FunctionDef, ast.AsyncFunctionDef):
        given.extend(_parameter_defaults(function.args))
    for assign in doc.of_type(ast.Assign, ast.AnnAssign):
        targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
        given.extend((_target_name(t), assign.value) for t in targets if assign.value is not None and _target_name(t))
    for name, value in given:
        if isinstance(value, ast.Constant) and value.value is True and regex.fullmatch(name):
            yield value, f"{name}=True", value.lineno


def _target_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _identifiers(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    """Attributes and variables read in code whose name the entry's regex matches whole
    (`tex.NVTE_Fused_Attn_Backend.NVTE_F16_arbitrary_seqlen`, `self.compiler.src_extensions`): names, not text."""
    for entry in params.get("identifiers", []):
        regex = re.compile(entry["regex"])
        wanted = {name for name in doc.identifiers if regex.fullmatch(name)}  # each name tried once, not each use
        for node in doc.of_type(ast.Attribute, ast.Name) if wanted else ():
            name = node.attr if isinstance(node, ast.Attribute) else node.id
            if name in wanted and (isinstance(node, ast.Attribute) or isinstance(node.ctx, ast.Load)):
                yield node, entry.get("symbol") or name, node.end_lineno or node.lineno
        for statement in doc.of_type(ast.ImportFrom) if entry.get("imported") else ():
            for alias in statement.names:  # `from .gemm import gemm_fp8_sm90`: a name brought in to be used
                if regex.fullmatch(alias.name):
                    yield alias, entry.get("symbol") or alias.name, alias.end_lineno or alias.lineno


def _numbers(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    """Numeric constants (or products of constants, `312 * 1e12`) equal to one of the wanted values."""
    wanted = [float(v) for v in as_list(params.get("numbers"))]
    if not wanted:
        return
    for node in doc.of_type(ast.Constant, ast.BinOp):
        parent = doc.parents.get(node)
        if isinstance(parent, ast.BinOp) and _constant_product(parent) is not None:
            continue  # the larger product is the number
        value = _constant_product(node)
        if value is not None and any(math.isclose(value, w, rel_tol=1e-6) for w in wanted):
            yield node, f"{value:g}", node.lineno


def _values(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    """Integer literals above a bound given to a setting by name: the keyword `num_warps=32`, the dict entry
    `"num_warps": 32`, the assignment `num_warps = 32` (or one arm of `32 if c else 16`), a parameter's default,
    and the items of a literal list it is checked against or iterated from."""
    for entry in params.get("values", []):
        name = entry["name"]
        for given in _given_values(doc, name):
            for arm, number in _int_arms(given):
                if number > entry["above"]:
                    yield arm, entry.get("symbol") or f"{name}={number}", arm.lineno


def _given_values(doc: PythonDocument, name: str) -> Iterator[ast.expr]:
    """The expressions given to NAME: as a keyword, a dict key, an assigned variable (tuple unpacking included), a
    parameter default, and the items of `NAME in [...]`, `for NAME in [...]`, `parametrize("NAME", [...])`."""
    for call in doc.of_type(ast.Call):
        yield from (k.value for k in call.keywords if k.arg == name)
        if call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == name and len(call.args) > 1:
            yield from _items(call.args[1])  # pytest.mark.parametrize("num_warps", [4, 8, 32])
    for function in doc.of_type(ast.FunctionDef, ast.AsyncFunctionDef):
        yield from _defaults(function.args, name)
    for test in doc.of_type(ast.Compare):
        if _named(test.left, name) and all(isinstance(op, (ast.In, ast.NotIn)) for op in test.ops):
            yield from (item for side in test.comparators for item in _items(side))
    for loop in doc.of_type(ast.For):
        if _named(loop.target, name):
            yield from _items(loop.iter)
    for table in doc.of_type(ast.Dict):
        yield from (v for k, v in zip(table.keys, table.values) if isinstance(k, ast.Constant) and k.value == name)
    for assign in doc.of_type(ast.Assign):
        for target in assign.targets:
            if isinstance(target, ast.Name) and target.id == name:
                yield assign.value
            elif isinstance(target, ast.Tuple) and isinstance(assign.value, ast.Tuple):
                pairs = zip(target.elts, assign.value.elts)
                yield from (v for t, v in pairs if isinstance(t, ast.Name) and t.id == name)


def _defaults(arguments: ast.arguments, name: str) -> Iterator[ast.expr]:
    """The default of parameter NAME (`def launch(x, num_warps=32)`, keyword-only ones too)."""
    yield from (default for arg, default in _parameter_defaults(arguments) if arg == name)


def _parameter_defaults(arguments: ast.arguments) -> list[tuple[str, ast.expr]]:
    """Each parameter that has a default, with it (keyword-only ones too)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
             *zip(arguments.kwonlyargs, arguments.kw_defaults)]
    return [(arg.arg, default) for arg, default in pairs if default is not None]


def _named(node: ast.expr, name: str) -> bool:
    """NODE is the variable or attribute NAME (`num_warps`, `config.num_warps`)."""
    return (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)


def _items(node: ast.expr) -> list[ast.expr]:
    """The items of a literal list, tuple or set (nothing for anything else)."""
    return list(node.elts) if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else []


def _int_arms(node: ast.expr) -> list[tuple[ast.Constant, int]]:
    """The integer literals NODE may be, with their values: itself, or the arms of a conditional expression."""
    if isinstance(node, ast.IfExp):
        return _int_arms(node.body) + _int_arms(node.orelse)
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return [(node, node.value)]
    return []


def _constant_product(node: ast.expr, depth: int = 0) -> float | None:
    """The value of a numeric constant or a product/power of constants; None for anything else or a huge one."""
    try:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.BinOp) and depth < 4 and isinstance(node.op, (ast.Mult, ast.Pow)):
            left, right = _constant_product(node.left, depth + 1), _constant_product(node.right, depth + 1)
            if left is None or right is None or (isinstance(node.op, ast.Pow) and abs(right) > 40):
                return None
            return float(left**right) if isinstance(node.op, ast.Pow) else left * right
    except (OverflowError, ZeroDivisionError):  # generated code with huge literals: no peak FLOPS there
        return None
    return None
    return None


def _strings(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    for entry in params.get("strings", []):
        regex = re.compile(entry["regex"])
        roles = set(as_list(entry.get("roles", ["code", "argv"])))
        target = re.compile(entry["assigned_to"]) if "assigned_to" in entry else None
        outside = set(as_list(entry.get("outside_calls")))
        method = entry.get("compared_to_method")
        compared = entry.get("compared", False)
        formatted = re.compile(entry["formatted"]) if "formatted" in entry else None
        collection = entry.get("in_collection", False)
        for node in doc.strings:
            found = regex.search(node.value)
            if found is None or (method and not _compared_to_method(doc, node, method)):
                continue
            if compared and not _compared(doc, node):
                continue
            if formatted is not None and not _formatted_next(doc, node, formatted):
                continue
            site = doc.string_site(node)
            if site.role not in roles or (outside and _argument_of(doc, node) in outside):
                continue
            # in_collection: only an item of a list, set or tuple literal, judged by the name the literal is given
            name = _collection_assigned(doc, node) if collection else site.assigned_to
            if target is None or (name and target.search(name)):
                yield site.node, entry.get("symbol") or found.group(), _line_of(doc, node, found.group())


def _collection_assigned(doc: PythonDocument, node: ast.Constant) -> str | None:
    """The name a list, set or tuple literal holding NODE is assigned to (`ARCHS = {"8.0", "9.0"}`: ARCHS)."""
    container = doc.parents.get(node)
    if not isinstance(container, (ast.Set, ast.List, ast.Tuple)):
        return None
    owner = doc.parents.get(container)
    if isinstance(owner, ast.Assign):
        return next((t.id for t in owner.targets if isinstance(t, ast.Name)), None)
    if isinstance(owner, ast.AnnAssign) and isinstance(owner.target, ast.Name):
        return owner.target.id
    return None


def _formatted_next(doc: PythonDocument, node: ast.Constant, regex: re.Pattern[str]) -> bool:
    """NODE is a fixed part of an f-string whose next value is an expression REGEX finds in its source: the `sm_` of
    f"sm_{major}{minor}" followed by a capability, not the `sm_` of f"sm_{strength}"."""
    parent = doc.parents.get(node)
    if not isinstance(parent, ast.JoinedStr):
        return False
    index = next(i for i, value in enumerate(parent.values) if value is node)
    after = parent.values[index + 1] if index + 1 < len(parent.values) else None
    return isinstance(after, ast.FormattedValue) and regex.search(ast.unparse(after.value)) is not None


def _compared(doc: PythonDocument, node: ast.expr) -> bool:
    """NODE is a side of a comparison, or one of the values an `in` tests against: `backend == "x"`,
    `mode in ("x", "y")`; not a dict key, an argument or a message."""
    container = doc.parents.get(node)
    if isinstance(container, (ast.Tuple, ast.List, ast.Set)):
        container = doc.parents.get(container)
    return isinstance(container, ast.Compare)


def _compared_to_method(doc: PythonDocument, node: ast.expr, method: str) -> bool:
    """NODE is compared with what a call of METHOD returns: `'Half' in p.type()`, `p.type() == 'x'`."""
    parent = doc.parents.get(node)
    if not isinstance(parent, ast.Compare):
        return False
    return any(isinstance(side, ast.Call) and isinstance(side.func, ast.Attribute) and side.func.attr == method
               for side in (parent.left, *parent.comparators) if side is not node)


def _argument_of(doc: PythonDocument, node: ast.expr) -> str | None:
    """The dotted callee of the call NODE is an argument of (through list, tuple and concatenation wrappers)."""
    parent = doc.parents.get(node)
    while isinstance(parent, (ast.List, ast.Tuple, ast.BinOp, ast.keyword)):
        node, parent = parent, doc.parents.get(parent)  # type: ignore[assignment]
    return doc.dotted(parent.func) if isinstance(parent, ast.Call) and node is not parent.func else None


def _line_of(doc: PythonDocument, node: ast.Constant, matched: str) -> int:
    """The line of a multi-line string (implicit concatenation, triple quotes) on which MATCHED is written."""
    end = node.end_lineno or node.lineno
    if end == node.lineno or not matched:
        return node.lineno
    probe = matched.splitlines()[0] if matched.strip() else matched
    lines = doc.lines[node.lineno - 1 : end]
    return node.lineno + next((i for i, text in enumerate(lines) if probe in text), 0)
