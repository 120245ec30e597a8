"""Benchmark: the full retrieval metric set against a straightforward pure-Python loop.

Run with ``python benchmarks/bench_metrics.py`` (``--queries N`` for a quicker
run, ``--quick`` to check only that it runs). Limit: the library may cost at most
1.5x the straightforward loop, both measured interleaved in the same run (see
``_common.compare``); the script exits 1 when over it. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path

# Run as a plain script (python benchmarks/bench_metrics.py): make the repo importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Limits, add_quick, compare
from pytest_ragproof.metrics import retrieval_metrics

KS = (1, 3, 5, 10)
LIMIT = 1.5


def straightforward(ranked: Sequence[str], relevant: set[str]) -> dict[str, float]:
    """The obvious implementation: de-duplicate, then compute each metric on its own."""
    deduped: list[str] = []
    seen: set[str] = set()
    for doc in ranked:
        if doc not in seen:
            seen.add(doc)
            deduped.append(doc)
    n_rel = len(relevant)
    out: dict[str, float] = {}
    for k in KS:
        top = deduped[:k]
        hits = sum(1 for doc in top if doc in relevant)
        dcg = sum(1 / math.log2(i + 2) for i, doc in enumerate(top) if doc in relevant)
        idcg = sum(1 / math.log2(i + 2) for i in range(min(k, n_rel)))
        out[f"hit@{k}"] = 1.0 if hits else 0.0
        out[f"recall@{k}"] = hits / n_rel
        out[f"precision@{k}"] = hits / k
        out[f"ndcg@{k}"] = dcg / idcg
    out["mrr"] = 0.0
    for i, doc in enumerate(deduped, 1):
        if doc in relevant:
            out["mrr"] = 1 / i
            break
    found = 0
    ap = 0.0
    for i, doc in enumerate(deduped, 1):
        if doc in relevant:
            found += 1
            ap += found / i
    out["map"] = ap / n_rel
    out["r_precision"] = sum(1 for doc in deduped[:n_rel] if doc in relevant) / n_rel
    return out


def make_queries(n: int, depth: int, seed: int) -> list[tuple[list[str], set[str]]]:
    rng = random.Random(seed)
    pool = [f"doc-{i:05d}#{i % 7}" for i in range(2000)]
    queries = []
    for _ in range(n):
        # Drawing with replacement leaves a few duplicates, as real retrievers
        # returning several chunks of one document do in document mode.
        ranked = [pool[rng.randrange(400)] for _ in range(depth)]
        relevant = set(rng.sample(pool[:500], rng.randint(1, 5)))
        queries.append((ranked, relevant))
    return queries


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100, help="retrieved ids per query")
    parser.add_argument("--rounds", type=int, default=3)
    add_quick(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.queries, args.rounds = 2000, 1
    queries = make_queries(args.queries, args.depth, seed=0)

    # Same answers first: a faster wrong implementation proves nothing.
    for ranked, relevant in queries[:2000]:
        ours = retrieval_metrics(ranked, relevant, KS)
        theirs = straightforward(ranked, relevant)
        assert ours.keys() == theirs.keys()
        assert all(abs(ours[key] - theirs[key]) <= 1e-12 for key in ours)

    def baseline() -> None:
        for ranked, relevant in queries:
            straightforward(ranked, relevant)

    def candidate() -> None:
        for ranked, relevant in queries:
            retrieval_metrics(ranked, relevant, KS)

    result = compare(baseline, candidate, rounds=args.rounds)
    n = len(queries)
    print(
        f"{n} queries x {args.depth} ids, ks {','.join(map(str, KS))}: "
        f"straightforward {result.baseline_s / n * 1e6:.2f} us/query, "
        f"ragproof {result.candidate_s / n * 1e6:.2f} us/query"
    )
    limits = Limits(quick=args.quick)
    limits.check("retrieval metric set", result, LIMIT)
    return limits.exit_status()


if __name__ == "__main__":
    raise SystemExit(main())
