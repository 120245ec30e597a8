"""A recording proxy between ragproof and a model server, for ``bench_local_judge.py``.

ragproof's judge usage counts the calls, requests, tokens and failures of a run; a
local model's figures need each request too: its latency, tokens and finish reason,
and whether it was a repair (ragproof's repair request carries the rejected reply as
an assistant turn, which no judge prompt has otherwise). Requests and replies pass
through unchanged; the proxy listens on 127.0.0.1 only.

A logical call is its first request, that request again (a retry after a timeout
or a 5xx: the same body), then at most one repair (the same conversation plus the
rejected reply and the repair turn) and its retries. Calls interleave even with one
in flight (judge-check sends every item's first request before the repairs), so
:func:`group_calls` joins requests by the conversation they start from, not by order,
and leaves out ragproof's response-format probes (``auto``), which are no judge call.
Two calls of one run with the very same messages would be taken for one; a run
without the cache never sends those (the items and cases here all differ).
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

from pytest_ragproof.llm.probe import PROBE_MARKER

_STEP = re.compile(r"ragproof judge step: ([a-z-]+/\d+)")


@dataclass
class Exchange:
    """One HTTP request through the proxy and what came back."""

    step: str  # the judge step named in the prompt ("?" when none is)
    repair: bool  # a repair request: the conversation carries an assistant turn
    retry: bool  # the same body as an earlier request
    conversation: str = ""  # the messages the call started from (a repair's minus its 2 turns)
    probe: bool = False  # ragproof's response-format probe (``auto``), not a judge call
    status: int | None = None  # None: the server gave no HTTP answer
    seconds: float = 0.0
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    delivered: bool = False  # the reply reached the client (False: it had gone)
    reply: str | None = None  # the reply's message text (kept for reading the run)
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
    """The logical calls of these requests, in the order they started (see the docstring)."""
    calls: dict[str, Call] = {}
    for exchange in exchanges:
        if exchange.probe:
            continue
        call = calls.setdefault(exchange.conversation, Call(exchange.step))
        call.requests.append(exchange)
    return list(calls.values())


def _describe(body: bytes) -> tuple[str, bool, str, bool]:
    """The step, whether it is a repair, the conversation the call started from, a probe?"""
    try:
        messages = json.loads(body).get("messages") or []
    except (ValueError, AttributeError):
        return "?", False, body.decode(errors="replace"), False
    text = " ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    found = _STEP.search(text)
    repair = any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)
    start = messages[:-2] if repair else messages
    key = json.dumps(start, sort_keys=True)
    return (found.group(1) if found else "?"), repair, key, PROBE_MARKER in text


def _read_reply(exchange: Exchange, payload: bytes) -> None:
    try:
        data = json.loads(payload)
        choice = (data.get("choices") or [{}])[0]
        usage = data.get("usage") or {}
    except (ValueError, AttributeError, TypeError, IndexError):
        return
    if isinstance(choice, dict):
        exchange.finish_reason = choice.get("finish_reason")
        exchange.reply = (choice.get("message") or {}).get("content")
    exchange.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    exchange.completion_tokens = int(usage.get("completion_tokens") or 0)


class RecordingProxy:
    """Forwards every request to ``upstream`` (``http://127.0.0.1:PORT``) and records it."""

    def __init__(self, upstream: str, *, timeout_s: float = 3600.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.timeout_s = timeout_s
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._bodies: list[bytes] = []
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

    def bodies(self) -> list[bytes]:
        """The request bodies, in the order of :attr:`exchanges`."""
        with self._lock:
            return list(self._bodies)

    def since(self, mark: int) -> list[Exchange]:
        """The exchanges from index ``mark`` on (``len(proxy.exchanges)`` taken before)."""
        with self._lock:
            return list(self.exchanges[mark:])

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        step, repair, conversation, probe = _describe(body)
        with self._lock:
            retry = body in self._bodies
            exchange = Exchange(step, repair, retry, conversation, probe)
            self.exchanges.append(exchange)
            self._bodies.append(body)
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
