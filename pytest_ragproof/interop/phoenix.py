"""``ragproof import --from phoenix URL --project NAME``: a Phoenix project's spans as drafts.

Arize Phoenix stores the spans it receives and serves them back over its REST API;
``GET /v1/projects/{project}/spans/otlpv1`` gives them in OTLP JSON's shape (snake_case
members, hex ids, attributes as ``[{key, value: AnyValue}]`` flattened back to
``retrieval.documents.N.document.id`` and the like, events), a page of at most 1,000
at a time with a ``next_cursor``. Each span goes through the same reduction as an OTLP
export (``otel_spans.span_of``) into the same traces (``otel.Trace``), so a trace
read from Phoenix becomes the same draft case as the same trace read from a file,
with two differences: Phoenix keeps no resource, so the case has no ``service``
(``--service`` does not apply), and it keeps start times to the microsecond.

Nothing here is imported until the command runs; HTTP is Python's own ``urllib``.
The API key (``--api-key-env NAME``) is read from the environment and sent as a
bearer token; no message names it.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from pytest_ragproof.errors import DatasetError
from pytest_ragproof.interop.otel import Trace
from pytest_ragproof.interop.otel_spans import SpanShapeError, span_of

PAGE = 1000
"""Spans asked for per request (Phoenix's largest page)."""

TIMEOUT = 30.0
"""Seconds to wait for the server to connect or answer, per request (``--timeout``)."""

ROUTE = "/v1/projects/{}/spans/otlpv1"
"""The OTLP-shaped span search route (Phoenix 10.1, May 2025, and later)."""


@dataclass(frozen=True)
class Server:
    """A Phoenix server as the user named it."""

    url: str  # the base URL, without a trailing slash
    api_key: str | None = None
    key_env: str | None = None  # the variable the key came from (named in errors)
    timeout: float = TIMEOUT

    @property
    def shown(self) -> str:
        """The URL as errors name it: without a user name or password in it."""
        parts = urllib.parse.urlsplit(self.url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = host + (f":{parts.port}" if parts.port is not None else "")
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def check_url(url: str) -> str | None:
    """Why ``url`` is no Phoenix base URL, or None."""
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port
    except ValueError:
        return "is not a URL; give the Phoenix server's address, e.g. http://127.0.0.1:6006"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "is not an http:// or https:// URL, e.g. http://127.0.0.1:6006"
    if parts.username is not None or parts.password is not None:
        return "has a user name or password in it; give the API key with --api-key-env NAME"
    if parts.query or parts.fragment:
        return "has a query or fragment; give the server's base URL, e.g. http://127.0.0.1:6006"
    return None


def _error(server: Server, reason: str, hint: str) -> DatasetError:
    return DatasetError(reason, source=server.shown, hint=hint)


def _refused(server: Server, status: int) -> DatasetError:
    if status == 401 and server.key_env is None:
        return _error(
            server,
            "Phoenix refused the request (HTTP 401): the server needs an API key",
            "put a Phoenix API key in an environment variable and give its name with "
            "--api-key-env NAME",
        )
    if status == 401:
        return _error(
            server,
            f"Phoenix refused the API key in ${server.key_env} (HTTP 401)",
            "check the key (Settings, API Keys in Phoenix) and the variable",
        )
    return _error(
        server,
        f"Phoenix refused the request (HTTP 403): the API key in ${server.key_env} "
        "may not read this"
        if server.key_env
        else "Phoenix refused the request (HTTP 403)",
        "use a key of a user or system account that can read the project",
    )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises the 3xx as an HTTPError


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(_NoRedirect())


def get(server: Server, path: str, query: dict[str, str] | None = None) -> Any:
    """The decoded JSON of ``GET path``; None when the server answers 404 (the caller
    says what was not found); :class:`DatasetError` for anything else."""
    url = server.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
    headers = {"Accept": "application/json", "User-Agent": "ragproof-import"}
    if server.api_key is not None:
        headers["Authorization"] = f"Bearer {server.api_key}"
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with _opener().open(request, timeout=server.timeout) as reply:
            body = reply.read()
            content_type = reply.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code in (401, 403):
            raise _refused(server, exc.code) from None
        if exc.code == 404:
            return None
        if 300 <= exc.code < 400:  # not followed: the API key would go along
            where = _location(exc.headers.get("Location") or "")
            raise _error(
                server,
                f"the server redirects GET {path} (HTTP {exc.code}) to {where}",
                "give the URL of the Phoenix server itself (redirects are not followed)",
            ) from None
        raise _error(
            server,
            f"the server answered HTTP {exc.code} to GET {path}",
            "check that the URL is the Phoenix server's and that it is healthy (its log says why)",
        ) from None
    except urllib.error.URLError as exc:
        raise _unreachable(server, exc.reason) from None
    except TimeoutError as exc:  # a reply that stopped coming
        raise _unreachable(server, exc) from None
    except (OSError, ValueError, http.client.HTTPException) as exc:  # a reset, BadStatusLine
        raise _error(
            server,
            f"the server gave no HTTP reply to GET {path} ({type(exc).__name__})",
            "check that the URL is the Phoenix server's (http or https, host and port)",
        ) from None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        what = content_type.split(";")[0] or "no"
        raise not_phoenix(server, f"GET {path} answered {what} content, not JSON") from None


def _location(location: str) -> str:
    """Where a redirect goes, without credentials, query or fragment."""
    try:
        parts = urllib.parse.urlsplit(location)
        _ = parts.port
    except ValueError:
        return "elsewhere"
    if not parts.hostname:
        return "elsewhere"
    return Server(urllib.parse.urlunsplit((*parts[:2], parts.path, "", ""))).shown


def _unreachable(server: Server, reason: object) -> DatasetError:
    if isinstance(reason, TimeoutError):
        return _error(
            server,
            f"the server did not answer within {server.timeout:g} s",
            "check that Phoenix is running and not overloaded, or give a longer --timeout",
        )
    if isinstance(reason, socket.gaierror):
        return _error(server, "the host name is not known", "check the URL's host name")
    name = type(reason).__name__ if isinstance(reason, BaseException) else "unknown reason"
    what = "connection refused" if isinstance(reason, ConnectionRefusedError) else name
    return _error(
        server,
        f"the server cannot be reached ({what})",
        "start Phoenix (phoenix serve) or check the URL's host and port",
    )


def not_phoenix(server: Server, why: str) -> DatasetError:
    return _error(
        server,
        f"is not a Phoenix server: {why}",
        "give the base URL of a running Arize Phoenix (e.g. http://127.0.0.1:6006)",
    )


def projects(server: Server) -> list[dict[str, str]]:
    """The server's projects (``name``, ``id``), every page of ``GET /v1/projects``."""
    out: list[dict[str, str]] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        query = {"limit": "100", **({"cursor": cursor} if cursor else {})}
        page = get(server, "/v1/projects", query)
        if page is None:
            raise not_phoenix(server, "it has no /v1/projects")
        data, cursor = _page(server, page, "/v1/projects")
        for item in data:
            if not (isinstance(item.get("name"), str) and isinstance(item.get("id"), str)):
                raise not_phoenix(server, "its /v1/projects lists a project without name or id")
            out.append({"name": item["name"], "id": item["id"]})
        if cursor is None:
            return out
        if cursor in seen:
            raise not_phoenix(server, "its /v1/projects gave the same page cursor twice")
        seen.add(cursor)


def _page(server: Server, page: Any, path: str) -> tuple[list[dict[str, Any]], str | None]:
    if not isinstance(page, dict) or not isinstance(page.get("data"), list):
        raise not_phoenix(server, f"GET {path} answered JSON without a data list")
    cursor = page.get("next_cursor")
    if cursor is not None and (not isinstance(cursor, str) or not cursor):
        raise not_phoenix(server, f"GET {path} answered a next_cursor that is not a string")
    if not all(isinstance(item, dict) for item in page["data"]):
        raise not_phoenix(server, f"GET {path} answered a data list of non-objects")
    return page["data"], cursor


def find_project(server: Server, name: str) -> dict[str, str]:
    """The project called ``name`` (or with that id); the error lists the others."""
    found = projects(server)
    for project in found:
        if name in (project["name"], project["id"]):
            return project
    names = ", ".join(sorted(p["name"] for p in found)[:50]) or "none"
    more = f" (and {len(found) - 50} more)" if len(found) > 50 else ""
    raise _error(
        server,
        f"has no project {name!r}; its projects: {names}{more}",
        "give one of those with --project",
    )


def _value(value: Any) -> Any:
    """An AnyValue as OTLP JSON writes it: Phoenix writes every member of the oneof, the
    unset ones as null (``{"bool_value": null, …, "string_value": "user"}``)."""
    if not isinstance(value, dict):
        return value
    out = {k: v for k, v in value.items() if v is not None}
    array = out.get("array_value")
    if isinstance(array, dict) and isinstance(array.get("values"), list):
        out["array_value"] = {"values": [_value(v) for v in array["values"]]}
    return out


def _attributes(items: Any) -> Any:
    if not isinstance(items, list):
        return items
    return [
        {**item, "value": _value(item.get("value"))} if isinstance(item, dict) else item
        for item in items
    ]


def otlp_span(raw: dict[str, Any]) -> dict[str, Any]:
    """A span of Phoenix's reply as OTLP JSON (its AnyValues without null members)."""
    span = {**raw, "attributes": _attributes(raw.get("attributes"))}
    if isinstance(raw.get("events"), list):
        span["events"] = [
            {**e, "attributes": _attributes(e.get("attributes"))} if isinstance(e, dict) else e
            for e in raw["events"]
        ]
    return span


def read_traces(server: Server, project: str) -> tuple[dict[str, Trace], int, str]:
    """Every trace of Phoenix project ``project`` (all its spans, page by page), the number
    of spans read and the source named in the summary."""
    found = find_project(server, project)
    source = f"{server.shown} project {found['name']}"
    path = ROUTE.format(urllib.parse.quote(found["id"], safe=""))
    traces: dict[str, Trace] = {}
    n_spans = 0
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        query = {"limit": str(PAGE), **({"cursor": cursor} if cursor else {})}
        page = get(server, path, query)
        if page is None:
            raise _error(
                server,
                f"this Phoenix has no OTLP span route (GET {ROUTE.format('…')} answered 404)",
                "upgrade Phoenix to 10.1 or later, or export the spans as OTLP JSON and use "
                "--from otel",
            )
        data, cursor = _page(server, page, path)
        for raw in data:
            n_spans += 1
            try:
                span = span_of(otlp_span(raw))
            except SpanShapeError as exc:
                raise DatasetError(
                    f"span {n_spans} is not an OTLP span: {exc}",
                    source=source,
                    hint="report it with the Phoenix version (the server's reply is not "
                    "what its API documents)",
                ) from None
            # Phoenix keeps microseconds and writes them back through a float: round
            span.start_ns = (span.start_ns + 500) // 1000 * 1000
            trace = traces.get(span.trace_id)
            if trace is None:
                trace = traces[span.trace_id] = Trace(span.trace_id, source, n_spans)
            trace.add(span, None)
        if cursor is None:
            return traces, n_spans, source
        if cursor in seen:
            raise not_phoenix(server, f"GET {path} gave the same page cursor twice")
        seen.add(cursor)
