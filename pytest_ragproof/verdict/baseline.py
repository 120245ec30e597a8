"""``--ragproof-baseline``: write a baseline, or compare the run with one.

Called by the run verdict (:mod:`pytest_ragproof.verdict.decide`) with the results
document of the run, which holds every case's record (also under xdist).

* With ``--ragproof-baseline-update`` the results document is written at the
  baseline path and nothing is gated. The file is made diff-friendly: sorted
  keys, cases in (pipeline, dataset, id) order, and no volatile timing fields —
  each case's ``latency_s`` (top level and in ``metrics``), latency aggregates
  and latency threshold rows are dropped, so re-running an unchanged pipeline
  rewrites an identical file apart from what the pipeline itself answered.
  Latency is therefore never compared with a baseline (it depends on the
  machine); latency thresholds still gate every run on their own.
* Otherwise the baseline is read and compared (:func:`pytest_ragproof.regression.compare`);
  the outcome carries the gate failures, the lines of the terminal summary and the
  document's ``baseline`` section.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof import defaults
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.regression.compare import NOT_COMPARED, AggregateChange, Comparison, compare
from pytest_ragproof.results.document import RESULTS_FORMAT, read_model, read_results

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Results

__all__ = [
    "BaselineOutcome",
    "BaselineSettings",
    "apply_baseline",
    "baseline_document",
    "baseline_settings",
    "check_baseline_document",
    "check_baseline_path",
    "summary_lines",
]

#: Left out of a written baseline (timings depend on the machine), so never compared.
VOLATILE_METRICS = frozenset(NOT_COMPARED)
_LIST_LIMIT = 10


@dataclass(frozen=True)
class BaselineSettings:
    """Everything ``--ragproof-baseline*`` and the regression options set, parsed once."""

    path: Path
    shown: str  # the path as the user wrote it, for messages
    update: bool = False
    tolerances: tuple[str, ...] = ()
    alpha: float = defaults.REGRESSION_ALPHA
    allow_dataset_change: bool = False
    fail_on_case_regression: bool = False


@dataclass
class BaselineOutcome:
    """What a baseline does to a run: gate failures, summary lines, the document section.

    ``write`` is the document to write at the baseline path (``--ragproof-baseline-update``);
    the caller writes it, so deciding a verdict never touches a file.
    """

    gate_failures: list[str] = field(default_factory=list)
    summary_lines: list[str] = field(default_factory=list)
    section: dict[str, Any] | None = None
    write: dict[str, Any] | None = None


def baseline_settings(
    path: Path,
    *,
    shown: str,
    update: bool = False,
    tolerances: Sequence[str] = (),
    alpha: object = defaults.REGRESSION_ALPHA,
    allow_dataset_change: bool = False,
    fail_on_case_regression: bool = False,
) -> BaselineSettings:
    """Validated baseline settings (the pytest options and ``evaluate()`` both come here).

    Bad tolerances, an alpha outside (0, 1) and a path that is not (or cannot become) a
    baseline raise ConfigError before any case runs.
    """
    from pytest_ragproof.regression.tolerance import parse_tolerances

    parse_tolerances(tolerances)
    settings = BaselineSettings(
        path=path,
        shown=shown,
        update=update,
        tolerances=tuple(tolerances),
        alpha=parse_alpha(alpha),
        allow_dataset_change=allow_dataset_change,
        fail_on_case_regression=fail_on_case_regression,
    )
    check_baseline_path(settings)
    return settings


def parse_alpha(raw: object) -> float:
    """``--ragproof-regression-alpha`` as a number strictly between 0 and 1."""
    try:
        alpha = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(
            f"--ragproof-regression-alpha must be a number between 0 and 1, got {raw!r}; "
            "e.g. --ragproof-regression-alpha 0.05"
        ) from None
    if not 0 < alpha < 1:
        raise ConfigError(
            f"--ragproof-regression-alpha must be between 0 and 1, got {alpha:g}; "
            "e.g. --ragproof-regression-alpha 0.05"
        )
    return alpha


def sniff(path: Path) -> str | None:
    """'results', 'dataset', 'other' for an existing file; None when there is none."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    import json

    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return "other"
    head = raw[:4096]
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        fmt = str(data.get("format", ""))
        if fmt == RESULTS_FORMAT:
            return "results"
        if fmt.startswith("ragproof.dataset/") or "question" in data or "kind" in data:
            return "dataset"  # a frozen dataset, or a one-case JSONL file
        return "other"
    first = head.lstrip().split(b"\n", 1)[0]
    try:
        line = json.loads(first)
    except ValueError:
        return "other"
    if isinstance(line, dict) and ("question" in line or "kind" in line):
        return "dataset"  # a JSONL dataset
    if isinstance(data, list):
        return "dataset"  # a JSON array of cases
    return "other"


def check_baseline_path(settings: BaselineSettings) -> None:
    """Refuse, before any case runs, a baseline path that is not (or cannot become) a baseline.

    A dataset is never a baseline, and ``--ragproof-baseline-update`` replaces only a
    ragproof results file (or creates a new one).
    """
    if settings.path.is_dir():
        raise ConfigError(
            f"--ragproof-baseline {settings.shown} is a folder; give a file path such as "
            f"{Path(settings.shown) / 'baseline.json'}"
        )
    kind = sniff(settings.path)
    if kind in ("results", "other") and not settings.update:
        # Read now, so a file that is not a results file (truncated, not JSON) stops the
        # run before any case runs, as a schema error does.
        check_baseline_document(
            read_model(settings.path, check=True, shown=settings.shown), settings.shown
        )
    if kind == "dataset":
        raise ConfigError(
            f"--ragproof-baseline {settings.shown} is a ragproof dataset, not a results file; "
            "point it at a results file such as baseline.json (a new path is created by "
            "--ragproof-baseline-update)"
        )
    if kind == "other" and settings.update:
        raise ConfigError(
            f"--ragproof-baseline-update will not replace {settings.shown}: it is not a ragproof "
            "results file; choose a new path such as baseline.json"
        )


def check_baseline_document(doc: Results, shown: str) -> None:
    """Refuse a baseline that holds no case a comparison could use (ConfigError).

    Its shape, ranges and digest were checked on read; a baseline of no scored case
    (an empty or all-error ``cases``) would compare nothing and pass every run.
    """
    scored = [
        c
        for c in doc.cases
        if c.status != "error" and any(m not in VOLATILE_METRICS for m in c.metrics)
    ]
    if not scored:
        raise ConfigError(
            f"--ragproof-baseline {shown}: field cases: holds {len(doc.cases)} case(s) and "
            "none with a scored metric, so a comparison would compare nothing; point it at the "
            "baseline of a run that scored its cases"
        )


def baseline_document(results: Mapping[str, Any]) -> dict[str, Any]:
    """The results document as committed at the baseline path (volatile fields removed)."""
    # Neither the comparison nor the run id: re-running an unchanged pipeline rewrites
    # the same bytes.
    doc = {k: v for k, v in results.items() if k not in ("baseline", "run_id", "digest")}
    cases = []
    for case in results.get("cases") or []:
        case = {k: v for k, v in case.items() if k not in VOLATILE_METRICS}
        metrics = case.get("metrics") or {}
        case["metrics"] = {k: v for k, v in metrics.items() if k not in VOLATILE_METRICS}
        cases.append(case)
    doc["cases"] = cases
    doc["aggregates"] = [
        a for a in results.get("aggregates") or [] if a.get("metric") not in VOLATILE_METRICS
    ]
    doc["thresholds"] = [
        t for t in results.get("thresholds") or [] if t.get("metric") not in VOLATILE_METRICS
    ]
    return doc


def _how_to_create(settings: BaselineSettings) -> str:
    return (
        f"create it from a good run with `pytest --ragproof-baseline={settings.shown} "
        f"--ragproof-baseline-update` and commit {settings.path.name}"
    )


def _foreign_id(
    baseline: Results, shown: str, dataset_ids: Mapping[str, frozenset[str]]
) -> str | None:
    """The first case of ``baseline`` that claims a dataset sha256 of this run (a key of
    ``dataset_ids``: the ids of the loaded dataset with that content) but is not one of its
    cases, as a message; None when every such id is the dataset's."""
    sha_of = {d.path: d.sha256 for d in baseline.datasets}
    for i, case in enumerate(baseline.cases):
        sha = sha_of.get(case.dataset)
        ids = dataset_ids.get(sha) if sha is not None else None
        if ids is not None and case.id not in ids:
            return (
                f"{shown}: case {case.id} (cases[{i}]), field id: not a case of "
                f"dataset {case.dataset} although the baseline names its sha256 "
                f"{str(sha)[:12]}; the file was edited or made from another dataset: "
                "use the results file pytest-ragproof wrote for this dataset"
            )
    return None


def apply_baseline(
    settings: BaselineSettings,
    results: Mapping[str, Any],
    *,
    stopped: bool = False,
    dataset_ids: Mapping[str, frozenset[str]] | None = None,
) -> BaselineOutcome:
    """Prepare the baseline update or compare the run with the baseline (no file written).

    ``dataset_ids``: the case ids of each loaded dataset by its sha256; a baseline case
    naming one of those sha256 must be one of its ids (issue 40.6), or the baseline is
    refused (a gate failure)."""
    path = settings.path
    if settings.update:
        if stopped:
            kept = f"{path.name} unchanged" if path.exists() else f"{path.name} not written"
            return BaselineOutcome(
                [],
                [f"ragproof baseline: not updated (the run stopped early): {kept}"],
                {"updated": None, "not_updated": "run stopped early"},
            )
        doc = baseline_document(results)
        line = f"ragproof baseline: written to {path} ({len(doc['cases'])} case record(s))"
        if not results.get("passed", True):
            line += "; this run did not pass, so the baseline records its failures"
        return BaselineOutcome(
            [],
            [line, "ragproof baseline: commit it to compare later runs"],
            {"updated": str(path)},
            doc,
        )
    if not path.is_file():
        return BaselineOutcome([f"baseline {path} does not exist; {_how_to_create(settings)}"])
    try:
        from pytest_ragproof.results.schema import load_results

        parsed = read_results(path)
        baseline = load_results(parsed, str(path))
        check_baseline_document(baseline, str(path))
    except ConfigError as exc:
        # Never suggest --ragproof-baseline-update here: it would replace the file.
        return BaselineOutcome([f"baseline: {exc}"])
    foreign = _foreign_id(baseline, settings.shown, dataset_ids or {})
    if foreign is not None:
        return BaselineOutcome([f"baseline refused: {foreign}"])
    try:
        comparison = compare(
            results,
            # A plain --ragproof-report file may serve as a baseline: drop its timings
            # too, so latency is never compared across machines.
            baseline_document(parsed),
            tolerances=settings.tolerances,
            alpha=settings.alpha,
            allow_dataset_change=settings.allow_dataset_change,
            fail_on_case_regression=settings.fail_on_case_regression,
        )
    except ConfigError as exc:
        return BaselineOutcome([f"baseline comparison not run: {path.name}: {exc}"])
    return BaselineOutcome(
        list(comparison.gate_failures),
        summary_lines(comparison, path.name),
        {"path": str(path), **comparison.to_dict()},
    )


def _ids(flips: Sequence[Any]) -> str:
    shown = ", ".join(
        f.id if f.before is None or f.now is None else f"{f.id} ({f.before} -> {f.now})"
        for f in flips[:_LIST_LIMIT]
    )
    more = len(flips) - _LIST_LIMIT
    return shown + (f", … (+{more})" if more > 0 else "")


def _num(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _table(rows: Sequence[AggregateChange]) -> str:
    from tabulate import tabulate

    body = [
        [
            a.pipeline,
            a.selector,
            a.metric,
            a.n,
            _num(a.baseline_mean),
            _num(a.current_mean),
            _num(a.delta, "+.3f"),
            f"{a.tolerance:g}",
            "-" if a.test is None else f"{a.test.p_value:.3g}",
            a.verdict.upper() if a.failed else a.verdict,
        ]
        for a in rows
    ]
    headers = ["pipeline", "selector", "metric", "n", "baseline", "now", "delta", "tol", "p"]
    return tabulate(body, headers=[*headers, "verdict"], tablefmt="simple", disable_numparse=True)


def summary_lines(comparison: Comparison, name: str) -> list[str]:
    """The terminal summary of a comparison (the gate failures are printed by the session)."""
    if comparison.refused is not None:
        return [f"ragproof baseline {name}: not compared (dataset changed)"]
    lines = [f"ragproof baseline {name} (alpha {comparison.alpha:g}):"]
    pipelines = sorted(
        {f.pipeline for f in comparison.flips} | {a.pipeline for a in comparison.aggregates}
    )
    for pipeline in pipelines:
        counts = {
            change: comparison.flips_of(change, pipeline)
            for change in ("improved", "regressed", "new", "removed")
        }
        lines.append(
            f"  cases [{pipeline}]: "
            + ", ".join(f"{len(flips)} {change}" for change, flips in counts.items())
        )
        for change, flips in counts.items():
            if flips:
                lines.append(f"    {change}: {_ids(flips)}")
    rows = [a for a in comparison.aggregates if a.verdict != "no data"]
    if not rows:
        lines.append("  nothing comparable: no metric was scored on cases both runs share")
    else:
        lines.extend("  " + row for row in _table(rows).splitlines())
        empty = [f"{a.label} [{a.pipeline}]" for a in comparison.aggregates if a not in rows]
        if empty:
            lines.append(f"  not compared (no case scored in both runs): {', '.join(empty)}")
    for a in comparison.aggregates:
        if a.note is not None:
            lines.append(f"  {a.label} [{a.pipeline}]: {a.note}")
    lines.extend(f"  note: {note}" for note in comparison.notes)
    if comparison.flips_of("regressed") and not comparison.fail_on_case_regression:
        lines.append(
            f"  case flips do not gate the run ({comparison.flags.fail_on_case_regression} "
            "makes them)"
        )
    return lines
