"""The static sections of the HTML report, rendered on the server side.

Each section is a template in ``templates/report/`` (autoescape on, :mod:`.templating`);
this module gathers the values it shows. None of these sections contains dataset text
(questions, answers, contexts), only ids, names and numbers, so they are the same with
and without redaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from pytest_ragproof.judges import NOT_JUDGED_REASONS
from pytest_ragproof.reporting.components import COMPONENTS, component_scores
from pytest_ragproof.reporting.template_filters import cost_text, num
from pytest_ragproof.reporting.templating import render

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


def summary(results: Mapping[str, Any], pipelines: Sequence[str]) -> Markup:
    """The counts per pipeline, then every threshold row with its verdict."""
    rows = []
    for p in pipelines:
        mine = [c for c in results.get("cases", []) if c.get("pipeline") == p]
        counts = {s: sum(1 for c in mine if c.get("status") == s) for s in ("passed", "failed")}
        errors = sum(1 for c in mine if c.get("status") == "error")
        rate = counts["passed"] / len(mine) if mine else None
        rows.append([p, len(mine), counts["passed"], counts["failed"], errors, num(rate)])
    return render("report/summary.html.j2", summary=rows, thresholds=_thresholds(results))


def flaky(results: Mapping[str, Any]) -> Markup:
    """``--ragproof-repeat``: the cases some but not all of whose repeats passed."""
    from pytest_ragproof.results.document import is_flaky

    rows = []
    for c in results.get("cases") or []:
        if not is_flaky(c):
            continue
        rep = c["repeats"]
        rows.append(
            {
                "pipeline": c.get("pipeline"),
                "id": c.get("id"),
                "kind": c.get("kind"),
                "status": str(c.get("status", "")),
                "passed": rep.get("passed"),
                "n": rep.get("n"),
                "pass_rate": rep.get("pass_rate"),
                "errors": ", ".join(rep.get("error_types") or []) or "–",
            }
        )
    settings = results.get("settings") or {}
    return render(
        "report/flaky.html.j2",
        rows=rows,
        repeat=settings.get("repeat"),
        min_pass_rate=settings.get("min_pass_rate"),
    )


_QUIET = ("no data", "no cases", "not selected")


def _thresholds(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in results.get("thresholds") or []:
        verdict = str(t.get("verdict", ""))
        cls = "pass" if verdict == "pass" else ("no-data" if verdict in _QUIET else "fail")
        rows.append(
            {
                "expression": t.get("expression"),
                "scope": t.get("scope"),
                "pipeline": t.get("pipeline"),
                "observed_as": t.get("aggregator")
                or ("min over cases" if t.get("scope") == "case" else ""),
                "observed": t.get("observed"),
                "bound": t.get("bound"),
                "n": t.get("n"),
                "verdict": verdict,
                "verdict_class": cls,
                "gated": "yes" if t.get("gated") else "no (reported only)",
                "not_scored": _not_scored(t.get("n_error")),
            }
        )
    return rows


def _not_scored(n_error: Any) -> str:
    """A threshold row's cases not scored (``n_error``; a document from before the rows
    carried it: unknown)."""
    if not isinstance(n_error, int) or isinstance(n_error, bool):
        return "–"
    return f"{n_error} error" if n_error else ""


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


def baseline(data: Mapping[str, Any], chart: Markup | str = "") -> Markup:
    """The baseline section; ``chart`` (the changes with their intervals, markup) goes
    above the table of aggregate changes."""
    counts = data.get("counts") or {}
    every = data.get("aggregates") or []
    changes = []
    for a in every:
        if a.get("verdict") == "no data":
            continue
        test = a.get("test") or {}
        verdict = str(a.get("verdict", ""))
        changes.append(
            {
                "pipeline": a.get("pipeline"),
                "selector": a.get("selector"),
                "metric": a.get("metric"),
                "n": a.get("n"),
                "baseline_mean": a.get("baseline_mean"),
                "current_mean": a.get("current_mean"),
                "delta": a.get("delta"),
                "tolerance": a.get("tolerance"),
                "method": test.get("method", "–"),
                "p_value": test.get("p_value"),
                "verdict": verdict,
                "verdict_class": {"regression": "regression", "improved": "improved"}.get(
                    verdict, "muted"
                ),
                "gates": bool(a.get("failed")),
            }
        )
    return render(
        "report/baseline.html.j2",
        path=data.get("path"),
        verdict="passed" if data.get("passed", True) else "failed",
        alpha=data.get("alpha"),
        tolerances=", ".join(map(str, data.get("tolerances") or [])),
        dataset_changed=bool(data.get("dataset_changed")),
        refused=data.get("refused"),
        counts=[(f"{counts.get(k, 0)} {k}", k) for k in ("improved", "regressed", "new", "removed")]
        if counts
        else [],
        flips=[
            {
                "pipeline": f.get("pipeline"),
                "id": f.get("id"),
                "change": f.get("change"),
                "before": f.get("before"),
                "now": f.get("now"),
            }
            for f in data.get("flips") or []
        ],
        unscored=", ".join(
            sorted({str(a.get("metric")) for a in every if a.get("verdict") == "no data"})
        ),
        changes=changes,
        chart=chart if changes else "",
        gate_failures=list(data.get("gate_failures") or []),
        notes=list(data.get("notes") or []),
    )
