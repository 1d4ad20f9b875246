"""Data from a scanned repository (file names above all) shown safely: one place for every report.

A file name may hold bytes that are not UTF-8 (read as lone surrogates, U+DC80..U+DCFF, by Python) and
characters a terminal obeys (escape sequences, bidi overrides) or that show nothing (zero-width and other format
characters). Each is shown as a visible escape, `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN` (JSON: its own `\\uNNNN`),
so no report fails to encode, no JSON is invalid UTF-8, no terminal is steered and no two names look the same."""

from __future__ import annotations

import json
import re

from migrate.lazyre import lazy_regex

_SURROGATE = lazy_regex("[\udc80-\udcff]")
_ANY_SURROGATE = lazy_regex("[\ud800-\udfff]")
# What shows nothing, or moves text, where it stands: the format characters (Unicode category Cf: zero-width
# spaces and joiners, the bidi marks, overrides and isolates, U+FEFF, the tag characters) and the line and
# paragraph separators. `a.py` and `a\u200b.py` must not look the same in any report.
_INVISIBLE = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
# C0 and C1 controls and DEL (tab and newline too: one finding, one line), and the invisible characters.
_CONTROL = lazy_regex(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}\ud800-\udfff]")
_INVISIBLE_CHARACTER = lazy_regex(f"[{_INVISIBLE}]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def surrogates(text: str) -> str:
    """TEXT with every lone surrogate (an undecodable byte of a file name, or any other) written as an escape."""
    if text.isascii():  # a scan for ASCII runs at memory speed, a regex over a 70 MB report does not
        return text
    return _ANY_SURROGATE.sub(_escaped, text) if _ANY_SURROGATE.search(text) else text


_CONTROL_IN_DOCUMENT = lazy_regex(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def document(text: str) -> str:
    """A whole Markdown or HTML report (printed to a terminal, too): control characters other than newline
    and tab, and the invisible characters, as escapes."""
    return _CONTROL_IN_DOCUMENT.sub(_escaped, text)


def visible(text: str) -> str:
    """TEXT for a terminal line: undecodable bytes, control characters and bidi controls as escapes."""
    if text.isascii() and text.isprintable():  # nothing to escape (and no pattern to compile: `check`'s lines)
        return text
    return _CONTROL.sub(_escaped, text)


def in_json(document: str) -> str:
    """A JSON document (from json.dumps(..., ensure_ascii=False)) with its lone surrogates written as the
    JSON string `\\\\xNN`: the same text every other report shows, in valid UTF-8; and the invisible characters
    written as JSON escapes (`\\u200b`), which read back as the same strings but show in the file."""
    if document.isascii():
        return document
    if _ANY_SURROGATE.search(document):
        document = _ANY_SURROGATE.sub(lambda m: "\\" + _escaped(m), document)
    return _INVISIBLE_CHARACTER.sub(_json_escaped, document) if _INVISIBLE_CHARACTER.search(document) else document


def _json_escaped(match: re.Match[str]) -> str:
    """The character as a JSON escape (a surrogate pair beyond the BMP, as JSON writes them)."""
    return json.dumps(match.group(), ensure_ascii=True)[1:-1]
