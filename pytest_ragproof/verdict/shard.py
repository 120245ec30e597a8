"""``--ragproof-shard K/N``: which cases a shard of a run owns (pytest-free).

A case belongs to shard ``hash % N + 1`` where ``hash`` is the 64-bit xxh3 of
``"<dataset path as shown>::<case id>"`` (the dataset path relative to the
rootdir, ``/``-separated, as in the node id of the case's item). The hash of a
case depends on nothing but its own path and id, so adding or removing a case
never moves another case to another shard, and every job of a CI matrix agrees
on the split without talking to the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import xxhash

from pytest_ragproof.errors import ConfigError

HASH_SCHEME = "xxh3_64(dataset path '::' case id) mod N"


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` (1-based) of ``n``."""

    k: int
    n: int

    def owns(self, dataset: str, case_id: str) -> bool:
        """Is the case ``case_id`` of ``dataset`` (the path as shown) in this shard?"""
        return shard_of(dataset, case_id, self.n) == self.k

    @property
    def text(self) -> str:
        return f"{self.k}/{self.n}"

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "n": self.n, "hash": HASH_SCHEME}


def shard_of(dataset: str, case_id: str, n: int) -> int:
    """The shard (1..n) the case ``case_id`` of ``dataset`` belongs to."""
    return xxhash.xxh3_64_intdigest(f"{dataset}::{case_id}".encode()) % n + 1


def parse_shard(text: str | None) -> Shard | None:
    """``K/N`` as a Shard (None when not given); ConfigError with the fix otherwise."""
    if text is None or not str(text).strip():
        return None
    raw = str(text).strip()
    fix = "e.g. --ragproof-shard 1/4 for the first of four shards (K from 1 to N)"
    k_text, sep, n_text = raw.partition("/")
    try:
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise ConfigError(f"--ragproof-shard expects K/N; got '{raw}': {fix}") from None
    if not sep or n < 1:
        raise ConfigError(f"--ragproof-shard expects K/N with N at least 1; got '{raw}': {fix}")
    if not 1 <= k <= n:
        raise ConfigError(
            f"--ragproof-shard {raw}: K must be between 1 and {n} (shards are numbered from 1); "
            f"{fix}"
        )
    return Shard(k, n)
