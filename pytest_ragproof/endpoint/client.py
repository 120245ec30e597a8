"""The ``--ragproof-endpoint`` pipeline: one JSON POST per case (standard library only).

:class:`EndpointPipeline` is an ordinary sync pipeline callable
(``pipeline(question, history=None)``), so the runner calls it like a fixture's
pipeline: with ``--ragproof-timeout`` around the whole call, on the prefetch
threads under ``--ragproof-concurrency``. Each HTTP attempt waits at most
``--ragproof-endpoint-timeout`` to connect and for each read; a 429 or 5xx answer
is retried up to ``--ragproof-endpoint-retries`` times (after its ``Retry-After``,
else after 0.5 s, 1 s, 2 s…). Redirects are not followed: they could carry the
headers to another host. A response body larger than ``--ragproof-endpoint-max-bytes``
is the case's error, and is read no further than that bound.

Every failure is an :class:`~pytest_ragproof.errors.EndpointError` naming the
HTTP status, the JSON path or the exception type, never a body or a header value.
"""

from __future__ import annotations

import email.utils
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_ragproof.endpoint.jsonpath import JsonPath, PathMissing, json_type, lookup
from pytest_ragproof.endpoint.settings import EndpointSettings, shown_size
from pytest_ragproof.errors import EndpointError

MAX_RETRY_AFTER_S = 60.0  # a longer Retry-After ends the case instead of stalling the run
_BACKOFF_S = 0.5
_STATUS_HINTS = {
    400: "check the request body (--ragproof-endpoint-body)",
    401: "check the credentials sent (--ragproof-endpoint-header)",
    403: "check the credentials sent (--ragproof-endpoint-header)",
    404: "check the URL (--ragproof-endpoint)",
    405: "check the URL (--ragproof-endpoint); ragproof sends POST",
    415: "check the Content-Type (ragproof sends application/json unless a header says otherwise)",
    422: "check the request body (--ragproof-endpoint-body)",
}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises HTTPError with the 3xx status


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (seconds or an HTTP date), else None."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


class EndpointPipeline:
    """POSTs a case to the configured service and returns ``{"answer", "contexts"}``."""

    __name__ = "endpoint"  # how signature errors would name it (they cannot happen)

    def __init__(
        self, settings: EndpointSettings, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirect)
        given = settings.headers.names()
        send = {"Content-Type": "application/json", "Accept": "application/json"}
        self._send_headers = {k: v for k, v in send.items() if k.lower() not in given}
        self._send_headers.update(settings.headers.items())

    def __repr__(self) -> str:
        return f"EndpointPipeline({self.settings.host})"

    def __call__(
        self, question: str, history: Sequence[Mapping[str, Any]] | None = None
    ) -> dict[str, Any]:
        try:
            payload = self.settings.body.render(question, history or ())
            status, content_type, data = self._post(payload.encode("utf-8"))
            return self._output(self._decode(status, content_type, data))
        except EndpointError:
            raise
        except Exception as exc:  # anything else: its type only (a message could hold a value)
            raise EndpointError(f"the call of the endpoint failed: {type(exc).__name__}") from None

    # -- HTTP ---------------------------------------------------------------
    def _post(self, payload: bytes) -> tuple[int, str, bytes]:
        attempts = 0
        retries = self.settings.retries
        while True:
            attempts += 1
            status, after, content_type, data = self._attempt(payload)
            if 200 <= status < 300:
                return status, content_type, data
            retryable = status == 429 or 500 <= status < 600
            if not retryable or attempts > retries:
                raise EndpointError(self._status_message(status, attempts, retryable))
            wait = retry_after(after)
            if wait is None:
                wait = _BACKOFF_S * 2 ** (attempts - 1)
            elif wait > MAX_RETRY_AFTER_S:
                raise EndpointError(
                    f"the endpoint answered HTTP {status} and asked to retry after {wait:.0f}s, "
                    f"longer than the {MAX_RETRY_AFTER_S:.0f}s ragproof waits; lower "
                    "--ragproof-concurrency"
                )
            self._sleep(wait)

    def _attempt(self, payload: bytes) -> tuple[int, str | None, str, bytes]:
        """One request: (status, Retry-After, Content-Type, body of a 2xx answer)."""
        timeout = self.settings.timeout
        request = urllib.request.Request(
            self.settings.url, data=payload, headers=self._send_headers, method="POST"
        )
        try:
            with self._opener.open(request, timeout=timeout) as response:
                limit = self.settings.max_bytes
                declared = response.headers.get("Content-Length", "").strip()
                if declared.isdigit() and int(declared) > limit:
                    raise self._too_large(int(declared))
                data = response.read(limit + 1)  # closing the response drops the rest
                if len(data) > limit:
                    raise self._too_large(None)
                return response.status, None, response.headers.get("Content-Type", ""), data
        except urllib.error.HTTPError as exc:
            try:  # the body of an error answer is never read: it could be anything
                return exc.code, exc.headers.get("Retry-After"), "", b""
            finally:
                exc.close()
        except TimeoutError:
            raise self._timeout() from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timeout() from None
            reason = (
                type(exc.reason).__name__ if isinstance(exc.reason, BaseException) else "URLError"
            )
            raise EndpointError(
                f"could not reach the endpoint at {self.settings.host} ({reason}); check "
                "--ragproof-endpoint and that the service is up"
            ) from None
        except OSError as exc:
            raise EndpointError(
                f"the connection to the endpoint at {self.settings.host} failed "
                f"({type(exc).__name__})"
            ) from None

    def _too_large(self, declared: int | None) -> EndpointError:
        bound = self.settings.max_bytes
        how = f"Content-Length {declared}" if declared is not None else "more than that came"
        return EndpointError(
            f"the endpoint's response is larger than {shown_size(bound)} ({how}), the bound "
            "of --ragproof-endpoint-max-bytes, and was read no further; check what the service "
            f"returns, or raise the bound, e.g. --ragproof-endpoint-max-bytes="
            f"{shown_size(2 * bound)}"
        )

    def _timeout(self) -> EndpointError:
        return EndpointError(
            f"the endpoint did not respond within {self.settings.timeout:g}s "
            "(--ragproof-endpoint-timeout)"
        )

    def _status_message(self, status: int, attempts: int, retryable: bool) -> str:
        if 300 <= status < 400:
            return (
                f"the endpoint answered HTTP {status}, a redirect, which ragproof does not "
                "follow (it would carry the headers along); point --ragproof-endpoint at the "
                "final URL"
            )
        if status == 429:
            return (
                f"the endpoint answered HTTP 429 (rate limited) {attempts} time(s); lower "
                "--ragproof-concurrency or raise --ragproof-endpoint-retries"
            )
        if retryable:
            return (
                f"the endpoint answered HTTP {status} {attempts} time(s) "
                f"(--ragproof-endpoint-retries={self.settings.retries})"
            )
        hint = _STATUS_HINTS.get(status)
        return f"the endpoint answered HTTP {status}" + (f"; {hint}" if hint else "")

    @staticmethod
    def _decode(status: int, content_type: str, data: bytes) -> object:
        try:
            return json.loads(data)
        except ValueError as exc:
            where = ""
            if isinstance(exc, json.JSONDecodeError):
                where = f" ({exc.msg}: line {exc.lineno} column {exc.colno})"
            shown = content_type.split(";")[0].strip() or "no Content-Type"
            raise EndpointError(
                f"the endpoint's response (HTTP {status}, {shown}) is not JSON{where}"
            ) from None

    # -- the output ---------------------------------------------------------
    def _output(self, document: object) -> dict[str, Any]:
        settings = self.settings
        answer = self._find(document, settings.answer, "answer", "--ragproof-endpoint-answer")
        if answer is not None and not isinstance(answer, str):
            raise EndpointError(
                f"the answer at {settings.answer.text} in the endpoint's response is "
                f"{json_type(answer)}, not a string; set --ragproof-endpoint-answer to the "
                "path of the answer text"
            )
        output: dict[str, Any] = {"answer": answer}
        if settings.contexts is None:
            return output
        path = settings.contexts
        items = self._find(document, path, "contexts", "--ragproof-endpoint-contexts")
        if not isinstance(items, list):
            raise EndpointError(
                f"the contexts at {path.text} in the endpoint's response are {json_type(items)}, "
                "not a list; set --ragproof-endpoint-contexts to the path of the list"
            )
        output["contexts"] = [self._context(item, i) for i, item in enumerate(items, 1)]
        return output

    @staticmethod
    def _find(document: object, path: JsonPath, what: str, option: str) -> object:
        try:
            return lookup(document, path)
        except PathMissing as miss:
            raise EndpointError(
                f"the endpoint's response has no {what} at {path.text} ({miss.reason}); "
                f"set {option} to its JSON path"
            ) from None

    def _context(self, item: object, index: int) -> object:
        """One context: a string as it is; inner paths applied to an object, if given."""
        settings = self.settings
        if isinstance(item, str) or (settings.context_id is None and settings.context_text is None):
            return item  # the runner's own output rules judge it (docs/pipelines.md)
        assert settings.contexts is not None
        where = f"context {index} (1-based) of {settings.contexts.text}"
        if not isinstance(item, Mapping):
            raise EndpointError(
                f"{where} in the endpoint's response is {json_type(item)}, not an object or "
                "a string"
            )
        context = dict(item)
        for key, path, option in (
            ("id", settings.context_id, "--ragproof-endpoint-context-id"),
            ("text", settings.context_text, "--ragproof-endpoint-context-text"),
        ):
            if path is None:
                continue
            try:
                value = lookup(item, path)
            except PathMissing as miss:
                raise EndpointError(
                    f"{where} has no {key} at {path.text} ({miss.reason}); set {option} to "
                    "its path inside each context"
                ) from None
            if key == "id" and isinstance(value, int) and not isinstance(value, bool):
                value = str(value)  # numeric document ids are common
            if not isinstance(value, str):
                raise EndpointError(
                    f"the {key} at {path.text} of {where} is {json_type(value)}, not a string"
                )
            context[key] = value
        return context
