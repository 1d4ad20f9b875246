"""Compute-capability logic: capability queries, their results compared, `.major`/`.minor` of device properties,
and the same gates through a project's own helper (`get_device_compute_capability() < (8, 0)`); with
`compared_only`, other NVIDIA numbers read the same way (`torch.backends.cudnn.version() >= 8900`) are reported
only where they are compared. A number folded from a capability (`cc = major * 10 + minor`) is followed like the
capability itself; with `named`, a value named as a capability wherever it came from (`capability // 10 >= 9`,
`target.capability < 90`) is reported where it is compared with a capability number."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import as_list, check_keys, check_regex, has_name, hip_adjusted, last_parts
from migrate.model import Severity
from migrate.parse import Document
from migrate.parse.python import PythonDocument

# a capability as a version string passed to a helper: "9.0", "8.6" (JAX's test utility spells it so)
_VERSION_STRING = re.compile(r"[1-9]\d?\.\d")

_KEYS = {"matcher", "capability", "properties", "attributes", "helpers", "helper_words", "compared_only", "named",
         "named_words", "named_in_gpu_code"}


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "compute-capability")
    if not (as_list(params.get("capability")) or params.get("helpers")):
        raise ValueError("compute-capability needs 'capability' (a list of names) or 'helpers'")
    if not all(isinstance(v, str) for v in as_list(params.get("capability"))):
        raise ValueError("compute-capability: 'capability' is a list of names")
    for key in ("properties", "attributes"):
        if not all(isinstance(v, str) for v in as_list(params.get(key))):
            raise ValueError(f"compute-capability: '{key}' is a list of names")
    if bool(params.get("properties")) != bool(params.get("attributes")):
        raise ValueError("compute-capability: 'properties' needs 'attributes' (and 'attributes' needs 'properties')")
    check_regex(params, "helpers", required=False)
    if "helpers" in params and not as_list(params.get("helper_words")):
        raise ValueError("compute-capability: 'helpers' needs 'helper_words' (literal words for the prefilter)")
    check_regex(params, "named", required=False)
    if "named" in params and not as_list(params.get("named_words")):
        raise ValueError("compute-capability: 'named' needs 'named_words' (literal words for the prefilter)")


def _needles(params: Mapping[str, Any]) -> list[str]:
    words = last_parts(as_list(params.get("capability")) + as_list(params.get("properties")))
    return sorted(set(words + as_list(params.get("helper_words")) + as_list(params.get("named_words"))))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """Every finding needs a call to one of the capability or properties functions."""
    names = as_list(params.get("capability")) + as_list(params.get("properties"))
    words = as_list(params.get("helper_words")) + as_list(params.get("named_words"))
    return lambda code: any(has_name(code.text, name) for name in names) or any(w in code.text for w in words)


@register("compute-capability", validate=_validate, needles=_needles, candidates=_code_test)
def match_capability(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Capability calls, comparisons of their results with numbers, and major/minor of device properties."""
    if not isinstance(doc, PythonDocument):
        return
    calls = {} if params.get("compared_only") else _calls(doc, params)
    found = {**_named_gates(doc, params), **_helper_gates(doc, params), **calls, **_comparisons(doc, params)}
    found.update(_attributes(doc, params))
    literals = _named_literals(doc, params)
    found.update({line: hit for line, hit in literals.items() if line not in found})
    for line in sorted(found):
        node, symbol = found[line]
        severity, message = hip_adjusted(doc, node)
        if line in literals and found[line] is literals[line] and severity is None:
            severity, message = Severity.LOW, _LITERAL_MESSAGE
        if severity is None and _only_shown(doc, node):
            severity, message = Severity.INFO, _SHOWN_MESSAGE
        yield Hit(line, node.col_offset + 1, end_line=node.end_lineno, severity=severity, message=message,  # type: ignore[attr-defined]
                  symbol=symbol)


Found = dict[int, tuple[ast.AST, str]]

_SHOWN_MESSAGE = (
    "The capability is only written into a message here (an f-string of a print, log line or error text): ROCm "
    "shows the gfx major/minor (gfx942 gives (9, 4)) and nothing is decided by it; nothing to port."
)


def _only_shown(doc: PythonDocument, node: ast.AST) -> bool:
    """Is NODE inside a replacement field of an f-string (f"sm={torch.cuda.get_device_capability()}")?"""
    parent = doc.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.FormattedValue):
            return True
        parent = doc.parents.get(parent)
    return False


def _sources(doc: PythonDocument, names: list[str]) -> tuple[list[ast.Call], set[str]]:
    """The calls to NAMES, and the variables their results are assigned to (`major, minor = ...` too)."""
    calls = [s.node for s in doc.calls if s.name in names]
    return calls, _assigned(doc, calls)


def _assigned(doc: PythonDocument, calls: list[ast.Call]) -> set[str]:
    """The variables the results of CALLS are assigned to (`major, minor = ...` too), and those computed from them
    (`major, minor = cap`, `cc = major * 10 + minor`, `capability = capability[0] * 10 + capability[1]`)."""
    variables: set[str] = set()
    ids = {id(c) for c in calls}
    for node in doc.assigns:
        if node.value is not None and id(node.value) in ids:
            variables.update(_targets(node))
    for _ in range(2) if variables else ():  # two steps: `major, minor = cap`, then `cc = major * 10 + minor`
        for node in doc.assigns:
            if isinstance(node.value, _DERIVED) and _names_in(node.value) & variables:
                variables.update(_targets(node))
    return variables


_DERIVED = (ast.BinOp, ast.Name, ast.Subscript, ast.Tuple)  # values computed from a capability, not calls on it


def _targets(node: ast.Assign | ast.AnnAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _calls(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    calls, _ = _sources(doc, as_list(params.get("capability")))
    return {c.lineno: (c, doc.dotted(c.func) or "") for c in reversed(calls)}


def _comparisons(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    calls, variables = _sources(doc, as_list(params.get("capability")))
    return _compared(doc, calls, variables)


def _compared(doc: PythonDocument, calls: list[ast.Call], variables: set[str]) -> Found:
    """Comparisons of CALLS' results (or of the VARIABLES holding them) with numbers."""
    ids = {id(c) for c in calls}
    found: Found = {}
    for node in doc.of_type(ast.Compare) if calls else ():
        sides = [node.left, *node.comparators]
        if any(_is_number(s) for s in sides) and any(_is_capability(s, variables, ids) for s in sides):
            found.setdefault(node.lineno, (node, "compute capability comparison"))
    return found


def _helper_gates(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    """A project's capability helper gated like the torch call: its result compared with numbers
    (`get_device_compute_capability() < (8, 0)`, `cc[0] >= 9`) or a capability number passed to it
    (`current_platform.has_device_capability(90)`)."""
    if "helpers" not in params or not any(w in doc.text for w in as_list(params["helper_words"])):
        return {}
    regex, own = re.compile(params["helpers"]), set(as_list(params.get("capability")))
    calls = [s.node for s in doc.calls if s.name not in own and _helper(s.name or s.method, regex)]
    found = _compared(doc, calls, _assigned(doc, calls))
    for call in calls:
        if call.args and _is_capability_number(call.args[0]):
            found.setdefault(call.lineno, (call, "compute capability passed to a helper"))
    return found


def _named_gates(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    """A value named as a capability compared with a capability number: `capability >= 80`, `target.capability < 90`,
    `capability[0] >= 9`, `capability // 10 >= 9`, `compute_capability < 7.0` (a tuple, an int from 30 to 130 or a
    major.minor float from 3.0 to 13.9; 3 to 13 for a major version)."""
    regex = _named_regex(doc, params)
    if regex is None:
        return {}
    found: Found = {}
    for node in doc.of_type(ast.Compare):
        sides = [node.left, *node.comparators]
        for side, other in ((a, b) for a in sides for b in sides if a is not b):
            form = _capability_form(side, regex)
            if form and _fits(other, form):
                found.setdefault(node.lineno, (node, "compute capability comparison"))
    return found


def _named_regex(doc: PythonDocument, params: Mapping[str, Any]) -> re.Pattern[str] | None:
    """The rule's `named` regex, where the file names a capability in GPU code (None elsewhere)."""
    if "named" not in params or not any(w in doc.text for w in as_list(params["named_words"])):
        return None
    if "named_in_gpu_code" in params and not any(w in doc.text for w in as_list(params["named_in_gpu_code"])):
        return None
    return re.compile(params["named"])


_LITERAL_MESSAGE = (
    "An NVIDIA compute capability written as a literal for a setting named as one (a minimum to gate on, or the "
    "device a test pretends to have: `min_compute_capability=(7, 0)`, `highest_compute_capability=(8, 6)`). On ROCm "
    "torch.cuda.get_device_capability() gives the gfx major/minor (gfx90a (9, 0), gfx942 (9, 4)), so the value "
    "compared with it, or the CUDA build chosen from it, means nothing for an AMD GPU; ROCm ports skip or branch "
    "these tests (bitsandbytes' ROCm port skips its CUDA library selection tests)."
)


def _named_literals(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    """A capability number given by keyword to a setting named as a capability: `compute_capability=(9, 0)`,
    `min_cuda_compute_capability=(7, 0)`, `capability=90` (a tuple whose major is 3 to 13, or 30 to 130)."""
    regex = _named_regex(doc, params)
    if regex is None:
        return {}
    found: Found = {}
    for keyword in doc.of_type(ast.keyword):
        if keyword.arg and regex.fullmatch(keyword.arg) and _fits(keyword.value, _keyword_form(keyword.arg)):
            found.setdefault(keyword.value.lineno, (keyword.value, "compute capability literal"))
    return found


def _keyword_form(name: str) -> str:
    return "major" if name.endswith("major") else "number"


def _capability_form(node: ast.AST, regex: re.Pattern[str]) -> str | None:
    """"number" for a capability (`capability`, `target.capability`), "major" for its major part (`capability[0]`,
    `capability // 10`, `capability_major`), None for anything else."""
    form = "number"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
        node, form = node.value, "major"
    elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and isinstance(node.right, ast.Constant)
          and node.right.value == 10):
        node, form = node.left, "major"
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    if name is None or not regex.fullmatch(name):
        return None
    return "major" if name.endswith("major") else form


def _fits(node: ast.AST, form: str) -> bool:
    if isinstance(node, ast.Tuple):
        return form == "number" and _is_number(node) and len(node.elts) == 2 and _in(node.elts[0], 3, 13)
    if form == "number" and _major_dot_minor(node):
        return True
    return _in(node, 3, 13) if form == "major" else _in(node, 30, 130)


def _major_dot_minor(node: ast.AST) -> bool:
    """A capability written as major.minor (6.0, 7.5, 8.9): JAX and numba-style devices give it as "8.0", and code
    compares `float(...)` of it, or of f"{major}.{minor}", with such a number (a score like 0.75 is none)."""
    if not (isinstance(node, ast.Constant) and type(node.value) is float):
        return False
    return 3.0 <= node.value < 14.0 and float(round(node.value * 10)) == node.value * 10


def _in(node: ast.AST, low: int, high: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and low <= node.value <= high


def _helper(name: str | None, regex: re.Pattern[str]) -> bool:
    return name is not None and regex.fullmatch(name.rpartition(".")[2]) is not None


def _attributes(doc: PythonDocument, params: Mapping[str, Any]) -> Found:
    calls, variables = _sources(doc, as_list(params.get("properties")))
    ids = {id(c) for c in calls}
    attributes = set(as_list(params.get("attributes")))
    found: Found = {}
    inner = {id(a.value) for a in doc.of_type(ast.Attribute)} if variables else set()  # x.major in x.major.y
    for node in doc.of_type(ast.Attribute) if variables else ():
        if node.attr in attributes and isinstance(node.value, ast.Name) and node.value.id in variables:
            if id(node) not in inner and not doc.in_annotation(node):
                found.setdefault(node.lineno, (node, f"device properties .{node.attr}"))
    for node in doc.of_type(ast.Attribute) if calls else ():  # get_device_properties(0).major is no name chain
        if node.attr in attributes and id(node.value) in ids:
            found.setdefault(node.lineno, (node, f"device properties .{node.attr}"))
    return found


def _is_number(node: ast.AST) -> bool:
    """80, 8.9, (8, 0), or a version parsed from a literal (`Version("11.8")`, `parse_version("12.0")`)."""
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_is_number(e) for e in node.elts)
    if isinstance(node, ast.Call) and len(node.args) == 1 and _VERSION_TEXT.fullmatch(_constant_text(node.args[0])):
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return callee.lower().endswith(("version", "parse"))
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


_VERSION_TEXT = re.compile(r"\d+(?:\.\d+)*")


def _constant_text(node: ast.AST) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _is_capability_number(node: ast.AST) -> bool:
    """(8, 0), 80 or "8.0" (a device index, 0 to 9, is no capability)."""
    if isinstance(node, ast.Tuple):
        return _is_number(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _VERSION_STRING.fullmatch(node.value) is not None
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 10


def _is_capability(node: ast.AST, variables: set[str], calls: set[int]) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id in variables
    return id(node) in calls
