"""``ragproof import --from phoenix`` against a real local Arize Phoenix (``phoenix_server``).

The spans ``phoenix_send.py`` sent to Phoenix are also written as OTLP JSON; the cases
read back from Phoenix's REST API must equal, field by field, what ``--from otel``
makes of that file (less ``service``: Phoenix keeps no resource), with every trace
option, and the summary must count the same. The errors are tested against the real
server (no key, a wrong key, an unknown project), a closed port, and small local
HTTP servers that are not Phoenix (HTTP 403, an HTML page, an old Phoenix without the
OTLP span route, a server that never answers).
"""

from __future__ import annotations

import http.server
import json
import os
import re
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.interop import phoenix as phoenix_api
from tests.interop.conftest import Ran
from tests.traces.phoenix_server import Phoenix, missing, python, shared_phoenix

Cli = Callable[..., Ran]
KEY_ENV = "RAGPROOF_TEST_PHOENIX_KEY"


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    py = python()
    if py is None:
        if os.environ.get("RAGPROOF_REQUIRE_PHOENIX") == "1":
            pytest.fail(missing())
        pytest.skip(missing())
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with shared_phoenix(py, shared) as running:
        yield running


@pytest.fixture
def keyed(phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch) -> Phoenix:
    monkeypatch.setenv(KEY_ENV, phoenix.api_key)
    return phoenix


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _otlp_line(phoenix: Phoenix, project: str, tmp_path: Path) -> Path:
    index = list(phoenix.spans).index(project)
    path = tmp_path / f"{project}.otlp.jsonl"
    path.write_text(phoenix.otlp.read_text().splitlines()[index] + "\n")
    return path


def _both(
    cli: Cli, phoenix: Phoenix, tmp_path: Path, project: str, *options: str, fmt: str = "--from"
) -> tuple[Ran, Ran, Path, Path]:
    """The import of ``project`` from Phoenix and of the same spans from OTLP JSON."""
    (tmp_path / "p").mkdir()
    (tmp_path / "o").mkdir()
    from_phoenix, from_otel = tmp_path / "p" / "cases.jsonl", tmp_path / "o" / "cases.jsonl"
    ran_p = cli(
        "import", fmt, "phoenix", phoenix.url, "--project", project, "--api-key-env", KEY_ENV,
        "-o", from_phoenix, *options,
    )  # fmt: skip
    otlp = _otlp_line(phoenix, project, tmp_path)
    ran_o = cli("import", fmt, "otel", otlp, "-o", from_otel, *options)
    assert ran_p.code == 0, ran_p.err
    assert ran_o.code == 0, ran_o.err
    for ran in (ran_p, ran_o):
        assert phoenix.api_key not in ran.out + ran.err
    shown = f"{phoenix.url} project {project}"
    phoenix_out = ran_p.out.replace(shown, "SRC").replace(str(from_phoenix), "OUT")
    otel_out = ran_o.out.replace(str(otlp), "SRC").replace(str(from_otel), "OUT")
    otel_out = otel_out.replace("span(s) in 1 file(s)", "span(s) from SRC")
    # the same summary but for its source, and service.name, which Phoenix does not keep
    # (the mapping's column is as wide as its longest source)
    otel_out = otel_out.replace("start time, service.name ", "start time ")
    phoenix_out = phoenix_out.replace("(phoenix)", "(otel)")
    assert re.sub(" +-> ", " -> ", phoenix_out) == re.sub(" +-> ", " -> ", otel_out)
    return ran_p, ran_o, from_phoenix, from_otel


def _without_service(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for record in records:
        assert record["metadata"]["trace"].pop("service") in ("support-api", "billing-api")
    return records


OPTIONS = [
    (),
    ("--since", "2026-11-02T09:01:00Z", "--until", "2026-11-02T09:06:00Z"),
    ("--sample", "2", "--seed", "7"),
    ("--max-cases", "2"),
    ("--redact", r"Pro\w*", "--redact-pii"),
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: " ".join(o) or "all")
def test_cases_equal_the_otlp_import(
    cli: Cli, keyed: Phoenix, tmp_path: Path, options: tuple[str, ...]
) -> None:
    _, _, from_phoenix, from_otel = _both(cli, keyed, tmp_path, "support-bot", *options)
    got = _records(from_phoenix)
    assert got
    assert all("service" not in r["metadata"]["trace"] for r in got)
    assert got == _without_service(_records(from_otel))


def test_what_the_cases_hold(cli: Cli, keyed: Phoenix, tmp_path: Path) -> None:
    ran, _, from_phoenix, _ = _both(cli, keyed, tmp_path, "support-bot")
    assert f"traces: 6 read ({keyed.spans['support-bot']} span(s) from " in ran.out
    assert "4 kept, 2 skipped" in ran.out
    assert "1: no recognisable question: " in ran.out
    assert "1: a near-duplicate of an earlier trace's question" in ran.out
    cases = {r["question"]: r for r in _records(from_phoenix)}
    assert list(cases) == [
        "How do I reset my password?",
        "And how much is Pro?",
        "Where is the API token?",
        "I am ann@example.com, call me on +44 20 7946 0958: is there an API?",
    ]
    first = cases["How do I reset my password?"]
    assert first["review_status"] == "pending" and "expected_answer" not in first
    trace = first["metadata"]["trace"]
    assert trace["answer"] == "Use the reset link on the sign-in page."
    assert trace["retrieved"] == [
        {"id": "account.md", "rank": 1, "score": 0.91},
        {"id": "api.md", "rank": 2, "score": 0.12},
    ]
    assert trace["repeats"] == 1
    assert trace["timestamp"] == "2026-11-02T09:00:00.123457Z"
    chat = cases["And how much is Pro?"]
    assert chat["question_type"] == "conversational"
    assert chat["conversation_history"] == [
        {"role": "user", "content": "Where are my invoices?"},
        {"role": "assistant", "content": "Under Settings, Billing."},
    ]
    reranked = cases["Where is the API token?"]["metadata"]["trace"]["reranked"]
    assert [(d["rank"], d["score"], d["id_from"]) for d in reranked] == [
        (1, 0.5, "content"),
        (2, 0.25, "content"),
    ]


def test_another_project_and_format(cli: Cli, keyed: Phoenix, tmp_path: Path) -> None:
    _, _, from_phoenix, from_otel = _both(cli, keyed, tmp_path, "billing-bot", fmt="--format")
    got = _records(from_phoenix)
    assert [r["question"] for r in got] == [
        "Where are my invoices?",
        "Do I need a token for the API?",
    ]
    assert got == _without_service(_records(from_otel))


def test_pages_through_the_cursor(
    cli: Cli, keyed: Phoenix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = tmp_path / "whole.jsonl"
    args = ("--project", "support-bot", "--api-key-env", KEY_ENV)
    assert cli("import", "--from", "phoenix", keyed.url, *args, "-o", whole).code == 0
    asked: list[dict[str, str] | None] = []
    get = phoenix_api.get

    def counted(server: phoenix_api.Server, path: str, query: dict[str, str] | None = None) -> Any:
        asked.append(query)
        return get(server, path, query)

    monkeypatch.setattr(phoenix_api, "PAGE", 3)
    monkeypatch.setattr(phoenix_api, "get", counted)
    paged = tmp_path / "paged.jsonl"
    ran = cli("import", "--from", "phoenix", keyed.url + "/", *args, "-o", paged)
    assert ran.code == 0, ran.err
    cursors = [q.get("cursor") for q in asked[1:] if q is not None]
    assert len(cursors) == -(-keyed.spans["support-bot"] // 3)  # ceil: 14 spans, 5 pages
    assert cursors[0] is None and all(cursors[1:])
    assert paged.read_text() == whole.read_text()


def test_a_server_that_needs_a_key(
    cli: Cli, phoenix: Phoenix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "phoenix", phoenix.url, "--project", "support-bot", "-o", out)
    assert ran.code == 1
    assert ran.err.count("\n") == 1 and "Traceback" not in ran.err
    assert f"ragproof import: error: {phoenix.url}: Phoenix refused the request (HTTP 401)" in (
        ran.err
    )
    assert "--api-key-env NAME" in ran.err
    monkeypatch.setenv(KEY_ENV, "not-the-key-" + phoenix.api_key[::-1])
    ran = cli(
        "import", "--from", "phoenix", phoenix.url, "--project", "support-bot",
        "--api-key-env", KEY_ENV, "-o", out,
    )  # fmt: skip
    assert ran.code == 1
    assert f"Phoenix refused the API key in ${KEY_ENV} (HTTP 401)" in ran.err
    assert phoenix.api_key[::-1] not in ran.out + ran.err
    assert not out.exists()


def test_an_unknown_project(cli: Cli, keyed: Phoenix, tmp_path: Path) -> None:
    out = tmp_path / "cases.jsonl"
    ran = cli(
        "import", "--from", "phoenix", keyed.url, "--project", "suport-bot",
        "--api-key-env", KEY_ENV, "-o", out,
    )  # fmt: skip
    assert ran.code == 1 and ran.err.count("\n") == 1
    assert (
        f"{keyed.url}: has no project 'suport-bot'; its projects: billing-bot, default, "
        "support-bot. Fix: give one of those with --project"
    ) in ran.err
    assert not out.exists()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_closed_port(cli: Cli, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "phoenix", url, "--project", "p", "-o", out)
    assert ran.code == 1 and ran.err.count("\n") == 1 and "Traceback" not in ran.err
    assert f"{url}: the server cannot be reached (connection refused)" in ran.err
    assert not out.exists()


def test_credentials_in_the_url_are_refused_unshown(cli: Cli, tmp_path: Path) -> None:
    ran = cli(
        "import", "--from", "phoenix", "http://me:hunter2@127.0.0.1:9", "--project", "p",
        "-o", tmp_path / "cases.jsonl",
    )  # fmt: skip
    assert ran.code != 0 and "has a user name or password in it" in ran.err
    assert "hunter2" not in ran.err


Reply = tuple[int, str, bytes]  # status, content type, body


def _serve(replies: dict[str, Reply]) -> tuple[str, Callable[[], None]]:
    """A local HTTP server answering each path (without query) with its reply, else 404."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, kind, body = replies.get(self.path.split("?")[0], (404, "text/plain", b"no"))
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", body.decode())
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


PROJECTS = (200, "application/json", b'{"data": [{"name": "p", "id": "UHJvamVjdDox"}]}')


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        (
            {"/v1/projects": (403, "text/plain", b"Forbidden")},
            "Phoenix refused the request (HTTP 403)",
        ),
        (
            {"/v1/projects": (200, "text/html", b"<html>a router's login page</html>")},
            "is not a Phoenix server: GET /v1/projects answered text/html content, not JSON",
        ),
        ({}, "is not a Phoenix server: it has no /v1/projects"),
        (
            {"/v1/projects": (200, "application/json", b'{"projects": []}')},
            "is not a Phoenix server: GET /v1/projects answered JSON without a data list",
        ),
        (
            {"/v1/projects": PROJECTS},
            "this Phoenix has no OTLP span route (GET /v1/projects/…/spans/otlpv1 answered 404)",
        ),
        (
            {
                "/v1/projects": PROJECTS,
                "/v1/projects/UHJvamVjdDox/spans/otlpv1": (500, "text/plain", b"boom"),
            },
            "the server answered HTTP 500 to GET /v1/projects/UHJvamVjdDox/spans/otlpv1",
        ),
        (
            {
                "/v1/projects": PROJECTS,
                "/v1/projects/UHJvamVjdDox/spans/otlpv1": (
                    200,
                    "application/json",
                    b'{"data": [{"trace_id": "x", "span_id": "y"}], "next_cursor": null}',
                ),
            },
            "project p: span 1 is not an OTLP span: traceId is neither 32 hex digits",
        ),
        (
            {"/v1/projects": (302, "text/plain", b"https://u:pw@login.example/sso?next=x")},
            "the server redirects GET /v1/projects (HTTP 302) to https://login.example/sso",
        ),
    ],
    ids=["403", "html", "no-api", "other-json", "old-phoenix", "500", "bad-span", "redirect"],
)
def test_servers_that_are_not_phoenix(
    cli: Cli, tmp_path: Path, replies: dict[str, Reply], expected: str
) -> None:
    url, stop = _serve(replies)
    out = tmp_path / "cases.jsonl"
    try:
        ran = cli("import", "--from", "phoenix", url, "--project", "p", "-o", out)
    finally:
        stop()
    assert ran.code == 1 and "Traceback" not in ran.err
    assert ran.err.count("\n") == 1, ran.err
    assert expected in ran.err
    assert ":pw@" not in ran.err
    assert not out.exists()


def test_a_server_that_does_not_speak_http(cli: Cli, tmp_path: Path) -> None:
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        url = f"http://127.0.0.1:{listening.getsockname()[1]}"

        def banner() -> None:
            conn, _ = listening.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")

        thread = threading.Thread(target=banner, daemon=True)
        thread.start()
        ran = cli("import", "--from", "phoenix", url, "--project", "p", "-o", tmp_path / "c.jsonl")
        thread.join(timeout=10)
    assert ran.code == 1 and ran.err.count("\n") == 1 and "Traceback" not in ran.err
    assert f"{url}: the server gave no HTTP reply to GET /v1/projects (BadStatusLine)" in ran.err


def test_a_server_that_never_answers(cli: Cli, tmp_path: Path) -> None:
    with socket.socket() as listening:  # accepted by the kernel, never read nor answered
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        url = f"http://127.0.0.1:{listening.getsockname()[1]}"
        ran = cli(
            "import", "--from", "phoenix", url, "--project", "p", "--timeout", "0.3",
            "-o", tmp_path / "cases.jsonl",
        )  # fmt: skip
    assert ran.code == 1 and ran.err.count("\n") == 1
    assert f"{url}: the server did not answer within 0.3 s" in ran.err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--service", "api"), "--service does not apply to --from phoenix"),
        (("--corpus", "docs"), "--corpus does not apply to --from phoenix"),
        (("--api-key-env", "RAGPROOF_TEST_UNSET_VAR"), "RAGPROOF_TEST_UNSET_VAR is unset"),
        (("--timeout", "0"), "--timeout must be a positive number of seconds"),
    ],
)
def test_usage_errors(cli: Cli, tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    out = tmp_path / "cases.jsonl"
    url = "http://127.0.0.1:9"
    ran = cli("import", "--from", "phoenix", url, "--project", "p", *args, "-o", out)
    assert ran.code != 0 and expected in ran.err


def test_usage_errors_of_the_url_and_project(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "phoenix", "http://127.0.0.1:9", "-o", out)
    assert ran.code != 0 and "--from phoenix needs --project NAME" in ran.err
    ran = cli("import", "--from", "phoenix", "127.0.0.1:6006", "--project", "p", "-o", out)
    assert ran.code != 0 and "is not an http:// or https:// URL" in ran.err
    ran = cli("import", "--from", "otel", tmp_path / "t.jsonl", "--project", "p", "-o", out)
    assert ran.code != 0 and "--project applies to --from phoenix only" in ran.err
