"""The digest written with a results file: a check of integrity, not a signature."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DIGEST_COVERS", "digest"]

# What the digest written with a results file covers: the parts merges and baselines use.
DIGEST_COVERS = ("cases",)


def digest(results: Mapping[str, Any], covers: Sequence[str] = DIGEST_COVERS) -> str:
    """sha256 of the ``covers`` parts of a results document as canonical JSON.

    Written with the file (``digest``) so that a reader detects a hand edit or a
    truncation of its cases; a check of integrity, not a signature.
    """
    parts = {key: results.get(key) for key in covers}
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
