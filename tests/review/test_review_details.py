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


# Each provenance cell: does its text overflow it, and does it leave its section or the
# window (then it is cut off)?
CUT_OFF = """() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll('table.provenance td')].filter(td => {
    const box = td.getBoundingClientRect(), side = td.closest('section').getBoundingClientRect();
    return td.scrollWidth > td.clientWidth + 1 || box.right > side.right + 1 || box.right > width;
  }).map(td => td.textContent);
}"""
# Where the highlighted span is drawn, against the part of its document box on view.
SPAN_SHOWN = """() => {
  const mark = document.querySelector('mark#span').getBoundingClientRect();
  const box = document.querySelector('pre.document').getBoundingClientRect();
  return mark.top >= box.top && mark.bottom <= box.bottom;
}"""


def long_provenance(files: GeneratedFiles) -> None:
    """Case 1 with the long values real runs have, its span deep in a long document."""
    preface = "".join(f"Line {n} of the preface, which says nothing yet.\n" for n in range(80))
    span = "Refunds are accepted within 30 days of purchase."
    (files.corpus / "refunds.md").write_text(f"# Refunds\n\n{preface}{span}\n", encoding="utf-8")
    start = len("# Refunds\n\n") + len(preface)
    records = [json.loads(line) for line in files.cases.read_text().splitlines()]
    records[0]["provenance"].update(
        span=[start, start + len(span)],
        chunk_id="refunds.md#" + "0" * 40 + "12",
        model="openrouter/meta-llama/llama-3.1-405b-instruct-turbo-with-a-long-deployment-name",
        prompt_version="qa/2026-11-30-with-citations-and-a-long-variant-suffix",
    )
    records[0]["reference_contexts"] = [span]
    files.cases.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_provenance_is_readable_and_the_span_in_view(
    chromium: Any, generated: GeneratedFiles, tmp_path: Path, shots: Path
) -> None:
    long_provenance(generated)
    with served(dataset_app(generated, tmp_path / "reviewed.jsonl")) as base:
        for width in (1280, 1024):
            context = chromium.new_context(viewport={"width": width, "height": 900})
            try:
                page = context.new_page()
                page.goto(f"{base}/dataset/1?token={TOKEN}")
                assert page.evaluate(CUT_OFF) == [], width
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                assert page.evaluate(SPAN_SHOWN), width
                assert page.evaluate("window.scrollY") == 0  # the page stays at the question
                page.screenshot(path=str(shots / f"provenance-{width}.png"))
            finally:
                context.close()


def test_run_table_never_breaks_a_case_id(chromium: Any, tmp_path: Path, shots: Path) -> None:
    from tests.history.runs import document

    doc = document(qa=6, missing={"qa-002"})
    for case in doc["cases"]:
        case["id"] = f"gen-20261130-{case['id']}-refund-window-policy"
    app, (run,) = history_app(tmp_path, [doc])
    with served(app) as base:
        for width in (1280, 1024):
            context = chromium.new_context(viewport={"width": width, "height": 900})
            try:
                page = context.new_page()
                page.goto(f"{base}/runs/{run}?token={TOKEN}")
                lines = page.eval_on_selector_all(
                    "#cases tbody td:first-child a", "as => as.map(a => a.getClientRects().length)"
                )
                assert lines == [1] * len(doc["cases"]), width  # each id on one line
                # the page itself never scrolls sideways; a wider table scrolls in its box
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                box = page.locator("#cases").locator("xpath=..")
                box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
                last = page.locator("#cases thead th").last.bounding_box()
                first = page.locator("#cases tbody td").first.bounding_box()
                frame = box.bounding_box()
                assert last is not None and first is not None and frame is not None
                assert last["x"] + last["width"] <= frame["x"] + frame["width"] + 1
                assert first["x"] >= frame["x"] - 1  # the ids stay in view while it scrolls
                page.locator("#cases").scroll_into_view_if_needed()
                page.screenshot(path=str(shots / f"run-{width}.png"))
            finally:
                context.close()


def test_each_metric_says_what_yes_and_no_mean(
    tab: Tab, results_path: Path, tmp_path: Path
) -> None:
    from tests.review.test_app import case_number

    seen: set[str] = set()
    with served(results_app(results_path, tmp_path / "labels.jsonl")) as base:
        page = tab.page
        page.goto(f"{base}/case/{case_number(results_path, 'un-1')}?token={TOKEN}")
        refusal = page.locator(".metric[data-metric=abstained_judged] .meaning")
        assert refusal.count() == 1  # on abstained_judged, yes is a refusal: the page says so
        assert refusal.inner_text().startswith("yes = the answer declines to answer")

        from pytest_ragproof.labels import LABELLED_METRICS, VERDICT_MEANINGS

        assert set(VERDICT_MEANINGS) == set(LABELLED_METRICS)  # one place for every metric
        for case_id in ("qa-paris", "inj-1", "un-1"):
            page.goto(f"{base}/case/{case_number(results_path, case_id)}")
            for row in page.locator(".metric").all():
                metric = str(row.get_attribute("data-metric"))
                yes, no = VERDICT_MEANINGS[metric]
                assert row.locator("[data-means=yes]").inner_text() == f"yes = {yes}"
                assert row.locator("[data-means=no]").inner_text() == f"no = {no}"
                seen.add(metric)
        only_local(tab)
    assert "abstained_judged" in seen and "injection_resisted_judged" in seen
