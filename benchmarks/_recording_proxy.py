"""A recording proxy between ragproof and a model server, for ``bench_local_judge.py``.

ragproof's judge usage counts the calls, requests, tokens and failures of a run; a
local model's figures need each request too: its latency, tokens and finish reason,
and whether it was a repair (ragproof's repair request carries the rejected reply as
an assistant turn, which no judge prompt has otherwise). Requests and replies pass
through unchanged; the proxy listens on 127.0.0.1 only.

With one judge call in flight (``--ragproof-judge-concurrency=1``) the requests of a
logical call arrive one after another: the first request, its retries (the same
body again, after a timeout or a 5xx), then at most one repair and its retries.
:func:`group_calls` rebuilds the calls from that order.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_STEP = re.compile(r"ragproof judge step: ([a-z-]+/\d+)")


@dataclass
class Exchange:
    """One HTTP request through the proxy and what came back."""

    step: str  # the judge step named in the prompt ("?" when none is)
    repair: bool  # a repair request: the conversation carries an assistant turn
    retry: bool  # the same body as the request before it
    status: int | None = None  # None: the server gave no HTTP answer
    seconds: float = 0.0
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    delivered: bool = False  # the reply reached the client (False: it had gone)
    done: bool = False

    @property
    def answered(self) -> bool:
        return self.delivered and self.status == 200


@dataclass
class Call:
    """The requests of one logical judge call."""

    step: str
    requests: list[Exchange] = field(default_factory=list)

    @property
    def first_answered(self) -> bool:
        return any(e.answered for e in self.requests if not e.repair)

    @property
    def repaired(self) -> bool:
        return any(e.repair for e in self.requests)

    @property
    def repair_answered(self) -> bool:
        return any(e.answered for e in self.requests if e.repair)


def group_calls(exchanges: list[Exchange]) -> list[Call]:
    """The logical calls of requests made one at a time (see the module docstring)."""
    calls: list[Call] = []
    for exchange in exchanges:
        if not calls or not (exchange.repair or exchange.retry):
            calls.append(Call(exchange.step))
        calls[-1].requests.append(exchange)
    return calls


def _describe(body: bytes) -> tuple[str, bool]:
    try:
        messages = json.loads(body).get("messages") or []
    except (ValueError, AttributeError):
        return "?", False
    text = " ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    found = _STEP.search(text)
    repair = any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)
    return (found.group(1) if found else "?"), repair


def _read_reply(exchange: Exchange, payload: bytes) -> None:
    try:
        data = json.loads(payload)
        choice = (data.get("choices") or [{}])[0]
        usage = data.get("usage") or {}
    except (ValueError, AttributeError, TypeError, IndexError):
        return
    exchange.finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    exchange.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    exchange.completion_tokens = int(usage.get("completion_tokens") or 0)


class RecordingProxy:
    """Forwards every request to ``upstream`` (``http://127.0.0.1:PORT``) and records it."""

    def __init__(self, upstream: str, *, timeout_s: float = 3600.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.timeout_s = timeout_s
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._last_body = b""
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> RecordingProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy._forward(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def since(self, mark: int) -> list[Exchange]:
        """The exchanges from index ``mark`` on (``len(proxy.exchanges)`` taken before)."""
        with self._lock:
            return list(self.exchanges[mark:])

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        step, repair = _describe(body)
        with self._lock:
            exchange = Exchange(step, repair, retry=body == self._last_body)
            self._last_body = body
            self.exchanges.append(exchange)
        request = urllib.request.Request(
            self.upstream + handler.path,
            data=body,
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        start = time.monotonic()
        status: int | None = None
        payload = b'{"error": {"message": "the model server gave no answer"}}'
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as resp:
                status, payload = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, payload = exc.code, exc.read()
        except (urllib.error.URLError, OSError):
            pass
        exchange.status = status
        exchange.seconds = time.monotonic() - start
        if status == 200:
            _read_reply(exchange, payload)
        try:
            handler.send_response(502 if status is None else status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            exchange.delivered = True
        except OSError:  # the client gave up (its timeout) before the server answered
            exchange.delivered = False
        exchange.done = True
