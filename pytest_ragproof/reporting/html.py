"""The self-contained HTML report of a results document (``ragproof.results/1``).

One file, no network: the page is the Jinja2 template ``templates/report/page.html.j2``
and its sections' templates beside it (autoescape on, :mod:`.templating`); CSS and
JavaScript are included from the same folder, charts are inline SVG, and a
Content-Security-Policy meta tag forbids every fetch (``default-src 'none'``),
so a report opened from a CI artifact cannot call anywhere.

Sections: summary and thresholds, pass and fail per kind and per question type
(stacked bars), aggregate tables and bar charts per selector with the pipelines
side by side, score distributions (a histogram per metric and kind), RAGET-style
component scores, the baseline comparison when ``results["baseline"]`` exists
(with a chart of each compared mean's change and its interval), and the per-case
table. Every chart is inline SVG drawn here (:mod:`.html_charts`, :mod:`.svg`),
readable without JavaScript. The
per-case table is drawn by the page's script from the data embedded as JSON in
a ``<script type="application/json">`` element (``<``, ``>`` and ``&`` written
as ``\\u003c``-style escapes, so no ``</script>`` can close it early); the
script writes every value with ``textContent``. It filters (text box, kind,
status, "pipelines differ"), sorts (click a header), opens a case's details
(question, expected answer, expected vs retrieved sources, failed thresholds,
one column per pipeline) and keeps that view in the URL fragment, e.g.
``report.html#filter=refund&status=failed&sort=status:rag_pipeline&dir=desc``.

When the run judged (``results["judges"]``), a section gives the judges' model,
calls, cache hits, tokens, cost (or "cost unknown"), the not-judged counts and a
dry-run estimate, and each case panel shows every judge's score and reasons
(:mod:`.judge_reasons`: per-claim verdicts with the supporting context, per-context
verdicts, the expected answer's claims, precision and recall), why a judge did
not judge the case, and a failed judge step with its error type and HTTP status.

Each text of a case (question, answer, expected answer, contexts, judge reasons, …)
is embedded up to :data:`~pytest_ragproof.defaults.REPORT_TEXT_CHARS` characters (a
retrieved context's up to :data:`~pytest_ragproof.defaults.REPORT_CONTEXT_CHARS`): a
longer one is cut, with a note beside it on the page naming its length and the results
JSON that holds it whole (:mod:`.html_text`).

With ``results["redacted"]`` no question, answer, expected answer, reference,
context text or judge reason (claims are the answer's text) is embedded, even if
the document carries some; judged scores, not-judged reasons and judge error
types stay.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragproof.defaults import REPORT_CONTEXT_CHARS
from pytest_ragproof.reporting import html_sections as sec
from pytest_ragproof.reporting.components import BASIS_CORRECTNESS, score_basis
from pytest_ragproof.reporting.html_aggregates import aggregates
from pytest_ragproof.reporting.html_charts import baseline_chart, distributions, pass_fail
from pytest_ragproof.reporting.html_text import Bound, full_text_place
from pytest_ragproof.reporting.judge_reasons import judge_error_text, judge_views
from pytest_ragproof.results.models import Case, Results
from pytest_ragproof.results.schema import as_model

__all__ = ["CSP", "case_data", "render_html"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
_KINDS = ("qa", "unanswerable", "injection")


def _run(case: Case, redacted: bool, cut: Bound) -> dict[str, Any]:
    return {
        "status": case.status,
        "answer": None if redacted else cut(case.answer),
        "retrieved_ids": case.retrieved_ids,
        "contexts": None
        if case.contexts is None
        else [
            {
                "id": c.id,
                "document_id": c.document_id,
                "text": None if redacted else cut(c.text, REPORT_CONTEXT_CHARS),
            }
            for c in case.contexts
        ],
        "metrics": dict(case.metrics),
        "failures": [
            {
                "expression": cut(f.expression),
                "metric": f.metric,
                "observed": f.observed,
                "bound": f.bound,
                "reason": cut(f.reason),
            }
            for f in case.failures
        ],
        "latency_s": case.latency_s,
        "error_type": cut(case.error_type),
        "judges": [_bound_view(v, cut) for v in judge_views(case, redacted=redacted)],
        "judge_error": cut(judge_error_text(case.judge_error)),
        "judge_usage": case.judge_usage,
    }


def _bound_view(view: dict[str, Any], cut: Bound) -> dict[str, Any]:
    """A judge's view with its claim and statement texts and its prompt shortened
    (a view is this module's own dict, not results data)."""
    view["prompt"] = cut(view.get("prompt"))
    for group in view.get("groups") or []:
        for item in group["items"]:
            item["text"] = cut(item["text"])
    return view


def case_data(results: Mapping[str, Any] | Results, *, source: str | None = None) -> dict[str, Any]:
    """What the page's script gets: cases grouped by (dataset, id), one run per pipeline.

    ``results``: the document, parsed or its typed model. Each text field is at most
    :data:`~pytest_ragproof.defaults.REPORT_TEXT_CHARS` characters (:mod:`.html_text`);
    ``source``, the results file the report was made from, is named in the note beside a
    shortened one.
    """
    doc = as_model(results)
    redacted = doc.redacted
    cut = Bound(full_text_place(source))
    grouped: dict[str, dict[str, Any]] = {}
    for case in doc.cases:
        key = f"{case.dataset}::{case.id}"
        entry = grouped.get(key)
        if entry is None:
            entry = grouped[key] = {
                "key": key,
                "id": case.id,
                "dataset": case.dataset,
                "kind": case.kind,
                "question_type": case.question_type,
                "tags": list(case.tags),
                "question": None if redacted else cut(case.question),
                "expected_answer": None if redacted else cut(case.expected_answer),
                "expected_source_ids": list(case.expected_source_ids),
                "reference_contexts": [] if redacted else [cut(t) for t in case.reference_contexts],
                "history": [
                    {"role": m.role, "content": None if redacted else cut(m.content)}
                    for m in case.conversation_history
                ],
                "adversarial_payload": None if redacted else cut(case.adversarial_payload),
                "canary": None if redacted else cut(case.canary),
                "runs": {},
            }
        entry["runs"][case.pipeline] = _run(case, redacted, cut)
    metrics = sorted({m for c in doc.cases for m in c.metrics}, key=sec.metric_order)
    kinds = sorted({c.kind for c in doc.cases}, key=_kind_order)
    return {
        "redacted": redacted,
        "pipelines": _pipelines(doc),
        "kinds": kinds,
        "metrics": metrics,
        "default_metric": _default_metric(metrics),
        "cases": sorted(grouped.values(), key=lambda c: (c["dataset"], c["id"])),
    }


def _kind_order(kind: str) -> tuple[int, str]:
    return (_KINDS.index(kind) if kind in _KINDS else len(_KINDS), kind)


def _default_metric(metrics: Sequence[str]) -> str:
    for preferred in ("hit@5", "recall@5"):
        if preferred in metrics:
            return preferred
    hits = [m for m in metrics if m.startswith("hit@")]
    return (hits or list(metrics) or [""])[0]


def _pipelines(doc: Results) -> list[str]:
    listed = list(doc.pipelines)
    return listed + sorted({c.pipeline for c in doc.cases} - set(listed))


def embed_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` survive literally."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _header(doc: Results, pipelines: Sequence[str]) -> dict[str, Any]:
    """What the page's header shows: datasets, pipelines, run id, versions, settings, notes."""
    datasets = [
        {
            "path": d.path,
            "state": "frozen" if d.frozen else "not frozen",
            "sha": d.sha256[:12],
            "cases": d.cases,
            "evaluated": d.cases if d.evaluated is None else d.evaluated,
        }
        for d in doc.datasets
    ]
    settings = doc.settings.model_dump(exclude_unset=True)  # as the document wrote them
    shown = ", ".join(
        f"{k}={'/'.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in sorted(settings.items())
        if v not in ([], None, "")
    )
    return {
        "datasets": datasets,
        "pipelines": ", ".join(pipelines) or "none",
        "run_id": doc.run_id,  # the id every output of the run carries
        "versions": ", ".join(f"{k} {v}" for k, v in sorted(doc.versions.items())),
        "settings": shown,
        "redacted": doc.redacted,
        "notes": list(doc.notes),
    }


def render_html(results: Mapping[str, Any] | Results, *, source: str | None = None) -> str:
    """The report as one HTML document (a string); ``results``: the document, parsed or its
    typed model; ``source``: the results file it is made from (named where a shortened text
    is whole, see :func:`case_data`)."""
    from markupsafe import Markup

    from pytest_ragproof.reporting.templating import render

    doc = as_model(results)
    pipelines = _pipelines(doc)
    data = case_data(doc, source=source)
    sections = [
        ("summary", "Summary", sec.summary(doc, pipelines)),
        ("pass-fail", "Pass and fail", pass_fail(doc, pipelines)),
        ("aggregates", "Aggregates", aggregates(doc, pipelines)),
        ("distributions", "Score distributions", distributions(doc, pipelines)),
        ("components", "Component scores (RAGET-style)", _components(doc, pipelines)),
    ]
    if doc.judges is not None:
        sections.insert(4, ("judges", "LLM judges", sec.judges(doc.judges)))
    if any(c.flaky for c in doc.cases):
        sections.insert(1, ("flaky", "Flaky cases", sec.flaky(doc)))
    if doc.baseline is not None:
        chart = baseline_chart(doc.baseline.aggregates)
        sections.append(("baseline", "Baseline comparison", sec.baseline(doc.baseline, chart)))
    sections.append(("cases", "Cases", render("report/cases.html.j2")))
    return str(
        render(
            "report/page.html.j2",
            csp=CSP,
            verdict="passed" if doc.passed else "failed",
            sections=[{"id": i, "title": t, "content": c} for i, t, c in sections],
            # The page's script reads the cases from here; embed_json leaves no "<", ">"
            # or "&" in it, so it is markup for a <script> element as it is.
            data_json=Markup(embed_json(data)),
            **_header(doc, pipelines),
        )
    )


_MAPPING = (
    "simple: generator, retriever, router; complex, situational: generator; "
    "distracting: generator, retriever, rewriter; double: generator, rewriter; "
    "conversational: rewriter; unanswerable cases: router"
)


def _components(doc: Results, pipelines: Sequence[str]) -> str:
    scores = sec.scores_of(doc)
    correctness = score_basis(scores) == BASIS_CORRECTNESS
    return sec.components(scores, pipelines, correctness=correctness, mapping=_MAPPING)
