"""A text's lower case where searching it stands for a case-insensitive search of the text (`re.I`) for ASCII."""

from __future__ import annotations

# The only characters beyond ASCII that a case-insensitive regex matches with an ASCII letter or digit (İ ı ſ K):
# in a text without them, what a case-insensitive regex of ASCII finds is what its lower case finds in the text's
# lower case, at the same offsets (İ is also the one character whose lower case is two characters).
FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"  # searched one by one: faster than a class of them


def folded(text: str) -> str | None:
    """TEXT in lower case, where searching that for ASCII words is searching TEXT case-insensitively (each character
    at its own offset); else None."""
    return text.lower() if text.isascii() or not any(char in text for char in FOLDS_TO_ASCII) else None
