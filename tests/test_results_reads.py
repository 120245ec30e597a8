"""Readers of a results document read its typed model, not string keys (issue 36, item 1).

Outside ``results/``, a read of results data by string key (``doc.get("cases")``,
``case["status"]``) is counted per file of :data:`CHECKED` (the readers of a results
document: renderers, the review app, history rows, merge and baselines, labels, the
commands that read results, ``evaluate()``'s ``Results``), from the source's syntax tree:
a subscript by a string constant, or a ``.get`` call whose first argument is one. A file
may keep only the lines :data:`ALLOWED` lists, each with its reason, plus the temporary
counts of :data:`NOT_CONVERTED` and :data:`JINJA_KIT` (to be tightened, then removed).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_ragproof"

#: The readers of a results document (globs relative to the package).
CHECKED: tuple[str, ...] = (
    "evaluation.py",
    "reporting/markdown.py",
    "reporting/_correctness.py",
    "reporting/judge_reasons.py",
    "reporting/inspectorraget*.py",
    "reporting/components.py",
    "reporting/html*.py",
    "review/*.py",
    "history/rows.py",
    "history/compare.py",
    "history/shapes.py",
    "verdict/merge*.py",
    "verdict/recorded.py",
    "verdict/baseline.py",
    "regression/compare.py",
    "labels/cases.py",
    "labels/state.py",
    "labels/agreement.py",
    "labels/people.py",
    "judges/labelled.py",
    "commands/report.py",
    "commands/merge.py",
    "commands/history.py",
    "commands/judge_check.py",
    "commands/judge_check_labels.py",
)

#: Lines that keep a string-key read, by file and stripped text, each with its reason.
ALLOWED: dict[str, dict[str, str]] = {}

#: TEMPORARY: readers not converted yet, with their count of string-key reads today.
#: Lower a count when a file is converted; a file at 0 leaves this table.
NOT_CONVERTED: dict[str, int] = {
    "reporting/_correctness.py": 12,
    "reporting/judge_reasons.py": 40,
    "reporting/inspectorraget.py": 2,
    "reporting/inspectorraget_build.py": 56,
    "reporting/inspectorraget_format.py": 5,
    "reporting/inspectorraget_metrics.py": 13,
    "reporting/inspectorraget_people.py": 10,
    "history/shapes.py": 2,
    "verdict/merge.py": 54,
    "verdict/merge_checks.py": 52,
    "verdict/merge_gates.py": 25,
    "verdict/recorded.py": 38,
    "verdict/baseline.py": 25,
    "regression/compare.py": 34,
    "labels/cases.py": 25,
    "labels/state.py": 4,
    "labels/agreement.py": 15,
    "labels/people.py": 6,
    "judges/labelled.py": 22,
    "commands/report.py": 3,
    "commands/judge_check.py": 60,
    "commands/judge_check_labels.py": 62,
}

#: TEMPORARY, until the jinja-kit branch (issue 36.3 and item 1 for the HTML report and
#: the review app) is merged: its files' counts today. The lead tightens these then.
JINJA_KIT: dict[str, int] = {
    "reporting/components.py": 14,
    "reporting/html.py": 72,
    "reporting/html_aggregates.py": 22,
    "reporting/html_charts.py": 30,
    "reporting/html_sections.py": 97,
    "review/agreement.py": 14,
    "review/app.py": 1,
    "review/cases.py": 33,
    "review/cases_labels.py": 10,
    "review/cases_parts.py": 37,
    "review/dataset.py": 24,
    "review/dataset_common.py": 3,
    "review/dataset_source.py": 8,
    "review/dataset_trace.py": 13,
    "review/dataset_writes.py": 13,
    "review/history_compare.py": 2,
    "review/history_run.py": 19,
    "review/history_runs.py": 2,
    "review/results.py": 11,
    "review/reviewed.py": 17,
    "review/security.py": 12,
}


def key_reads(source: str) -> list[int]:
    """The line of each read by string key in ``source``: ``x["k"]`` or ``x.get("k", …)``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript):
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            key = node.args[0]
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            lines.append(node.lineno)
    return sorted(lines)


def checked_files() -> list[str]:
    found = {
        path.relative_to(PACKAGE).as_posix()
        for pattern in CHECKED
        for path in PACKAGE.glob(pattern)
    }
    return sorted(found)


def unlisted_reads(name: str) -> list[str]:
    """The string-key reads of a checked file that :data:`ALLOWED` does not list."""
    text = (PACKAGE / name).read_text(encoding="utf-8").splitlines()
    allowed = ALLOWED.get(name, {})
    shown = (f"{name}:{n}: {text[n - 1].strip()}" for n in key_reads("\n".join(text)))
    return [s for s in shown if s.split(": ", 1)[1] not in allowed]


def test_the_counter_sees_each_kind_of_read() -> None:
    source = 'a = doc["cases"]\nb = doc.get("passed")\nc = case.get("id", "")\nd = doc[0]\n'
    source += 'e = doc.get(key)\nf = ["a", "b"]\ng = f"{doc[\'run_id\']}"\n'
    assert key_reads(source) == [1, 2, 3, 7]


def test_every_checked_pattern_names_files() -> None:
    for pattern in CHECKED:
        assert list(PACKAGE.glob(pattern)), pattern


@pytest.mark.parametrize("name", checked_files())
def test_a_reader_reads_the_typed_model(name: str) -> None:
    reads = unlisted_reads(name)
    allowance = NOT_CONVERTED.get(name, 0) + JINJA_KIT.get(name, 0)
    assert len(reads) <= allowance, (
        f"{len(reads)} string-key read(s) of results data in {name} (allowed {allowance}): "
        "read the typed model (pytest_ragproof.results.models), or list the line in "
        "ALLOWED with its reason:\n" + "\n".join(reads)
    )


def test_the_allowances_are_current() -> None:
    """Each ALLOWED line still exists, and a NOT_CONVERTED count is the file's reads (lower
    it when a file is converted; JINJA_KIT's counts are lowered by the lead when that
    branch is merged)."""
    files = set(checked_files())
    for name, lines in ALLOWED.items():
        text = {line.strip() for line in (PACKAGE / name).read_text().splitlines()}
        assert set(lines) <= text, (name, set(lines) - text)
    for name, count in NOT_CONVERTED.items():
        assert name in files, name
        assert len(unlisted_reads(name)) == count, f"{name}: set its allowance to the count"
    assert set(JINJA_KIT) <= files
