"""The static sections of the HTML report, rendered on the server side.

Every value from the results document goes through :func:`html.escape`; none
of these sections contains dataset text (questions, answers, contexts), only
ids, names and numbers, so they are the same with and without redaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from pytest_ragproof.judges import NOT_JUDGED_REASONS
from pytest_ragproof.reporting.components import COMPONENTS, component_scores


def esc(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return esc(value)
    if float(value).is_integer() and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.1f}"


def badge(label: Any, cls: str | None = None) -> str:
    css = (cls or str(label)).replace(" ", "-")
    return f'<span class="badge {esc(css)}">{esc(label)}</span>'


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, num_from: int = 99) -> str:
    """A table from already-escaped cells; columns from ``num_from`` on are right-aligned."""
    head = "".join(
        f'<th class="num">{h}</th>' if i >= num_from else f"<th>{h}</th>"
        for i, h in enumerate(headers)
    )
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{c}</td>' if i >= num_from else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def metric_order(name: str) -> tuple[str, int]:
    stem, _, k = name.partition("@")
    return (stem, int(k) if k.isdigit() else 0)


def summary(results: Mapping[str, Any], pipelines: Sequence[str]) -> str:
    rows = []
    for p in pipelines:
        mine = [c for c in results.get("cases", []) if c.get("pipeline") == p]
        counts = {s: sum(1 for c in mine if c.get("status") == s) for s in ("passed", "failed")}
        errors = sum(1 for c in mine if c.get("status") == "error")
        rate = counts["passed"] / len(mine) if mine else None
        row = [esc(p), str(len(mine)), str(counts["passed"]), str(counts["failed"])]
        rows.append([*row, str(errors), num(rate)])
    return table(["pipeline", "cases", "passed", "failed", "error", "pass rate"], rows, num_from=1)


def flaky(results: Mapping[str, Any]) -> str:
    """``--ragproof-repeat``: the cases some but not all of whose repeats passed."""
    from pytest_ragproof.results.document import is_flaky

    rows = []
    for c in results.get("cases") or []:
        if not is_flaky(c):
            continue
        rep = c["repeats"]
        status = str(c.get("status", ""))
        rows.append(
            [
                esc(c.get("pipeline")),
                esc(c.get("id")),
                esc(c.get("kind")),
                badge(status, "pass" if status == "passed" else "fail"),
                f"{esc(rep.get('passed'))} of {esc(rep.get('n'))}",
                num(rep.get("pass_rate")),
                esc(", ".join(rep.get("error_types") or []) or "–"),
            ]
        )
    settings = results.get("settings") or {}
    intro = (
        f'<p class="muted">{esc(settings.get("repeat"))} call(s) per case; a case passes when '
        f"its pass rate is at least {esc(settings.get('min_pass_rate'))}. Its metrics are the "
        "means over its scored repeats.</p>"
    )
    headers = ["pipeline", "case", "kind", "status", "repeats passed", "pass rate", "errors"]
    return intro + table(headers, rows, num_from=4)


def thresholds(results: Mapping[str, Any]) -> str:
    items = results.get("thresholds") or []
    if not items:
        return '<p class="muted">No thresholds were evaluated.</p>'
    rows = []
    for t in items:
        verdict = str(t.get("verdict", ""))
        quiet = ("no data", "no cases", "not selected")
        cls = "pass" if verdict == "pass" else ("no-data" if verdict in quiet else "fail")
        gated = "yes" if t.get("gated") else "no (reported only)"
        rows.append(
            [
                esc(t.get("expression")),
                esc(t.get("scope")),
                esc(t.get("pipeline")),
                esc(t.get("aggregator") or ("min over cases" if t.get("scope") == "case" else "")),
                num(t.get("observed"), 4),
                esc(t.get("bound")),
                num(t.get("n")),
                badge(verdict, cls),
                esc(gated),
                _not_scored(t.get("n_error")),
            ]
        )
    headers = ["expression", "scope", "pipeline", "observed as", "observed", "bound", "n"]
    return table([*headers, "verdict", "gated", "not scored"], rows)


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
    parts = [f"{qt} {t['score']:.2f} ({t['n']})" for qt, t in by_type.items()]
    return f'<div class="muted by-type">{esc(" · ".join(parts))}</div>' if parts else ""


def components(results: Mapping[str, Any], pipelines: Sequence[str]) -> str:
    scores = scores_of(results)
    if not scores:
        return '<p class="muted">No cases.</p>'
    rows = []
    for component in COMPONENTS:
        row = [esc(component.replace("_", " "))]
        for p in pipelines:
            s = (scores.get(p) or {}).get(component)
            if s is None or s["score"] is None:
                label = s["label"] if s else "not measured"
                row.append(f'<span class="not-measured">{esc(label)}</span>')
                continue
            width = round(100 * s["score"])
            row.append(
                f'<span class="bar-track"><span style="width:{width}%"></span></span>'
                f"{esc(s['label'])}{_by_type(s)}"
            )
        seen = sorted({t for p in scores.values() for t in p[component]["question_types"]})
        row.append(esc(", ".join(seen)))
        rows.append(row)
    return table(["component", *(esc(p) for p in pipelines), "question types seen"], rows)


def cost_text(cost: Any) -> str:
    return "cost unknown (no price for this model)" if cost is None else f"${float(cost):.4f}"


def judges(data: Mapping[str, Any]) -> str:
    """The run's judges: model, calls, cache, tokens, cost, what was not judged and why."""
    rows = [
        ("model", esc(data.get("judge_model"))),
        ("judges", esc(", ".join(map(str, data.get("judges") or [])) or "none")),
        ("response format", esc(data.get("judge_response_format"))),
        ("concurrency", num(data.get("judge_concurrency"))),
        ("cases judged", num(data.get("cases"))),
        ("cases with a judge error", num(data.get("errors"))),
        ("calls", num(data.get("calls"))),
        ("served by the cache", num(data.get("cached"))),
        ("HTTP requests", num(data.get("requests"))),
        ("prompt tokens", num(data.get("prompt_tokens"))),
        ("completion tokens", num(data.get("completion_tokens"))),
        ("cost", esc(cost_text(data.get("cost_usd")))),
    ]
    if data.get("max_calls") is not None:
        rows.append(("max calls (--ragproof-judge-max-calls)", num(data["max_calls"])))
    if data.get("budget_usd") is not None:
        rows.append(("budget (--ragproof-judge-budget-usd)", esc(f"${data['budget_usd']:g}")))
    out = [
        '<div class="agg"><div>'
        + table(["", ""], ([f"<b>{esc(k)}</b>", v] for k, v in rows))
        + "</div>"
    ]
    skipped = data.get("not_judged") or {}
    if skipped:
        reasons = [
            [esc(r), num(n), esc(NOT_JUDGED_REASONS.get(str(r), ""))] for r, n in skipped.items()
        ]
        out.append(
            '<div id="not-judged"><h3>Not judged</h3>'
            '<p class="muted">Metrics a judge could not score on a case, by reason: absent '
            "(counted as missing in the aggregates), never 0 or 1.</p>"
            + table(["reason", "skipped judgements", "meaning"], reasons)
            + "</div>"
        )
    out.append("</div>")
    est = data.get("dry_run_estimate")
    if isinstance(est, Mapping):
        out.append(
            f'<div class="banner" id="dry-run">Judge dry run: the run would make '
            f"{num(est.get('calls'))} call(s) (~{num(est.get('prompt_tokens'))} prompt + "
            f"~{num(est.get('completion_tokens'))} completion tokens, characters / 4), "
            f"{num(est.get('cached'))} more served by the cache; nothing was called.</div>"
        )
    return "".join(out)


def baseline(data: Mapping[str, Any], chart: str = "") -> str:
    """The baseline section; ``chart`` (the changes with their intervals) goes above the
    table of aggregate changes."""
    out = []
    verdict = "passed" if data.get("passed", True) else "failed"
    if data.get("path"):
        out.append(f"<p>Compared with <b>{esc(data['path'])}</b>.</p>")
    out.append(f"<p>Regression gate: {badge(verdict)}")
    out.append(f" &middot; alpha {num(data.get('alpha'))}")
    tolerances = data.get("tolerances") or []
    out.append(f" &middot; tolerances: {esc(', '.join(map(str, tolerances)) or 'none (0)')}")
    if data.get("dataset_changed"):
        out.append(" &middot; the dataset changed since the baseline")
    out.append("</p>")
    if data.get("refused"):
        out.append(f'<div class="banner">Comparison refused: {esc(data["refused"])}</div>')
    counts = data.get("counts") or {}
    if counts:
        out.append(
            "<p>"
            + " ".join(
                f"{badge(f'{counts.get(k, 0)} {k}', k)}"
                for k in ("improved", "regressed", "new", "removed")
            )
            + "</p>"
        )
    flips = data.get("flips") or []
    if flips:
        rows = [
            [
                esc(f.get("pipeline")),
                esc(f.get("id")),
                badge(f.get("change")),
                f"{esc(f.get('before') or '–')} &rarr; {esc(f.get('now') or '–')}",
            ]
            for f in flips
        ]
        out.append("<h3>Case flips</h3>" + table(["pipeline", "case", "change", "status"], rows))
    every = data.get("aggregates") or []
    changes = [a for a in every if a.get("verdict") != "no data"]
    unscored = sorted({str(a.get("metric")) for a in every if a.get("verdict") == "no data"})
    if unscored:
        out.append(
            '<p class="muted">not compared (no case scored in both runs): '
            + esc(", ".join(unscored))
            + "</p>"
        )
    if changes:
        rows = []
        for a in changes:
            test = a.get("test") or {}
            verdict_a = str(a.get("verdict", ""))
            cls = {"regression": "regression", "improved": "improved"}.get(verdict_a, "muted")
            rows.append(
                [
                    esc(a.get("pipeline")),
                    esc(a.get("selector")),
                    esc(a.get("metric")),
                    num(a.get("n")),
                    num(a.get("baseline_mean"), 4),
                    num(a.get("current_mean"), 4),
                    _signed(a.get("delta")),
                    num(a.get("tolerance")),
                    esc(test.get("method", "–")),
                    num(test.get("p_value"), 3),
                    badge(verdict_a, cls) + (" (gates)" if a.get("failed") else ""),
                ]
            )
        headers = ["pipeline", "selector", "metric", "paired n", "baseline", "now", "delta"]
        out.append(
            "<h3>Aggregate changes</h3>"
            + chart
            + table([*headers, "tolerance", "test", "p", "verdict"], rows, num_from=3)
        )
    for line in data.get("gate_failures") or []:
        out.append(f'<div class="banner">{esc(line)}</div>')
    notes = data.get("notes") or []
    if notes:
        out.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "".join(out)


def _signed(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "–"
    return f"{value:+.4g}"
