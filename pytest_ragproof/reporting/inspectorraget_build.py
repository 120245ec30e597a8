"""One InspectorRAGet experiment document from one results document (:class:`Builder`).

The mapping itself, field by field, as :mod:`.inspectorraget` describes it: models,
tasks, documents, evaluations with their annotations, the declared metrics, the name
and description. The metric kinds and annotation values come from
:mod:`.inspectorraget_metrics`, people's labels from :mod:`.inspectorraget_people`;
validating the result and writing files is :mod:`.inspectorraget`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pytest_ragproof.reporting.inspectorraget_format import InspectorRagetFormatError
from pytest_ragproof.reporting.inspectorraget_metrics import (
    FAILURES_METRIC,
    REASONS_SUFFIX,
    RETRIEVED_METRIC,
    annotation_value,
    case_metrics,
    declare_metrics,
    failure_line,
    metric_kinds,
)
from pytest_ragproof.reporting.judge_reasons import judge_error_text, judge_views, reason_text
from pytest_ragproof.vocabulary import KINDS

if TYPE_CHECKING:
    from pytest_ragproof.reporting.inspectorraget_people import People
    from pytest_ragproof.results.models import Case, Results

__all__ = ["REDACTED", "WORKER", "Builder", "export_time", "judge_order"]

REDACTED = "[redacted]"
WORKER = "system"


def export_time(value: datetime | str | None) -> str:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InspectorRagetFormatError(
                f"timestamp {value!r} is not ISO 8601 (e.g. 2024-05-01T12:00:00Z)"
            ) from None
    moment = value or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Builder:
    def __init__(self, results: Results, people: People | None = None) -> None:
        self.results = results
        self.people = people
        self.redacted = results.redacted
        self.delivery = results.settings.injection_delivery
        self.cases: list[Case] = list(results.cases)
        self.pipelines: list[str] = list(
            results.pipelines or sorted({c.pipeline for c in self.cases})
        )
        # task key (dataset, id) -> records by pipeline, in first-seen order
        self.by_task: dict[tuple[str, str], dict[str, Case]] = {}
        for case in self.cases:
            self.by_task.setdefault((case.dataset, case.id), {})[case.pipeline] = case
        ids = [cid for _, cid in self.by_task]
        clash = len(set(ids)) != len(ids)
        self.task_ids = {key: (f"{key[0]}::{key[1]}" if clash else key[1]) for key in self.by_task}
        self.texts: dict[str, str] = {}
        self.titles: dict[str, str] = {}
        self.left_out: set[str] = set()
        self.not_run = 0
        self.reasons: set[str] = set()  # judges whose reasons some evaluation carries
        present: set[str] = {c.kind for c in self.cases}
        self.kinds = [k for k in KINDS if k in present] + sorted(present - set(KINDS))

    def text(self, value: Any) -> str:
        return REDACTED if self.redacted else str(value)

    # -- documents -------------------------------------------------------------
    def collect_documents(self) -> None:
        for case in self.cases:
            for ctx in case.contexts or []:
                cid = str(ctx.id)
                self.titles.setdefault(cid, ctx.document_id or cid)
                if ctx.text and ctx.text.strip():
                    self.texts.setdefault(cid, ctx.text)
        for case in self.cases:
            expected = case.expected_source_ids
            refs = [r for r in case.reference_contexts if r and r.strip()]
            if len(refs) == len(expected):
                pairs = list(zip(expected, refs, strict=True))
            elif len(expected) == 1 and refs:
                pairs = [(expected[0], "\n\n".join(refs))]
            else:
                pairs = []
            for sid, ref in pairs:
                self.texts.setdefault(sid, ref)
            for sid in expected:
                self.titles.setdefault(sid, sid)

    def has_document(self, doc_id: str) -> bool:
        if self.redacted or doc_id in self.texts:
            return True
        self.left_out.add(doc_id)
        return False

    # -- tasks -----------------------------------------------------------------
    def task(self, key: tuple[str, str], records: Mapping[str, Case]) -> dict[str, Any]:
        first = next(iter(records.values()))
        utterances = [
            {
                "speaker": "agent" if m.role == "assistant" else "user",
                "text": self.text("" if m.content is None else m.content),
            }
            for m in first.conversation_history
        ]
        question = first.question
        asked = question if question is not None else ""
        payload = first.adversarial_payload
        if payload and first.kind == "injection" and self.delivery == "append":
            asked = f"{asked}\n\n{payload}"  # exactly what the pipeline received
        utterances.append({"speaker": "user", "text": self.text(asked)})
        unique = [d for d in dict.fromkeys(first.expected_source_ids) if self.has_document(d)]
        answer = first.expected_answer
        planted = {
            name: value
            for name, value in (
                ("adversarial_payload", first.adversarial_payload),
                ("canary", first.canary),
            )
            if value is not None and not self.redacted
        }
        return {
            **planted,
            "task_id": self.task_ids[key],
            "task_type": "rag",
            "category": first.kind,
            "question_type": first.question_type,
            "tags": list(first.tags),
            "dataset": key[0],
            "input": utterances,
            "contexts": [{"document_id": d} for d in unique],
            "targets": [] if answer is None else [{"text": self.text(answer)}],
        }

    # -- evaluations -----------------------------------------------------------
    def evaluation(
        self,
        task_id: str,
        pipeline: str,
        record: Case | None,
        kinds: Mapping[str, str],
    ) -> dict[str, Any]:
        if record is None:
            return {
                "task_id": task_id,
                "model_id": pipeline,
                "model_response": "[not run in this session]",
                "annotations": {"status": {WORKER: {"value": "not_run"}}},
            }
        status = record.status
        notes: dict[str, Any] = {"status": status}
        for name, value in case_metrics(record).items():
            notes[name] = annotation_value(name, value, kinds[name])
        failures = [failure_line(f) for f in record.failures]
        if status == "error":
            judge_error = judge_error_text(record.judge_error)
            failures.insert(
                0,
                f"error: {record.error_type or 'unknown'}"
                + (f": {judge_error}" if judge_error else ""),
            )
        if not self.redacted:
            for view in judge_views(record, redacted=False):
                self.reasons.add(view["judge"])
                notes[view["judge"] + REASONS_SUFFIX] = reason_text(view)
        notes[FAILURES_METRIC] = "; ".join(failures) or "none"
        if record.retrieved_ids is not None:
            notes[RETRIEVED_METRIC] = ", ".join(record.retrieved_ids) or "(none)"
        answer = record.answer
        if status == "error" and answer is None:
            response = f"[error: {record.error_type or 'unknown'}]"
        elif answer is None:
            response = REDACTED if self.redacted else "[no answer]"
        else:
            response = self.text(answer)
        out: dict[str, Any] = {
            "task_id": task_id,
            "model_id": pipeline,
            "model_response": response,
        }
        contexts = record.contexts
        if contexts is not None:  # what this pipeline retrieved, in rank order
            ids = dict.fromkeys(str(c.id) for c in contexts)
            out["contexts"] = [{"document_id": d} for d in ids if self.has_document(d)]
        out["annotations"] = {k: {WORKER: {"value": v}} for k, v in notes.items()}
        if self.people is not None:
            self.people.annotate(record, out["annotations"])
        return out

    def build(self, timestamp: datetime | str | None) -> dict[str, Any]:
        self.collect_documents()
        tasks = [self.task(key, recs) for key, recs in self.by_task.items()]
        kinds = metric_kinds(self.cases)
        evaluations = []
        for key, records in self.by_task.items():
            for pipeline in self.pipelines:
                self.not_run += pipeline not in records
                evaluations.append(
                    self.evaluation(self.task_ids[key], pipeline, records.get(pipeline), kinds)
                )
        metrics = declare_metrics(
            self.cases,
            kinds,
            not_run=bool(self.not_run),
            case_kinds=self.kinds,
            reasons=sorted(self.reasons, key=judge_order),
        )
        self.human: list[str] = []
        if self.people is not None:
            from pytest_ragproof.reporting.inspectorraget_format import UNSCORED_STATUSES

            scored = (
                e["annotations"]["status"][WORKER]["value"] not in UNSCORED_STATUSES
                for e in evaluations
            )
            declared = self.people.declare(evaluations, scored)
            self.human = [m["name"] for m in declared]
            metrics += declared
        used = {c["document_id"] for t in tasks for c in t["contexts"]}
        used.update(c["document_id"] for e in evaluations for c in e.get("contexts", []))
        documents = [
            {
                "document_id": d,
                "text": REDACTED if self.redacted else self.texts[d],
                "title": self.titles.get(d, d),
            }
            for d in sorted(used)
        ]
        return {
            "name": self.name(),
            "description": self.describe(kinds),
            "timestamp": export_time(timestamp),
            "models": [
                {"model_id": p, "name": p, "owner": "pytest-ragproof"} for p in self.pipelines
            ],
            "metrics": metrics,
            "documents": documents,
            "filters": ["category", "question_type", "tags", "dataset"],
            "tasks": tasks,
            "evaluations": evaluations,
        }

    def name(self) -> str:
        paths = [d.path for d in self.results.datasets]
        name = "pytest-ragproof: " + (", ".join(p for p in paths if p) or "results")
        return f"{name} ({self.kinds[0]} cases)" if len(self.kinds) == 1 else name

    def describe(self, kinds: Mapping[str, str]) -> str:
        verdict = "passed" if self.results.passed else "failed"
        parts = [
            f"pytest-ragproof run ({verdict}): {len(self.by_task)} case(s) x "
            f"{len(self.pipelines)} pipeline(s). Tasks are cases (category = kind); models are "
            "pipelines; task contexts are the expected sources, each result's contexts the "
            "sources that pipeline retrieved; latency is in milliseconds (latency_ms)."
        ]
        if self.left_out:
            shown = ", ".join(sorted(self.left_out)[:10])
            more = f" (+{len(self.left_out) - 10} more)" if len(self.left_out) > 10 else ""
            parts.append(
                f"{len(self.left_out)} source id(s) without known text are left out of documents "
                f"and task contexts: {shown}{more}."
            )
        if self.redacted:
            parts.append(
                f"Redacted run: questions, answers and document texts are '{REDACTED}' "
                "(InspectorRAGet requires text)."
            )
        if self.reasons:
            parts.append(
                "LLM judges' reasons are text metrics (instance view): "
                + ", ".join(j + REASONS_SUFFIX for j in sorted(self.reasons, key=judge_order))
                + "."
            )
        if self.human:
            parts.append(
                "People's labels are human metrics ("
                + ", ".join(self.human)
                + "): each reviewer is a worker human:<reviewer>, beside the judge as worker "
                "system; a task's aggregate of one counts the judge as one more vote."
            )
        text_metrics = [n for n, k in kinds.items() if k == "text"]
        if text_metrics:
            parts.append(
                "Metrics some scored case lacks are text (instance view only): "
                + ", ".join(text_metrics)
                + "."
            )
        if any(c.status == "error" for c in self.cases) or self.not_run:
            parts.append(
                "Evaluations with status error or not_run have no scores; InspectorRAGet lists "
                "their tasks as disqualified."
            )
        return " ".join(parts)


def judge_order(name: str) -> tuple[int, str]:
    from pytest_ragproof.judges import JUDGES

    return (JUDGES.index(name) if name in JUDGES else len(JUDGES), name)
