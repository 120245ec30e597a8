"""Details of the review app's pages in real headless Chromium (tests/browser.py), served
on 127.0.0.1: the natural order of case ids in every list and step, saying "all decided",
provenance that stays readable at 1024 and 1280 px with its source span in view, what
yes and no mean on each labelled metric, and case ids that never break in the Run table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.browser import Tab, needs_chromium
from tests.review.conftest import TOKEN, GeneratedFiles, write_results
from tests.review.test_app import dataset_app, results_app
from tests.review.test_review_browser import only_local, press, served

pytestmark = needs_chromium

# The ids as a pytest run writes them (sorted as text) and as people read them.
AS_TEXT = ["qa-1", "qa-10", "qa-11", "qa-2", "qa-3", "qa-9"]
NATURAL = ["qa-1", "qa-2", "qa-3", "qa-9", "qa-10", "qa-11"]


def renamed_results(judged: Any, path: Path) -> Path:
    document = judged.full()
    assert len(document["cases"]) == len(AS_TEXT)
    for case, new in zip(document["cases"], AS_TEXT, strict=True):
        case["id"] = new
    return write_results(path, document)


def renamed_cases(files: GeneratedFiles, ids: list[str]) -> None:
    records = [json.loads(line) for line in files.cases.read_text().splitlines()]
    for record, new in zip(records, ids, strict=True):
        record["id"] = new
    files.cases.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    files.ids[:] = ids


def walk(tab: Tab, key: str, steps: int) -> list[str]:
    """The case ids seen from this page on, pressing ``key`` ``steps`` times."""
    seen = [tab.page.locator("h1").inner_text()]
    for _ in range(steps):
        press(tab, key)
        seen.append(tab.page.locator("h1").inner_text())
    return seen


def test_results_review_lists_and_steps_in_natural_order(
    tab: Tab, judged: Any, tmp_path: Path
) -> None:
    results = renamed_results(judged, tmp_path / "results.json")
    with served(results_app(results, tmp_path / "labels.jsonl")) as base:
        page = tab.page
        page.goto(f"{base}/cases?token={TOKEN}")
        rows = page.eval_on_selector_all("#cases tbody tr", "rs => rs.map(r => r.dataset.case)")
        assert rows == NATURAL
        with page.expect_navigation():
            page.locator("#cases a", has_text="qa-1").first.click()
        assert walk(tab, "j", 5) == NATURAL
        assert walk(tab, "k", 5) == NATURAL[::-1]
        only_local(tab)


def test_dataset_review_lists_and_steps_in_natural_order(
    tab: Tab, generated: GeneratedFiles, tmp_path: Path
) -> None:
    renamed_cases(generated, ["gen-1", "gen-10", "gen-11", "gen-2"])
    natural = ["gen-1", "gen-2", "gen-10", "gen-11"]
    out = tmp_path / "reviewed.jsonl"
    with served(dataset_app(generated, out)) as base:
        page = tab.page
        page.goto(f"{base}/dataset?token={TOKEN}")
        listed = page.eval_on_selector_all("table.list tbody a", "as => as.map(a => a.textContent)")
        assert listed == natural
        page.goto(f"{base}/")
        assert walk(tab, "j", 3) == natural
        page.goto(f"{base}/")
        assert walk(tab, "a", 2) == natural[:3]  # a decision leads to the next in that order
        only_local(tab)
    # the reviewed file keeps the input's order
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == generated.ids


def history_app(root: Path, documents: list[dict[str, Any]]) -> tuple[Any, list[str]]:
    """The review app over a history store holding ``documents`` (oldest first)."""
    from pytest_ragproof.commands.review import build
    from pytest_ragproof.history.store import open_store
    from pytest_ragproof.history.target import resolve_target
    from tests.review.test_history_pages import args

    root.mkdir(parents=True, exist_ok=True)
    path = root / "history.sqlite"
    with open_store(resolve_target(str(path), root)) as store:
        ids = [store.add(doc, f"run-{n}.json").run_id for n, doc in enumerate(documents)]
    app, _ = build(args("--history", str(path)), TOKEN)
    return app, ids


def unpadded(document: dict[str, Any]) -> dict[str, Any]:
    """``qa-001`` … as ``qa-1`` …: ids whose text order is not their natural order."""
    for case in document["cases"]:
        if case["id"].startswith("qa-"):
            case["id"] = f"qa-{int(case['id'][3:])}"
    return document


def test_history_run_and_compare_list_cases_in_natural_order(tab: Tab, tmp_path: Path) -> None:
    from tests.history.runs import document

    changed = {f"qa-{n:03d}" for n in (2, 10, 11)}
    app, (a, b) = history_app(
        tmp_path, [unpadded(document(qa=12)), unpadded(document(qa=12, missing=changed))]
    )
    with served(app) as base:
        page = tab.page
        page.goto(f"{base}/runs/{b}?token={TOKEN}")
        shown = page.eval_on_selector_all("#cases tbody tr", "rs => rs.map(r => r.dataset.case)")
        qa = [c for c in shown if c.startswith("qa-")]
        assert qa == [f"qa-{n}" for n in range(1, 13)]
        page.goto(f"{base}/compare?a={a}&b={b}")
        differ = page.eval_on_selector_all(
            "#case-changes tbody tr", "rs => rs.map(r => r.dataset.case)"
        )
        assert differ == ["qa-2", "qa-10", "qa-11"]
        only_local(tab)


def test_the_last_dataset_decision_says_all_decided(
    tab: Tab, generated: GeneratedFiles, tmp_path: Path
) -> None:
    out = tmp_path / "reviewed.jsonl"
    with served(dataset_app(generated, out)) as base:
        page = tab.page
        page.goto(f"{base}/?token={TOKEN}")
        for key in "aara":
            assert page.locator("#all-decided").count() == 0
            press(tab, key)
        # not case 1 again without a word: the list, saying all is decided and what next
        assert page.url == f"{base}/dataset"
        done = page.locator("#all-decided").inner_text()
        assert "All 4 case(s) decided (3 approved, 1 rejected)" in done
        assert f"ragproof freeze {out} --approved-only" in done
        page.goto(f"{base}/dataset/2")  # a case page says it too
        assert page.locator("#all-decided").count() == 1
        only_local(tab)


def test_the_last_label_says_all_reviewed(tab: Tab, results_path: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    with served(results_app(results_path, labels)) as base:
        page = tab.page
        page.goto(f"{base}/?token={TOKEN}")
        while True:
            assert page.locator("#all-decided").count() == 0
            for _ in range(page.locator(".metric").count()):
                press(tab, "y")
            if page.locator("#progress-text").inner_text().startswith("5 of 5"):
                break
            press(tab, "s")
        done = page.locator("#all-decided").inner_text()
        assert "All 5 judged case(s) reviewed by you." in done
        assert f"ragproof judge-check --results {results_path} --labels {labels}" in done
        page.goto(f"{base}/cases")
        assert page.locator("#all-decided").count() == 1
        only_local(tab)
