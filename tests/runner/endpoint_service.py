"""A scripted RAG service on 127.0.0.1 for the ``--ragproof-endpoint`` tests.

``Service.behaviour`` maps a key of :data:`ANSWERS` (found in the posted question)
to what the service does: ok, slow, 500, 500-once, 429 (Retry-After: 0), 429-once,
malformed JSON, missing paths, numeric ids, a 10 MB answer (with its Content-Length,
or streamed without one until the client hangs up), or waiting at a barrier of four.
It records every request (headers and decoded body) and how many were in flight.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "tok-5ecr3t-7f3a91"  # the header value no output may contain
BODY_SECRET = "BODY-5ECRET-c41d"  # in error bodies: no output may contain it either
HUGE = 10 * 1024 * 1024  # the characters of a "huge" answer

# The service's answers, found by a key in the question (as tests/runner/conftest.py).
ANSWERS = {
    "refund window": ("Refunds are accepted within 30 days.", ["refunds.md", "plans.md"]),
    "SSO": ("Enterprise has SSO.", ["plans.md"]),
    "dentist": ("I don't know; that is not in the provided documents.", []),
    "refunds take": ("Refunds take 5 days.", ["refunds.md"]),
    "refund on": ("Yes, within 30 days.", ["refunds.md"]),
}


class Service:
    """The scripted service: ``behaviour`` maps an ANSWERS key to what it does."""

    def __init__(self) -> None:
        self.behaviour: dict[str, str] = {}
        self.requests: list[dict[str, Any]] = []
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.streamed = 0  # bytes of streamed bodies the service managed to write
        self.stream_answer = HUGE  # characters of the answer of "huge-streamed"
        self.stream_ended = threading.Event()  # a streamed body was written or cut off
        self.barrier = threading.Barrier(4, timeout=10)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/ask"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.loads(raw)
                key = next(k for k in ANSWERS if k in body["query"])
                with service.lock:
                    service.requests.append({"headers": dict(self.headers), "body": body})
                    service.seen[key] += 1
                    attempt = service.seen[key]
                    service.in_flight += 1
                    service.max_in_flight = max(service.max_in_flight, service.in_flight)
                try:
                    self._answer(key, service.behaviour.get(key, "ok"), attempt)
                finally:
                    with service.lock:
                        service.in_flight -= 1

            def _answer(self, key: str, action: str, attempt: int) -> None:
                answer, ids = ANSWERS[key]
                sources: Any = [{"doc_id": i, "text": answer} for i in ids]
                if action == "slow":
                    time.sleep(2)
                if action == "barrier":  # released once four requests are in flight
                    with contextlib.suppress(threading.BrokenBarrierError):
                        service.barrier.wait()
                if action == "500" or (action == "500-once" and attempt == 1):
                    return self._send(500, f"Internal error {BODY_SECRET}".encode())
                if action == "429" or (action == "429-once" and attempt == 1):
                    return self._send(429, BODY_SECRET.encode(), {"Retry-After": "0"})
                if action == "malformed":
                    return self._send(200, b'{"data": {"answer": "' + BODY_SECRET.encode())
                doc: dict[str, Any] = {"data": {"answer": answer}, "sources": sources}
                if action == "no-answer":
                    doc["data"] = {"text": BODY_SECRET}
                if action == "contexts-not-list":
                    doc["sources"] = {"doc_id": BODY_SECRET}
                if action == "numeric-ids":
                    doc["sources"] = [{"doc_id": 7, "text": answer}]
                if action == "huge":
                    doc["data"] = {"answer": "x" * HUGE}
                if action == "huge-streamed":
                    doc["data"] = {"answer": "x" * service.stream_answer}
                data = json.dumps(doc).encode()
                if action == "huge-streamed":
                    return self._stream(data)
                with contextlib.suppress(OSError):  # a client bounding the body hangs up early
                    self._send(200, data)

            def _stream(self, data: bytes) -> None:
                """HTTP/1.0 without Content-Length: the body ends when the connection does."""
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                try:
                    with contextlib.suppress(OSError):  # the client may hang up early
                        for start in range(0, len(data), 65536):
                            self.wfile.write(data[start : start + 65536])
                            with service.lock:
                                service.streamed += len(data[start : start + 65536])
                finally:
                    service.stream_ended.set()

            def _send(self, status: int, data: bytes, extra: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler
