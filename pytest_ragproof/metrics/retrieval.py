"""Retrieval metrics against ``expected_source_ids``, equal to trec_eval's to 1e-9.

The ranking is de-duplicated first: each id keeps its first (best) position and
later ones move up, so ``[a, a, b]`` ranks ``b`` second. Everything is derived in
one pass from the sorted ranks of the relevant ids, which is all any of these
metrics needs: the non-relevant ids only matter through those ranks.

trec_eval names: ``success_k`` = hit@k, ``recall_k``, ``P_k`` = precision@k,
``ndcg_cut_k``, ``recip_rank`` = mrr, ``map``, ``Rprec`` = r_precision.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache

from pytest_ragproof import defaults
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.metrics.outputs import Context

__all__ = [
    "DEFAULT_KS",
    "SOURCE_MATCH_MODES",
    "ranked_source_ids",
    "retrieval_metrics",
    "validate_ks",
    "would_match_by_document",
]

DEFAULT_KS: tuple[int, ...] = defaults.K
SOURCE_MATCH_MODES = ("chunk", "document")

# _IDCG[n] = sum of the discounts 1/log2(i + 1) for ranks i = 1..n (binary gains).
# trec_eval uses the same log2 discount; the table grows on demand.
_DISCOUNT: list[float] = [0.0]
_IDCG: list[float] = [0.0]


def _grow_tables(n: int) -> None:
    for rank in range(len(_DISCOUNT), n + 1):
        d = 1.0 / math.log2(rank + 1)
        _DISCOUNT.append(d)
        _IDCG.append(_IDCG[-1] + d)


_grow_tables(128)


def validate_ks(ks: Iterable[int]) -> tuple[int, ...]:
    """Sorted, de-duplicated cutoffs; ConfigError unless every k is a positive int."""
    checked: set[int] = set()
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"retrieval cutoff k must be a positive integer, got {k!r}")
        checked.add(k)
    if not checked:
        raise ConfigError("at least one retrieval cutoff k is needed, e.g. 1,3,5,10")
    return tuple(sorted(checked))


@lru_cache(maxsize=64)
def _plan(ks: tuple[int, ...]) -> tuple[tuple[int, str, str, str, str], ...]:
    # Key strings are built once per ks tuple: per query they would cost more
    # than the arithmetic.
    valid = validate_ks(ks)
    _grow_tables(valid[-1])
    return tuple((k, f"hit@{k}", f"recall@{k}", f"precision@{k}", f"ndcg@{k}") for k in valid)


def retrieval_metrics(
    ranked_ids: Sequence[str],
    relevant: Collection[str],
    ks: Sequence[int] = DEFAULT_KS,
) -> dict[str, float]:
    """Every retrieval metric of one query.

    ``ranked_ids`` is the retrieved ids best first (duplicates allowed);
    ``relevant`` the expected ids (at least one: with none the metrics are
    undefined, and trec_eval skips such queries). Keys: ``hit@k``, ``recall@k``,
    ``precision@k``, ``ndcg@k`` for each k, then ``mrr``, ``map``, ``r_precision``.
    """
    if isinstance(ranked_ids, str) or isinstance(relevant, str):
        # A lone string would silently be read as a sequence of one-letter ids.
        raise TypeError("ranked_ids and relevant must be collections of ids, not a string")
    plan = _plan(ks if isinstance(ks, tuple) else tuple(ks))
    rel = relevant if isinstance(relevant, set | frozenset) else set(relevant)
    n_rel = len(rel)
    if n_rel == 0:
        raise ValueError("retrieval metrics need at least one relevant id")
    # dict.fromkeys keeps first occurrences in order (the de-dup rule) and runs
    # in C; only the few relevant ids are looked up from Python, and the list
    # scan for their ranks (also C) happens only when one was retrieved.
    deduped = dict.fromkeys(ranked_ids)
    retrieved = [r for r in rel if r in deduped]
    out: dict[str, float] = {}
    if not retrieved:
        for _k, hit, recall, precision, ndcg in plan:
            out[hit] = out[recall] = out[precision] = out[ndcg] = 0.0
        out["mrr"] = out["map"] = out["r_precision"] = 0.0
        return out
    order = list(deduped)
    ranks = sorted([order.index(r) + 1 for r in retrieved])
    if ranks[-1] >= len(_DISCOUNT):
        _grow_tables(ranks[-1])
    discount = _DISCOUNT
    # dcg_prefix[j] = DCG of the first j relevant hits.
    dcg_prefix = [0.0]
    ap_sum = 0.0
    for j, r in enumerate(ranks, 1):
        dcg_prefix.append(dcg_prefix[-1] + discount[r])
        ap_sum += j / r
    for k, hit, recall, precision, ndcg in plan:
        found = bisect_right(ranks, k)
        out[hit] = 1.0 if found else 0.0
        out[recall] = found / n_rel
        out[precision] = found / k
        out[ndcg] = dcg_prefix[found] / _IDCG[min(k, n_rel)]
    out["mrr"] = 1.0 / ranks[0]
    out["map"] = ap_sum / n_rel
    out["r_precision"] = bisect_right(ranks, n_rel) / n_rel
    return out


def ranked_source_ids(contexts: Iterable[Context], source_match: str = "chunk") -> list[str]:
    """The ids compared with ``expected_source_ids``: context ids, or document ids."""
    if source_match == "chunk":
        return [c.id for c in contexts]
    if source_match == "document":
        return [c.document_id for c in contexts]
    raise ConfigError(
        f"unknown source match mode {source_match!r}; expected one of: "
        + ", ".join(SOURCE_MATCH_MODES)
    )


def would_match_by_document(
    expected_source_ids: Iterable[str], contexts: Iterable[Context]
) -> bool:
    """True when no context id matches but some context's document id does.

    The runner then suggests ``--ragproof-source-match=document``.
    """
    expected = set(expected_source_ids)
    ctxs = list(contexts)
    if any(c.id in expected for c in ctxs):
        return False
    return any(c.document_id in expected for c in ctxs)
