"""The report formats by name, and the format a report file's suffix asks for."""

from __future__ import annotations

from pathlib import Path

FORMATS = ("terminal", "json", "md", "html", "sarif")
REPORT_SUFFIXES = {
    ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".sarif": "sarif", ".sarif.json": "sarif",
    ".json": "json", ".txt": "terminal",
}


def format_of(path: Path) -> str | None:
    """The format PATH's suffix asks for (.sarif.json before .json); None for a suffix of no format."""
    double = "".join(path.suffixes[-2:]).lower()
    return REPORT_SUFFIXES.get(double if double in REPORT_SUFFIXES else path.suffix.lower())
