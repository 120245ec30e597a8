"""The metrics section of the InspectorRAGet export: which type each metric gets.

- ``status`` (the case verdict) is categorical: passed 1, failed 0, error 0, and
  not_run 0 when a pipeline has no record for a case.
- 0/1 verdicts (``hit@k``, ``exact_match``, ``abstained``, ``injection_resisted``)
  are categorical with named values (hit/miss, match/no_match, abstained/answered,
  resisted/leaked) and numeric values 1/0, so InspectorRAGet's average is a rate.
- Other scores are numerical; ``range`` is ``[0, 1, 0.1]`` for scores within
  [0, 1], else from 0 (or the floor of the minimum) to a round ceiling, in ten bins.
- A metric that some scored (passed or failed) case lacks is ``text``: InspectorRAGet
  drops a task whose result lacks a plottable metric, and a missing score must
  not become 0. Its value is the number written out (``format(v, ".6g")``).
- ``failed_thresholds`` and ``retrieved_ids`` are text.
- LLM-judged metrics (``faithfulness``, ``answer_correctness`` with its precision
  and recall, ...) follow the same rules (``abstained_judged`` and
  ``injection_resisted_judged`` are categorical like their lexical twins), carry
  a readable ``display_name`` and come after the other metrics, in the judges'
  order. Each judge's reasons are a text metric ``<judge>_reasons`` (per-claim,
  per-statement or per-context verdicts with the supporting context, or why the
  case was not judged), left out of a redacted export.
- ``latency_s`` is exported as ``latency_ms`` (the app rounds what it shows, and a
  2 ms answer would read 0).
- A metric where lower is better on every kind in the file (``latency_ms``, and
  ``abstained`` on qa: a refusal there is a false refusal) declares the app's
  ``order: "descending"``, so its rankings do not call more refusals better.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragproof.metrics.judged import JUDGE_SPECS
from pytest_ragproof.numeric import is_binary

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case, Failure

STATUS_VALUES: tuple[tuple[str, int], ...] = (("passed", 1), ("failed", 0), ("error", 0))
# 0/1 verdicts exported as categories: registry name -> (value for 1, value for 0)
CATEGORIES: dict[str, tuple[str, str]] = {
    "hit@k": ("hit", "miss"),
    "exact_match": ("match", "no_match"),
    "abstained": ("abstained", "answered"),
    "injection_resisted": ("resisted", "leaked"),
    **{s.name: s.categories for s in JUDGE_SPECS if s.categories is not None},
}
REASONS_SUFFIX = "_reasons"
# what InspectorRAGet shows for a metric; the name itself otherwise
DISPLAY_NAMES: dict[str, str] = {
    name: display
    for s in JUDGE_SPECS
    for name, display in ((s.name, s.display), *((m.name, m.display) for m in s.side))
}
FAILURES_METRIC = "failed_thresholds"
RETRIEVED_METRIC = "retrieved_ids"
# results metric -> (exported name, factor)
RENAMED: dict[str, tuple[str, float]] = {"latency_s": ("latency_ms", 1000.0)}
_SOURCE = {new: old for old, (new, _) in RENAMED.items()}


def case_metrics(case: Case) -> dict[str, float]:
    """A case's metrics under their exported names and units."""
    out: dict[str, float] = {}
    for name, value in case.metrics.items():
        new, factor = RENAMED.get(name, (name, 1.0))
        out[new] = float(value) * factor
    return out


def _spec(name: str) -> Any:
    from pytest_ragproof.metrics import registry

    return registry.resolve(_SOURCE.get(name, name))


def category_names(name: str) -> tuple[str, str] | None:
    spec = _spec(name)
    return CATEGORIES.get(spec.name) if spec is not None else None


def description(name: str) -> str:
    spec = _spec(name)
    text = spec.description if spec is not None else ""
    return f"{text} (in milliseconds)".strip() if name in _SOURCE else text


def order(name: str, kinds: Sequence[str]) -> str | None:
    """``descending`` when lower is better on every kind of the file, else None (default)."""
    spec = _spec(name)
    if spec is None or not kinds:
        return None
    return "descending" if not any(spec.higher_is_better_for(k) for k in kinds) else None


def _nice_ceiling(x: float) -> float:
    if x <= 0:
        return 1.0
    base = 10.0 ** math.floor(math.log10(x))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= x)


def value_range(values: Sequence[float]) -> list[float]:
    low, high = min(values, default=0.0), max(values, default=1.0)
    if low >= 0 and high <= 1:
        return [0, 1, 0.1]
    start = math.floor(min(low, 0.0))
    end = start + _nice_ceiling(high - start)
    return [start, end, (end - start) / 10]


def _values(cases: Sequence[Case], name: str) -> list[float]:
    values = (case_metrics(c) for c in cases)
    return [m[name] for m in values if name in m]


def _judged_order(name: str) -> tuple[int, int, str]:
    """Other metrics by name first, then the judged ones in the judges' order."""
    from pytest_ragproof.judges import JUDGES, judge_of

    judge = judge_of(name)
    if judge is None:
        return (0, 0, name)
    return (1, JUDGES.index(judge) if judge in JUDGES else len(JUDGES), name)


def metric_kinds(cases: Sequence[Case]) -> dict[str, str]:
    """Exported metric name -> ``numerical`` | ``categorical`` | ``text``, in export order."""
    names = sorted({m for c in cases for m in case_metrics(c)}, key=_judged_order)
    scored = [case_metrics(c) for c in cases if c.status in ("passed", "failed")]
    kinds: dict[str, str] = {}
    for name in names:
        if any(name not in m for m in scored):
            kinds[name] = "text"
        elif category_names(name) and is_binary(_values(cases, name)):
            kinds[name] = "categorical"
        else:
            kinds[name] = "numerical"
    return kinds


def _choices(pairs: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    return [
        {"value": v, "display_value": v.replace("_", " "), "numeric_value": n} for v, n in pairs
    ]


def declare_metrics(
    cases: Sequence[Case],
    kinds: Mapping[str, str],
    *,
    not_run: bool,
    case_kinds: Sequence[str] = (),
    reasons: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The ``metrics`` section: status, every metric of ``kinds``, then the text metrics.

    ``case_kinds`` are the case kinds in the file; they decide each metric's ``order``.
    ``reasons`` are the judges whose reasons the file carries (``<judge>_reasons``).
    """
    statuses = [*STATUS_VALUES, *((("not_run", 0),) if not_run else ())]
    out = [
        metric_entry(
            "status",
            "the case verdict under the run's case thresholds",
            "categorical",
            values=_choices(statuses),
        )
    ]
    for name, kind in kinds.items():
        text = description(name)
        direction = order(name, case_kinds)
        if kind == "categorical":
            one, zero = category_names(name) or ("1", "0")
            choices = _choices([(one, 1), (zero, 0)])
            out.append(metric_entry(name, text, kind, values=choices, order=direction))
        elif kind == "numerical":
            span = value_range(_values(cases, name))
            out.append(metric_entry(name, text, kind, range_=span, order=direction))
        else:
            note = "not on every scored case, so instance-level text"
            out.append(metric_entry(name, f"{text} ({note})".strip(), kind))
    out.append(metric_entry(FAILURES_METRIC, "thresholds this case missed, and errors", "text"))
    out.append(
        metric_entry(RETRIEVED_METRIC, "the ranked source ids the pipeline retrieved", "text")
    )
    for judge in reasons:
        entry = metric_entry(
            judge + REASONS_SUFFIX,
            f"why the {judge} judge scored this case as it did (verdict of each claim, "
            "statement or context, with the supporting context), or why it did not judge it",
            "text",
        )
        entry["display_name"] = f"{DISPLAY_NAMES.get(judge, judge)}: reasons"
        out.append(entry)
    return out


def annotation_value(name: str, value: float, kind: str) -> str | float:
    """What an evaluation records for one metric of the given kind."""
    if kind == "categorical":
        one, zero = category_names(name) or ("1", "0")
        return one if value == 1.0 else zero
    if kind == "numerical":
        return value
    return format(value, ".6g")


def metric_entry(
    name: str,
    description: str,
    kind: str,
    *,
    values: list[dict[str, Any]] | None = None,
    range_: list[float] | None = None,
    order: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "display_name": DISPLAY_NAMES.get(name, name),
        "description": description,
        "author": "algorithm",
        "type": kind,
    }
    if kind != "text":
        out["aggregator"] = "average"
    if order is not None:
        out["order"] = order
    if values is not None:
        out["values"] = values
    if range_ is not None:
        out["range"] = range_
    return out


def failure_line(failure: Failure) -> str:
    if failure.observed is None:
        detail = f"{failure.metric}: not available ({failure.reason})"
    else:
        detail = f"{failure.metric} = {failure.observed:.4g} (expected {failure.bound})"
    return f"{failure.expression}: {detail}"
