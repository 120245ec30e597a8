"""The checks in front of every route: Host, the session token, and Origin on writes.

The command prints a URL carrying a random token (``secrets.token_urlsafe``). The
first GET with ``?token=`` sets an HttpOnly, SameSite=Strict cookie and redirects to
the same URL without it; every later request needs that cookie. A write (any method
but GET and HEAD) needs, besides the cookie, the token again, in the
``X-Ragproof-Token`` header or the ``token`` field of a URL-encoded form, and an
``Origin`` header naming this very server. So another page open in the same browser
cannot write (it has neither the token nor our origin, and the cookie is not sent
across sites), nor can another local user (no token), nor a page reaching us through
a DNS name that resolves to 127.0.0.1 (its Host is not ours).

A Host header is ours when it is a plain ``name[:port]`` (no user part, no path) and
its name is a loopback name, the ``--host`` value, or, listening on every interface
(``--host 0.0.0.0``), this machine's host name or the address the request came in on.
Its port is not checked: a browser reaching the app through an SSH tunnel or an
editor's port forwarding (``localhost:9000`` to the app's 8765) names the local port,
and a DNS-rebinding page is told apart by its name.

Forms are parsed here (URL-encoded only: the app posts no files), so a route reads
its fields with :func:`form_of` and cannot forget the check.
"""

from __future__ import annotations

import re
import secrets
import socket
from collections.abc import Iterable
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "ragproof_review"
HEADER = "x-ragproof-token"
FORM_KEY = "ragproof.form"
MAX_BODY = 1_000_000  # a label or an edited case is a few kilobytes

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
#: The ``hosts`` entry of an app listening on every interface (``--host 0.0.0.0``).
EVERY_INTERFACE = "*"

# No script, style or image from anywhere else, no inline script, no framing.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def form_of(request: Request) -> dict[str, str]:
    """The URL-encoded form of a write, parsed and checked by :class:`TokenGuard`."""
    form: dict[str, str] = request.scope.get(FORM_KEY, {})
    return form


#: A Host header as HTTP/1.1 has it: a name or an IPv4 address, or an IPv6 address in
#: brackets, then an optional port; nothing else (no user part, no path).
_HOST = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?))"
    r"(?::[0-9]{1,5})?"
)


def _host_name(host: str) -> str | None:
    """The host name (lower case) of a Host header, ``None`` when it is not one."""
    match = _HOST.fullmatch(host)
    if match is None:
        return None
    return (match.group("v6") or match.group("name")).lower()


def _unmapped(address: str) -> str:
    """An IPv4 address a dual-stack socket reports as ``::ffff:a.b.c.d``, as a.b.c.d."""
    return address.removeprefix("::ffff:").lower()


def _refuse(status: int, text: str) -> Response:
    return PlainTextResponse(f"ragproof review: {text}\n", status_code=status)


class TokenGuard:
    """ASGI middleware: refuse any request without the token or from a foreign origin."""

    def __init__(self, app: ASGIApp, *, token: str, hosts: Iterable[str]) -> None:
        """``hosts``: host names besides the loopback ones; ``*`` (listening on every
        interface) adds this machine's host name and the address each request came in on."""
        self.app = app
        self.token = token
        given = frozenset(h.lower() for h in hosts)
        self.everywhere = EVERY_INTERFACE in given
        self.hosts = (given - {EVERY_INTERFACE}) | LOOPBACK
        if self.everywhere:
            self.hosts |= {socket.gethostname().lower()}

    def _is_ours(self, scope: Scope, host: str) -> bool:
        """Does a Host header name this server? Its name must be one of ours (any port: a
        forwarded port names the local end)."""
        name = _host_name(host)
        if name is None:
            return False
        if name in self.hosts:
            return True
        server = scope.get("server")  # (address, port) of the socket the request came to
        return self.everywhere and server is not None and name == _unmapped(str(server[0]))

    def _is_token(self, value: str | None) -> bool:
        return value is not None and secrets.compare_digest(value.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        host = request.headers.get("host", "")
        if not self._is_ours(scope, host):
            await _refuse(403, "unknown Host header (the app answers only its own address)")(
                scope, receive, send
            )
            return
        method = request.method
        if method in ("GET", "HEAD") and "token" in request.query_params:
            if not self._is_token(request.query_params["token"]):
                await _refuse(403, "wrong token: open the URL ragproof review printed")(
                    scope, receive, send
                )
                return
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            url = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response = RedirectResponse(url, status_code=303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
            await response(scope, receive, send)
            return
        if not self._is_token(request.cookies.get(COOKIE)):
            await _refuse(
                403, "no session token: open the URL ragproof review printed (it carries one)"
            )(scope, receive, send)
            return
        if method in ("GET", "HEAD"):
            await self.app(scope, receive, _with_headers(send))
            return
        origin = request.headers.get("origin")
        if origin is None or origin != f"{request.url.scheme}://{host}":
            await _refuse(403, "a write must come from the app's own pages (Origin)")(
                scope, receive, send
            )
            return
        body, receive = await _read_body(receive)
        if body is None:
            await _refuse(413, "request body too large")(scope, receive, send)
            return
        form: dict[str, str] = {}
        if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            parsed = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            form = {k: v[-1] for k, v in parsed.items()}
        if not self._is_token(request.headers.get(HEADER) or form.get("token")):
            await _refuse(403, "a write must carry the session token")(scope, receive, send)
            return
        scope[FORM_KEY] = form
        await self.app(scope, receive, _with_headers(send))


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            headers += [
                (b"content-security-policy", CSP.encode()),
                (b"x-content-type-options", b"nosniff"),
                (b"referrer-policy", b"same-origin"),  # no-referrer would make Origin "null"
                (b"cache-control", b"no-store"),
            ]
            message = {**message, "headers": headers}
        await send(message)

    return sending


async def _read_body(receive: Receive) -> tuple[bytes | None, Receive]:
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None, receive
        chunks.append(chunk)
        more = bool(message.get("more_body", False))
    body = b"".join(chunks)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay
