"""Reporters: each format is a pure render(assessment) -> str, chosen by name."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from migrate.gcpause import paused
from migrate.model import ScanResult

if TYPE_CHECKING:
    from migrate.assessment import Assessment

FORMATS = ("terminal", "json", "md", "html", "sarif")
_MODULES = {"md": "markdown"}


def render(subject: Assessment | ScanResult, fmt: str, **options: Any) -> str:
    """Render SUBJECT in format FMT (one of FORMATS); a bare scan result is assessed first."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    from migrate.assessment import Assessment, assess  # here: importing migrate.report.escape stays light
    from migrate.report.escape import document, surrogates

    module = importlib.import_module(f"migrate.report.{_MODULES.get(fmt, fmt)}")
    with paused():  # a large report builds many small objects and no cycles
        record = subject if isinstance(subject, Assessment) else assess(subject)
        text = surrogates(module.render(record, **options))  # undecodable file-name bytes, escaped in every format
    return document(text) if fmt in ("md", "html") else text  # json/sarif escape controls; terminal does per datum
