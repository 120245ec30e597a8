"""Retry policy: which delays to wait, and how to read a provider's Retry-After.

Pure functions, so the policy is testable without a clock or a network.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Why a request is retried; the keys of ``LLMStats.retries``.
RETRY_REASONS = ("rate_limit", "server_error", "timeout", "connection")


@dataclass(frozen=True)
class Failure:
    """All we keep of a failed request: never the provider's message."""

    exc_type: str
    status: int | None
    reason: str | None  # one of RETRY_REASONS; None = not retryable
    retry_after: float | None = None
    client_side: bool = False  # refused before anything was sent (e.g. no API key)
    refused_at: str | None = None  # the server's address when it refused the connection


def backoff_delay(retry_index: int, base_s: float, cap_s: float, rng: random.Random) -> float:
    """Exponential backoff with "equal jitter" for retry number ``retry_index`` (0-based).

    Half the exponential step is fixed and half random: concurrent workers that
    failed together spread out, yet every wait keeps a floor.
    """
    step = min(cap_s, base_s * (2.0**retry_index))
    return step / 2.0 + rng.uniform(0.0, step / 2.0)


def parse_retry_after(
    headers: Mapping[str, Any] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date).

    None when absent or unparseable; never negative.
    """
    if not headers:
        return None
    lowered = {str(k).lower(): v for k, v in headers.items()}
    ms = _number(lowered.get("retry-after-ms"))
    if ms is not None:
        return max(0.0, ms / 1000.0)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return max(0.0, seconds)
    import email.utils  # rare (HTTP-date form); kept off the import path of cache hits

    try:
        when = email.utils.parsedate_to_datetime(str(raw))
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def retry_after_of(exc: BaseException) -> float | None:
    """The Retry-After of a provider exception, from the response headers litellm keeps."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return parse_retry_after(headers if isinstance(headers, Mapping) else None)
