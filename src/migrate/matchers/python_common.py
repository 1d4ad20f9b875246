"""Helpers the Python matchers share: parameter checks, dotted-name prefixes, fallbacks and ROCm guards."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from typing import Any

from migrate.model import Severity
from migrate.parse.python import PythonDocument

_COMMON_WORDS = frozenset(
    {"load", "jit", "to", "version", "utils", "language", "ops", "run", "call", "which", "system", "extra", "math"}
)
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"})
_FLAG = re.compile(r"available|^_?(?:has|use|with|enable|is)_|installed|^_?(?:HAS|USE|WITH|ENABLE|IS)_|find_spec", re.I)


def as_list(value: Any) -> list[Any]:
    """A rule parameter that may be one value or a list of them."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


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
    """An optional import: inside try/except ImportError, or under an availability check."""
    child, parent = node, doc.parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.Try) and child in parent.body and _catches_import_error(parent):
            return True
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and _is_flag(doc, parent.test):
            return True
        child, parent = parent, doc.parents.get(parent)
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
    for item in ast.walk(test):
        name = item.id if isinstance(item, ast.Name) else item.attr if isinstance(item, ast.Attribute) else None
        if name and _FLAG.search(name):
            return True
    return False


def hip_adjusted(doc: PythonDocument, node: ast.AST) -> tuple[Severity | None, str | None]:
    """A lower severity (and why) when code already checks for ROCm around NODE."""
    state = doc.hip_state(node)
    if state == "expression":
        return Severity.INFO, "The same expression already handles ROCm (torch.version.hip); nothing to port."
    if state == "after-guard":
        return Severity.LOW, "A ROCm check (torch.version.hip) earlier in this function may already cover it; verify."
    return None, None
