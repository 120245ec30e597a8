"""Interop: import other tools' test sets as ragproof datasets, export datasets to them.

``ragproof import --from raget|ragas|deepeval|promptfoo|otel|phoenix`` (one module per tool, each
turning a file into :class:`~pytest_ragproof.interop.drafts.Draft` records),
``build.py`` (source ids, validation, writing) and ``report.py`` (the field report);
``ragproof export --to ragas|deepeval|raget`` in ``export.py``; ``frames.py`` holds
the ``to_pandas()`` tables. Nothing here is imported by the plugin: these modules
load only when one of those commands or methods runs. See docs/interop.md.
"""

from __future__ import annotations

TOOLS = ("raget", "ragas", "deepeval", "promptfoo", "otel", "phoenix")
"""The tools ``ragproof import --from`` reads."""

EXPORT_TOOLS = ("ragas", "deepeval", "raget")
"""The tools ``ragproof export --to`` writes."""
