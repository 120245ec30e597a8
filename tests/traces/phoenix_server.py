"""A real Arize Phoenix on 127.0.0.1 for the ``--from phoenix`` tests, once per test run.

Phoenix (``arize-phoenix``) lives in a venv of its own (its dependencies do not fit
the dev extra: it pins tenacity below ours and adds some seventy packages); its
Python is ``$RAGPROOF_PHOENIX_PYTHON``, else ``.venv-phoenix/bin/python`` at the
repository root (``.ci/run`` builds it). Without it the tests skip with the reason,
unless ``RAGPROOF_REQUIRE_PHOENIX=1`` (CI), where that is a failure.

The first test process that needs it starts ``phoenix serve`` on free local ports
with a temporary working directory, authentication on (an admin secret is the API
key), telemetry, external resources, sandboxes and the agent assistant off, and
sends it the spans of ``phoenix_send.py`` (which also writes them as OTLP JSON).
Under pytest-xdist the workers share it through a state file guarded by a file
lock; the last one to let go of it stops it.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SENDER = Path(__file__).with_name("phoenix_send.py")
START_TIMEOUT = 180.0  # seconds for Phoenix to answer /healthz (a loaded 2-core machine)
INGEST_TIMEOUT = 120.0  # seconds for the sent spans to be readable


@dataclass(frozen=True)
class Phoenix:
    """A running Phoenix with the test spans in it."""

    url: str
    api_key: str
    otlp: Path  # the same spans as OTLP JSON, one line per project
    spans: dict[str, int]  # spans sent, by project


def python() -> Path | None:
    """Phoenix's venv Python, or None (the reason is :func:`missing`)."""
    given = os.environ.get("RAGPROOF_PHOENIX_PYTHON")
    path = Path(given) if given else ROOT / ".venv-phoenix" / "bin" / "python"
    return path if path.exists() else None


def missing() -> str:
    return (
        "arize-phoenix is not installed: set RAGPROOF_PHOENIX_PYTHON to the Python of a venv "
        "with it, or create .venv-phoenix (python3 -m venv .venv-phoenix && "
        ".venv-phoenix/bin/pip install arize-phoenix), as .ci/run does"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _secret() -> str:
    # Phoenix wants 32+ characters with a digit and a lower-case letter
    return "k1" + secrets.token_hex(20)


def _get(url: str, key: str | None = None) -> Any:
    request = urllib.request.Request(url)
    if key is not None:
        request.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read() or b"null")


def _start(py: Path, work: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    port, grpc_port = _free_port(), _free_port()
    key = _secret()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work),
        "PHOENIX_WORKING_DIR": str(work / "phoenix"),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        "PHOENIX_ALLOWED_SANDBOX_PROVIDERS": "NONE",
        "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
        "PHOENIX_AGENTS_DISABLE_WEB_ACCESS": "true",
        "PHOENIX_AGENTS_DISABLE_GITHUB": "true",
        "PHOENIX_ENABLE_AUTH": "true",
        "PHOENIX_SECRET": _secret(),
        "PHOENIX_ADMIN_SECRET": key,
    }
    log = (work / "phoenix.log").open("wb")
    proc = subprocess.Popen(
        [str(py), "-m", "phoenix.server.main", "serve"],
        env=env,
        cwd=work,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"Phoenix exited ({proc.returncode}): {_tail(work)}")
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2).close()
            return proc, url, key
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    _stop(proc.pid)
    raise RuntimeError(f"Phoenix did not answer within {START_TIMEOUT:.0f} s: {_tail(work)}")


def _tail(work: Path) -> str:
    text = (work / "phoenix.log").read_text(errors="replace")
    return text[-2000:]


def _send(py: Path, url: str, key: str, work: Path) -> Phoenix:
    otlp = work / "spans.otlp.jsonl"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work)}
    done = subprocess.run(
        [str(py), str(SENDER), url, key, str(otlp)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"phoenix_send.py failed: {done.stderr[-2000:]}")
    sent: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    deadline = time.monotonic() + INGEST_TIMEOUT
    for project, n in sent.items():  # Phoenix inserts what it receives in batches
        while True:
            try:
                page = _get(f"{url}/v1/projects/{project}/spans/otlpv1?limit=1000", key)
                held = len(page["data"])
            except urllib.error.HTTPError as exc:
                if exc.code != 404:  # 404: the project is not created yet
                    raise
                held = 0
            if held >= n:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"Phoenix holds {held} of {n} spans of {project}")
            time.sleep(0.5)
    return Phoenix(url, key, otlp, sent)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, 15)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass  # another worker started it: it is not this process's child
        time.sleep(0.1)
    try:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def shared_phoenix(py: Path, shared: Path) -> Iterator[Phoenix]:
    """A Phoenix shared by the test processes whose common folder is ``shared``."""
    state = shared / "phoenix-state.json"
    lock = shared / "phoenix.lock"
    with _locked(lock):
        if state.exists():
            info = json.loads(state.read_text())
        else:
            work = shared / f"phoenix-{os.getpid()}"
            work.mkdir()
            proc, url, key = _start(py, work)
            try:
                world = _send(py, url, key, work)
            except BaseException:
                _stop(proc.pid)
                raise
            info = {"pid": proc.pid, "users": 0, "url": url, "key": key}
            info.update(otlp=str(world.otlp), spans=world.spans)
        info["users"] += 1
        state.write_text(json.dumps(info))
    try:
        yield Phoenix(info["url"], info["key"], Path(info["otlp"]), info["spans"])
    finally:
        with _locked(lock):
            info = json.loads(state.read_text())
            info["users"] -= 1
            if info["users"] == 0:
                _stop(info["pid"])
                state.unlink()
            else:
                state.write_text(json.dumps(info))


if __name__ == "__main__":  # start one by hand: python -m tests.traces.phoenix_server DIR
    found = python()
    if found is None:
        sys.exit(missing())
    with shared_phoenix(found, Path(sys.argv[1])) as running:
        print(running, flush=True)
        input("press Enter to stop Phoenix ")
