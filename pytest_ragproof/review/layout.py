"""The page every area of the app draws into: head, navigation, the token for scripts.

An area adds itself to the navigation through :class:`NavItem` entries given to
:func:`pytest_ragproof.review.app.create_app`; pages call :func:`page`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

from pytest_ragproof.review.html import Html, Node

__all__ = [
    "APP_KEY",
    "NavItem",
    "all_done",
    "hidden_token",
    "keys",
    "message",
    "page",
    "progress",
    "side",
    "steps",
]

APP_KEY = "ragproof_review"  # app.state attribute holding the ReviewApp


@dataclass(frozen=True)
class NavItem:
    label: str
    href: str
    area: str


def page(
    request: Request,
    *,
    title: str,
    area: str,
    body: Html,
    status_code: int = 200,
) -> HTMLResponse:
    """A whole HTML page (``templates/review/page.html.j2``): the shared head and
    navigation around ``body``, markup the area rendered."""
    from pytest_ragproof.reporting.templating import render

    review = getattr(request.app.state, APP_KEY)
    document = render(
        "review/page.html.j2",
        title=title,
        area=area,
        token=review.token,
        nav=review.nav,
        reviewer=review.reviewer,
        body=body,
    )
    return HTMLResponse(document, status_code=status_code)


def _part(name: str, *args: Any) -> Html:
    """The macro ``name`` of ``review/parts.html.j2`` (the pieces the areas share)."""
    from pytest_ragproof.reporting.templating import call_macro

    return call_macro("review/parts.html.j2", name, *args)


def hidden_token(request: Request) -> Html:
    """The token field every form of the app carries."""
    review = getattr(request.app.state, APP_KEY)
    return _part("token_field", review.token)


def message(
    request: Request, title: str, text: Node, *, area: str, status_code: int
) -> HTMLResponse:
    return page(
        request,
        title=title,
        area=area,
        body=_part("message", title, text),
        status_code=status_code,
    )


def progress(done: int, total: int, what: str) -> Html:
    """The progress bar: ``done`` of ``total`` ``what``."""
    return _part("progress", done, total, what)


def all_done(said: str, next_step: str, command: Sequence[str]) -> Html:
    """The note a page shows once every case is decided: what was done, then the next
    step and its command line (each argument quoted for a POSIX shell)."""
    import shlex

    return _part("all_done", said, next_step, shlex.join(command))


def keys(*pairs: tuple[str, str]) -> Html:
    """The keyboard hints shown under a page: (key, what it does)."""
    return _part("keys", pairs)


def steps(n: int, total: int, prev_href: str | None, next_href: str | None) -> Html:
    """The start of a pager: ``← previous · case N of M · next →`` (a step with nowhere to go
    is shown muted, not linked)."""
    return _part("steps", n, total, prev_href, next_href)


def side(title: str | None, body: Html, *, id: str | None = None) -> Html:
    """A page's right column: an optional heading over ``body``."""
    return _part("side", title, body, id)
