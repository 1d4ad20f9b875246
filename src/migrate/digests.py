"""SHA-256 and BLAKE2b from Python's own modules: `import hashlib` loads OpenSSL first (~2 ms of a process, for the
short texts and single files that the caches' keys digest), and its BLAKE2b is Python's own anyway."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import blake2b, sha256
else:
    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256
        else:
            from _sha256 import sha256
    except ImportError:  # built without Python's own (hashlib then has OpenSSL's)
        from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b

__all__ = ["blake2b", "sha256"]
