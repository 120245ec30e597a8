"""Writing the optional exports of a run (Markdown, HTML, InspectorRAGet).

Each exporter is a function ``render(results: dict) -> str`` over the results
document (``ragproof.results/1``), imported only when its option is used. The
``ragproof report`` command uses the same functions. The InspectorRAGet export of
a run with several case kinds is one file per kind (:func:`export_files`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

# option name -> (module, function, append to an existing file?)
EXPORTERS: dict[str, tuple[str, str, bool]] = {
    "markdown": ("pytest_ragproof.reporting.markdown", "render_markdown", True),
    "html": ("pytest_ragproof.reporting.html", "render_html", False),
    "inspectorraget": ("pytest_ragproof.reporting.inspectorraget", "render_inspectorraget", False),
}


def renderer(name: str) -> Callable[[dict[str, Any]], str]:
    module, func, _ = EXPORTERS[name]
    fn: Callable[[dict[str, Any]], str] = getattr(importlib.import_module(module), func)
    return fn


def export_files(name: str, results: dict[str, Any], path: Path) -> list[tuple[Path, str]]:
    """The files an export to ``path`` writes, as (path, text).

    One file, except InspectorRAGet for a run of several case kinds: one file per
    kind (``run.qa.json``, ``run.unanswerable.json``, ``run.injection.json``).
    """
    if name == "inspectorraget":
        from pytest_ragproof.reporting.inspectorraget import export_files as per_kind

        return per_kind(results, path)
    return [(path, renderer(name)(results))]


def write_export(name: str, results: dict[str, Any], path: Path) -> list[Path]:
    """Write the export ``name`` of ``results`` to ``path``; return the files written."""
    from pytest_ragproof.fileio import write_atomic

    files = export_files(name, results, path)
    for target, text in files:
        if EXPORTERS[name][2] and target.exists():
            with target.open("a", encoding="utf-8") as fh:
                fh.write("\n" + text)
        else:
            write_atomic(target, text)
    return [target for target, _ in files]
