"""migrate.digests: the digests hashlib gives, without loading OpenSSL."""

from __future__ import annotations

import hashlib

from migrate import digests


def test_the_digests_are_hashlibs() -> None:
    for data in (b"", b"cudaMalloc", bytes(range(256)) * 300):
        assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert digests.blake2b(data, digest_size=20).hexdigest() == hashlib.blake2b(data, digest_size=20).hexdigest()
    grown = digests.sha256()
    for part in (b"a", b"\0", b"bc"):
        grown.update(part)
    assert grown.hexdigest() == hashlib.sha256(b"a\0bc").hexdigest()
