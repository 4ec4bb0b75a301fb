"""Content hashing shared by the IR fingerprint and the cache keys."""

from __future__ import annotations

import hashlib


def sha256_of(*parts: str) -> str:
    """Hex sha256 of the parts, each length-prefixed so that no two splits collide."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode()
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()
