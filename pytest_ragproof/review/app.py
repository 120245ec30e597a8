"""The app factory: areas (router modules) behind the token guard, one shared layout.

An :class:`Area` is what a router module contributes: its routes, its entries in the
navigation and the page ``/`` leads to when it is the first area. ``create_app``
takes the areas of one session (a results review: cases and agreement; or a dataset
review) and returns the Starlette application the command serves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from pytest_ragproof.review.layout import APP_KEY, NavItem
from pytest_ragproof.review.security import TokenGuard

__all__ = ["Area", "ReviewApp", "create_app"]

STATIC = {"review.css": "text/css; charset=utf-8", "review.js": "text/javascript; charset=utf-8"}


@dataclass(frozen=True)
class Area:
    """One part of the app: its routes, navigation entries and home page."""

    name: str
    routes: Sequence[BaseRoute]
    nav: Sequence[NavItem] = ()
    home: str | None = None
    state: Mapping[str, object] = field(default_factory=dict)  # set on app.state


@dataclass
class ReviewApp:
    """What every page of one session knows (``request.app.state.ragproof_review``)."""

    token: str
    reviewer: str
    nav: list[NavItem] = field(default_factory=list)


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        return Response("not found\n", status_code=404, media_type="text/plain")
    data = resources.files("pytest_ragproof").joinpath("templates", "review", name).read_bytes()
    return Response(data, media_type=STATIC[name])


def create_app(
    areas: Sequence[Area],
    *,
    token: str,
    reviewer: str,
    hosts: Iterable[str] = (),
) -> Starlette:
    """The Starlette app of a review session.

    ``token``: the secret every request must carry (:mod:`.security`); ``hosts``: host
    names besides the loopback ones the app answers to (``--host``, a test client's).
    """
    if not areas:
        raise ValueError("create_app needs at least one area")
    home = next((a.home for a in areas if a.home), None) or "/"

    async def root(request: Request) -> Response:
        return RedirectResponse(home, status_code=303)

    routes: list[BaseRoute] = [
        Route("/", root),
        Route("/static/{name}", static),
    ]
    for area in areas:
        routes.extend(area.routes)
    app = Starlette(routes=routes)
    setattr(
        app.state,
        APP_KEY,
        ReviewApp(token=token, reviewer=reviewer, nav=[i for a in areas for i in a.nav]),
    )
    for area in areas:
        for name, value in area.state.items():
            setattr(app.state, name, value)
    app.add_middleware(TokenGuard, token=token, hosts=tuple(hosts))
    return app
