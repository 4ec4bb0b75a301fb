"""Content hashing shared by the IR fingerprint and the cache keys.

`hashlib` is imported on first use: it loads OpenSSL (about 3 ms), which `import
stencilchain` does not need; the toolchains' modules import it anyway.
"""

from __future__ import annotations


def sha256_of(*parts: str) -> str:
    """Hex sha256 of the parts, each length-prefixed so that no two splits collide."""
    import hashlib

    digest = hashlib.sha256()
    for part in parts:
        data = part.encode()
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()
