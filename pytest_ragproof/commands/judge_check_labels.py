"""``ragproof judge-check --results R --labels L`` with a labels file of ``ragproof review``.

No judge is called: the judge scores already in the results are compared with
people's fresh labels (:func:`pytest_ragproof.labels.agreement`), per judged metric,
for all reviewers together and for each reviewer, with the bootstrap intervals the
command computes when it judges labelled items itself. Stale labels (the answer or
contexts changed since they were given) and labels of cases not in the results are
counted and left out. ``--min-kappa`` gates on Cohen's κ of all reviewers together,
of every metric with 0/1 labels: a metric whose labels mix in grades on its 0/1 labels
alone, one with grades only is named as not gated (none gated: a usage error).

Exit codes as the command's: 0 measured (and the floor met); 1 the floor not met,
or no fresh label could be compared with a judge score; 2 usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.commands.judge_check_text import render_people
from pytest_ragproof.errors import UsageError

if TYPE_CHECKING:
    from pytest_ragproof.labels import AgreementReport
    from pytest_ragproof.results.models import Results


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.errors import ConfigError, DatasetError
    from pytest_ragproof.labels import LABELLED_METRICS, agreement, read_labels
    from pytest_ragproof.results.document import read_model

    results_path, labels_path = Path(args.labelled), Path(args.labels)
    if args.metric is not None and args.metric not in LABELLED_METRICS:
        raise UsageError(
            f"--metric: '{args.metric}' is not a judged metric a person labels; "
            f"choose from {', '.join(LABELLED_METRICS)}"
        )
    try:
        results = read_model(results_path)
        labels = read_labels(labels_path)
        pipelines = {c.pipeline for c in results.cases}
        if args.pipeline is not None and args.pipeline not in pipelines:
            raise ConfigError(
                f"--pipeline: no case of pipeline '{args.pipeline}' in {results_path} "
                f"(pipelines: {', '.join(sorted(pipelines)) or 'none'})"
            )
        chosen = [
            label
            for label in labels
            if (args.metric is None or label.metric == args.metric)
            and (args.pipeline is None or label.pipeline == args.pipeline)
        ]
        report = agreement(results, chosen, cut=args.cut, resamples=args.bootstrap, seed=args.seed)
    except (ConfigError, DatasetError) as exc:
        raise UsageError(str(exc)) from exc
    binary = [m for m in report.metrics if m.kappa_basis() is not None]
    if args.min_kappa is not None and report.metrics and not binary:
        raise UsageError("--min-kappa needs 0/1 labels; these labels are graded")
    document = _document(args, results, report)
    import json

    from pytest_ragproof.fileio import write_atomic

    write_atomic(Path(args.json), json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.write(render_people(document))
    print(f"figures written to {args.json}", file=sys.stderr)
    code = 0
    if not any(m.judge.measured for m in report.metrics):
        print(
            "ragproof judge-check: no fresh label could be compared with a judge score: "
            "there is no agreement to report",
            file=sys.stderr,
        )
        code = 1
    gate = document.get("min_kappa")
    if gate is not None:
        for line in gate["lines"]:
            print(f"ragproof judge-check: {line}", file=sys.stderr)
        if not gate["passed"]:
            code = 1
    return code


def _document(
    args: argparse.Namespace, results: Results, report: AgreementReport
) -> dict[str, Any]:
    from pytest_ragproof.judges.calibrate import REPORT_FORMAT

    source: dict[str, Any] = {"results": str(args.labelled), "labels": str(args.labels)}
    if args.pipeline:
        source["pipeline"] = args.pipeline
    if args.metric:
        source["metric"] = args.metric
    document: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "against": "people",
        "source": source,
        "judge_model": results.settings.judge_model,
        **report.to_dict(),
    }
    if args.min_kappa is not None:
        document["min_kappa"] = _gate(report, args.min_kappa)
    return document


def _gate(report: AgreementReport, floor: float) -> dict[str, Any]:
    """``--min-kappa`` over every metric, a line each: gated, or named as not gated."""
    from pytest_ragproof.judges.agreement import kappa_gate

    lines, passed = [], True
    for m in report.metrics:
        head = f"--min-kappa {floor}: {m.metric}: "
        basis = m.kappa_basis()
        if basis is None:
            lines.append(head + "not gated: no label is 0 or 1 (κ needs them)")
            continue
        if basis is not m.judge:
            graded = m.judge.labelled - basis.labelled
            head += (
                f"on its {basis.labelled} 0/1 label(s), {graded} graded "
                f"label{'' if graded == 1 else 's'} left out: "
            )
        met, line = kappa_gate(basis.figures, basis.confusion, floor, noun="label")
        passed = passed and met
        lines.append(head + line)
    return {"floor": floor, "passed": passed, "lines": lines}
