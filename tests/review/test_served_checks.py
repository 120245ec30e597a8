"""The review app's checks against the real served app (uvicorn on a local socket):
which Host headers it answers, a claim verdict for a claim the judge did not list, and
the link of a run whose id holds markup (in Chromium)."""

from __future__ import annotations

import http.client
import http.cookiejar
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from pytest_ragproof.history.store import open_store
from pytest_ragproof.history.target import resolve_target
from tests.browser import Tab, needs_chromium
from tests.history.runs import document
from tests.review.conftest import TOKEN
from tests.review.test_app import case_number, results_app
from tests.review.test_command import start, stop
from tests.review.test_history_pages import args
from tests.review.test_review_browser import only_local, served


def status_for_host(address: str, port: int, host: str, token: str = TOKEN) -> tuple[int, str]:
    """GET /?token=… on ``address``:``port`` with this Host header: 303 (the cookie and a
    redirect) when the app takes the Host as its own, 403 when it refuses it."""
    conn = http.client.HTTPConnection(address, port, timeout=10)
    try:
        conn.putrequest("GET", f"/?token={token}", skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_a_host_header_with_our_name_before_an_at_sign_is_refused(
    results_path: Path, tmp_path: Path
) -> None:
    app = results_app(results_path, tmp_path / "labels.jsonl")
    with served(app) as base:
        port = int(base.rsplit(":", 1)[1])
        assert status_for_host("127.0.0.1", port, f"127.0.0.1:{port}")[0] == 303
        assert status_for_host("127.0.0.1", port, f"localhost:{port}")[0] == 303
        # An SSH tunnel or an editor's port forwarding: the browser names its local port.
        assert status_for_host("127.0.0.1", port, "localhost:9000")[0] == 303
        for foreign in (
            f"127.0.0.1:{port}@evil.example",
            f"evil.example@127.0.0.1:{port}",
            f"127.0.0.1:{port}/evil.example",
            "evil.example",
        ):
            status, text = status_for_host("127.0.0.1", port, foreign)
            assert status == 403 and "unknown Host header" in text, foreign


def test_listening_everywhere_answers_only_this_machines_names(
    results_path: Path, tmp_path: Path
) -> None:
    """``--host 0.0.0.0``: the address a request came in on (127.0.0.2 here, an address
    the app was never told about) and the machine's host name are the app's own; any
    other name (a DNS name rebound to this machine) is refused."""
    proc, lines = start(
        str(results_path), "--host", "0.0.0.0", "--port", "0", "--no-browser", cwd=tmp_path
    )
    try:
        url = lines[1].removeprefix("ragproof review: open ")
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["token"][0]

        def status(host: str) -> tuple[int, str]:
            return status_for_host("127.0.0.2", port, host, token)

        assert status(f"127.0.0.2:{port}")[0] == 303
        assert status(f"localhost:{port}")[0] == 303
        assert status(f"{socket.gethostname()}:{port}")[0] == 303
        for foreign in (
            f"review-box.evil.example:{port}",
            f"127.0.0.1:{port}@evil.example",
            f"127.0.0.3:{port}",  # an address this request did not come in on
        ):
            code, text = status(foreign)
            assert code == 403 and "unknown Host header" in text, foreign
    finally:
        code, err = stop(proc)
    assert code == 0, err


def test_a_verdict_for_a_claim_the_judge_did_not_list_is_not_stored(
    results_path: Path, tmp_path: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    n = case_number(results_path, "qa-paris")
    claims = len(
        next(c for c in json.loads(results_path.read_text())["cases"] if c["id"] == "qa-paris")[
            "judgements"
        ]["faithfulness"]["claims"]
    )
    with served(results_app(results_path, labels)) as base:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(f"{base}/?token={TOKEN}", timeout=10).read()

        def post(claim: int) -> tuple[int, str]:
            body = urllib.parse.urlencode(
                {
                    "token": TOKEN,
                    "metric": "faithfulness",
                    "verdict": "0",
                    f"claim-{claim}": "supported",
                }
            ).encode()
            request = urllib.request.Request(
                f"{base}/case/{n}/label", data=body, headers={"Origin": base}, method="POST"
            )
            try:
                with opener.open(request, timeout=10) as response:
                    return response.status, response.read().decode()
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode()

        for index in (99999, claims + 1):
            code, text = post(index)
            assert code == 400, (index, text)
            assert f"claim {index} is not a claim the judge of faithfulness listed" in text
            assert not labels.exists() or labels.read_text() == ""
        code, _ = post(claims)  # the last claim the judge listed: stored
        assert code == 200
    (line,) = labels.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["claims"] == [{"index": claims, "verdict": "supported"}]


MARKUP_ID = '20260101T120000Z-<b>bold</b>&"x"?y=1#z'


@needs_chromium
def test_a_run_id_with_markup_links_to_its_run_page(tab: Tab, tmp_path: Path) -> None:
    from pytest_ragproof.commands.review import build

    store_path = tmp_path / "history.sqlite"
    with open_store(resolve_target(str(store_path), tmp_path)) as store:
        store.add(document(), "older.json")
        store.add({**document(), "run_id": MARKUP_ID}, "markup.json")
    app, _ = build(args("--history", str(store_path)), TOKEN)
    with served(app) as base:
        page = tab.page
        page.goto(f"{base}/runs?token={TOKEN}")
        link = page.get_by_role("link", name=MARKUP_ID, exact=True)
        assert link.count() == 1  # shown as text, not as markup
        with page.expect_navigation():
            link.click()
        assert page.locator("h1").inner_text() == f"Run {MARKUP_ID}"
        assert page.locator("#cases tbody tr").count() > 0
        # a stored case's page and the way back
        with page.expect_navigation():
            page.locator("#cases tbody tr a").first.click()
        with page.expect_navigation():
            page.get_by_role("link", name=f"← run {MARKUP_ID}").click()
        assert page.locator("h1").inner_text() == f"Run {MARKUP_ID}"
        # compare with the run before
        with page.expect_navigation():
            page.get_by_role("link", name="compare with the run before").click()
        assert page.url.startswith(f"{base}/compare?")
        assert "No such run" not in page.content()
        only_local(tab)
