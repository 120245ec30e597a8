"""The Markdown summary of a results document, for a CI step summary or a PR comment.

``render_markdown(results)`` renders a pass/fail headline, the threshold table,
the LLM judges' calls, cache hits, tokens and cost with the not-judged counts and
the dry-run estimate (when the run judged), the aggregates and the RAGET-style
component scores with their basis (both collapsed), the comparison with the
baseline when the run made one, the flaky cases of a repeating run (some but not
all repeats passed), the worst cases and the run's notes. It prints
ids, numbers, statuses and error types only — never a question, answer,
reference, context or judge reason, whether or not the run was redacted: a step
summary is readable by everyone who can see the CI run. Pure: it only reads the
``ragproof.results/1`` document, as its typed model (:mod:`pytest_ragproof.results.models`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Baseline, Case, CaseFlip, Failure, Results

__all__ = ["render_markdown"]

_LIST_LIMIT = 20
_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "\\": "\\\\",
    "|": "\\|",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "[": "\\[",
    "]": "\\]",
    "~": "\\~",
    "\r": " ",
    "\n": " ",
}


def _md(value: Any) -> str:
    """Escape a value for Markdown text and table cells."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(value))


def _code(value: Any) -> str:
    """A code span: backslash escapes do not work inside one, so only the table pipe is
    escaped (GitHub unescapes it) and a value holding backticks gets a longer fence."""
    text = str(value).replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _num(value: Any, spec: str = ".3f") -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "–"
    return format(value, spec)


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out.extend("| " + " | ".join(row) + " |" for row in rows)
    return out


def _verdict(verdict: str, gated: bool = True) -> str:
    icon = {
        "pass": "✅",
        "fail": "❌",
        "no data": "⚠️",
        "no cases": "➖",
        "not selected": "➖",
    }.get(verdict, "❌")
    text = f"{icon} {_md(verdict)}"
    return text if gated else f"{text} (not gated)"


def _not_scored(n_error: int | None) -> str:
    """A threshold row's cases not scored (``n_error``; a document from before the rows
    carried it: unknown)."""
    if n_error is None:
        return "–"
    return f"{n_error} error" if n_error else ""


def _headline(results: Results) -> list[str]:
    passed = results.passed
    cases = results.cases
    n_passed, n_failed, n_error = (
        sum(1 for c in cases if c.status == s) for s in ("passed", "failed", "error")
    )
    pipelines = ", ".join(_code(p) for p in results.pipelines) or "none"
    lines = [
        f"### {'✅' if passed else '❌'} ragproof: {'passed' if passed else 'FAILED'}",
        "",
        f"**{len(cases)} case result(s)**: {n_passed} passed, {n_failed} failed, "
        f"{n_error} error · pipelines: {pipelines}"
        + (f" · run {_code(results.run_id)}" if results.run_id else ""),
    ]
    for ds in results.datasets:
        state = "frozen" if ds.frozen else "**not frozen**"
        evaluated = ds.cases if ds.evaluated is None else ds.evaluated
        lines.append(
            f"- dataset {_code(ds.path)}: {_md(evaluated)} of "
            f"{_md(ds.cases)} case(s) evaluated, {state}, "
            f"sha256 {_code(ds.sha256[:12])}"
        )
    settings = results.settings
    if settings.repeat is not None:
        lines.append(
            f"- repeats: {_md(settings.repeat)} call(s) per case; a case passes when its pass "
            f"rate is at least {_num(settings.min_pass_rate, 'g')}"
        )
    if results.redacted:
        lines.append("- redacted run (--ragproof-redact)")
    return lines


def _thresholds(results: Results) -> list[str]:
    rows = []
    for t in results.thresholds:
        bound = str(t.bound)
        if t.scope == "aggregate":
            bound = f"{t.aggregator} {bound}"
        observed = _num(t.observed, ".4g")
        if t.scope == "case" and t.observed is not None:
            observed = f"min {observed}"
        rows.append(
            [
                _code(t.pipeline),
                _md(t.selector),
                _md(t.metric),
                f"{_md(bound)} ({_md(t.scope)})",
                observed,
                _md(t.n),
                _verdict(str(t.verdict), t.gated),
                _not_scored(t.n_error),
            ]
        )
    if not rows:
        return []
    headers = ["pipeline", "selector", "metric", "threshold", "observed", "n", "verdict"]
    headers.append("not scored")
    out = ["", "#### Thresholds", "", *_table(headers, rows)]
    worst = [t for t in results.thresholds if t.worst]
    if worst:
        out.extend(["", "Cases that pulled the failed aggregates down most:", ""])
        for t in worst:
            cases = ", ".join(f"{_code(cid)} {_num(value, '.3g')}" for cid, value in t.worst)
            out.append(f"- {_md(t.expression)} {_code(t.pipeline)}: {cases}")
    return out


def _aggregates(results: Results) -> list[str]:
    rows = []
    aggregates = results.aggregates
    # '*' mixes kinds whose metrics mean different things; the per-kind rows say more.
    if any(a.selector != "*" for a in aggregates):
        aggregates = [a for a in aggregates if a.selector != "*"]
    for a in aggregates:
        values = a.values
        rows.append(
            [
                _code(a.pipeline),
                _md(a.selector),
                _md(a.metric),
                _md(a.n),
                *(_num(values.get(stat)) for stat in ("mean", "min", "p50", "max")),
                _md(a.n_error),
                _md(a.n_missing),
            ]
        )
    if not rows:
        return []
    headers = ["pipeline", "selector", "metric", "n", "mean", "min", "p50", "max", "errors"]
    return [
        "",
        "<details><summary>Aggregates</summary>",
        "",
        *_table([*headers, "missing"], rows),
        "",
        "</details>",
    ]


def _cost(cost: float | None) -> str:
    if cost is None:
        return "cost unknown (no price for this model)"
    return f"${cost:.4f}"


def _judges(results: Results) -> list[str]:
    data = results.judges
    if data is None:
        return []
    lines = [
        "",
        "#### LLM judges",
        "",
        f"{_code(data.judge_model)}: {_md(data.calls)} call(s), "
        f"{_md(data.cached)} cached, {_md(data.prompt_tokens)} prompt + "
        f"{_md(data.completion_tokens)} completion tokens, {_cost(data.cost_usd)} "
        f"· {_md(data.cases)} case(s) judged, {_md(data.errors)} with a judge error",
    ]
    if data.not_judged:
        from pytest_ragproof.judges import NOT_JUDGED_REASONS

        lines.append(
            "- not judged (absent, counted as missing, never scored): "
            + ", ".join(
                f"{_md(n)} {_code(r)} ({_md(NOT_JUDGED_REASONS.get(r, r))})"
                for r, n in data.not_judged.items()
            )
        )
    limits = []
    if data.max_calls is not None:
        limits.append(f"at most {_md(data.max_calls)} call(s)")
    if data.budget_usd is not None:
        limits.append(f"budget ${data.budget_usd:g}")
    if limits:
        lines.append("- limits: " + ", ".join(limits))
    est = data.dry_run_estimate
    if est is not None:
        lines.append(
            f"- dry run: the run would make {_md(est.calls)} call(s) "
            f"(~{_md(est.prompt_tokens)} prompt + ~{_md(est.completion_tokens)} "
            f"completion tokens, characters / 4), {_md(est.cached)} more served by the "
            "cache; nothing was called"
        )
    return lines


def _components(results: Results) -> list[str]:
    scores = results.components
    if not scores:
        return []
    from pytest_ragproof.reporting.components import COMPONENTS, basis_text

    pipelines = list(scores)
    basis = basis_text({p: {c: s.model_dump() for c, s in of.items()} for p, of in scores.items()})

    def label(pipeline: str, component: str) -> str:
        entry = scores[pipeline].get(component)
        return "–" if entry is None or entry.label is None else entry.label

    rows = [[_md(c), *(_md(label(p, c)) for p in pipelines)] for c in COMPONENTS]
    return [
        "",
        "<details><summary>Component scores (RAGET-style)</summary>",
        "",
        _md(basis[0].upper() + basis[1:]) + ".",
        "",
        *_table(["component", *(_code(p) for p in pipelines)], rows),
        "",
        "</details>",
    ]


def _ids(flips: Sequence[CaseFlip]) -> str:
    shown = ", ".join(_code(f.id) for f in flips[:_LIST_LIMIT])
    more = len(flips) - _LIST_LIMIT
    return shown + (f", … (+{more})" if more > 0 else "")


def _baseline(results: Results) -> list[str]:
    base = results.baseline
    if base is None:
        return []
    if base.is_update:
        name = PurePath(str(base.updated)).name
        return ["", "#### Baseline", "", f"Baseline {_code(name)} written from this run."]
    name = PurePath(base.path or "baseline").name
    lines = ["", f"#### Against the baseline {_code(name)}", ""]
    if base.refused:
        return [*lines, f"❌ Not compared: {_md(base.refused)}"]
    lines.append(
        "Cases: "
        + ", ".join(
            f"{_md(base.counts.get(c, 0))} {c}" for c in ("improved", "regressed", "new", "removed")
        )
        + (
            ""
            if base.fail_on_case_regression
            else " (case flips gate only with --ragproof-fail-on-case-regression)"
        )
    )
    for change in ("regressed", "improved", "new", "removed"):
        of_change = [f for f in base.flips if f.change == change]
        for pipeline in sorted({f.pipeline for f in of_change}):
            mine = [f for f in of_change if f.pipeline == pipeline]
            lines.append(f"- {change} [{_code(pipeline)}]: {_ids(mine)}")
    return [*lines, *_baseline_aggregates(base)]


def _baseline_aggregates(base: Baseline) -> list[str]:
    lines = []
    unscored = sorted({a.metric for a in base.aggregates if a.verdict == "no data"})
    if unscored:
        lines.append(f"- not compared (no case scored in both runs): {_md(', '.join(unscored))}")
    rows = []
    for a in (a for a in base.aggregates if a.verdict != "no data"):
        rows.append(
            [
                _code(a.pipeline),
                _md(a.selector),
                _md(a.metric),
                _md(a.n),
                _num(a.baseline_mean),
                _num(a.current_mean),
                _num(a.delta, "+.3f"),
                _num(a.tolerance, "g"),
                _md("–" if a.test is None or a.test.method is None else a.test.method),
                _num(None if a.test is None else a.test.p_value, ".3g"),
                f"❌ **{_md(a.verdict)}**" if a.failed else _md(a.verdict),
            ]
        )
    if rows:
        headers = ["pipeline", "selector", "metric", "n", "baseline", "now", "Δ", "tolerance"]
        lines.extend(["", *_table([*headers, "test", "p", "verdict"], rows)])
        lines.append("")
        lines.append(
            f"A regression gates when the mean moved the wrong way by more than its tolerance "
            f"and the paired test gives p < {_num(base.alpha, 'g')}."
        )
    lines.extend(f"- note: {_md(n)}" for n in base.notes)
    return lines


def _failure(f: Failure) -> str:
    if f.observed is None:
        return f"{_md(f.metric)} not available ({_md(f.reason)})"
    return f"{_md(f.metric)} = {_num(f.observed, '.4g')} (expected {_md(f.bound)})"


def _worst(results: Results, limit: int) -> list[str]:
    failing = [c for c in results.cases if c.status != "passed"]
    failing.sort(key=lambda c: (c.status != "error", -len(c.failures), c.pipeline, c.id))
    rows = []
    for c in failing[: max(limit, 0)]:
        if c.status == "error":
            detail = f"error {_code(c.error_type or 'unknown')}"
        else:
            detail = "; ".join(_failure(f) for f in c.failures) or "failed"
        rows.append([_code(c.pipeline), _code(c.id), _md(c.kind), _md(c.status), detail])
    if not rows:
        return []
    title = f"#### Worst cases ({len(rows)} of {len(failing)} not passed)"
    return ["", title, "", *_table(["pipeline", "case", "kind", "status", "detail"], rows)]


def _flaky_row(c: Case) -> list[str]:
    assert c.repeats is not None  # a flaky case repeated
    return [
        _code(c.pipeline),
        _code(c.id),
        _md(c.kind),
        _md(c.status),
        f"{_md(c.repeats.passed)} of {_md(c.repeats.n)}",
        _num(c.repeats.pass_rate),
        ", ".join(_code(e) for e in c.repeats.error_types) or "–",
    ]


def _flaky(results: Results) -> list[str]:
    flaky = [c for c in results.cases if c.flaky]
    rows = [_flaky_row(c) for c in flaky[:_LIST_LIMIT]]
    if not rows:
        return []
    headers = ["pipeline", "case", "kind", "status", "repeats passed", "pass rate", "errors"]
    more = [f"- … and {len(flaky) - _LIST_LIMIT} more"] if len(flaky) > _LIST_LIMIT else []
    title = f"#### Flaky cases ({len(flaky)}: some but not all repeats passed)"
    return ["", title, "", *_table(headers, rows), *more]


def render_markdown(results: Mapping[str, Any] | Results, *, worst: int = 10) -> str:
    """Markdown for a results document (parsed, or its model); ``worst`` limits the listed
    failing cases. A document whose parts have the wrong types is a ConfigError."""
    from pytest_ragproof.results.schema import as_model

    doc = as_model(results)
    lines = [
        *_headline(doc),
        *_thresholds(doc),
        *_judges(doc),
        *_aggregates(doc),
        *_components(doc),
        *_baseline(doc),
        *_flaky(doc),
        *_worst(doc, worst),
    ]
    if doc.notes:
        lines.extend(["", "#### Notes", "", *(f"- {_md(n)}" for n in doc.notes)])
    return "\n".join(lines) + "\n"
