"""The one HTML kit of the report and the review app: Jinja2 with autoescape.

Templates live in ``pytest_ragproof/templates/`` (loaded with :class:`jinja2.PackageLoader`);
autoescape is on: every value a template writes is escaped unless it is a
:class:`markupsafe.Markup`, which only a rendered template (or markup this package wrote
itself, such as an inline SVG chart whose labels it escaped) is. ``{{ None }}`` writes
nothing. Templates never use ``|safe``. Jinja2 is imported only when a page is
rendered, never at plugin import.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Environment
    from markupsafe import Markup

__all__ = ["call_macro", "environment", "render"]


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The package's template environment (one per process): autoescape on for every
    template, an undefined name an error, block tags leave no blank lines."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    from pytest_ragproof.reporting import template_filters

    class Loader(PackageLoader):
        """Reads ``*.j2`` templates with each line's indentation and line break removed, so
        a template is written indented and renders as the compact markup the pages had
        (no whitespace between tags; a space a line needs is written inside it)."""

        def get_source(self, environment: Environment, template: str) -> tuple[str, str, Any]:
            source, filename, uptodate = super().get_source(environment, template)
            if template.endswith(".j2"):
                source = "".join(line.strip() for line in source.splitlines())
            return source, filename, uptodate

    env = Environment(
        loader=Loader("pytest_ragproof", "templates"),
        finalize=_escaped,
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,  # an included asset stays byte for byte
    )
    env.filters.update(template_filters.FILTERS)
    return env


def _escaped(value: Any) -> Any:
    """What ``{{ value }}`` writes: markup as is, ``None`` as nothing, anything else
    escaped by :func:`html.escape` (``&quot;`` and ``&#x27;``, the entities the pages
    have always had; autoescape then leaves the result alone)."""
    from markupsafe import Markup

    if hasattr(value, "__html__"):
        return value
    if value is None:
        return Markup("")
    return Markup(html.escape(str(value), quote=True))


def render(name: str, /, **context: Any) -> Markup:
    """The template ``name`` rendered with ``context``, as markup (already escaped)."""
    from markupsafe import Markup

    return Markup(environment().get_template(name).render(**context))


def call_macro(name: str, macro: str, /, *args: Any) -> Markup:
    """The macro ``macro`` of the template ``name`` called with ``args``, as markup."""
    from markupsafe import Markup

    module = environment().get_template(name).module
    return Markup(getattr(module, macro)(*args))
