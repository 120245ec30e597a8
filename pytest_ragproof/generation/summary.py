"""What a run reports: the summary object, its table, and progress lines.

The summary holds identifiers and numbers only -- never questions, answers,
corpus text or provider messages -- so it can be shared and archived freely.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import IO, TYPE_CHECKING, Any

from pytest_ragproof.generation.assemble import GENERATOR_VERSION
from pytest_ragproof.generation.injection import LIBRARY_VERSION
from pytest_ragproof.generation.types import DISCARD_REASONS, INJECTION_BASE_TYPE

if TYPE_CHECKING:
    from pytest_ragproof.generation.plan import Estimate, GenerationPlan
    from pytest_ragproof.generation.rounds import Rounds
    from pytest_ragproof.generation.runner import RequestOutcome
    from pytest_ragproof.llm import LLMStats

SUMMARY_FORMAT = "ragproof.generate-summary/1"


#: Why the rounds of a run stopped, as the stderr table says it.
STOP_TEXT = {
    "complete": "every requested count was met",
    "max_rounds": "--max-rounds reached",
    "corpus_exhausted": "no unused chunk left for the short kinds and types",
    "provider_errors": "only provider failures are left, and those are not topped up",
}


def build_summary(
    plan: GenerationPlan, rounds: Rounds, stats: LLMStats, *, model: str
) -> dict[str, Any]:
    """The JSON-ready summary of a finished run (keys in a fixed order)."""
    assembly = rounds.assembly
    rows: list[dict[str, Any]] = []
    total_discards: Counter[str] = Counter()
    for (kind, question_type), t in assembly.tally.items():
        discarded = {r: t.discarded[r] for r in DISCARD_REASONS if t.discarded[r]}
        total_discards.update(t.discarded)
        rows.append(
            {
                "kind": kind,
                "question_type": question_type,
                "requested": t.requested,
                "written": t.written,
                "discarded": discarded,
                "shortfall": t.shortfall,
            }
        )
    written = sum(t.written for t in assembly.tally.values())
    llm = stats.as_dict()
    tokens = stats.prompt_tokens + stats.completion_tokens
    settings = plan.settings
    corpus = plan.corpus
    return {
        "format": SUMMARY_FORMAT,
        "generator_version": GENERATOR_VERSION,
        "injection_library": LIBRARY_VERSION,
        "model": model,
        "seed": settings.seed,
        "language": plan.language,
        "language_source": plan.language_source,
        "settings": {
            "types": list(settings.types),
            "unanswerable_types": list(settings.unanswerable_types),
            "items_per_request": settings.items_per_request,
            "chunk_size": settings.chunk_size,
            "chunk_overlap": settings.chunk_overlap,
            "top_k": settings.top_k,
            "dedup_threshold": settings.dedup_threshold,
            "max_rounds": settings.max_rounds,
            "custom_generators": sorted({g.name for g in settings.generators}),
        },
        "corpus": {
            "documents": len(corpus.documents),
            "chunks": len(plan.chunks),
            "skipped": [
                {"id": s.id, "reason": s.reason, "detail": s.detail} for s in corpus.skipped
            ],
        },
        "requested": sum(t.requested for t in assembly.tally.values()),
        "written": written,
        "discarded": {r: total_discards[r] for r in DISCARD_REASONS if total_discards[r]},
        "shortfall": assembly.shortfall,
        "by_kind_and_type": rows,
        "planned_requests": len(plan.requests),
        "rounds": {
            "run": len(rounds.reports),
            "stopped": rounds.stopped,
            "requests": rounds.requests,
            "by_round": [
                {
                    "round": r.round,
                    "requests": r.requests,
                    "items": r.items,
                    "written": r.written,
                    "shortfall": r.shortfall,
                }
                for r in rounds.reports
            ],
            "out_of_chunks": [{"kind": k, "question_type": t} for k, t in rounds.out_of_chunks],
        },
        "llm": llm,
        "per_written_case": {
            "calls": round(stats.calls / written, 3) if written else None,
            "requests": round(stats.requests / written, 3) if written else None,
            "tokens": round(tokens / written, 1) if written else None,
        },
    }


def render_table(summary: dict[str, Any]) -> str:
    """The summary as text tables (tabulate), for stderr."""
    from tabulate import tabulate

    reasons = [r for r in DISCARD_REASONS if r in summary["discarded"]]
    rows = [
        [
            r["kind"],
            r["question_type"],
            r["requested"],
            r["written"],
            *(r["discarded"].get(reason, 0) for reason in reasons),
            r["shortfall"],
        ]
        for r in summary["by_kind_and_type"]
    ]
    rows.append(
        [
            "total",
            "",
            summary["requested"],
            summary["written"],
            *(summary["discarded"][reason] for reason in reasons),
            summary["shortfall"],
        ]
    )
    headers = ["kind", "type", "requested", "written", *reasons, "shortfall"]
    parts = [tabulate(rows, headers=headers, tablefmt="simple"), rounds_line(summary)]
    skipped = summary["corpus"]["skipped"]
    if skipped:
        skip_rows = [[_shown(s["id"]), s["reason"], s["detail"]] for s in skipped]
        parts.append(tabulate(skip_rows, headers=["skipped", "reason", "detail"]))
    llm = summary["llm"]
    cost = llm["cost_usd"]
    cost_text = f"${cost:.4f}" if cost is not None else "unknown"
    retries = sum(llm["retries"].values())
    parts.append(
        f"calls: {llm['calls']} ({llm['cache_hits']} from cache, {llm['requests']} HTTP "
        f"requests, {retries} retries, {llm['repairs']} repairs); tokens: "
        f"{llm['prompt_tokens']} prompt + {llm['completion_tokens']} completion; "
        f"cost: {cost_text}; language: {summary['language']} ({summary['language_source']})"
    )
    if llm.get("response_format"):
        probes = llm.get("probe_requests", 0)
        parts.append(f"response format: {llm['response_format']}; {probes} probe request(s)")
    failures = llm["failures"]
    if failures:
        waited = llm.get("waited_s") or 0.0
        lost = f"; {waited:.1f} s lost to failed requests and backoff" if waited else ""
        parts.append("failures: " + ", ".join(f"{k} x{v}" for k, v in failures.items()) + lost)
    return "\n\n".join(parts)


def rounds_line(summary: dict[str, Any]) -> str:
    """``rounds: 2 of at most 3 (written after each: 18, 20); stopped: ...``."""
    rounds = summary["rounds"]
    written = ", ".join(str(r["written"]) for r in rounds["by_round"])
    line = (
        f"rounds: {rounds['run']} of at most {summary['settings']['max_rounds']} "
        f"({rounds['requests']} requests; written after each: {written}); "
        f"stopped: {STOP_TEXT[rounds['stopped']]}"
    )
    if rounds["out_of_chunks"] and summary["shortfall"]:
        short = ", ".join(f"{r['kind']} {r['question_type']}" for r in rounds["out_of_chunks"])
        line += f"; out of chunks: {short}"
    return line


class ProgressPrinter:
    """Prints ``done/planned`` requests, verified items, discards and tokens to a stream.

    At most one line per ``interval_s`` seconds, plus the line of the last request.
    """

    def __init__(
        self, stream: IO[str], planned: int, stats: LLMStats, *, interval_s: float = 1.0
    ) -> None:
        self.stream = stream
        self.planned = planned
        self.stats = stats
        self.interval_s = interval_s
        self.done = 0
        self.verified = 0
        self.discarded = 0
        self._last = 0.0

    def __call__(self, outcome: RequestOutcome) -> None:
        self.done += 1
        for item in outcome.items:
            if item.discard is None:
                self.verified += 1
            else:
                self.discarded += 1
        now = time.monotonic()
        if self.done == self.planned or now - self._last >= self.interval_s:
            self._last = now
            print(self.line(), file=self.stream, flush=True)

    def start_round(self, number: int, requests: int, items: int) -> None:
        """A top-up round begins: its requests join the planned count."""
        self.planned += requests
        print(
            f"generate: round {number} tops up {items} item(s) with {requests} request(s)",
            file=self.stream,
            flush=True,
        )

    def line(self) -> str:
        tokens = self.stats.prompt_tokens + self.stats.completion_tokens
        return (
            f"generate: {self.done}/{self.planned} requests, {self.verified} items verified, "
            f"{self.discarded} discarded, {tokens} tokens"
        )


def render_plan(plan: GenerationPlan, est: Estimate, model: str | None) -> str:
    """The dry-run report: corpus, language, items and requests per kind/type, estimate."""
    from tabulate import tabulate

    corpus = plan.corpus
    requests: Counter[tuple[str, str]] = Counter()
    for request in plan.requests:
        for kind, _ in request.allocation:
            question_type = INJECTION_BASE_TYPE if kind == "injection" else request.question_type
            requests[(kind, question_type)] += 1
    rows = [
        [need.kind, need.question_type, need.n, requests[(need.kind, need.question_type)]]
        for need in plan.needs
        if need.n
    ]
    lines = [
        f"corpus: {len(corpus.documents)} document(s), {len(plan.chunks)} chunk(s), "
        f"{len(corpus.skipped)} skipped path(s)",
        f"language: {plan.language} ({plan.language_source})",
        f"model: {model or 'not configured (set RAGPROOF_GEN_MODEL or pass --model)'}",
        f"seed: {plan.settings.seed}; items per request: {plan.settings.items_per_request}",
        "",
        tabulate(rows, headers=["kind", "type", "items", "requests"], tablefmt="simple"),
    ]
    if corpus.skipped:
        skip_rows = [[_shown(s.id), s.reason, s.detail] for s in corpus.skipped]
        lines += ["", tabulate(skip_rows, headers=["skipped", "reason", "detail"])]
    lines += [
        "",
        f"estimated calls: {est.calls} ({est.generation_calls} generation, "
        f"{est.verification_calls} verification), before retries, repairs, cache hits "
        "and top-up rounds",
        f"estimated tokens (characters / 4): ~{est.prompt_tokens} prompt + "
        f"~{est.completion_tokens} completion",
    ]
    return "\n".join(lines)


def _shown(name: str) -> str:
    # File names may hold control characters; keep one table row per path.
    return name if name.isprintable() else name.encode("unicode_escape").decode("ascii")
