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
from pytest_ragproof.reporting.components import COMPONENTS, component_scores
from pytest_ragproof.reporting.template_filters import cost_text, num
from pytest_ragproof.reporting.templating import render

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Baseline, Results

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


def scores_of(results: Mapping[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    return component_scores(results.get("cases") or [])


def _by_type(entry: Mapping[str, Any]) -> str:
    """``out_of_scope 1.00 (1) · simple 0.67 (2)``: the per-type means a RAGET score averages."""
    by_type = entry.get("by_question_type") or {}
    return " · ".join(f"{qt} {t['score']:.2f} ({t['n']})" for qt, t in by_type.items())


def components(
    results: Mapping[str, Any], pipelines: Sequence[str], *, correctness: bool, mapping: str
) -> Markup:
    """The component scores per pipeline, after the paragraph on their basis."""
    scores = scores_of(results)
    rows = []
    for component in COMPONENTS if scores else ():
        cells = []
        for p in pipelines:
            s = (scores.get(p) or {}).get(component)
            if s is None or s["score"] is None:
                label = s["label"] if s else "not measured"
                cells.append({"width": None, "label": label})
                continue
            cells.append(
                {"width": round(100 * s["score"]), "label": s["label"], "by_type": _by_type(s)}
            )
        seen = sorted({t for p in scores.values() for t in p[component]["question_types"]})
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


def judges(data: Mapping[str, Any]) -> Markup:
    """The run's judges: model, calls, cache, tokens, cost, what was not judged and why."""
    rows: list[tuple[str, Any]] = [
        ("model", data.get("judge_model")),
        ("judges", ", ".join(map(str, data.get("judges") or [])) or "none"),
        ("response format", data.get("judge_response_format")),
        ("concurrency", num(data.get("judge_concurrency"))),
        ("cases judged", num(data.get("cases"))),
        ("cases with a judge error", num(data.get("errors"))),
        ("calls", num(data.get("calls"))),
        ("served by the cache", num(data.get("cached"))),
        ("HTTP requests", num(data.get("requests"))),
        ("prompt tokens", num(data.get("prompt_tokens"))),
        ("completion tokens", num(data.get("completion_tokens"))),
        ("cost", cost_text(data.get("cost_usd"))),
    ]
    if data.get("max_calls") is not None:
        rows.append(("max calls (--ragproof-judge-max-calls)", num(data["max_calls"])))
    if data.get("budget_usd") is not None:
        rows.append(("budget (--ragproof-judge-budget-usd)", f"${data['budget_usd']:g}"))
    skipped = data.get("not_judged") or {}
    reasons = [[r, num(n), NOT_JUDGED_REASONS.get(str(r), "")] for r, n in skipped.items()]
    est = data.get("dry_run_estimate")
    return render(
        "report/judges.html.j2",
        rows=rows,
        not_judged=reasons,
        estimate=est if isinstance(est, Mapping) else None,
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
            "method": "–" if a.test is None else a.test.method,
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
