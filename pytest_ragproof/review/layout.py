"""The page every area of the app draws into: head, navigation, the token for scripts.

An area adds itself to the navigation through :class:`NavItem` entries given to
:func:`pytest_ragproof.review.app.create_app`; pages call :func:`page`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import HTMLResponse

from pytest_ragproof.review.html import Html, Node, h, tag

__all__ = ["APP_KEY", "NavItem", "all_done", "page"]

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


def hidden_token(request: Request) -> Html:
    """The token field every form of the app carries."""
    review = getattr(request.app.state, APP_KEY)
    return tag("input", type="hidden", name="token", value=review.token)


def message(
    request: Request, title: str, text: Node, *, area: str, status_code: int
) -> HTMLResponse:
    return page(
        request,
        title=title,
        area=area,
        body=tag("section", tag("h1", title), tag("p", h(text)), class_="message"),
        status_code=status_code,
    )


def progress(done: int, total: int, what: str) -> Html:
    """The progress bar: ``done`` of ``total`` ``what``."""
    return tag(
        "div",
        tag("progress", value=done, max=max(total, 1)),
        tag("span", f"{done} of {total} {what}", id="progress-text"),
        class_="progress",
        aria_label=f"{done} of {total} {what}",
    )


def all_done(said: str, next_step: str, command: Sequence[str]) -> Html:
    """The note a page shows once every case is decided: what was done, then the next
    step and its command line (each argument quoted for a POSIX shell)."""
    import shlex

    return tag(
        "p",
        tag("b", said),
        f" {next_step}: ",
        tag("code", shlex.join(command)),
        class_="note done",
        id="all-decided",
        role="status",
    )


def keys(*pairs: tuple[str, str]) -> Html:
    """The keyboard hints shown under a page: (key, what it does)."""
    return tag(
        "p",
        [tag("span", tag("kbd", key), f" {what}", class_="key") for key, what in pairs],
        class_="keys",
    )


def steps(n: int, total: int, prev_href: str | None, next_href: str | None) -> list[Node]:
    """The start of a pager: ``← previous · case N of M · next →`` (a step with nowhere to go
    is shown muted, not linked)."""
    return [
        tag("a", "← previous", href=prev_href, id="prev")
        if prev_href
        else tag("span", "← previous", class_="muted"),
        f" · case {n} of {total} · ",
        tag("a", "next →", href=next_href, id="next")
        if next_href
        else tag("span", "next →", class_="muted"),
    ]
