"""A package, wheel or library named for one CUDA release, its version filled in at run time:
`f"cupy-cuda{major}x"`, `f"libbitsandbytes_cuda{cuda_version_string}.so"`, `"nvidia-cublas-cu{}".format(major)`,
and the search for any of them, `f"libfoo_cuda*{suffix}"`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from migrate.matchers import CodeTest, Hit, register
from migrate.matchers.python_common import as_list, check_keys, check_regex, hip_adjusted
from migrate.parse import Document
from migrate.parse.python import PythonDocument

_KEYS = {"matcher", "needles", "literal", "version"}
_FIELD = re.compile(r"\{[^{}]*\}")


def _validate(params: Mapping[str, Any]) -> None:
    check_keys(params, _KEYS, "cuda-versioned-name")
    needles = as_list(params.get("needles"))
    if not needles or not all(isinstance(n, str) and n for n in needles):
        raise ValueError("cuda-versioned-name needs 'needles' (literals a matching file must hold)")
    check_regex(params, "literal", required=True)
    check_regex(params, "version", required=True)


def _needles(params: Mapping[str, Any]) -> list[str]:
    return sorted(set(as_list(params["needles"])))


def _code_test(params: Mapping[str, Any]) -> CodeTest:
    """A file that holds a template field and one of the needles."""
    needles = as_list(params["needles"])
    return lambda code: "{" in code.text and any(needle in code.text for needle in needles)


@register("cuda-versioned-name", validate=_validate, needles=_needles, candidates=_code_test)
def match_versioned_name(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each f-string or str.format() template whose literal text ends in the CUDA word (`literal`) right before a
    field filled with a version (`version`, searched in the field's source), or with a `*` before any field."""
    if not isinstance(doc, PythonDocument):
        return
    literal, version = re.compile(params["literal"]), re.compile(params["version"])
    seen: set[int] = set()
    for node in [*_formatted(doc, literal, version), *_templated(doc, literal, version)]:
        if node.lineno not in seen:
            seen.add(node.lineno)
            severity, message = hip_adjusted(doc, node)
            yield Hit(node.lineno, node.col_offset + 1, end_line=node.end_lineno, severity=severity, message=message,
                      symbol="CUDA-versioned name")


def _wanted(text: str, field: str, literal: re.Pattern[str], version: re.Pattern[str]) -> bool:
    return literal.search(text) is not None and (text.endswith("*") or version.search(field) is not None)


def _formatted(doc: PythonDocument, literal: re.Pattern[str], version: re.Pattern[str]) -> Iterator[ast.expr]:
    """f"cupy-cuda{major}x": a literal part followed by the field that fills in the version."""
    for node in doc.of_type(ast.JoinedStr):
        parts = node.values
        for part, field in zip(parts, parts[1:]):
            if (isinstance(part, ast.Constant) and isinstance(part.value, str) and isinstance(field, ast.FormattedValue)
                    and _wanted(part.value, ast.unparse(field.value), literal, version)):
                yield node
                break


def _templated(doc: PythonDocument, literal: re.Pattern[str], version: re.Pattern[str]) -> Iterator[ast.expr]:
    """"nvidia-cublas-cu{}".format(major): a field of the template that follows the CUDA word, and an argument of
    the call that names a version."""
    for site in doc.calls:
        call = site.node
        template = call.func.value if isinstance(call.func, ast.Attribute) and call.func.attr == "format" else None
        if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
            continue
        arguments = " ".join(ast.unparse(a) for a in [*call.args, *(k.value for k in call.keywords)])
        if any(_wanted(template.value[: m.start()], arguments, literal, version)
               for m in _FIELD.finditer(template.value)):
            yield template
