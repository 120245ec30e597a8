"""The static sections of the HTML report, rendered on the server side.

Each section is a template in ``templates/report/`` (autoescape on, :mod:`.templating`);
this module gathers the values it shows. None of these sections contains dataset text
(questions, answers, contexts), only ids, names and numbers, so they are the same with
and without redaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from pytest_ragproof.judges import NOT_JUDGED_REASONS
from pytest_ragproof.reporting.components import COMPONENTS, component_scores, typed_scores
from pytest_ragproof.reporting.template_filters import cost_text, num
from pytest_ragproof.reporting.templating import render

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Baseline, ComponentScore, JudgeTotals, Results

__all__ = [
    "baseline",
    "components",
    "cost_text",
    "flaky",
    "judges",
    "metric_order",
    "num",
    "scores_of",
    "summary",
]


def metric_order(name: str) -> tuple[str, int]:
    stem, _, k = name.partition("@")
    return (stem, int(k) if k.isdigit() else 0)


_COUNTED = ("passed", "failed", "error")


def summary(doc: Results, pipelines: Sequence[str]) -> Markup:
    """The counts per pipeline, then every threshold row with its verdict."""
    rows = []
    for p in pipelines:
        mine = [c for c in doc.cases if c.pipeline == p]
        passed, failed, error = (sum(c.status == s for c in mine) for s in _COUNTED)
        rate = passed / len(mine) if mine else None
        rows.append([p, len(mine), passed, failed, error, num(rate)])
    return render("report/summary.html.j2", summary=rows, thresholds=_thresholds(doc))


def flaky(doc: Results) -> Markup:
    """``--ragproof-repeat``: the cases some but not all of whose repeats passed."""
    rows = [
        {
            "pipeline": c.pipeline,
            "id": c.id,
            "kind": c.kind,
            "status": c.status,
            "passed": c.repeats.passed,
            "n": c.repeats.n,
            "pass_rate": c.repeats.pass_rate,
            "errors": ", ".join(c.repeats.error_types) or "–",
        }
        for c in doc.cases
        if c.repeats is not None and c.flaky
    ]
    settings = doc.settings
    return render(
        "report/flaky.html.j2",
        rows=rows,
        repeat=settings.repeat,
        min_pass_rate=settings.min_pass_rate,
    )


_QUIET = ("no data", "no cases", "not selected")


def _thresholds(doc: Results) -> list[dict[str, Any]]:
    rows = []
    for t in doc.thresholds:
        verdict = t.verdict or ""
        cls = "pass" if verdict == "pass" else ("no-data" if verdict in _QUIET else "fail")
        rows.append(
            {
                "expression": t.expression,
                "scope": t.scope,
                "pipeline": t.pipeline,
                "observed_as": t.aggregator or ("min over cases" if t.scope == "case" else ""),
                "observed": t.observed,
                "bound": t.bound,
                "n": t.n,
                "verdict": verdict,
                "verdict_class": cls,
                "gated": "yes" if t.gated else "no (reported only)",
                "not_scored": "–"
                if t.n_error is None
                else (f"{t.n_error} error" if t.n_error else ""),
            }
        )
    return rows


def scores_of(doc: Results) -> dict[str, dict[str, ComponentScore]]:
    """The component scores of the document's cases (computed, as the run's terminal did)."""
    return typed_scores(component_scores(doc.cases))


def _by_type(entry: ComponentScore) -> str:
    """``out_of_scope 1.00 (1) · simple 0.67 (2)``: the per-type means a RAGET score averages."""
    return " · ".join(f"{qt} {t.score:.2f} ({t.n})" for qt, t in entry.by_question_type.items())


def components(
    scores: Mapping[str, Mapping[str, ComponentScore]],
    pipelines: Sequence[str],
    *,
    correctness: bool,
    mapping: str,
) -> Markup:
    """The component scores per pipeline (:func:`scores_of`), after the paragraph on
    their basis."""
    rows = []
    for component in COMPONENTS if scores else ():
        cells: list[dict[str, Any]] = []
        for p in pipelines:
            s = (scores.get(p) or {}).get(component)
            if s is None or s.score is None:
                label = s.label if s else "not measured"
                cells.append({"width": None, "label": label})
                continue
            cells.append({"width": round(100 * s.score), "label": s.label, "by_type": _by_type(s)})
        seen = sorted({t for p in scores.values() for t in p[component].question_types})
        rows.append(
            {"component": component.replace("_", " "), "scores": cells, "seen": ", ".join(seen)}
        )
    return render(
        "report/components.html.j2",
        rows=rows,
        pipelines=pipelines,
        correctness=correctness,
        mapping=mapping,
    )


def judges(data: JudgeTotals) -> Markup:
    """The run's judges: model, calls, cache, tokens, cost, what was not judged and why."""
    rows: list[tuple[str, Any]] = [
        ("model", data.judge_model),
        ("judges", ", ".join(data.judges) or "none"),
        ("response format", data.judge_response_format),
        ("concurrency", num(data.judge_concurrency)),
        ("cases judged", num(data.cases)),
        ("cases with a judge error", num(data.errors)),
        ("calls", num(data.calls)),
        ("served by the cache", num(data.cached)),
        ("HTTP requests", num(data.requests)),
        ("prompt tokens", num(data.prompt_tokens)),
        ("completion tokens", num(data.completion_tokens)),
        ("cost", cost_text(data.cost_usd)),
    ]
    if data.max_calls is not None:
        rows.append(("max calls (--ragproof-judge-max-calls)", num(data.max_calls)))
    if data.budget_usd is not None:
        rows.append(("budget (--ragproof-judge-budget-usd)", f"${data.budget_usd:g}"))
    reasons = [[r, num(n), NOT_JUDGED_REASONS.get(r, "")] for r, n in data.not_judged.items()]
    return render(
        "report/judges.html.j2", rows=rows, not_judged=reasons, estimate=data.dry_run_estimate
    )


def baseline(data: Mapping[str, Any] | Baseline, chart: Markup | str = "") -> Markup:
    """The baseline section (``data``: the ``baseline`` part, parsed or its model);
    ``chart`` (the changes with their intervals, markup) goes above the table of
    aggregate changes."""
    from pytest_ragproof.results.models import Baseline

    section = data if isinstance(data, Baseline) else Baseline.model_validate(data)
    changes = [
        {
            "pipeline": a.pipeline,
            "selector": a.selector,
            "metric": a.metric,
            "n": a.n,
            "baseline_mean": a.baseline_mean,
            "current_mean": a.current_mean,
            "delta": a.delta,
            "tolerance": a.tolerance,
            "method": "–" if a.test is None or a.test.method is None else a.test.method,
            "p_value": None if a.test is None else a.test.p_value,
            "verdict": a.verdict,
            "verdict_class": {"regression": "regression", "improved": "improved"}.get(
                a.verdict, "muted"
            ),
            "gates": a.failed,
        }
        for a in section.aggregates
        if a.verdict != "no data"
    ]
    counts = section.counts
    return render(
        "report/baseline.html.j2",
        path=section.path,
        verdict="failed" if section.passed is False else "passed",
        alpha=section.alpha,
        tolerances=", ".join(section.tolerances),
        dataset_changed=section.dataset_changed,
        refused=section.refused,
        counts=[(f"{counts.get(k, 0)} {k}", k) for k in ("improved", "regressed", "new", "removed")]
        if counts
        else [],
        flips=section.flips,
        unscored=", ".join(
            sorted({a.metric for a in section.aggregates if a.verdict == "no data"})
        ),
        changes=changes,
        chart=chart if changes else "",
        gate_failures=section.gate_failures,
        notes=section.notes,
    )
