"""Markup of the review app built in Python, over :mod:`markupsafe`.

Every page and fragment of the app is a Jinja2 template (``templates/review/``, rendered
by :mod:`pytest_ragproof.reporting.templating`, autoescape on). ``Html`` is
:class:`markupsafe.Markup`, the one marker of markup that is already safe, which the
templates write as is (a rendered template or macro, an SVG chart). :func:`tag`,
:func:`table` and their helpers build markup from Python with every child and attribute
escaped unless it is ``Html``; no page uses them any more (the tests of
tests/review/test_app.py still pin their escaping).
"""

from __future__ import annotations

import html as _html
from collections.abc import Iterable, Mapping

from markupsafe import Markup

__all__ = ["Html", "Node", "Th", "attrs", "breakable", "h", "join", "table", "tag", "th"]

Html = Markup

Node = Html | str | int | float | None


def h(value: Node) -> Html:
    """``value`` as safe markup: markup as is, anything else escaped (``None`` empty), with
    the entities the pages have always had (``&quot;``, ``&#x27;``)."""
    if isinstance(value, Html):
        return value
    if value is None:
        return Html("")
    return Html(_html.escape(str(value), quote=True))


def join(parts: Iterable[Node], sep: str = "") -> Html:
    return Html(sep.join(h(p) for p in parts))


def attrs(values: Mapping[str, str | int | float | bool | None]) -> Html:
    """`` name="value"`` pairs; ``True`` writes the bare name, ``False``/``None`` leave it out."""
    out: list[str] = []
    for name, value in values.items():
        if value is None or value is False:
            continue
        key = name.rstrip("_").replace("_", "-")
        if value is True:
            out.append(f" {key}")
        else:
            out.append(f' {key}="{_html.escape(str(value), quote=True)}"')
    return Html("".join(out))


VOID = frozenset({"input", "meta", "link", "br", "hr", "img"})


def tag(
    element: str, /, *children: Node | Iterable[Node], **attributes: str | int | float | bool | None
) -> Html:
    """``<name attrs>children</name>``; children are escaped unless :class:`Html`.

    Attribute names: a trailing ``_`` is dropped (``class_``) and ``_`` becomes ``-``
    (``data_key`` -> ``data-key``).
    """
    opening = f"<{element}{attrs(attributes)}>"
    if element in VOID:
        return Html(opening)
    body: list[str] = []
    for child in children:
        if isinstance(child, str | int | float) or child is None:
            body.append(h(child))
        else:
            body.extend(h(c) for c in child)
    return Html(f"{opening}{''.join(body)}</{element}>")


def breakable(name: str) -> Html:
    """``name`` escaped, with a line-break opportunity after each ``_`` (a long metric name
    in a narrow column header breaks there, never mid-word)."""
    return Html(str(h(name)).replace("_", "_<wbr>"))  # str's replace: Markup's would escape


class Th(Html):
    """A header cell already made by :func:`th`: :func:`table` puts it in the head as is."""

    __slots__ = ()


def th(label: Node, /, **attributes: str | int | float | bool | None) -> Th:
    """A header cell with attributes (``th("mean", class_="num")``) for :func:`table`."""
    return Th(tag("th", label, **attributes))


def table(
    headers: Iterable[Node],
    rows: Iterable[Html],
    /,
    **attributes: str | int | float | bool | None,
) -> Html:
    """``<table attrs><thead><tr><th>…</th>…</tr></thead><tbody>rows</tbody></table>``.

    Each header is escaped into a ``<th>`` unless it is a :class:`Th` (made by :func:`th`,
    for a header with attributes); ``rows`` are the ``<tr>`` markup of the body, made with
    :func:`tag`. Attributes are written as :func:`tag` writes them.
    """
    head = tag("tr", [c if isinstance(c, Th) else tag("th", c) for c in headers])
    return tag("table", tag("thead", head), tag("tbody", rows), **attributes)
