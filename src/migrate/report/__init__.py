"""Reporters: each format is a pure render(result) -> str, chosen by name."""

from __future__ import annotations

import importlib
from typing import Any

from migrate.gcpause import paused
from migrate.model import ScanResult
from migrate.report.escape import document, surrogates

FORMATS = ("terminal", "json", "md", "html", "sarif")
_MODULES = {"md": "markdown"}


def render(result: ScanResult, fmt: str, **options: Any) -> str:
    """Render RESULT in format FMT (one of FORMATS)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")

    module = importlib.import_module(f"migrate.report.{_MODULES.get(fmt, fmt)}")
    with paused():  # a large report builds many small objects and no cycles
        text = surrogates(module.render(result, **options))  # undecodable file-name bytes, escaped in every format
    return document(text) if fmt in ("md", "html") else text  # json/sarif escape controls; terminal does per datum
