"""Dependencies by name (pip, conda, setup.py, pyproject, Pipfile, pip installs in shell and docs)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from packaging.version import InvalidVersion, Version

from migrate.matchers import Hit, register
from migrate.matchers.manifest_common import check, compiled, literal_prefixes, name_matches, needles, search
from migrate.parse import Document
from migrate.model import Severity
from migrate.parse.manifest import IMAGE, INDEX, PACKAGE, Item, items

_ECOSYSTEMS = ("any", "pip", "conda")
# A version constraint after the name: pip (==, ~=, <), conda (=), Poetry (^, ~, a bare version).
# a constraint starts a clause: never the digits inside a pre-release or local tag (2.12.0.dev0, 2.1.0+cu121)
_CONSTRAINT = re.compile(r"(?<![\w.+])(===|==|~=|<=|>=|!=|\^|~|<|>|=)?\s*v?(\d+(?:\.\d+)*)(\.\*)?")
_NAME = re.compile(r"^\s*(?:[\w.-]+::)?[A-Za-z0-9][\w.-]*(?:\s*\[[^\]]*\])?")


def _validate(params: Mapping[str, Any]) -> None:
    check(params, lists=("names", "exclude"), regexes=("local", "extras", "url", "unless_index", "unless_line"),
          required=("names",))
    for key in ("in_rocm_environment", "when_optional"):
        if key in params:
            Severity.parse(str(params[key]))  # a severity label, or ValueError
    if params.get("ecosystem", "any") not in _ECOSYSTEMS:
        raise ValueError(f"manifest-package: 'ecosystem' must be one of {', '.join(_ECOSYSTEMS)}")
    for key in ("before", "since"):
        if key in params:
            try:
                Version(str(params[key]))
            except InvalidVersion:
                raise ValueError(f"manifest-package: '{key}' must be a version, not {params[key]!r}") from None


# a requirements file may only include the file that names the package (-r / -c, followed by the parser)
_INCLUDES = ["-r ", "--requirement", "-c ", "--constraint"]


def _needles(params: Mapping[str, Any]) -> list[str] | None:
    found = needles(params, literal_prefixes(params["names"]))
    return None if found is None else [*found, *_INCLUDES]


@register("manifest-package", validate=_validate, needles=_needles)
def match_package(doc: Document, params: Mapping[str, Any]) -> Iterator[Hit]:
    """Each dependency whose name matches `names` (globs) and, when given, its local version, extras or URL;
    `when_optional` is the severity of one in an optional part (an off-by-default Cargo feature, a dev group);
    `unless_line`: not one whose own line matches (a pip command that takes it from a CPU or ROCm index)."""
    if "unless_index" in params and any(search(params, "unless_index", i.name) for i in items(doc, INDEX)):
        return
    ecosystem = params.get("ecosystem", "any")
    rocm = _rocm_environment(doc) if "in_rocm_environment" in params else None
    for item in items(doc, PACKAGE):
        is_conda = item.args[:1] == ("conda",)
        if ecosystem != "any" and (ecosystem == "conda") != is_conda:
            continue
        if not name_matches(item.name, params["names"]) or name_matches(item.name, params.get("exclude", [])):
            continue
        if "local" in params and not compiled(params["local"]).search(item.local):
            continue
        if "extras" in params and not any(compiled(params["extras"]).search(e) for e in item.args):
            continue
        if "url" in params and not compiled(params["url"]).search(item.url):
            continue
        if "unless_line" in params and compiled(params["unless_line"]).search(_line(doc.text, item.line)):
            continue
        if "before" in params and not predates(item, Version(str(params["before"]))):
            continue
        if "since" in params and predates(item, Version(str(params["since"]))):
            continue
        if item.optional and "when_optional" in params:
            yield Hit(item.line, item.column, symbol=item.name, optional=True,
                      severity=Severity.parse(str(params["when_optional"])))
        elif rocm and not _CUDA_BUILD.search(item.url + item.local):
            yield Hit(item.line, item.column, symbol=item.name, optional=item.optional,
                      severity=Severity.parse(str(params["in_rocm_environment"])), note=rocm)
        else:
            yield Hit(item.line, item.column, symbol=item.name, optional=item.optional)


# A ROCm base image (rocm/pytorch:..., lmsysorg/sglang:v0.4-rocm630, ray:2.35.0-py311-rocm62) or a ROCm wheel index
_ROCM_IMAGE = re.compile(r"(?i)(?:^|[/:._-])rocm(?:[/:._-]|\d|$)")
_CUDA_BUILD = re.compile(r"cu\d")  # a prebuilt CUDA wheel (+cu121, flash_attn-2.7.4+cu12torch2.6-...whl)
_ROCM_INDEX = re.compile(r"(?i)/whl/(?:nightly/)?rocm|repo\.radeon\.com|repo\.amd\.com")


def _rocm_environment(doc: Document) -> str | None:
    """Why the installs of DOC land in a ROCm environment (every base image a ROCm one, or torch from a ROCm
    index), or None: a source build there compiles for ROCm."""
    images = [i.name for i in items(doc, IMAGE)]
    if images and all(_ROCM_IMAGE.search(name) for name in images):
        return f"This file installs into a ROCm image ({images[-1]}), where the package builds for ROCm."
    if any(_ROCM_INDEX.search(i.name) for i in items(doc, INDEX)):
        return "This file installs ROCm torch from a ROCm index first, so the package builds for ROCm here."
    return None


def predates(item: Item, release: Version) -> bool:
    """True when every version ITEM's constraint allows is older than RELEASE (an exact pin, an upper bound)."""
    if item.url:
        return False  # a URL's digits are no constraint
    text = _NAME.sub("", item.value.split(";", 1)[0], count=1)
    return any(_bound_below(op or "==", version, bool(star), release) for op, version, star in _CONSTRAINT.findall(text))


def _bound_below(op: str, version: str, star: bool, release: Version) -> bool:
    parts = [int(p) for p in version.split(".")]
    if op in ("==", "===", "=") and star:
        return Version(".".join(map(str, _bumped(parts, len(parts) - 1)))) <= release
    if op in ("==", "===", "=", "<="):
        return Version(version) < release
    if op == "<":
        return Version(version) <= release
    if op in ("~=", "~", "^") and len(parts) > 1:
        position = len(parts) - 2 if op == "~=" else (1 if op == "~" else next((i for i, p in enumerate(parts) if p), 0))
        return Version(".".join(map(str, _bumped(parts, min(position, len(parts) - 1))))) <= release
    return False


def _bumped(parts: list[int], position: int) -> list[int]:
    """The first version past every version that agrees with PARTS up to POSITION (0.37.* -> 0.38)."""
    return [*parts[:position], parts[position] + 1]


def _line(text: str, number: int) -> str:
    """Line NUMBER (1-based) of TEXT, or "" past its end."""
    lines = text.splitlines()
    return lines[number - 1] if 0 < number <= len(lines) else ""
