"""Benchmark: ingest + chunk + BM25 index a 20 MB generated corpus; query throughput.

Run: ``python benchmarks/bench_ingest.py`` (not part of the test suite).

The corpus is generated in a temporary folder: Zipf-distributed pseudo-words
in sentences and paragraphs, with Markdown headings in some files, so the
chunker and tokenizer see realistic shapes. Queries are four words drawn from
a random chunk, as a generated question about that chunk would be. The BM25
inverted index is compared with brute-force scoring of every chunk (same
precomputed statistics, only the scoring loop differs), interleaved in the
same run, at 10,000 chunks; the index must be at least 5x faster (the script
exits 1 otherwise). ``--quick`` (a 1 MB corpus, 1,000 chunks compared) checks
only that it runs.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Limits, add_quick, compare
from pytest_ragproof.corpus import load_corpus
from pytest_ragproof.corpus.chunking import Chunk, chunk_corpus
from pytest_ragproof.corpus.retrieval import K1, B, BM25Index, tokenize

CORPUS_BYTES = 20_000_000
FILE_BYTES = 200_000
COMPARE_CHUNKS = 10_000
N_QUERIES = 200


def generate_corpus(root: Path, seed: int = 0, corpus_bytes: int = CORPUS_BYTES) -> int:
    """Write about CORPUS_BYTES of text files; return the bytes written."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(30_000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    written = 0
    n = 0
    while written < corpus_bytes:
        words = rng.choices(vocab, weights=weights, k=FILE_BYTES // 6)
        parts: list[str] = []
        i = 0
        while i < len(words):
            if rng.random() < 0.02:
                parts.append(f"\n\n## Section {i}\n\n")
            length = rng.randint(6, 20)
            parts.append(" ".join(words[i : i + length]).capitalize() + ". ")
            if rng.random() < 0.2:
                parts.append("\n\n")
            i += length
        ext = ".md" if n % 2 else ".txt"
        data = "".join(parts).encode("utf-8")
        (root / f"part{n // 50:02d}").mkdir(exist_ok=True)
        (root / f"part{n // 50:02d}" / f"doc{n:04d}{ext}").write_bytes(data)
        written += len(data)
        n += 1
    return written


class BruteForce:
    """BM25 by scoring every chunk against the query: the baseline the index must beat."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.ids = [c.id for c in chunks]
        self.tfs = [Counter(tokenize(c.text)) for c in chunks]
        lengths = [sum(tf.values()) for tf in self.tfs]
        avgdl = sum(lengths) / len(lengths)
        self.norm = [K1 * (1 - B + B * dl / avgdl) for dl in lengths]
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(chunks)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def search(self, query: str, k: int = 10) -> list[tuple[float, str]]:
        terms = tokenize(query)
        scored: list[tuple[float, str]] = []
        for cid, tf, norm in zip(self.ids, self.tfs, self.norm, strict=True):
            score = 0.0
            for term in terms:
                f = tf.get(term, 0)
                if f:
                    score += self.idf[term] * f * (K1 + 1) / (f + norm)
            if score > 0:
                scored.append((-score, cid))
        scored.sort()
        return scored[:k]


def make_queries(chunks: list[Chunk], rng: random.Random, n: int = N_QUERIES) -> list[str]:
    queries: list[str] = []
    for _ in range(n):
        tokens = tokenize(rng.choice(chunks).text)
        queries.append(" ".join(rng.sample(tokens, k=min(4, len(tokens)))))
    return queries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_quick(parser)
    args = parser.parse_args()
    corpus_bytes, compare_chunks, rounds = CORPUS_BYTES, COMPARE_CHUNKS, 3
    if args.quick:
        corpus_bytes, compare_chunks, rounds = 1_000_000, 1_000, 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        total = generate_corpus(root, corpus_bytes=corpus_bytes)
        t0 = time.perf_counter()
        corpus = load_corpus(root)
        t1 = time.perf_counter()
        chunks = chunk_corpus(corpus.documents)
        t2 = time.perf_counter()
        index = BM25Index(chunks)
        t3 = time.perf_counter()
    mb = total / 1e6
    print(f"corpus: {mb:.1f} MB, {len(corpus.documents)} documents, {len(chunks)} chunks")
    print(f"  load   {t1 - t0:6.2f} s  {mb / (t1 - t0):7.1f} MB/s")
    print(f"  chunk  {t2 - t1:6.2f} s  {mb / (t2 - t1):7.1f} MB/s")
    print(f"  index  {t3 - t2:6.2f} s  {mb / (t3 - t2):7.1f} MB/s")
    print(f"  total  {t3 - t0:6.2f} s  {mb / (t3 - t0):7.1f} MB/s (ingest + chunk + index)")

    rng = random.Random(1)
    queries = make_queries(chunks, rng)
    start = time.perf_counter()
    for q in queries:
        index.search(q, k=10)
    full_qps = len(queries) / (time.perf_counter() - start)
    print(f"  queries on {len(chunks)} chunks: {full_qps:,.0f} queries/s (top 10)")

    subset = chunks[:compare_chunks]
    small, brute = BM25Index(subset), BruteForce(subset)
    sub_queries = make_queries(subset, rng)
    for q in sub_queries[:20]:  # same answers, or the comparison means nothing
        got = [(round(-h.score, 9), h.chunk_id) for h in small.search(q, k=10)]
        want = [(round(s, 9), cid) for s, cid in brute.search(q, k=10)]
        assert got == want, q

    def run_index() -> None:
        for q in sub_queries:
            small.search(q, k=10)

    def run_brute() -> None:
        for q in sub_queries:
            brute.search(q, k=10)

    cmp = compare(run_brute, run_index, rounds=rounds)
    index_qps = len(sub_queries) / cmp.candidate_s
    brute_qps = len(sub_queries) / cmp.baseline_s
    print(
        f"  queries on {len(subset)} chunks: index {index_qps:,.0f} q/s, "
        f"brute force {brute_qps:,.0f} q/s, speed-up {1 / cmp.ratio:.1f}x"
    )
    limits = Limits(quick=args.quick)
    limits.check(f"BM25 index vs brute force ({len(subset)} chunks)", cmp, 0.2)
    return limits.exit_status()


if __name__ == "__main__":
    raise SystemExit(main())
