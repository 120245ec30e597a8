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
``ragproof.results/1`` dict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

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


def _not_scored(n_error: Any) -> str:
    """A threshold row's cases not scored (``n_error``; a document from before the rows
    carried it: unknown)."""
    if not isinstance(n_error, int) or isinstance(n_error, bool):
        return "–"
    return f"{n_error} error" if n_error else ""


def _headline(results: Mapping[str, Any]) -> list[str]:
    passed = bool(results.get("passed"))
    cases = results.get("cases") or []
    counts = {
        s: sum(1 for c in cases if c.get("status") == s) for s in ("passed", "failed", "error")
    }
    pipelines = ", ".join(_code(p) for p in results.get("pipelines") or []) or "none"
    lines = [
        f"### {'✅' if passed else '❌'} ragproof: {'passed' if passed else 'FAILED'}",
        "",
        f"**{len(cases)} case result(s)**: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['error']} error · pipelines: {pipelines}"
        + (f" · run {_code(results['run_id'])}" if results.get("run_id") else ""),
    ]
    for ds in results.get("datasets") or []:
        state = "frozen" if ds.get("frozen") else "**not frozen**"
        lines.append(
            f"- dataset {_code(ds.get('path'))}: {_md(ds.get('evaluated', ds.get('cases')))} of "
            f"{_md(ds.get('cases'))} case(s) evaluated, {state}, "
            f"sha256 {_code(str(ds.get('sha256'))[:12])}"
        )
    settings = results.get("settings") or {}
    if "repeat" in settings:
        lines.append(
            f"- repeats: {_md(settings['repeat'])} call(s) per case; a case passes when its pass "
            f"rate is at least {_num(settings.get('min_pass_rate'), 'g')}"
        )
    if results.get("redacted"):
        lines.append("- redacted run (--ragproof-redact)")
    return lines


def _thresholds(results: Mapping[str, Any]) -> list[str]:
    rows = []
    for t in results.get("thresholds") or []:
        bound = str(t.get("bound"))
        if t.get("scope") == "aggregate":
            bound = f"{t.get('aggregator')} {bound}"
        observed = _num(t.get("observed"), ".4g")
        if t.get("scope") == "case" and isinstance(t.get("observed"), int | float):
            observed = f"min {observed}"
        rows.append(
            [
                _code(t.get("pipeline")),
                _md(t.get("selector")),
                _md(t.get("metric")),
                f"{_md(bound)} ({_md(t.get('scope'))})",
                observed,
                _md(t.get("n")),
                _verdict(str(t.get("verdict")), bool(t.get("gated", True))),
                _not_scored(t.get("n_error")),
            ]
        )
    if not rows:
        return []
    headers = ["pipeline", "selector", "metric", "threshold", "observed", "n", "verdict"]
    headers.append("not scored")
    out = ["", "#### Thresholds", "", *_table(headers, rows)]
    worst = [t for t in results.get("thresholds") or [] if t.get("worst")]
    if worst:
        out.extend(["", "Cases that pulled the failed aggregates down most:", ""])
        for t in worst:
            cases = ", ".join(f"{_code(cid)} {_num(value, '.3g')}" for cid, value in t["worst"])
            out.append(f"- {_md(t.get('expression'))} {_code(t.get('pipeline'))}: {cases}")
    return out


def _aggregates(results: Mapping[str, Any]) -> list[str]:
    rows = []
    aggregates = results.get("aggregates") or []
    # '*' mixes kinds whose metrics mean different things; the per-kind rows say more.
    if any(a.get("selector") != "*" for a in aggregates):
        aggregates = [a for a in aggregates if a.get("selector") != "*"]
    for a in aggregates:
        values = a.get("values") or {}
        rows.append(
            [
                _code(a.get("pipeline")),
                _md(a.get("selector")),
                _md(a.get("metric")),
                _md(a.get("n")),
                _num(values.get("mean")),
                _num(values.get("min")),
                _num(values.get("p50")),
                _num(values.get("max")),
                _md(a.get("n_error")),
                _md(a.get("n_missing")),
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


def _cost(cost: Any) -> str:
    if isinstance(cost, bool) or not isinstance(cost, int | float):
        return "cost unknown (no price for this model)"
    return f"${cost:.4f}"


def _judges(results: Mapping[str, Any]) -> list[str]:
    data = results.get("judges")
    if not isinstance(data, Mapping):
        return []
    lines = [
        "",
        "#### LLM judges",
        "",
        f"{_code(data.get('judge_model'))}: {_md(data.get('calls'))} call(s), "
        f"{_md(data.get('cached'))} cached, {_md(data.get('prompt_tokens'))} prompt + "
        f"{_md(data.get('completion_tokens'))} completion tokens, {_cost(data.get('cost_usd'))} "
        f"· {_md(data.get('cases'))} case(s) judged, {_md(data.get('errors'))} with a judge error",
    ]
    skipped = data.get("not_judged") or {}
    if skipped:
        from pytest_ragproof.judges import NOT_JUDGED_REASONS

        lines.append(
            "- not judged (absent, counted as missing, never scored): "
            + ", ".join(
                f"{_md(n)} {_code(r)} ({_md(NOT_JUDGED_REASONS.get(str(r), r))})"
                for r, n in skipped.items()
            )
        )
    limits = []
    if data.get("max_calls") is not None:
        limits.append(f"at most {_md(data['max_calls'])} call(s)")
    if isinstance(data.get("budget_usd"), int | float):
        limits.append(f"budget ${data['budget_usd']:g}")
    if limits:
        lines.append("- limits: " + ", ".join(limits))
    est = data.get("dry_run_estimate")
    if isinstance(est, Mapping):
        lines.append(
            f"- dry run: the run would make {_md(est.get('calls'))} call(s) "
            f"(~{_md(est.get('prompt_tokens'))} prompt + ~{_md(est.get('completion_tokens'))} "
            f"completion tokens, characters / 4), {_md(est.get('cached'))} more served by the "
            "cache; nothing was called"
        )
    return lines


def _components(results: Mapping[str, Any]) -> list[str]:
    scores = results.get("components")
    if not isinstance(scores, Mapping) or not scores:
        return []
    from pytest_ragproof.reporting.components import COMPONENTS, basis_text

    pipelines = list(scores)
    basis = basis_text(scores)
    rows = [
        [_md(c), *(_md((scores[p].get(c) or {}).get("label", "–")) for p in pipelines)]
        for c in COMPONENTS
    ]
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


def _ids(flips: Sequence[Mapping[str, Any]]) -> str:
    shown = ", ".join(_code(f.get("id")) for f in flips[:_LIST_LIMIT])
    more = len(flips) - _LIST_LIMIT
    return shown + (f", … (+{more})" if more > 0 else "")


def _baseline(results: Mapping[str, Any]) -> list[str]:
    base = results.get("baseline")
    if not isinstance(base, Mapping):
        return []
    if "updated" in base:
        name = PurePath(str(base["updated"])).name
        return ["", "#### Baseline", "", f"Baseline {_code(name)} written from this run."]
    name = PurePath(str(base.get("path", "baseline"))).name
    lines = ["", f"#### Against the baseline {_code(name)}", ""]
    if base.get("refused"):
        return [*lines, f"❌ Not compared: {_md(base['refused'])}"]
    flips: list[Mapping[str, Any]] = list(base.get("flips") or [])
    counts = base.get("counts") or {}
    lines.append(
        "Cases: "
        + ", ".join(
            f"{_md(counts.get(c, 0))} {c}" for c in ("improved", "regressed", "new", "removed")
        )
        + (
            ""
            if base.get("fail_on_case_regression")
            else " (case flips gate only with --ragproof-fail-on-case-regression)"
        )
    )
    for change in ("regressed", "improved", "new", "removed"):
        of_change = [f for f in flips if f.get("change") == change]
        for pipeline in sorted({str(f.get("pipeline")) for f in of_change}):
            mine = [f for f in of_change if f.get("pipeline") == pipeline]
            lines.append(f"- {change} [{_code(pipeline)}]: {_ids(mine)}")
    rows = []
    every = base.get("aggregates") or []
    unscored = sorted({str(a.get("metric")) for a in every if a.get("verdict") == "no data"})
    if unscored:
        lines.append(f"- not compared (no case scored in both runs): {_md(', '.join(unscored))}")
    for a in (a for a in every if a.get("verdict") != "no data"):
        test = a.get("test") or {}
        verdict = str(a.get("verdict"))
        rows.append(
            [
                _code(a.get("pipeline")),
                _md(a.get("selector")),
                _md(a.get("metric")),
                _md(a.get("n")),
                _num(a.get("baseline_mean")),
                _num(a.get("current_mean")),
                _num(a.get("delta"), "+.3f"),
                _num(a.get("tolerance"), "g"),
                _md(test.get("method", "–")),
                _num(test.get("p_value"), ".3g"),
                f"❌ **{_md(verdict)}**" if a.get("failed") else _md(verdict),
            ]
        )
    if rows:
        headers = ["pipeline", "selector", "metric", "n", "baseline", "now", "Δ", "tolerance"]
        lines.extend(["", *_table([*headers, "test", "p", "verdict"], rows)])
        lines.append("")
        lines.append(
            f"A regression gates when the mean moved the wrong way by more than its tolerance "
            f"and the paired test gives p < {_num(base.get('alpha'), 'g')}."
        )
    lines.extend(f"- note: {_md(n)}" for n in base.get("notes") or [])
    return lines


def _failure(f: Mapping[str, Any]) -> str:
    if f.get("observed") is None:
        return f"{_md(f.get('metric'))} not available ({_md(f.get('reason'))})"
    observed = _num(f.get("observed"), ".4g")
    return f"{_md(f.get('metric'))} = {observed} (expected {_md(f.get('bound'))})"


def _worst(results: Mapping[str, Any], limit: int) -> list[str]:
    failing = [c for c in results.get("cases") or [] if c.get("status") != "passed"]
    failing.sort(
        key=lambda c: (
            c.get("status") != "error",
            -len(c.get("failures") or []),
            str(c.get("pipeline")),
            str(c.get("id")),
        )
    )
    rows = []
    for c in failing[: max(limit, 0)]:
        if c.get("status") == "error":
            detail = f"error {_code(c.get('error_type') or 'unknown')}"
        else:
            detail = "; ".join(_failure(f) for f in c.get("failures") or []) or "failed"
        rows.append(
            [
                _code(c.get("pipeline")),
                _code(c.get("id")),
                _md(c.get("kind")),
                _md(c.get("status")),
                detail,
            ]
        )
    if not rows:
        return []
    title = f"#### Worst cases ({len(rows)} of {len(failing)} not passed)"
    return ["", title, "", *_table(["pipeline", "case", "kind", "status", "detail"], rows)]


def _flaky(results: Mapping[str, Any]) -> list[str]:
    from pytest_ragproof.results.document import is_flaky

    flaky = [c for c in results.get("cases") or [] if is_flaky(c)]
    rows = [
        [
            _code(c.get("pipeline")),
            _code(c.get("id")),
            _md(c.get("kind")),
            _md(c.get("status")),
            f"{_md(c['repeats'].get('passed'))} of {_md(c['repeats'].get('n'))}",
            _num(c["repeats"].get("pass_rate")),
            ", ".join(_code(e) for e in c["repeats"].get("error_types") or []) or "–",
        ]
        for c in flaky[:_LIST_LIMIT]
    ]
    if not rows:
        return []
    headers = ["pipeline", "case", "kind", "status", "repeats passed", "pass rate", "errors"]
    more = [f"- … and {len(flaky) - _LIST_LIMIT} more"] if len(flaky) > _LIST_LIMIT else []
    title = f"#### Flaky cases ({len(flaky)}: some but not all repeats passed)"
    return ["", title, "", *_table(headers, rows), *more]


def render_markdown(results: dict[str, Any], *, worst: int = 10) -> str:
    """Markdown for a results document; ``worst`` limits the listed failing cases."""
    lines = [
        *_headline(results),
        *_thresholds(results),
        *_judges(results),
        *_aggregates(results),
        *_components(results),
        *_baseline(results),
        *_flaky(results),
        *_worst(results, worst),
    ]
    notes = results.get("notes") or []
    if notes:
        lines.extend(["", "#### Notes", "", *(f"- {_md(n)}" for n in notes)])
    return "\n".join(lines) + "\n"
