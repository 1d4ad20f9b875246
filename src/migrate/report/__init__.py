"""Reporters: each format is a pure render(assessment) -> str, chosen by name."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from migrate.escape import document, surrogates
from migrate.gcpause import paused
from migrate.model import ScanResult
from migrate.report.formats import FORMATS

if TYPE_CHECKING:
    from migrate.assessment import Assessment

_MODULES = {"md": "markdown"}


def render(subject: Assessment | ScanResult, fmt: str, **options: Any) -> str:
    """Render SUBJECT in format FMT (one of FORMATS); a bare scan result is assessed first."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    from migrate.assessment import Assessment, assess  # here: the CLI imports report.formats at start-up, light

    module = importlib.import_module(f"migrate.report.{_MODULES.get(fmt, fmt)}")
    with paused():  # a large report builds many small objects and no cycles
        record = subject if isinstance(subject, Assessment) else assess(subject)
        text = surrogates(module.render(record, **options))  # undecodable file-name bytes, escaped in every format
    return document(text) if fmt in ("md", "html") else text  # json/sarif escape controls; terminal does per datum
