"""Writing the optional exports of a run (Markdown, HTML, InspectorRAGet).

Each exporter is a function ``render(results: dict) -> str`` over the results
document (``ragproof.results/1``), imported only when its option is used. The
``ragproof report`` command uses the same functions. The InspectorRAGet export of
a run with several case kinds is one file per kind (:func:`export_files`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.vocabulary import KINDS

if TYPE_CHECKING:
    from pytest_ragproof.labels import Label

# option name -> (module, function, append to an existing file?)
EXPORTERS: dict[str, tuple[str, str, bool]] = {
    "markdown": ("pytest_ragproof.reporting.markdown", "render_markdown", True),
    "html": ("pytest_ragproof.reporting.html", "render_html", False),
    "inspectorraget": ("pytest_ragproof.reporting.inspectorraget", "render_inspectorraget", False),
}


_HTML_MARK = b'<meta name="generator" content="pytest-ragproof">'
_OWNER_MARK = b'"owner": "pytest-ragproof"'


def _ours(name: str, path: Path) -> bool:
    """Was the existing file at ``path`` written by this export (so may be replaced)?"""
    try:
        with path.open("rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    if name == "html":
        return _HTML_MARK in head
    if name == "markdown":
        return head.startswith(("### ✅ ragproof:".encode(), "### ❌ ragproof:".encode()))
    return _OWNER_MARK in head or b'"owner":"pytest-ragproof"' in head


def refusal(
    name: str, path: Path, shown: str | None = None, *, replace: bool | None = None
) -> str | None:
    """Why an export must not be written at ``path``, or None when it may.

    Nothing that is not this export's own earlier output is replaced: never a dataset
    or a results file; an HTML or InspectorRAGet file only when ragproof wrote it. A
    Markdown summary is appended to an existing file (a CI step summary), but never to
    a dataset or a results file. ``replace``: whether this write replaces an existing
    file (default: the export's own rule; ``ragproof report -o`` always replaces).
    """
    appends = EXPORTERS[name][2] if replace is None else not replace
    from pytest_ragproof.verdict.baseline import sniff

    shown = shown or str(path)
    targets = [path]
    if name == "inspectorraget":
        from pytest_ragproof.reporting.inspectorraget import kind_path

        targets += [kind_path(path, kind) for kind in KINDS]
    for target in targets:
        kind = sniff(target)
        if kind is None:
            continue
        if kind == "dataset":
            return f"{shown}: {target.name} is a ragproof dataset; choose another path"
        if kind == "results":
            return f"{shown}: {target.name} is a ragproof results file; choose another path"
        if not appends and not _ours(name, target):
            return (
                f"{shown}: {target.name} exists and was not written by this export; ragproof "
                "will not replace it; choose a new path"
            )
    return None


def renderer(name: str) -> Callable[[dict[str, Any]], str]:
    module, func, _ = EXPORTERS[name]
    fn: Callable[[dict[str, Any]], str] = getattr(importlib.import_module(module), func)
    return fn


def render(name: str, results: dict[str, Any], *, source: str | None = None) -> str:
    """The export ``name`` of ``results`` as text. ``source`` (HTML only): the results
    file the report is made from, named beside a text the page shortened."""
    if name == "html":
        from pytest_ragproof.reporting.html import render_html

        return render_html(results, source=source)
    return renderer(name)(results)


def export_files(
    name: str,
    results: dict[str, Any],
    path: Path,
    *,
    labels: Sequence[Label] | None = None,
    source: str | None = None,
) -> list[tuple[Path, str]]:
    """The files an export to ``path`` writes, as (path, text).

    One file, except InspectorRAGet for a run of several case kinds: one file per
    kind (``run.qa.json``, ``run.unanswerable.json``, ``run.injection.json``).
    ``labels`` (InspectorRAGet only): people's labels, exported as annotators.
    ``source``: see :func:`render`.
    """
    if name == "inspectorraget":
        from pytest_ragproof.reporting.inspectorraget import export_files as per_kind

        return per_kind(results, path, labels=labels)
    return [(path, render(name, results, source=source))]


def write_export(
    name: str,
    results: dict[str, Any],
    path: Path,
    *,
    labels: Sequence[Label] | None = None,
    source: str | None = None,
) -> list[Path]:
    """Write the export ``name`` of ``results`` to ``path``; return the files written."""
    from pytest_ragproof.fileio import write_atomic

    files = export_files(name, results, path, labels=labels, source=source)
    for target, text in files:
        if EXPORTERS[name][2] and target.exists():
            with target.open("a", encoding="utf-8") as fh:
                fh.write("\n" + text)
        else:
            write_atomic(target, text)
    return [target for target, _ in files]
