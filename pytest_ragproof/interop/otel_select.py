"""Which traces become cases: time window, service, redaction, near-duplicates, sample, cap.

In this order, each step counted in the summary:

1. traces with no recognisable question (named by trace id) and traces whose text
   is too long are skipped;
2. ``--since`` (inclusive) / ``--until`` (exclusive) on the root span's start time,
   ``--service`` on its ``service.name``;
3. ``--redact PATTERN`` (regular expressions, repeatable; each match becomes
   ``[REDACTED]``) and ``--redact-pii`` (e-mail addresses become ``[EMAIL]``, phone
   numbers — 9 to 15 digits, optionally with ``+``, spaces, dots, dashes and
   parentheses — become ``[PHONE]``) rewrite every text of the case: question,
   history, production answer, document ids and service name;
4. near-duplicate questions (equal after Unicode NFKC, case folding and dropping
   everything but letters and digits) are collapsed into the earliest trace; the kept
   case counts the others in ``metadata.trace.repeats``;
5. ``--sample N --seed S``: the N traces whose sha256(``S`` NUL trace id) are lowest
   (the same N whatever the file order);
6. ``--max-cases N``: the N earliest.

Cases are written in start-time order (trace id on ties).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_ragproof.errors import DatasetError
from pytest_ragproof.interop.drafts import Draft
from pytest_ragproof.interop.otel import Candidate, Trace, assemble
from pytest_ragproof.interop.report import FieldReport

MAX_NAMED = 20  # trace ids named per reason; the count is always complete

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d .()-]{7,}\d(?!\w)")


def _phone(match: re.Match[str]) -> str:
    digits = sum(ch.isdigit() for ch in match.group())
    return "[PHONE]" if 9 <= digits <= 15 else match.group()


@dataclass
class Selection:
    """The choices of ``ragproof import --from otel`` (all optional)."""

    since_ns: int | None = None
    until_ns: int | None = None
    services: frozenset[str] = frozenset()
    sample: int | None = None
    seed: int = 0
    max_cases: int | None = None
    redact: list[re.Pattern[str]] = field(default_factory=list)
    redact_pii: bool = False

    def redactor(self) -> Callable[[str], str]:
        def apply(text: str) -> str:
            for pattern in self.redact:
                text = pattern.sub("[REDACTED]", text)
            if self.redact_pii:
                text = PHONE.sub(_phone, EMAIL.sub("[EMAIL]", text))
            return text

        return apply


def parse_time(value: str, option: str) -> int:
    """An ISO 8601 date or date-time (UTC when it names no offset) as Unix nanoseconds."""
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(
            f"{option} {value[:40]!r} is not an ISO 8601 date or time; "
            "write e.g. 2026-11-01 or 2026-11-01T09:30:00Z"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp()) * 1_000_000_000 + when.microsecond * 1000


def compile_patterns(patterns: list[str] | None) -> list[re.Pattern[str]]:
    out: list[re.Pattern[str]] = []
    for i, pattern in enumerate(patterns or [], start=1):
        try:
            out.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(
                f"--redact pattern {i} is not a regular expression ({exc.msg} at {exc.pos})"
            ) from None
    return out


def question_key(text: str) -> str:
    """The near-duplicate key of a question: NFKC, case-folded, letters and digits only."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join("".join(ch if ch.isalnum() else " " for ch in folded).split())


@dataclass
class Outcome:
    """What selection kept and the counts of the summary."""

    n_traces: int
    kept: list[Candidate]
    repeats: dict[str, int]
    skipped: dict[str, list[str]]  # reason -> trace ids

    def skip(self, reason: str, trace_id: str) -> None:
        self.skipped.setdefault(reason, []).append(trace_id)

    def lines(self, n_spans: int, where: str) -> list[str]:
        n_skipped = sum(len(ids) for ids in self.skipped.values())
        out = [
            f"traces: {self.n_traces} read ({n_spans} span(s) {where}), "
            f"{self.n_traces - n_skipped} kept, {n_skipped} skipped"
        ]
        for reason, ids in self.skipped.items():
            named = ""
            if reason.startswith(("no recognisable", "a question", "not a valid")):
                named = ": " + ", ".join(sorted(ids)[:MAX_NAMED])
                if len(ids) > MAX_NAMED:
                    named += f", … ({len(ids) - MAX_NAMED} more)"
            out.append(f"  {len(ids)}: {reason}{named}")
        return out


def select(traces: dict[str, Trace], choice: Selection) -> Outcome:
    """The candidates ``choice`` keeps, in start order; ``traces`` is emptied."""
    skipped: dict[str, list[str]] = {}
    n_traces = len(traces)

    def skip(reason: str, trace_id: str) -> None:
        skipped.setdefault(reason, []).append(trace_id)

    found: list[Candidate] = []
    while traces:  # emptied as it goes, so the candidates reuse the traces' memory
        _, trace = traces.popitem()
        got = assemble(trace)
        if isinstance(got, str):
            skip(got, trace.trace_id)
        else:
            found.append(got)
    found.sort(key=lambda c: (c.start_ns, c.trace_id))
    window: list[Candidate] = []
    for cand in found:
        if choice.since_ns is not None and cand.start_ns < choice.since_ns:
            skip("started before --since", cand.trace_id)
        elif choice.until_ns is not None and cand.start_ns >= choice.until_ns:
            skip("started at or after --until", cand.trace_id)
        elif choice.services and cand.service not in choice.services:
            skip("another service than --service", cand.trace_id)
        else:
            window.append(cand)
    if choice.redact or choice.redact_pii:
        redact = choice.redactor()
        for cand in window:
            _redact(cand, redact)
    unique: dict[str, Candidate] = {}
    repeats: dict[str, int] = {}
    for cand in window:
        first = unique.setdefault(question_key(cand.question), cand)
        if first is not cand:
            repeats[first.trace_id] = repeats.get(first.trace_id, 0) + 1
            skip("a near-duplicate of an earlier trace's question", cand.trace_id)
    kept = list(unique.values())
    if choice.sample is not None and len(kept) > choice.sample:
        seed = str(choice.seed).encode()

        def rank(cand: Candidate) -> bytes:
            return hashlib.sha256(seed + b"\0" + cand.trace_id.encode()).digest()

        chosen = {c.trace_id for c in sorted(kept, key=rank)[: choice.sample]}
        for cand in kept:
            if cand.trace_id not in chosen:
                skip("not in the --sample", cand.trace_id)
        kept = [c for c in kept if c.trace_id in chosen]
    if choice.max_cases is not None and len(kept) > choice.max_cases:
        for cand in kept[choice.max_cases :]:
            skip("over --max-cases", cand.trace_id)
        kept = kept[: choice.max_cases]
    return Outcome(n_traces, kept, repeats, skipped)


def _redact(cand: Candidate, redact: Callable[[str], str]) -> None:
    cand.question = redact(cand.question)
    cand.history = [{**m, "content": redact(m["content"])} for m in cand.history]
    if cand.answer is not None:
        cand.answer = redact(cand.answer)
    if cand.service is not None:
        cand.service = redact(cand.service)
    for doc in [*cand.retrieved, *cand.reranked]:
        doc["id"] = redact(doc["id"])


def draft_of(cand: Candidate, repeats: int) -> Draft:
    """The draft case of a kept trace: pending review, what production did in metadata."""
    trace: dict[str, Any] = {
        "trace_id": cand.trace_id,
        "span_ids": cand.span_ids,
        "timestamp": cand.timestamp,
    }
    if cand.service is not None:
        trace["service"] = cand.service
    if cand.answer is not None:
        trace["answer"] = cand.answer
    trace["retrieved"] = cand.retrieved
    if cand.reranked:
        trace["reranked"] = cand.reranked
    if repeats:
        trace["repeats"] = repeats
    draft = Draft(
        line=cand.line,
        question=cand.question,
        id=f"otel-{cand.trace_id}",
        history=cand.history,
        metadata={"trace": trace},
        extra={"review_status": "pending"},
    )
    if cand.history:
        draft.question_type = "conversational"
    return draft


class NothingKept(DatasetError):
    """No trace of the files became a case (the summary says why)."""


def import_traces(
    paths: list[Path],
    report: FieldReport,
    choice: Selection,
    read: Callable[[], tuple[dict[str, Trace], int, str]] | None = None,
) -> list[str]:
    """The canonical texts of the cases of the traces in ``paths`` that ``choice`` keeps
    (validated as a dataset, in start order); counts in ``report``. ``read``, when given,
    reads the traces instead (``--from phoenix``): traces, spans read, where from.

    A kept trace whose case is invalid (a control character in its question, say) is
    skipped and named, not the end of the import: production text is not curated.
    """
    from pytest_ragproof.fileio import paused_gc
    from pytest_ragproof.interop.otel import read_traces

    with paused_gc():  # hundreds of thousands of small acyclic objects (see paused_gc)
        if read is None:
            traces, n_spans = read_traces(paths)
            where = f"in {len(paths)} file(s)"
            source = ", ".join(str(p) for p in paths)
        else:
            traces, n_spans, source = read()
            where = f"from {source}"
        outcome = select(traces, choice)
        del traces
        report.n_read = outcome.n_traces
        report.unit = "trace(s)"
        drafts: list[Draft] = []
        mapped: dict[str, tuple[str, bool, bool, bool, bool]] = {}
        for cand in outcome.kept:  # from here on only the drafts are kept (memory)
            drafts.append(draft_of(cand, outcome.repeats.get(cand.trace_id, 0)))
            mapped[f"otel-{cand.trace_id}"] = (
                cand.question_from,
                bool(cand.history),
                cand.answer is not None,
                bool(cand.retrieved),
                bool(cand.reranked),
            )
        outcome.kept = []
        try:
            texts = _validated(drafts, report, outcome, source)
        finally:  # the summary says why, also when nothing was kept
            report.summary = outcome.lines(n_spans, where)
    # Phoenix's API returns no resource: no service.name
    ids = "trace and span ids, start time" + (", service.name" if read is None else "")
    for case_id, _ in texts:
        _map(report, ids, *mapped[case_id])
    report.note(
        f"{len(texts)} case(s) are review_status pending, with no expected answer or "
        "expected sources: a reviewer gives them (what production did is in metadata.trace)"
    )
    return [text for _, text in texts]


CHUNK = 5000
"""Cases validated at once: the texts are kept, each chunk's case objects are not."""


def _validated(
    drafts: list[Draft], report: FieldReport, outcome: Outcome, source: str
) -> list[tuple[str, str]]:
    """(id, canonical text) of the drafts' cases, validated ``CHUNK`` at a time (their ids
    are trace ids, unique across chunks); a chunk that fails is validated again to name
    each invalid case, which is skipped. ``drafts`` is emptied as it goes (memory)."""
    texts: list[tuple[str, str]] = []
    drafts.reverse()  # popped from the end, in order
    while drafts:
        chunk = [drafts.pop() for _ in range(min(CHUNK, len(drafts)))]
        for case_kind, case_id, text in _chunk(chunk, report, outcome, source):
            report.kinds[case_kind] += 1
            texts.append((case_id, text))
    if not texts:
        raise NothingKept(
            "no trace could be imported (see the skipped traces above)",
            source=source,
            hint="check that the files are traces of your RAG service (docs/traces.md)",
        )
    return texts


def _chunk(
    drafts: list[Draft], report: FieldReport, outcome: Outcome, source: str
) -> list[tuple[str, str, str]]:
    from pytest_ragproof.dataset.io import load_dataset
    from pytest_ragproof.dataset.records import Builder
    from pytest_ragproof.interop.build import record_of

    records = [r for r in (record_of(d, "otel", None, report) for d in drafts) if r is not None]
    try:
        dataset = load_dataset(records)
    except DatasetError:
        errors: list[DatasetError] = []
        builder = Builder(source, errors)
        builder.read([(None, r) for r in records], None, from_csv=False)
        builder.validate()
        bad: dict[int, str] = {}
        for error in errors:
            bad.setdefault((error.record or 1) - 1, error.reason)
        for index, reason in bad.items():
            trace_id = str(records[index]["id"]).removeprefix("otel-")
            outcome.skip(f"not a valid case ({reason})", trace_id)
        records = [r for i, r in enumerate(records) if i not in bad]
        if not records:
            return []
        dataset = load_dataset(records)
    cases = zip(dataset.cases, dataset.canonical_cases, strict=True)
    return [(case.kind, case.id, text) for case, text in cases]


def _map(
    report: FieldReport,
    ids: str,
    question_from: str,
    history: bool,
    answer: bool,
    retrieved: bool,
    reranked: bool,
) -> None:
    report.map(question_from, "question")
    if history:
        report.map("earlier user/assistant messages of that LLM span", "conversation_history")
    report.map(ids, "metadata.trace")
    if answer:
        report.map("the production answer", "metadata.trace.answer (not expected_answer)")
    if retrieved:
        report.map(
            "retrieval.documents (id, rank, score)",
            "metadata.trace.retrieved (not expected_source_ids)",
        )
    if reranked:
        report.map("reranker.output_documents", "metadata.trace.reranked")
