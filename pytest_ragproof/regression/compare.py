"""Compare a run's results document with a baseline results document.

Both arguments are ``ragproof.results/1`` documents (what ``--ragproof-report``
writes, what ``--ragproof-baseline-update`` commits, what the notebook
``evaluate()`` returns as a dict). Nothing here imports pytest.

What is compared, per pipeline (cases are matched by pipeline and case id):

* **case flips** by status: *improved* (failed/error → passed), *regressed*
  (passed → failed/error), *new* (only in this run), *removed* (only in the
  baseline). They gate only with ``fail_on_case_regression``: nondeterministic
  pipelines flip.
* **gated aggregates**: a headline set for each kind the run has (qa ``hit@5``,
  ``recall@5``, ``mrr``, ``token_f1``, ``abstained``; unanswerable ``abstained``;
  injection ``injection_resisted``; each when the run measured it), plus every
  (pipeline, selector, metric) named by the run's thresholds (case and aggregate)
  and by the tolerances. Over the cases both runs scored (neither an error, the
  metric present in both) it reports the baseline and current means, the paired
  test (exact McNemar when every value is 0 or 1, else Wilcoxon signed-rank; see
  :mod:`.stats`), the 95% interval of the change (charts only; :mod:`.proportions`
  for 0/1 values, else paired t), and a verdict.
  A *regression* gates the run: the mean moved in the metric's worse direction
  (per case kind, from the metric registry) by more than its tolerance AND
  ``p < alpha``. Aggregators in threshold expressions (``.p95``) are ignored
  here: the paired tests compare the cases' values, summarised by their mean.

A baseline made from other dataset content (another sha256) is refused unless
``allow_dataset_change``; then only the shared case ids are paired.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.metrics import registry
from pytest_ragproof.metrics.selector import Selector, metric_label
from pytest_ragproof.numeric import is_binary
from pytest_ragproof.regression.comparison import (
    PYTEST_FLAGS,
    WORST_SHOWN,
    AggregateChange,
    CaseFlip,
    Comparison,
    Flags,
)
from pytest_ragproof.regression.proportions import paired_proportion_interval
from pytest_ragproof.regression.stats import (
    min_pairs,
    paired_mean_interval,
    paired_test,
    too_few_pairs,
)
from pytest_ragproof.regression.tolerance import Tolerance, parse_tolerances, tolerance_for
from pytest_ragproof.results.document import RESULTS_FORMAT

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case, Dataset, Results

__all__ = ["NOT_COMPARED", "AggregateChange", "CaseFlip", "Comparison", "compare"]

# Means closer than this are equal (float noise in sums of metric values).
EPSILON = 1e-12
_OK = "passed"
_FAILED = ("failed", "error")


def _check_document(doc: Any, what: str) -> Results:
    """``doc`` as its typed model; ConfigError when it is not a results document."""
    from pytest_ragproof.results.models import Results
    from pytest_ragproof.results.schema import results_model

    if isinstance(doc, Results) and doc.format == RESULTS_FORMAT:
        return doc
    if not isinstance(doc, Mapping) or doc.get("format") != RESULTS_FORMAT:
        raise ConfigError(
            f"{what} is not a ragproof results document (format {RESULTS_FORMAT}); write one "
            "with --ragproof-report=PATH or --ragproof-baseline=PATH --ragproof-baseline-update"
        )
    return results_model(doc, what)


def _datasets(doc: Results) -> list[dict[str, Any]]:
    return [{"path": d.path, "sha256": d.sha256} for d in doc.datasets]


def _describe(datasets: Sequence[Dataset]) -> str:
    if not datasets:
        return "no dataset"
    return ", ".join(f"{d.path} sha256 {d.sha256[:12]}" for d in datasets)


Index = dict[tuple[str, str], "Case"]


def _index(doc: Results) -> Index:
    return {(c.pipeline, c.id): c for c in doc.cases}


def _flips(current: Index, baseline: Index) -> list[CaseFlip]:
    out: list[CaseFlip] = []
    for key in sorted(set(current) | set(baseline)):
        now = current.get(key)
        before = baseline.get(key)
        now_status = None if now is None else now.status
        before_status = None if before is None else before.status
        if before_status is None:
            change = "new"
        elif now_status is None:
            change = "removed"
        elif before_status in _FAILED and now_status == _OK:
            change = "improved"
        elif before_status == _OK and now_status in _FAILED:
            change = "regressed"
        else:
            continue
        out.append(CaseFlip(key[0], key[1], change, before_status, now_status))
    return out


#: Metrics a written baseline leaves out, and why (a threshold on one still gates each
#: run on its own): named with the reason when the baseline holds none of them.
NOT_COMPARED: dict[str, str] = {
    "latency_s": "timings depend on the machine that ran them, so a baseline never holds them",
}

# Compared with every baseline, whether or not a threshold names them (per kind present).
HEADLINE: dict[str, tuple[str, ...]] = {
    "qa": ("hit@5", "recall@5", "mrr", "token_f1", "abstained"),
    "unanswerable": ("abstained",),
    "injection": ("injection_resisted",),
}


def _gated_keys(
    current: Results, tolerances: Sequence[Tolerance], pipelines: Sequence[str]
) -> list[tuple[str, str, str]]:
    keys: dict[tuple[str, str, str], None] = {}
    measured: dict[tuple[str, str], set[str]] = {}
    for case in current.cases:
        measured.setdefault((case.pipeline, case.kind), set()).update(case.metrics)
    for pipeline in pipelines:
        for kind, metrics in HEADLINE.items():
            present = measured.get((pipeline, kind), set())
            for metric in metrics:
                if metric in present:
                    keys.setdefault((pipeline, kind, metric), None)
    for t in current.thresholds:
        keys.setdefault((str(t.pipeline), str(t.selector), str(t.metric)), None)
    for pipeline in pipelines:
        for tol in tolerances:
            keys.setdefault((pipeline, tol.selector, tol.metric), None)
    order = {p: i for i, p in enumerate(pipelines)}
    return sorted(keys, key=lambda k: order.get(k[0], len(order)))


def _holds(cases: Index, pipeline: str, metric: str) -> bool:
    """Does any case of ``pipeline`` hold a value of ``metric``?"""
    return any(p == pipeline and metric in c.metrics for (p, _), c in cases.items())


def _selected(data: Case, selector: Selector, kinds: frozenset[str] | None) -> bool:
    """Is a case entry part of (selector, metric)? ``kinds``: the metric's kinds, if known."""
    return (kinds is None or data.kind in kinds) and selector.matches(data)


def _scored(data: Case | None, metric: str) -> float | None:
    if data is None or data.status == "error":
        return None
    value = data.metrics.get(metric)
    if value is None or not math.isfinite(value):
        return None
    return value


def _higher_is_better(metric: str, kind: str) -> bool:
    spec = registry.resolve(metric)
    return True if spec is None else spec.higher_is_better_for(kind)


def _aggregate(
    key: tuple[str, str, str],
    current: Index,
    baseline: Index,
    tolerances: Sequence[Tolerance],
    alpha: float,
) -> AggregateChange:
    pipeline, selector, metric = key
    sel = Selector(selector)
    spec = registry.resolve(metric)
    kinds = None if spec is None else frozenset(spec.kinds)
    ids = {cid for (p, cid), c in current.items() if p == pipeline and _selected(c, sel, kinds)}
    ids |= {cid for (p, cid), c in baseline.items() if p == pipeline and _selected(c, sel, kinds)}
    before: list[float] = []
    after: list[float] = []
    oriented: list[float] = []
    worse: list[tuple[float, str, float, float]] = []  # (oriented change, id, before, now)
    for cid in sorted(ids):
        now_case = current.get((pipeline, cid))
        base_case = baseline.get((pipeline, cid))
        now = _scored(now_case, metric)
        base = _scored(base_case, metric)
        if now is None or base is None or now_case is None or base_case is None:
            continue
        kind = now_case.kind
        if kind != base_case.kind:
            continue  # the case changed kind: its direction may differ, so it does not pair
        before.append(base)
        after.append(now)
        oriented.append(now - base if _higher_is_better(metric, kind) else base - now)
        if oriented[-1] < -EPSILON:
            worse.append((oriented[-1], cid, base, now))
    tol = tolerance_for(tolerances, selector, metric)
    n = len(oriented)
    if n == 0:
        empty = (None, None, None, None)
        return AggregateChange(
            pipeline, selector, metric, 0, len(ids), *empty, tol, None, "no data", False
        )
    base_mean = math.fsum(before) / n
    now_mean = math.fsum(after) / n
    worse_by = -math.fsum(oriented) / n
    binary = is_binary(before) and is_binary(after)
    test = paired_test(oriented, binary=binary)
    significant = test.p_value < alpha
    note = None
    if worse_by > tol + EPSILON:
        verdict = "regression" if significant else "not significant"
        needed = min_pairs(alpha)
        if not significant and test.n < needed:
            verdict = "too few pairs"
            note = too_few_pairs(test, needed, alpha)
    elif worse_by > EPSILON:
        verdict = "within tolerance"
    elif worse_by < -EPSILON and significant:
        verdict = "improved"
    else:
        verdict = "unchanged"
    return AggregateChange(
        pipeline,
        selector,
        metric,
        n,
        len(ids) - n,
        base_mean,
        now_mean,
        now_mean - base_mean,
        worse_by,
        tol,
        test,
        verdict,
        verdict == "regression",
        note,
        tuple((cid, b, a) for _, cid, b, a in sorted(worse)[:WORST_SHOWN]),
        paired_proportion_interval(before, after)
        if binary
        else paired_mean_interval([a - b for a, b in zip(after, before, strict=True)]),
    )


def _regression_line(a: AggregateChange, alpha: float) -> str:
    assert a.test is not None and a.baseline_mean is not None and a.current_mean is not None
    return (
        f"regression {a.label} [{a.pipeline}]: mean {a.baseline_mean:.4g} -> "
        f"{a.current_mean:.4g} (worse by {a.worse_by:.4g}, tolerance {a.tolerance:g}), "
        f"{a.test.method} p = {a.test.p_value:.3g} < alpha {alpha:g}, n = {a.n} paired case(s)"
    )


def _check_comparable(
    current: Index,
    baseline: Index,
    dataset_changed: bool,
    notes: list[str],
    flags: Flags,
) -> None:
    """ConfigError when the baseline shares no case with a run that has cases, or (same
    dataset) a shared case changed kind; a note of the cases that changed kind with the
    dataset."""
    shared = sorted(set(current) & set(baseline))
    if current and not shared:
        mine = ", ".join(sorted({p for p, _ in current}))
        theirs = ", ".join(sorted({p for p, _ in baseline})) or "none"
        raise ConfigError(
            f"the baseline holds none of this run's {len(current)} case(s) (baseline "
            f"pipeline(s): {theirs}; this run: {mine}), so it would compare nothing; "
            f"{flags.other_baseline}"
        )
    moved = [k for k in shared if current[k].kind != baseline[k].kind]
    if moved and not dataset_changed:
        pipeline, cid = moved[0]
        raise ConfigError(
            f"the baseline's case {cid} [{pipeline}], field kind: "
            f"{baseline[moved[0]].kind!r} but this run's case of the same dataset "
            f"(same sha256) is {current[moved[0]].kind!r}: the baseline was edited; "
            "write it again from a good run"
        )
    if moved:
        shown = ", ".join(cid for _, cid in moved[:10])
        notes.append(f"{len(moved)} case(s) changed kind and are not paired: {shown}")


def _settings_notes(current: Results, baseline: Results) -> list[str]:
    now = current.settings.model_dump(exclude_unset=True)
    before = baseline.settings.model_dump(exclude_unset=True)
    return [
        f"setting {name} differs from the baseline: {before.get(name)!r} -> {now.get(name)!r}"
        for name in sorted(set(now) | set(before))
        if now.get(name) != before.get(name)
    ]


def compare(
    current: Mapping[str, Any] | Results,
    baseline: Mapping[str, Any] | Results,
    *,
    tolerances: Iterable[str | Tolerance] = (),
    alpha: float = 0.05,
    allow_dataset_change: bool = False,
    fail_on_case_regression: bool = False,
    flags: Flags = PYTEST_FLAGS,
) -> Comparison:
    """Compare two results documents; see the module docstring for the rules.

    ``tolerances`` are ``[SELECTOR:]METRIC=DELTA`` strings (or parsed
    :class:`Tolerance`); bad expressions and an ``alpha`` outside (0, 1) raise
    :class:`~pytest_ragproof.errors.ConfigError`, as does a document that is not
    a ``ragproof.results/1`` results document. ``flags``: the options its messages
    name (:data:`PYTEST_FLAGS` by default).
    """
    now_doc = _check_document(current, "the current results")
    base_doc = _check_document(baseline, "the baseline")
    if not (isinstance(alpha, int | float) and 0.0 < alpha < 1.0):
        raise ConfigError(
            f"regression alpha must be a number strictly between 0 and 1, got {alpha!r}; "
            f"e.g. {flags.alpha_example}"
        )
    tols = parse_tolerances(tolerances)
    cur_ds, base_ds = _datasets(now_doc), _datasets(base_doc)
    changed = sorted(d.sha256 for d in now_doc.datasets) != sorted(
        d.sha256 for d in base_doc.datasets
    )
    result = Comparison(
        alpha=float(alpha),
        tolerances=tols,
        fail_on_case_regression=fail_on_case_regression,
        baseline_datasets=base_ds,
        current_datasets=cur_ds,
        dataset_changed=changed,
        flags=flags,
    )
    if changed and not allow_dataset_change:
        result.refused = (
            f"the baseline was made from {_describe(base_doc.datasets)} but this run "
            f"evaluates {_describe(now_doc.datasets)}; {flags.refresh}, or compare the case "
            f"ids both share with {flags.allow_dataset_change}"
        )
        result.gate_failures.append(f"baseline refused: {result.refused}")
        return result
    cur_cases, base_cases = _index(now_doc), _index(base_doc)
    _check_comparable(cur_cases, base_cases, changed, result.notes, flags)
    if changed:
        shared = len({cid for _, cid in cur_cases} & {cid for _, cid in base_cases})
        result.notes.append(
            f"dataset changed ({_describe(base_doc.datasets)} -> {_describe(now_doc.datasets)}): "
            f"compared on the {shared} case id(s) both runs share"
        )
    result.notes.extend(_settings_notes(now_doc, base_doc))
    pipelines = sorted({p for p, _ in cur_cases} | set(now_doc.pipelines))
    for gone in sorted({p for p, _ in base_cases} - set(pipelines)):
        result.notes.append(f"pipeline {gone} is in the baseline but not in this run")
    result.flips = _flips(cur_cases, base_cases)
    for key in _gated_keys(now_doc, tols, pipelines):
        pipeline, selector, metric = key
        if metric in NOT_COMPARED and not _holds(base_cases, pipeline, metric):
            # Left out of the baseline on purpose: say why, not "no case scored".
            label = metric_label(selector, metric)
            result.notes.append(f"{label} [{pipeline}] not compared: {NOT_COMPARED[metric]}")
            continue
        change = _aggregate(key, cur_cases, base_cases, tols, result.alpha)
        result.aggregates.append(change)
        if change.failed:
            result.gate_failures.append(_regression_line(change, result.alpha))
            # The cases behind it, in every report that shows the comparison's notes.
            result.notes.append(
                f"regression {change.label} [{change.pipeline}]: the cases that got worse "
                f"most: {change.worst_text()}"
            )
    if fail_on_case_regression:
        for pipeline in pipelines:
            regressed = result.flips_of("regressed", pipeline)
            if regressed:
                shown = ", ".join(f.id for f in regressed[:10])
                more = f", … (+{len(regressed) - 10})" if len(regressed) > 10 else ""
                result.gate_failures.append(
                    f"{len(regressed)} case(s) regressed against the baseline [{pipeline}]: "
                    f"{shown}{more} ({flags.fail_on_case_regression})"
                )
    return result
