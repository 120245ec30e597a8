"""Headless Debian Chromium driven over the Chrome DevTools Protocol, standard library only.

:class:`Browser` starts ``chromium --headless --remote-debugging-port=0`` with a
fresh ``--user-data-dir``, reads the port from the ``DevToolsActivePort`` file
Chromium writes there, finds the page target over ``http://127.0.0.1:<port>/json/list``
and talks to it through :class:`WebSocket`, a minimal RFC 6455 client (masked
client frames, fragmented and control frames handled). Events are kept in
``Browser.events`` for assertions (network requests, exceptions, dialogs).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = shutil.which("chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    # Any host name resolves to nothing: a report that tried the network would fail loudly.
    "--host-resolver-rules=MAP * ~NOTFOUND",
)


class WebSocket:
    """Just enough of RFC 6455 for a DevTools session on 127.0.0.1."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        parts = urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise ConnectionError(f"websocket handshake refused: {status!r}")

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("websocket closed")
            data += chunk
        return data

    def send(self, text: str, opcode: int = 0x1) -> None:
        payload = text.encode()
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def recv(self) -> str:
        message = b""
        while True:
            first, second = self._exact(2)
            fin, opcode = first & 0x80, first & 0x0F
            n = second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            mask = self._exact(4) if second & 0x80 else b""
            payload = self._exact(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode == 0x9:
                self.send(payload.decode(errors="replace"), opcode=0xA)
                continue
            if opcode == 0xA:
                continue
            message += payload
            if fin:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with one page, used as a context manager."""

    def __init__(self, *, timeout: float = 60.0) -> None:
        if CHROMIUM is None:
            raise RuntimeError("chromium is not installed")
        self.timeout = timeout
        self.profile = tempfile.TemporaryDirectory(prefix="ragproof-chromium-")
        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={self.profile.name}",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.events: list[dict[str, Any]] = []
        self._next = 0
        self.ws = WebSocket(self._page_url(), timeout=timeout)

    def _page_url(self) -> str:
        marker = Path(self.profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited early with code {self.proc.returncode}")
            lines = marker.read_text().splitlines() if marker.exists() else []
            if len(lines) >= 2:
                port = int(lines[0])
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                    targets = json.loads(r.read())
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.profile.cleanup()

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result; events read meanwhile are kept."""
        self._next += 1
        ident = self._next
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_for(self, event: str) -> dict[str, Any]:
        for seen in self.events:
            if seen["method"] == event:
                return seen
        while True:
            message: dict[str, Any] = json.loads(self.ws.recv())
            if "method" in message:
                self.events.append(message)
                if message["method"] == event:
                    return message

    def open(self, url: str) -> None:
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """Evaluate in the page (awaiting promises) and return the value."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the first element matching ``selector``."""
        box = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def set_value(self, selector: str, value: str, event: str = "change") -> None:
        """Set a form control's value and fire the event a user's edit would fire."""
        self.js(
            f"{{ const e = document.querySelector({json.dumps(selector)});"
            f" e.value = {json.dumps(value)}; e.dispatchEvent(new Event({json.dumps(event)})); }}"
        )

    def type_into(self, selector: str, text: str) -> None:
        self.js(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return data

    def requested_urls(self) -> list[str]:
        return [
            str(e["params"]["request"]["url"])
            for e in self.events
            if e["method"] == "Network.requestWillBeSent"
        ]

    def exceptions(self) -> list[str]:
        return [
            str(e["params"]["exceptionDetails"].get("text"))
            for e in self.events
            if e["method"] == "Runtime.exceptionThrown"
        ]


def dump_dom(url: str, timeout: float = 60.0) -> str:
    """The DOM after the page's scripts ran (``chromium --dump-dom``)."""
    if CHROMIUM is None:
        raise RuntimeError("chromium is not installed")
    with tempfile.TemporaryDirectory(prefix="ragproof-chromium-") as profile:
        proc = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    return proc.stdout
