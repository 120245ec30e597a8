"""Benchmark of ``generate`` against the stub server answering in 200 ms, and the
headline run with top-up rounds.

    python benchmarks/bench_generate.py [--quick] [--headline]

One run needs 64 model calls (32 generation requests of one item each, 32
verifications). It is timed at ``--concurrency 1`` and ``--concurrency 8``, from
the first request the stub receives to its last response; the limit is
0.25x. Calls, HTTP requests and tokens per written case are reported, and a
fully cached re-run is timed too. The fake model of the tests answers by request
content, so every call does real work: the chains, verification, dedup and
assembly all run. litellm is imported and one call made before timing starts.

The headline run asks for N cases (90% qa over every type, 5% unanswerable, 5%
injection, two items per request) from a corpus of N/2 documents of two chunks
each, against the stub answering in 1 s, at ``--concurrency 16``, with the
default ``--max-rounds 3``. One document in ten holds the fake model's DUPKEY
marker, so its questions are near-duplicates of each other (about 10% of the
first round's items) and the top-up rounds make them up from the unused second
chunks. It reports the wall time of ``generate``, the rounds, and calls per
written case; its limits are no shortfall, at most 1.2 calls per written case,
and a wall time at most 1.5x the ideal (calls x latency / concurrency). Its
size is N = 200 by default (about 15 s) and 1,000 with ``--headline`` (only
the headline runs then, about 75 s).

Exits 1 when a figure is over its limit; ``--quick`` (6 cases at 20 ms, a
headline of 20 cases) checks only that the script runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from benchmarks._common import Comparison, Limits, add_quick  # noqa: E402
from pytest_ragproof.generation import (  # noqa: E402
    GenerationResult,
    GenerationSettings,
    estimate,
    generate,
)
from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache  # noqa: E402
from tests.generation.fake_model import FakeModel  # noqa: E402
from tests.llm_stub import StubServer  # noqa: E402

LATENCY_S = 0.2
MODEL = "openai/bench-gen"
SETTINGS = GenerationSettings(qa=24, unanswerable=4, injection=4, seed=0, items_per_request=1)
QUICK_LATENCY_S = 0.02
QUICK_SETTINGS = GenerationSettings(qa=4, unanswerable=1, injection=1, seed=0, items_per_request=1)
TOPICS = ("refunds", "shipping", "routers", "modems", "invoices", "warranty", "accounts", "gifts")


def _corpus(root: Path) -> Path:
    for i, topic in enumerate(TOPICS):
        body = (
            f"# {topic.title()}\n\n"
            + " ".join(f"The {topic} rule number {n} applies to case {i}{n}." for n in range(40))
            + "\n\n## Exceptions\n\n"
            + " ".join(f"Exception {n} of {topic} needs approval {i}{n}." for n in range(30))
        )
        (root / f"{topic}.md").write_text(body, encoding="utf-8")
    return root


def _run(
    corpus: Path,
    concurrency: int,
    cache: ResponseCache,
    settings: GenerationSettings = SETTINGS,
    latency_s: float = LATENCY_S,
) -> tuple[float, GenerationResult]:
    """Seconds from the stub's first request to its last response, and the result."""
    stub = StubServer().start()
    stub.set_handler(FakeModel(latency_s=latency_s))
    try:
        config = LLMConfig(model=MODEL, api_base=stub.url, concurrency=concurrency, timeout_s=30)
        result = generate(corpus, settings, client=LLMClient(config, cache))
        if result.shortfall:
            raise SystemExit(f"unexpected shortfall: {result.summary['discarded']}")
        if stub.first_request_at is None or stub.last_response_at is None:
            raise SystemExit("no request reached the stub")
        if concurrency > 1 and stub.max_in_flight > concurrency:
            raise SystemExit(f"{stub.max_in_flight} requests in flight > {concurrency}")
        return stub.last_response_at - stub.first_request_at, result
    finally:
        stub.stop()


HEADLINE_LATENCY_S = 1.0
QUICK_HEADLINE_LATENCY_S = 0.1
HEADLINE_CONCURRENCY = 16
DUPKEY_EVERY = 10


def _letters(n: int) -> str:
    """A word of letters only, distinct for each ``n`` (the fake model quotes such words)."""
    word = ""
    for _ in range(6):
        n, digit = divmod(n, 26)
        word += chr(ord("a") + digit)
    return word


def _headline_corpus(root: Path, documents: int) -> Path:
    root.mkdir()
    for i in range(documents):
        name = _letters(i)
        marker = "DUPKEY " if i % DUPKEY_EVERY == 0 else ""
        first = " ".join(f"Clause {_letters(i * 50 + n)} of {name} holds." for n in range(30))
        second = " ".join(f"Annex {_letters(i * 50 + n)} of {name} lists." for n in range(30))
        body = f"# Policy {name}\n\n{marker}{first}\n\n## Annex {name}\n\n{second}\n"
        (root / f"doc{i:04d}.md").write_text(body, encoding="utf-8")
    return root


def headline(tmp: Path, cases: int, latency_s: float, limits: Limits) -> None:
    """The headline run of the module docstring with ``cases`` cases."""
    documents = max(1, cases // 2)
    corpus = _headline_corpus(tmp / "headline", documents)
    side = max(1, cases // 20)
    settings = GenerationSettings(qa=cases - 2 * side, unanswerable=side, injection=side, seed=0)
    stub = StubServer().start()
    stub.set_handler(FakeModel(latency_s=latency_s))
    try:
        config = LLMConfig(
            model=MODEL, api_base=stub.url, concurrency=HEADLINE_CONCURRENCY, timeout_s=30
        )
        start = time.perf_counter()
        result = generate(corpus, settings, client=LLMClient(config, ResponseCache(enabled=False)))
        wall_s = time.perf_counter() - start
    finally:
        stub.stop()
    summary = result.summary
    rounds = summary["rounds"]
    calls = summary["llm"]["calls"]
    per_case = summary["per_written_case"]["calls"]
    print(
        f"headline: {cases} cases from {documents} documents "
        f"({summary['corpus']['chunks']} chunks), stub latency {latency_s:.2f} s, "
        f"concurrency {HEADLINE_CONCURRENCY}: {summary['written']} written in {wall_s:.1f} s; "
        f"{calls} calls ({per_case} per written case); {rounds['run']} round(s) "
        f"(written after each: {', '.join(str(r['written']) for r in rounds['by_round'])}); "
        f"discarded {summary['discarded']}; stopped: {rounds['stopped']}",
        flush=True,
    )
    if summary["shortfall"]:
        limits.fail(f"headline shortfall {summary['shortfall']}")
    if per_case is None or per_case > 1.2:
        limits.fail(f"headline calls per written case {per_case} > 1.2")
    ideal_s = calls * latency_s / HEADLINE_CONCURRENCY
    limits.check(
        "headline wall time vs calls x latency / concurrency", Comparison(ideal_s, wall_s), 1.5
    )


def _warm_up(corpus: Path) -> None:
    stub = StubServer().start()
    stub.set_handler(FakeModel())
    try:
        config = LLMConfig(model=MODEL, api_base=stub.url, timeout_s=30)
        settings = GenerationSettings(qa=1, types=("simple",), items_per_request=1)
        generate(corpus, settings, client=LLMClient(config, ResponseCache(enabled=False)))
    finally:
        stub.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_quick(parser)
    parser.add_argument(
        "--headline", action="store_true", help="only the headline run, at 1,000 cases"
    )
    args = parser.parse_args()
    settings, latency_s = (QUICK_SETTINGS, QUICK_LATENCY_S) if args.quick else (SETTINGS, LATENCY_S)
    # The openai client refuses to start without a key; the stub ignores it.
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-dummy")
    limits = Limits(quick=args.quick)
    headline_latency_s = QUICK_HEADLINE_LATENCY_S if args.quick else HEADLINE_LATENCY_S
    with tempfile.TemporaryDirectory() as tmp:
        corpus = _corpus(Path(tmp))
        _warm_up(corpus)
        if args.headline:
            headline(Path(tmp), 20 if args.quick else 1000, headline_latency_s, limits)
            return limits.exit_status()
        serial_s, serial = _run(corpus, 1, ResponseCache(enabled=False), settings, latency_s)
        cache = ResponseCache(Path(tmp) / "cache")
        parallel_s, parallel = _run(corpus, 8, cache, settings, latency_s)
        start = time.perf_counter()
        stub = StubServer().start()  # answers nothing: a cached re-run must not call
        try:
            config = LLMConfig(model=MODEL, api_base=stub.url, concurrency=8)
            cached = generate(corpus, settings, client=LLMClient(config, cache))
        finally:
            stub.stop()
        cached_s = time.perf_counter() - start
        if stub.request_count or [c.id for c in cached.cases] != [c.id for c in parallel.cases]:
            raise SystemExit("the cached re-run made a request or differs")

        headline(Path(tmp), 20 if args.quick else 200, headline_latency_s, limits)

    llm = serial.summary["llm"]
    written = serial.summary["written"]
    print(f"stub latency {latency_s * 1000:.0f} ms; {llm['calls']} calls per run; {written} cases")
    limits.check("concurrency 8 vs 1", Comparison(serial_s, parallel_s), 0.25)
    per_case = serial.summary["per_written_case"]
    tokens = llm["prompt_tokens"] + llm["completion_tokens"]
    print(
        f"per written case: {per_case['calls']} calls, {per_case['requests']} HTTP requests, "
        f"{per_case['tokens']} tokens ({tokens} tokens in all; the stub reports 11 prompt + "
        "7 completion tokens per reply)"
    )
    est = estimate(serial.plan)
    print(
        "estimated tokens per case with real prompts (characters / 4): "
        f"{(est.prompt_tokens + est.completion_tokens) / written:.0f}"
    )
    print(f"fully cached re-run: {cached_s * 1000:.0f} ms, 0 requests")
    return limits.exit_status()


if __name__ == "__main__":
    raise SystemExit(main())
