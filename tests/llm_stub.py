"""A scripted OpenAI-compatible chat-completions server for tests and benchmarks.

It listens on 127.0.0.1 in a background thread and answers
``POST /v1/chat/completions`` (and ``/chat/completions``) with scripted actions, so
litellm's real HTTP path -- the openai SDK, status mapping, headers -- is exercised
exactly as it would be against a user's Ollama or vLLM server.

Use it through the ``llm_stub`` fixture::

    def test_something(llm_stub: StubServer) -> None:
        llm_stub.script(rate_limited(retry_after=0.2), reply('{"answer": "x"}'))
        # point litellm at model "openai/<any name>", api_base=llm_stub.url
        ...
        assert llm_stub.request_count == 2

Actions are consumed first-in first-out; when the queue is empty the ``default``
action (settable) answers, or a callable set with ``set_handler`` decides from
the request body. Every request body is recorded in ``requests``, except
ragproof's response-format probes (``auto`` at a local server, llm.probe): those go to
``probes`` and are answered by ``probe_handler`` (by default refused, as by a server
that takes no ``response_format``; :func:`accept_probes` plays one that does).

Run as a script (``python tests/llm_stub.py --latency 0.2``) it serves a fixed
JSON reply forever and prints its base URL: the benchmarks use it out of process
so the client's CPU time is measured without the server's.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

JSONDict = dict[str, Any]


@dataclass(frozen=True)
class Action:
    """One scripted answer. Build it with the helpers below rather than directly."""

    status: int = 200
    content: str | None = ""
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    raw_body: str | None = None  # when set, sent verbatim instead of a completion
    prompt_tokens: int = 11
    completion_tokens: int = 7
    finish_reason: str = "stop"


def cut(content: str, *, completion_tokens: int = 64) -> Action:
    """A 200 completion the server stopped at its budget (``finish_reason: length``)."""
    return Action(content=content, completion_tokens=completion_tokens, finish_reason="length")


def reply(
    content: str | None,
    *,
    delay_s: float = 0.0,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
) -> Action:
    """A normal 200 completion whose message content is ``content`` (None = null)."""
    return Action(
        content=content,
        delay_s=delay_s,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


def reply_json(value: Any, *, delay_s: float = 0.0) -> Action:
    """A 200 completion whose content is ``value`` serialized as JSON."""
    return reply(json.dumps(value), delay_s=delay_s)


def rate_limited(*, retry_after: float | None = None, echo: str = "rate limited") -> Action:
    """HTTP 429, with a ``Retry-After`` header (seconds) when given."""
    headers = (("Retry-After", _seconds(retry_after)),) if retry_after is not None else ()
    return Action(status=429, headers=headers, raw_body=_error_body(echo, "rate_limit_error"))


def server_error(status: int = 500, *, echo: str = "internal error") -> Action:
    """An HTTP 5xx (or any status) whose error message is ``echo``.

    Tests plant secrets in ``echo`` to prove provider messages never surface.
    """
    return Action(status=status, raw_body=_error_body(echo, "server_error"))


def hang(seconds: float = 30.0) -> Action:
    """Accept the request and answer nothing for ``seconds`` (past any client timeout).

    The sleep is cut short when the server shuts down, so teardown never waits.
    """
    return Action(delay_s=seconds, content="{}")


def closed_url() -> str:
    """An API base on 127.0.0.1 where nothing listens: connecting to it is refused.

    The port is one the system just handed out and took back (bound, read, closed).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _seconds(value: float) -> str:
    # Retry-After is an integer per RFC 9110, but providers send fractions too;
    # keep fractions so tests can stay fast.
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _error_body(message: str, kind: str) -> str:
    return json.dumps({"error": {"message": message, "type": kind, "code": None}})


Handler = Callable[[JSONDict], Action]


def refuse_probes(body: JSONDict) -> Action:
    """The default answer to ragproof's response-format probes: a server that takes no
    ``response_format`` (HTTP 400), so ``auto`` keeps the schema in the prompt."""
    return Action(status=400, raw_body=_error_body("response_format is not supported", "invalid"))


def accept_probes(*forms: str) -> Handler:
    """Probes answered as a server that takes and follows ``forms`` (``json_schema``,
    ``json_object_schema``) and answers HTTP 500 to the others (llama-cpp-python's way)."""

    def handle(body: JSONDict) -> Action:
        fmt = body.get("response_format") or {}
        form = "json_object_schema" if fmt.get("type") == "json_object" else fmt.get("type")
        if form in forms:
            return reply('{"probe": "ok"}')
        return server_error(500)

    return handle


def is_probe(body: JSONDict) -> bool:
    """Is ``body`` one of ragproof's response-format probes (llm.probe)?"""
    from pytest_ragproof.llm.probe import PROBE_MARKER

    return any(PROBE_MARKER in str(m.get("content")) for m in body.get("messages") or ())


@dataclass
class StubServer:
    """The running stub: script it, read what it received, stop it."""

    default: Action | None = None
    requests: list[JSONDict] = field(default_factory=list)
    #: ragproof's response-format probes (llm.probe) are kept apart from ``requests``
    #: and answered by ``probe_handler``, never by the queue or the handler.
    probes: list[JSONDict] = field(default_factory=list)
    probe_handler: Handler = refuse_probes
    request_headers: list[dict[str, str]] = field(default_factory=list)
    request_times: list[float] = field(default_factory=list)  # perf_counter at arrival
    # (arrival, end) of every request that ended, answered or not: requests in flight
    # over time (see :func:`in_flight`).
    spans: list[tuple[float, float]] = field(default_factory=list)
    max_in_flight: int = 0
    _in_flight: int = 0
    _queue: deque[Action] = field(default_factory=deque)
    _handler: Handler | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    first_request_at: float | None = None
    last_response_at: float | None = None

    # -- scripting ---------------------------------------------------------
    def script(self, *actions: Action) -> None:
        """Append actions to the queue; each request consumes one."""
        with self._lock:
            self._queue.extend(actions)

    def set_handler(self, handler: Handler | None) -> None:
        """Decide every unscripted request with ``handler(request_body)``."""
        self._handler = handler

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def pending(self) -> int:
        """Scripted actions not consumed yet."""
        with self._lock:
            return len(self._queue)

    @property
    def url(self) -> str:
        """Base URL to pass as litellm's ``api_base``."""
        assert self._httpd is not None, "stub server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> StubServer:
        stub = self

        class _Handler(_RequestHandler):
            server_stub = stub

        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        # A short poll interval keeps shutdown (once per test) quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes hanging handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- used by the request handler ----------------------------------------
    def _next_action(
        self, body: JSONDict, headers: dict[str, str], now: float | None = None
    ) -> Action:
        now = time.perf_counter() if now is None else now
        if is_probe(body):
            with self._lock:
                self.probes.append(body)
                self._in_flight += 1
            return self.probe_handler(body)
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            self.request_times.append(now)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if self.first_request_at is None:
                self.first_request_at = now
            if self._queue:
                return self._queue.popleft()
        if self._handler is not None:
            return self._handler(body)
        if self.default is not None:
            return self.default
        # A non-retryable status, so an unscripted call fails fast and loudly.
        return Action(status=400, raw_body=_error_body("stub: script exhausted", "invalid"))

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when the full time elapsed."""
        return not self._stopping.wait(seconds)

    def _done(self, responded: bool, arrived: float) -> None:
        now = time.perf_counter()
        with self._lock:
            self._in_flight -= 1
            self.spans.append((arrived, now))
            if responded:
                self.last_response_at = now

    def reset_counters(self) -> None:
        """Forget the timings and the in-flight maximum (between measured runs)."""
        with self._lock:
            self.spans.clear()
            self.request_times.clear()
            self.max_in_flight = 0
            self.first_request_at = self.last_response_at = None


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 refuses connections when 64 clients connect at once.
    request_queue_size = 256


class _RequestHandler(BaseHTTPRequestHandler):
    server_stub: StubServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real providers do
    # Headers and body go out in two writes; with Nagle on, delayed ACKs add ~40 ms.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep test output clean

    def do_POST(self) -> None:
        arrived = time.perf_counter()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, _error_body("not found", "invalid"), ())
            return
        try:
            body: JSONDict = json.loads(raw)
        except ValueError:
            self._send(400, _error_body("bad json", "invalid"), ())
            return
        stub = self.server_stub
        headers = {k.lower(): v for k, v in self.headers.items()}
        action = stub._next_action(body, headers, arrived)
        if action.delay_s and not stub._sleep(action.delay_s):
            self.close_connection = True
            stub._done(False, arrived)
            return
        payload = action.raw_body if action.raw_body is not None else _completion(body, action)
        self._send(action.status, payload, action.headers)
        stub._done(True, arrived)

    def _send(self, status: int, payload: str, headers: tuple[tuple[str, str], ...]) -> None:
        data = payload.encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            # The client gave up (timeout) and closed the socket: nothing to do.
            self.close_connection = True


def _completion(request: JSONDict, action: Action) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(request.get("model", "stub")),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": action.content},
                    "finish_reason": action.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": action.prompt_tokens,
                "completion_tokens": action.completion_tokens,
                "total_tokens": action.prompt_tokens + action.completion_tokens,
            },
        }
    )


@pytest.fixture
def llm_stub() -> Iterator[StubServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1 for this test.

    Script answers with ``llm_stub.script(reply(...), rate_limited(...), ...)`` or
    ``llm_stub.set_handler(fn)``; call it through litellm with model
    ``openai/<name>`` and ``api_base=llm_stub.url``; inspect ``llm_stub.requests``.
    """
    server = StubServer().start()
    try:
        yield server
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fixed JSON completion forever.")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--content", default='{"answer": "stub"}')
    args = parser.parse_args()
    server = StubServer(default=reply(args.content, delay_s=args.latency)).start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
