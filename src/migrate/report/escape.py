"""Data from a scanned repository (file names above all) shown safely: one place for every report.

A file name may hold bytes that are not UTF-8 (read as lone surrogates, U+DC80..U+DCFF, by Python) and
characters a terminal obeys (escape sequences, bidi overrides). Each is shown as a visible escape, `\\xNN`
or `\\uNNNN`, so no report fails to encode, no JSON is invalid UTF-8, and no terminal is steered."""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\udc80-\udcff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 and C1 controls and DEL (tab and newline too: one finding, one line), and the bidi overrides and isolates.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else (
        f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def surrogates(text: str) -> str:
    """TEXT with every lone surrogate (an undecodable byte of a file name, or any other) written as an escape."""
    if text.isascii():  # a scan for ASCII runs at memory speed, a regex over a 70 MB report does not
        return text
    return _ANY_SURROGATE.sub(_escaped, text) if _ANY_SURROGATE.search(text) else text


_CONTROL_IN_DOCUMENT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def document(text: str) -> str:
    """A whole Markdown or HTML report (printed to a terminal, too): control characters other than newline
    and tab, and bidi overrides, as escapes."""
    return _CONTROL_IN_DOCUMENT.sub(_escaped, text)


def visible(text: str) -> str:
    """TEXT for a terminal line: undecodable bytes, control characters and bidi controls as escapes."""
    return _CONTROL.sub(_escaped, text)


def in_json(document: str) -> str:
    """A JSON document (from json.dumps(..., ensure_ascii=False)) with its lone surrogates written as the
    JSON string `\\\\xNN`: the same text every other report shows, in valid UTF-8."""
    if document.isascii():
        return document
    return _ANY_SURROGATE.sub(lambda m: "\\" + _escaped(m), document) if _ANY_SURROGATE.search(document) else document
