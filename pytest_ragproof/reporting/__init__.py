"""Renderers over the results document (``ragproof.results/1``): Markdown, HTML, InspectorRAGet.

Each renderer is ``render_<format>(results: dict) -> str`` and imports nothing heavy.
"""
