"""What a failed request was: a provider exception reduced to a :class:`Failure`.

litellm maps most failures to its own exception types, but not all: a refused
connection, or the OpenAI SDK refusing to send at all, arrive as a synthesized
HTTP 500. The cause is read from the exception chain, and only its type, the HTTP
status, Retry-After and (for a refusal) the address survive.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_ragproof.llm.retry import Failure, retry_after_of


def classify(litellm: Any, exc: BaseException) -> Failure:
    """Why the request behind ``exc`` failed, and whether a retry could help."""
    name = type(exc).__name__
    if isinstance(exc, TimeoutError | litellm.Timeout):
        return Failure(name, None, "timeout")
    raw_status = getattr(exc, "status_code", None)
    status = raw_status if isinstance(raw_status, int) else None
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return Failure(name, 429, "rate_limit", retry_after_of(exc))
    refused_at = _refused_connection(exc)
    if refused_at is not None:
        # litellm wraps a refused connection as a synthesized HTTP 500. Nothing listens
        # there: every call would be refused alike, so it is not retried.
        return Failure("ConnectionRefusedError", None, None, refused_at=refused_at)
    if isinstance(exc, litellm.APIConnectionError):
        return Failure(name, None, "connection")
    if _refused_by_client(exc):
        # litellm reports e.g. missing credentials as a synthesized HTTP 500; retrying
        # cannot help and "server error" would send the user looking in the wrong place.
        return Failure(name, None, None, client_side=True)
    if status is not None and status >= 500:
        return Failure(name, status, "server_error", retry_after_of(exc))
    return Failure(name, status, None)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _refused_connection(exc: BaseException) -> str | None:
    """The address that refused the connection under ``exc``, if a refusal is its cause.

    Found by the ``ConnectionRefusedError`` (ECONNREFUSED) litellm's HTTP clients raise
    from; the address is the refused request's URL as httpx or the openai SDK kept it
    ("the model's server" when none did). A timeout is not a refusal.
    """
    chain = list(_chain(exc))
    if not any(isinstance(e, ConnectionRefusedError) for e in chain):
        return None
    # Innermost first: the HTTP client's request is the one that was refused (litellm's
    # own exceptions on top may carry a placeholder request to the provider's default).
    for e in reversed(chain):
        try:
            url = getattr(getattr(e, "request", None), "url", None)  # openai / httpx
        except RuntimeError:  # httpx: an error raised without its request
            continue
        shown = shown_address(None if url is None else str(url), endpoint=True)
        if shown is not None:
            return shown
    return "the model's server"


#: The endpoint paths litellm appends to an API base, dropped to show the base.
_ENDPOINTS = ("/chat/completions", "/completions", "/embeddings")


def shown_address(url: str | None, *, endpoint: bool = False) -> str | None:
    """``url`` without credentials, query or fragment (and, for a request's URL, without
    the endpoint path), as an error message may show it; None when it is no URL."""
    if not url:
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not parts.scheme or not host:
        return None
    path = parts.path.rstrip("/")
    if endpoint:
        path = next((path[: -len(e)] for e in _ENDPOINTS if path.endswith(e)), path)
    netloc = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{netloc}{'' if port is None else f':{port}'}{path}"


def _refused_by_client(exc: BaseException) -> bool:
    """Did the provider's SDK refuse the call itself, before any HTTP request?

    The OpenAI SDK raises its bare ``OpenAIError`` for that (no key, bad client
    options); everything that reached a server is an ``APIError`` subclass.
    """
    try:
        import openai
    except ImportError:  # pragma: no cover - litellm depends on it
        return False
    return any(type(e) is openai.OpenAIError for e in _chain(exc))
