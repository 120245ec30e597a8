"""The filters the report's and the review app's templates format values with."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markupsafe import Markup

__all__ = ["FILTERS", "breakable", "cost_text", "num", "signed"]


def num(value: Any, digits: int = 3) -> str:
    """A number as the report writes it: ``–`` for none, an integer without decimals,
    otherwise ``digits`` significant digits (one decimal from 1000 on); text as is."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.1f}"


def signed(value: Any) -> str:
    """A change with its sign (``+0.25``); ``–`` for no number."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "–"
    return f"{value:+.4g}"


def cost_text(cost: Any) -> str:
    return "cost unknown (no price for this model)" if cost is None else f"${float(cost):.4f}"


def css_class(label: Any) -> str:
    """A label as a class name (spaces become ``-``)."""
    return str(label).replace(" ", "-")


def breakable(name: Any) -> Markup:
    """``name`` escaped, with a line-break opportunity after each ``_`` (a long metric name
    in a narrow column header breaks there, never mid-word)."""
    from markupsafe import Markup

    return Markup(html.escape(str(name), quote=True).replace("_", "_<wbr>"))


FILTERS: dict[str, Callable[..., str]] = {
    "breakable": breakable,
    "num": num,
    "signed": signed,
    "cost_text": cost_text,
    "css_class": css_class,
}
