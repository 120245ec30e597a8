"""The text ``ragproof judge-check`` prints, from the report it writes to ``--json``.

Both renderers read a judge-check report (``ragproof.judge-check/1``, the document the
command builds and writes), never a results document: :func:`render` the figures of a
run that judged labelled items, :func:`render_people` the judges of a results file
against a labels file of ``ragproof review`` (:func:`pytest_ragproof.labels.agreement`'s
``to_dict``). Ids, names and numbers only, never an item's text or a label's note.
"""

from __future__ import annotations

from typing import Any

__all__ = ["problems", "render", "render_people"]

_LABELS = {
    "accuracy": "accuracy",
    "precision": "precision",
    "recall": "recall",
    "f1": "F1",
    "kappa": "Cohen's κ",
    "precision_0": "precision (label 0)",
    "recall_0": "recall (label 0)",
    "f1_0": "F1 (label 0)",
    "spearman": "Spearman ρ",
    "kendall_tau_b": "Kendall τ-b",
}


Columns = tuple[tuple[str, str], ...]
BINARY_COLUMNS: Columns = (
    ("accuracy", "accuracy"),
    ("precision", "precision"),
    ("recall", "recall"),
    ("kappa", "Cohen's κ"),
)
GRADED_COLUMNS: Columns = (("spearman", "Spearman ρ"), ("kendall_tau_b", "Kendall τ-b"))
STATISTICS = {"cohen_kappa": "Cohen's κ", "krippendorff_alpha": "Krippendorff's α"}


def problems(document: dict[str, Any]) -> list[str]:
    items = document["items"]
    out = []
    if items["errors"]:
        out.append(
            f"{len(items['errors'])} item(s) could not be judged (judge call failed): "
            f"{', '.join(items['errors'])}; the figures leave them out, so the command fails "
            "(rerun: answered calls are cached)"
        )
    if not items["measured"]:
        out.append("no item was measured: there is no agreement to report")
    return out


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render(document: dict[str, Any]) -> str:
    """The table ``ragproof judge-check`` prints (ids and numbers only, never item text)."""
    from tabulate import tabulate

    items = document["items"]
    source = document["source"]
    shown = source.get("labelled") or source.get("results") or source.get("halueval")
    lines = [
        f"judge-check: {document['metric']} by {document['judge_model']} on "
        f"{items['labelled']} labelled item(s) from {shown} ({document['labels']} labels)",
    ]
    counts = [f"measured {items['measured']}"]
    if items["not_judged"]:
        by_reason: dict[str, list[str]] = {}
        for item_id, reason in items["not_judged"].items():
            by_reason.setdefault(reason, []).append(item_id)
        counts.append(
            "not judged "
            + "; ".join(
                f"{len(ids)} {reason} ({', '.join(ids)})" for reason, ids in by_reason.items()
            )
        )
    if items["errors"]:
        counts.append(
            f"errors {len(items['errors'])} ("
            + ", ".join(f"{i}: {e.get('step')} {e.get('type')}" for i, e in items["errors"].items())
            + ")"
        )
    if items["unlabelled"]:
        counts.append(f"{items['unlabelled']} without a {document['metric']} label skipped")
    lines.append("; ".join(counts))
    if "cut" in document:
        c = document["confusion"]
        lines.append(
            f"a score >= {document['cut']} counts as 1; judge vs labels: "
            f"{c['tp']} true 1, {c['fp']} false 1, {c['fn']} false 0, {c['tn']} true 0"
        )
    rows = []
    for name, figure in document["figures"].items():
        ci = figure.get("ci95")
        value = (
            _fmt(figure["value"])
            if figure["value"] is not None
            else (f"undefined ({figure['undefined']})")
        )
        rows.append([_LABELS[name], value, "—" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"])
    if rows:
        boot = document["bootstrap"]
        lines.append(
            tabulate(
                rows,
                headers=["figure", "value", "95% CI"],
                tablefmt="simple",
                disable_numparse=True,
            )
        )
        lines.append(
            f"intervals: percentile bootstrap, {boot['resamples']} resamples, seed {boot['seed']}"
        )
    published = document.get("published")
    if published:
        lines.append(
            f"published: {published['source']}: precision {published['precision']}, recall "
            f"{published['recall']}, F1 {published['f1']}, with hallucinated answers as the "
            "positive class: compare with the label 0 rows"
        )
    usage = document["usage"]
    cost = "cost unknown" if usage["cost_usd"] is None else f"${usage['cost_usd']:.4f}"
    failures: dict[str, int] = usage.get("failures") or {}
    failed = ""
    if failures:
        kinds = ", ".join(f"{n} {kind}" for kind, n in failures.items())
        failed = f", {sum(failures.values())} failed ({kinds})"
    lines.append(
        f"judge calls: {usage['calls']}{failed}, {usage['cached']} cached, "
        f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens, {cost}"
    )
    if usage.get("response_format"):
        lines.append(f"judge response format: {usage['response_format']}")
    return "\n".join(lines) + "\n"


def _cell(figures: dict[str, dict[str, Any]], name: str) -> str:
    entry = figures.get(name)
    if entry is None or entry["value"] is None:
        return "undefined" if entry is not None else "—"
    ci = entry.get("ci95")
    return _fmt(entry["value"]) + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def _row(name: str, figures: dict[str, Any], columns: Columns) -> list[str]:
    return [name, str(figures["measured"]), *(_cell(figures["figures"], c) for c, _ in columns)]


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def render_people(document: dict[str, Any]) -> str:
    """What ``--results R --labels L`` (a labels file) prints: ids, names and numbers only,
    never a label's note."""
    from tabulate import tabulate

    from pytest_ragproof.labels import STALE_REASONS

    counts = document["labels"]
    source = document["source"]
    model = document.get("judge_model") or "an unrecorded model"
    people = _count(len(counts["reviewers"]), "reviewer")
    lines = [
        f"judge-check: the judges of {source['results']} ({model}) against "
        f"{_count(counts['fresh'], 'fresh label')} by {people} from {source['labels']}; "
        "no judge was called",
    ]
    left_out = [
        f"{n} stale ({STALE_REASONS[reason]})" for reason, n in sorted(counts["stale"].items())
    ]
    if counts["unmatched"]:
        left_out.append(f"{counts['unmatched']} of cases not in these results")
    if left_out:
        lines.append("left out: " + "; ".join(left_out))
    if counts["withdrawn"]:
        lines.append(f"withdrawn by their reviewer: {counts['withdrawn']}")
    for metric, entry in document["metrics"].items():
        overall = entry["all"]
        if overall["labels"] == "binary":
            columns = BINARY_COLUMNS
            head = f"{metric}: 0/1 labels; a judge score >= {document['cut']} counts as 1"
        else:
            columns = GRADED_COLUMNS
            head = f"{metric}: graded labels"
        if overall["not_judged"]:
            shown = ", ".join(
                f"{reason} {n}" for reason, n in sorted(overall["not_judged"].items())
            )
            head += f"; {_count(sum(overall['not_judged'].values()), 'label')} without a judge "
            head += f"score ({shown})"
        lines += ["", head]
        rows = [_row("all reviewers", overall, columns)]
        rows += [_row(name, f, columns) for name, f in entry["by_reviewer"].items()]
        lines.append(
            tabulate(
                rows,
                headers=["reviewer", "items", *(label for _, label in columns)],
                tablefmt="simple",
                disable_numparse=True,
            )
        )
        people = entry["people"]
        if people["statistic"] is None:
            lines.append(f"between people: {people['undefined']}")
        else:
            stat = STATISTICS[people["statistic"]]
            if people["statistic"] == "krippendorff_alpha":
                stat += f" ({people['level']})"
            value = (
                f"= {people['value']:.3f}"
                if people["value"] is not None
                else f"undefined ({people['undefined']})"
            )
            lines.append(
                f"between people: {stat} {value} among {', '.join(people['reviewers'])} on "
                f"{_count(people['shared_items'], 'item')} labelled by two or more"
            )
        claims = entry.get("claims")
        if claims:
            lines.append(
                f"claims: {claims['given']} verdict(s) given: {claims['agree']} agree with the "
                f"judge, {claims['overruled']} overrule it, {claims['missing']} not in its list"
            )
    boot = document["bootstrap"]
    if document["metrics"]:
        lines += [
            "",
            f"intervals: percentile bootstrap, {boot['resamples']} resamples, seed {boot['seed']}"
            "; all reviewers: every label is one item",
        ]
    found = document["disagreements"]
    lines += ["", f"disagreements: {len(found)}"]
    if found:
        lines.append(
            tabulate(
                [
                    [
                        d["case_id"],
                        d["pipeline"],
                        d["metric"],
                        _fmt(d["judge_score"]),
                        _fmt(d["verdict"]),
                        d["reviewer"],
                    ]
                    for d in found
                ],
                headers=["case", "pipeline", "metric", "judge", "human", "reviewer"],
                tablefmt="simple",
                disable_numparse=True,
            )
        )
    return "\n".join(lines) + "\n"
