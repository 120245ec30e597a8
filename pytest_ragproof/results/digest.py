"""The digest written with a results file: a check of integrity, not a signature."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["DIGEST_COVERS", "DIGEST_SINCE", "LEGACY_COVERS", "digest"]

# What the digest written with a results file covers: every part a verdict, a merge, a
# baseline or the history reads (everything but the digest itself).
DIGEST_COVERS = (
    "aggregates",
    "baseline",
    "cases",
    "components",
    "datasets",
    "format",
    "notes",
    "passed",
    "pipelines",
    "redacted",
    "run",
    "run_id",
    "settings",
    "thresholds",
    "versions",
)
# What files written before the digest covered the whole document covered: read, with the
# rest of the file checked against the dataset and the reading command's configuration.
LEGACY_COVERS = ("cases",)
# The first release that writes a digest with every results file: a file naming this
# release or a later one without a digest was edited.
DIGEST_SINCE = (0, 1, 0)


def digest(results: Mapping[str, Any], covers: Sequence[str] = DIGEST_COVERS) -> str:
    """sha256 of the ``covers`` parts of a results document as canonical JSON.

    Written with the file (``digest``) so that a reader detects a hand edit or a
    truncation; a check of integrity, not a signature (anyone can compute it again, so
    merge, baselines and the history decide from the data, never from the file's word).
    The canonical text is ``json.dumps(parts, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)``, hashed piece by piece (:func:`canonical_parts`).
    """
    parts = {key: results.get(key) for key in covers}
    sha = hashlib.sha256()
    for text in canonical_parts(parts):
        sha.update(text.encode("utf-8"))
    return sha.hexdigest()


_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def canonical_parts(parts: Mapping[str, Any]) -> Iterator[str]:
    """The canonical JSON of ``parts`` in consecutive pieces, a list item at a time.

    Each piece is encoded by the C encoder; joined, they are the text of one
    ``json.dumps`` call, which for 100,000 cases would be one string of about a
    hundred megabytes (and its UTF-8 copy) at the end of a run.
    """
    yield "{"
    for i, key in enumerate(sorted(parts)):
        value = parts[key]
        yield ("," if i else "") + _ENCODE(key) + ":"
        if isinstance(value, list | tuple):
            yield "["
            for j, item in enumerate(value):
                yield ("," + _ENCODE(item)) if j else _ENCODE(item)
            yield "]"
        else:
            yield _ENCODE(value)
    yield "}"
