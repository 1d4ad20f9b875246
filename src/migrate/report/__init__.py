"""Reporters: each format is a pure render(assessment) -> str, chosen by name."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from migrate.escape import document, surrogates
from migrate.gcpause import paused
from migrate.model import ScanResult
from migrate.report.formats import FORMATS

if TYPE_CHECKING:
    from migrate.assessment import Assessment

_MODULES = {"md": "markdown"}
_STREAMED = ("json", "sarif", "html")  # written in pieces, escaped, by their module's chunks()


def render(subject: Assessment | ScanResult, fmt: str, **options: Any) -> str:
    """Render SUBJECT in format FMT (one of FORMATS); a bare scan result is assessed first."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    if fmt in _STREAMED:
        return "".join(pieces(subject, fmt))
    module = importlib.import_module(f"migrate.report.{_MODULES.get(fmt, fmt)}")
    with paused():  # a large report builds many small objects and no cycles
        text = surrogates(module.render(_assessed(subject), **options))  # undecodable file-name bytes, escaped
    return document(text) if fmt == "md" else text  # terminal escapes per datum


def pieces(subject: Assessment | ScanResult, fmt: str, **options: Any) -> Iterator[str]:
    """render(SUBJECT, FMT, **OPTIONS) in pieces that add up to it, for a writer that never holds a large report
    whole: JSON a finding a piece, SARIF a result a piece, HTML a block at a time (each escaped by its module), the
    other formats in one."""
    if fmt not in _STREAMED:
        yield render(subject, fmt, **options)
        return
    module = importlib.import_module(f"migrate.report.{fmt}")
    with paused():  # a large report builds many small objects and no cycles
        yield from module.chunks(_assessed(subject))


def _assessed(subject: Assessment | ScanResult) -> Assessment:
    from migrate.assessment import Assessment, assess  # here: the CLI imports report.formats at start-up, light

    return subject if isinstance(subject, Assessment) else assess(subject)
