"""The review app's history pages through Starlette's test client: Runs, Run, a stored
case and Compare, read from a real SQLite store of real evaluations."""

from __future__ import annotations

import argparse
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.errors import ConfigError, HistoryError
from pytest_ragproof.history.store import Store, open_store
from pytest_ragproof.history.target import resolve_target
from tests.history.runs import QA, document
from tests.review.conftest import TOKEN, login

PLANTED = '<script>alert("h")</script>'


@dataclass
class History:
    path: Path
    ids: list[str]  # oldest first: good, worse, broken
    results: Path  # the newest run's results file


def make_history(root: Path) -> History:
    root.mkdir(parents=True, exist_ok=True)
    good = document()
    # ten of sixteen recall values halved: qa recall@5 0.6875 < 0.8, its gate fails
    worse = document(halved={f"qa-{n:03d}" for n in range(1, 11)}, answer_suffix=PLANTED)
    broken = document(errors={"qa-016"}, missing={"qa-015"})
    path = root / "history.sqlite"
    ids = []
    with open_store(resolve_target(str(path), root)) as store:
        for name, doc in (("good", good), ("worse", worse), ("broken", broken)):
            ids.append(store.add(doc, f"{name}.json").run_id)
    results = root / "broken.json"
    results.write_text(json.dumps(broken), encoding="utf-8")
    return History(path, ids, results)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return make_history(tmp_path_factory.mktemp("history"))


def args(*argv: str) -> argparse.Namespace:
    from pytest_ragproof.commands.review import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([*argv, "--reviewer", "ana"])


@pytest.fixture
def client(history: History) -> Iterator[Any]:
    from pytest_ragproof.commands.review import build

    app, writes = build(args("--history", str(history.path)), TOKEN)
    assert writes == "the history pages only read the store"
    with login(app) as c:
        yield c


def svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg .*?</svg>", html, flags=re.S)]


def test_runs_page_lists_every_run_and_draws_the_trends(client: Any, history: History) -> None:
    assert client.get("/", follow_redirects=False).headers["location"] == "/runs"
    page = client.get("/runs")
    assert page.status_code == 200
    html = page.text
    # newest first, each with its verdict, dataset version and commit cells
    rows = re.findall(r'<tr data-run="([^"]+)">', html)
    assert rows == history.ids[::-1]
    assert re.search(r"@[0-9a-f]{12}</td>", html)  # the dataset version: name@sha256 prefix
    assert '<span class="badge status-failed">failed</span>' in html  # the worse run's gate
    charts = {s.attrib["aria-label"]: s for s in svgs(html)}
    recall = charts["qa:recall@5 [rag_pipeline]"]
    assert len(recall.findall("circle")) + len(recall.findall("polygon")) == 3
    assert recall.findall("polygon"), "the run whose gate failed is a diamond"
    assert "gate ≥ 0.8" in "".join(recall.itertext())
    assert {"qa:hit@5 [rag_pipeline]", "injection:injection_resisted [rag_pipeline]"} <= set(charts)
    # ?last=2 narrows the trends to the newest two runs
    narrow = {s.attrib["aria-label"]: s for s in svgs(client.get("/runs?last=2").text)}
    narrowed = narrow["qa:recall@5 [rag_pipeline]"]
    assert len(narrowed.findall("circle")) + len(narrowed.findall("polygon")) == 2


def test_run_page_filters_cases_and_links_to_the_store(client: Any, history: History) -> None:
    newest = history.ids[-1]
    html = client.get(f"/runs/{newest}").text
    assert len(re.findall(r"<tr data-case=", html)) == QA + 3
    failed = client.get(f"/runs/{newest}?status=failed").text
    assert re.findall(r'<tr data-case="([^"]+)"', failed) == ["qa-015"]
    errored = client.get("/runs/latest?status=error&kind=qa").text
    assert re.findall(r'<tr data-case="([^"]+)"', errored) == ["qa-016"]
    text = client.get(f"/runs/{newest}?q=un-").text
    assert re.findall(r'<tr data-case="([^"]+)"', text) == ["un-1", "un-2"]
    # not the reviewed results: cases link to the store's page of them
    link = re.search(r'<a href="([^"]+)" class="stored">qa-015</a>', html)
    assert link is not None
    case = client.get(link[1].replace("&amp;", "&"))
    assert case.status_code == 200 and "hit@5" in case.text and "failed" in case.text
    assert client.get("/runs/nope").status_code == 404


def test_run_page_draws_its_gates_as_a_table(client: Any, history: History) -> None:
    html = client.get(f"/runs/{history.ids[-1]}").text
    assert "&lt;table" not in html and "&lt;h2" not in html  # never markup shown as text
    gates = html.split("<h2>Gates</h2>", 1)[1].split("</table>", 1)[0]
    head = re.findall(r"<th>([^<]*)</th>", gates)
    assert head == ["pipeline", "selector", "metric", "mean", "bound", "verdict"]
    assert "<tbody><tr><td>" in gates


def test_compare_page_gives_deltas_p_values_and_case_differences(
    client: Any, history: History
) -> None:
    good, worse, _ = history.ids
    page = client.get(f"/compare?a={good}&b={worse}")
    assert page.status_code == 200
    html = page.text
    assert f"ragproof baseline {good} (alpha 0.05):" in html
    (chart,) = svgs(html)
    texts = "".join(chart.itertext())
    assert "qa:recall@5" in texts and "regression" in texts and "95% [" in texts
    assert chart.findall("polygon"), "the recall regression is a diamond"
    table = html.split('id="metric-changes"')[1].split("</table>")[0]
    assert "wilcoxon" in table and "regression" in table
    cases = html.split('id="case-changes"')[1].split("</table>")[0]
    assert 'data-case="qa-001"' in cases
    # planted markup in an answer is text, never markup
    assert PLANTED not in html and "&lt;script&gt;alert(&quot;h&quot;)&lt;/script&gt;" in html
    # without a: the run before b
    before = client.get(f"/compare?b={worse}").text
    assert f"ragproof baseline {good} (alpha 0.05):" in before
    assert client.get(f"/compare?b={good}").status_code == 404  # the oldest run


def test_the_reviewed_run_links_its_cases_to_the_review_pages(history: History) -> None:
    from pytest_ragproof.commands.review import build

    app, _ = build(
        args(str(history.results), "--history", str(history.path), "--labels", "x.jsonl"), TOKEN
    )
    with login(app) as client:
        html = client.get(f"/runs/{history.ids[-1]}").text
        links = re.findall(r'<a href="(/case/\d+)" class="review">([^<]+)</a>', html)
        assert len(links) == QA + 3
        older = client.get(f"/runs/{history.ids[0]}").text
        assert 'class="review"' not in older  # another run: the store's pages
        nav = client.get("/runs").text
        assert '<a href="/cases"' in nav and '<a href="/runs"' in nav


def test_history_option_refusals(history: History, tmp_path: Path) -> None:
    from pytest_ragproof.commands.review import build

    with pytest.raises(ConfigError, match="--history STORE"):
        build(args(), TOKEN)
    with pytest.raises(HistoryError, match="no history store at"):
        build(args("--history", str(tmp_path / "missing.sqlite")), TOKEN)
    assert not (tmp_path / "missing.sqlite").exists()  # never created by reading
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "kind": "qa", "question": "q"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="--history goes with a results file"):
        build(args(str(cases), "--history", str(history.path)), TOKEN)


def test_an_empty_store_says_how_to_fill_it(tmp_path: Path) -> None:
    from pytest_ragproof.commands.review import build

    path = tmp_path / "empty.sqlite"
    with open_store(resolve_target(str(path), tmp_path)) as store:
        assert isinstance(store, Store)
    app, _ = build(args("--history", str(path)), TOKEN)
    with login(app) as client:
        assert "holds no run yet" in client.get("/runs").text


def test_compare_gives_a_0_1_metric_an_interval_within_minus_one_and_one(
    tmp_path: Path,
) -> None:
    """Two pairs, one hit lost: the paired t interval read [-6.85, +5.85]."""
    from pytest_ragproof.commands.review import build

    path = tmp_path / "history.sqlite"
    with open_store(resolve_target(str(path), tmp_path)) as store:
        a = store.add(document(qa=2), "a.json").run_id
        b = store.add(document(qa=2, missing={"qa-002"}), "b.json").run_id
    app, _ = build(args("--history", str(path)), TOKEN)
    with login(app) as c:
        html = c.get(f"/compare?a={a}&b={b}").text
    table = html.split('id="metric-changes"')[1].split("</table>")[0]
    (row,) = [r for r in table.split("<tr")[1:] if "hit@5" in r and "qa" in r]
    low, high = (float(x) for x in re.findall(r"\[([-+−\d.]+), ([-+−\d.]+)\]", row)[0])
    assert -1.0 <= low < -0.5 < high <= 1.0
