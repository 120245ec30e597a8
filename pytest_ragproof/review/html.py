"""The review app's marker of safe markup, over :mod:`markupsafe`.

Every page and fragment of the app is a Jinja2 template (``templates/review/``, rendered
by :mod:`pytest_ragproof.reporting.templating`, autoescape on). ``Html`` is
:class:`markupsafe.Markup`, the one marker of markup that is already safe, which the
templates write as is (a rendered template or macro, an SVG chart); anything else a page
is handed (``Node``) is escaped when written.
"""

from __future__ import annotations

from markupsafe import Markup

__all__ = ["Html", "Node"]

Html = Markup

Node = Html | str | int | float | None
