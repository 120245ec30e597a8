"""HTML built from Python with every value escaped unless it is already :class:`Html`.

Answers, contexts and documents are untrusted text: :func:`h` escapes them and
:func:`tag` escapes attributes and children, so the only unescaped markup is markup
this package wrote itself (an :class:`Html` value).
"""

from __future__ import annotations

import html as _html
from collections.abc import Iterable, Mapping

__all__ = ["Html", "Node", "Th", "attrs", "breakable", "h", "join", "table", "tag", "th"]


class Html(str):
    """Markup that is already safe (made by this module); never built from outside text."""

    __slots__ = ()


Node = Html | str | int | float | None


def h(value: Node) -> Html:
    """``value`` as safe markup: :class:`Html` as is, anything else escaped (``None`` empty)."""
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
    return Html(h(name).replace("_", "_<wbr>"))


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
