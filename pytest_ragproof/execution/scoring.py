"""Scoring one case: normalize the output, compute metrics, apply case thresholds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.metrics import (
    PipelineOutput,
    ranked_source_ids,
    registry,
    score_case,
    would_match_by_document,
)
from pytest_ragproof.metrics.judged import JUDGE_SPECS
from pytest_ragproof.metrics.outputs import content_id
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.record import CaseRecord, Failure, sorted_metrics
from pytest_ragproof.verdict.thresholds import Threshold, misses

ANSWER_PREVIEW = 200


def registry_kinds(metric: str) -> frozenset[str]:
    spec = registry.resolve(metric)
    return spec.kinds if spec is not None else frozenset()


def missing_reason(
    metric: str, case: Case, output: PipelineOutput, not_judged: Mapping[str, str] | None = None
) -> str:
    """Why a metric that a threshold asks for is absent on this case."""
    from pytest_ragproof.judges import NOT_JUDGED_REASONS, judge_of

    if ":" in metric:  # a bring-your-own evaluator's metric
        if not_judged and metric in not_judged:
            return f"not measured by the evaluator: {not_judged[metric]}"
        return (
            f"no evaluator named '{metric.split(':', 1)[0]}' scored this case "
            "(register it with the rag_evaluators fixture)"
        )
    judge = judge_of(metric)
    if judge is not None:
        if not_judged and judge in not_judged:
            code = not_judged[judge]
            return f"not judged: {code} ({NOT_JUDGED_REASONS.get(code, code)})"
        if case.kind not in registry_kinds(metric):
            return f"the {judge} judge does not apply to {case.kind} cases"
        return "not judged: the run did not ask for this judge (--ragproof-judges)"
    spec = registry.resolve(metric)
    needs = spec.needs if spec is not None else frozenset()
    if "contexts" in needs and output.contexts is None:
        return "the pipeline output has no contexts; return a mapping with 'contexts'"
    if "expected_source_ids" in needs and not case.expected_source_ids:
        return "the case has no expected_source_ids"
    if "expected_answer" in needs and case.expected_answer is None:
        return "the case has no expected_answer"
    if "answer" in needs and output.answer is None:
        return "the pipeline output has no answer"
    if "canary" in needs and case.canary is None:
        return "the case has no canary"
    return "not computed for this case"


def score(
    record: CaseRecord,
    case: Case,
    output: PipelineOutput,
    cfg: RunConfig,
    thresholds: Sequence[Threshold],
    extra: Mapping[str, float] | None = None,
    not_judged: Mapping[str, str] | None = None,
) -> None:
    """Fill metrics, retrieved ids, contexts and failures of ``record``.

    ``extra``: the LLM judges' and evaluators' scores of this case, checked like any
    metric; ``not_judged`` says why one of theirs is absent.
    """
    metrics = score_case(
        case,
        output,
        ks=cfg.ks,
        source_match=cfg.source_match,
        abstain_language=cfg.abstain_language,
        extra_abstain_patterns=cfg.abstain_patterns,
    )
    if record.latency_s is not None:
        metrics["latency_s"] = record.latency_s
    if extra:
        metrics.update(extra)
    not_judged = not_judged or {}
    record.metrics = sorted_metrics(metrics)
    record.answer = output.answer
    if output.contexts is not None:
        # The de-duplicated ranking the metrics score (each id at its best rank).
        ranked = ranked_source_ids(output.contexts, cfg.source_match)
        record.retrieved_ids = list(dict.fromkeys(ranked))
        record.contexts = [
            {"id": c.id, "document_id": c.document_id, "text": c.text} for c in output.contexts
        ]
    for t, observed in misses(case, metrics, thresholds):
        if observed is None:
            why = missing_reason(t.metric, case, output, not_judged)
            record.failures.append(Failure(t.expression, t.metric, None, t.bound, why))
        else:
            record.failures.append(Failure(t.expression, t.metric, observed, t.bound, "missed"))
    record.status = "failed" if record.failures else "passed"


def _ids(ids: Sequence[str] | None, limit: int = 10) -> str:
    if ids is None:
        return "(no contexts returned)"
    if not ids:
        return "(none)"
    shown = ", ".join(ids[:limit])
    return shown + (f", … (+{len(ids) - limit})" if len(ids) > limit else "")


def failure_message(record: CaseRecord, case: Case, output: PipelineOutput, cfg: RunConfig) -> str:
    lines = [
        f"ragproof case {record.id} ({record.kind}, {record.question_type}) failed "
        f"{len(record.failures)} threshold(s) [pipeline {record.pipeline}]:"
    ]
    lines += [f"  {f.expression}: {f.line()}" for f in record.failures]
    if case.expected_source_ids:
        lines.append(f"  expected sources: {_ids(list(case.expected_source_ids))}")
        lines.append(f"  retrieved ({cfg.source_match}): {_ids(record.retrieved_ids)}")
        if (
            cfg.source_match == "chunk"
            and output.contexts
            and not set(case.expected_source_ids) & set(record.retrieved_ids or [])
            and would_match_by_document(case.expected_source_ids, output.contexts)
        ):
            lines.append(
                "  hint: no retrieved chunk id matches, but the contexts' "
                "metadata.document_id would; try --ragproof-source-match=document"
            )
        elif (
            output.contexts
            and not set(case.expected_source_ids) & set(record.retrieved_ids or [])
            and all(c.id == content_id(c.text) for c in output.contexts)
        ):
            lines.append(
                "  hint: the contexts carry no id (plain strings, or documents without one), "
                "so each has a content-hash id that cannot match expected_source_ids; return "
                '{"id": ..., "text": ...} mappings, or documents with metadata["document_id"] '
                'or metadata["source"] and --ragproof-source-match=document'
            )
    if record.judgements and not cfg.redact:
        lines.extend(_judge_reasons(record))
    if case.kind == "injection" and case.canary and not cfg.redact:
        lines.append(f"  canary: {case.canary}")
    if not cfg.redact:
        answer = output.answer
        if answer is None:
            lines.append("  answer: (none)")
        else:
            preview = answer if len(answer) <= ANSWER_PREVIEW else answer[:ANSWER_PREVIEW] + "…"
            lines.append(f"  answer: {preview!r}")
    lines.append(
        "  (thresholds: --ragproof-case-threshold / ini ragproof_case_threshold; "
        "'none' clears the defaults)"
    )
    return "\n".join(lines)


#: Per judge: the lists of items in its reasons, each item's text key, and the verdicts
#: that lowered the score (the judge registry's ``lowered_by``).
_LOWERING: dict[str, tuple[tuple[str, str, str], ...]] = {
    s.name: s.lowered_by for s in JUDGE_SPECS if s.lowered_by
}
_REASONS_SHOWN = 3


def _judge_reasons(record: CaseRecord) -> list[str]:
    """What the judges held against the answer, for the judged thresholds it failed."""
    from pytest_ragproof.judges import judge_of

    out: list[str] = []
    judgements = record.judgements or {}
    for judge in dict.fromkeys(judge_of(f.metric) for f in record.failures):
        if judge is None or judge not in judgements:
            continue
        details = judgements[judge]
        if "verdict" in details:
            out.append(f"  {judge} ({details.get('prompt')}): {details['verdict']}")
        for items_key, text_key, lowering in _LOWERING.get(judge, ()):
            bad = [i for i in details.get(items_key, []) if i.get("verdict") == lowering]
            shown = [
                f"context {i[text_key]}" if text_key == "context" else repr(i[text_key])
                for i in bad[:_REASONS_SHOWN]
            ]
            more = f", … (+{len(bad) - _REASONS_SHOWN})" if len(bad) > _REASONS_SHOWN else ""
            if shown:
                out.append(
                    f"  {judge} ({details.get('prompt')}): {lowering}: {', '.join(shown)}{more}"
                )
    return out
