"""Writing the optional exports of a run (Markdown, HTML, InspectorRAGet).

Each exporter is a function ``render(results: dict) -> str`` over the results
document (``ragproof.results/1``), imported only when its option is used. The
``ragproof report`` command uses the same functions.
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


def write_export(name: str, results: dict[str, Any], path: Path) -> None:
    from pytest_ragproof.dataset.freeze import write_atomic

    text = renderer(name)(results)
    if EXPORTERS[name][2] and path.exists():
        with path.open("a", encoding="utf-8") as fh:
            fh.write("\n" + text)
        return
    write_atomic(path, text)
