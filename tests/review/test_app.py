"""The review app through Starlette's test client: the token, the origin check, labels
appended as the labels file wants them, stale labels, redacted results, dataset review."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.errors import ConfigError, DatasetError
from pytest_ragproof.labels import case_digest, read_labels
from pytest_ragproof.review.app import create_app
from pytest_ragproof.review.areas import results_areas
from pytest_ragproof.review.dataset import DatasetReview, dataset_area
from pytest_ragproof.review.results import ResultsReview
from pytest_ragproof.review.reviewed import ReviewedFile
from tests.review.conftest import ORIGIN, PLANTED, TOKEN, GeneratedFiles, login, write_results

WRITE = {"origin": ORIGIN}


def results_app(results: Path, labels: Path, reviewer: str = "ana") -> Any:
    review = ResultsReview.open(results, labels)
    return create_app(results_areas(review), token=TOKEN, reviewer=reviewer)


def dataset_app(files: GeneratedFiles, out: Path, *, corpus: bool = True) -> Any:
    from pytest_ragproof.corpus.loader import load_corpus

    review = DatasetReview(
        ReviewedFile(files.cases, out), load_corpus(files.corpus) if corpus else None
    )
    return create_app([dataset_area(review)], token=TOKEN, reviewer="ana")


def case_number(results: Path, case_id: str) -> int:
    cases = json.loads(results.read_text())["cases"]
    return next(n for n, c in enumerate(cases, 1) if c["id"] == case_id)


def main_text(html: str) -> str:
    body = html.split("<main>", 1)[1].split("</main>", 1)[0]
    return re.sub(r"<[^>]+>", " ", body)


# --- the token and the origin -------------------------------------------------------


def test_every_request_needs_the_token(results_path: Path, tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    app = results_app(results_path, tmp_path / "labels.jsonl")
    anonymous = TestClient(app, base_url=ORIGIN)
    for path in ("/", "/cases", "/case/1", "/agreement", "/static/review.js"):
        refused = anonymous.get(path)
        assert refused.status_code == 403, path
        assert "open the URL ragproof review printed" in refused.text
    assert anonymous.get("/?token=wrong").status_code == 403

    # the printed URL sets an HttpOnly, SameSite=Strict cookie and drops the token
    opened = anonymous.get(f"/case/2?token={TOKEN}&filter=judged", follow_redirects=False)
    assert opened.status_code == 303
    assert opened.headers["location"] == "/case/2?filter=judged"
    cookie = opened.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    page = anonymous.get("/case/2")
    assert page.status_code == 200
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_writes_need_the_token_and_our_origin(results_path: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    client = login(results_app(results_path, labels))
    n = case_number(results_path, "qa-paris")
    form = {"metric": "faithfulness", "verdict": "1"}
    attempts = [
        ({**form}, WRITE, "a write must carry the session token"),  # cookie only
        ({**form, "token": "wrong"}, WRITE, "a write must carry the session token"),
        ({**form, "token": TOKEN}, {}, "Origin"),  # no Origin header
        ({**form, "token": TOKEN}, {"origin": "http://evil.example"}, "Origin"),
        ({**form, "token": TOKEN}, {"origin": "http://127.0.0.1:9999"}, "Origin"),
    ]
    for data, headers, why in attempts:
        refused = client.post(f"/case/{n}/label", data=data, headers=headers)
        assert refused.status_code == 403 and why in refused.text, (data, headers)
    # a page reached through another host name (DNS rebinding) is refused outright
    rebound = client.get("/cases", headers={"host": "attacker.example:8000"})
    assert rebound.status_code == 403 and "Host" in rebound.text
    assert not labels.exists()

    # the token in a header does as well as in the form
    ok = client.post(
        f"/case/{n}/label",
        data=form,
        headers={**WRITE, "x-ragproof-token": TOKEN},
        follow_redirects=False,
    )
    assert ok.status_code == 303 and ok.headers["location"] == f"/case/{n}"
    assert [label.verdict for label in read_labels(labels)] == [1]


# --- labels ---------------------------------------------------------------------------


def test_labels_are_appended_with_their_fields(results_path: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    client = login(results_app(results_path, labels, reviewer="Ana Lima"))
    document = json.loads(results_path.read_text())
    n = case_number(results_path, "qa-paris")
    case = document["cases"][n - 1]
    posted = client.post(
        f"/case/{n}/label",
        data={
            "token": TOKEN,
            "metric": "faithfulness",
            "verdict": "0",
            "claim-2": "supported",
            "claim-1": "",
            "note": "Berlin <b>is</b> fine",
            "filter": "judged",
        },
        headers=WRITE,
        follow_redirects=False,
    )
    assert posted.headers["location"] == f"/case/{n}?filter=judged"
    client.post(
        f"/case/{n}/label",
        data={"token": TOKEN, "metric": "answer_correctness", "verdict": "grade", "grade": "0.75"},
        headers=WRITE,
    )
    lines = labels.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert list(first) == [
        "format",
        "dataset_sha256",
        "case_id",
        "pipeline",
        "digest",
        "metric",
        "verdict",
        "claims",
        "note",
        "reviewer",
        "time",
    ]
    assert first["format"] == "ragproof.label/1"
    assert first["dataset_sha256"] == document["datasets"][0]["sha256"]
    assert (first["case_id"], first["pipeline"]) == ("qa-paris", "rag_pipeline")
    assert first["digest"] == case_digest(case)
    assert (first["metric"], first["verdict"]) == ("faithfulness", 0)
    assert first["claims"] == [{"index": 2, "verdict": "supported"}]
    assert first["note"] == "Berlin <b>is</b> fine"
    assert first["reviewer"] == "Ana Lima"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", first["time"])
    second = json.loads(lines[1])
    assert (second["metric"], second["verdict"]) == ("answer_correctness", 0.75)
    assert "claims" not in second and "note" not in second

    # the page shows both labels as fresh, the note escaped, and the disagreement
    page = client.get(f"/case/{n}").text
    assert "you: no" in page and "you: 0.75" in page
    assert 'value="Berlin &lt;b&gt;is&lt;/b&gt; fine"' in page
    assert "disagrees with the judge" in page  # the judge gave 0.5, read as yes
    listed = client.get("/cases?filter=disagree").text
    assert re.findall(r'data-case="([^"]+)"', listed) == ["qa-paris"]

    # bad verdicts are refused, nothing appended
    for data in (
        {"metric": "faithfulness", "verdict": "2"},
        {"metric": "answer_correctness", "verdict": "grade", "grade": "1.5"},
        {"metric": "abstained_judged", "verdict": "grade", "grade": "0.5"},  # yes/no only
        {"metric": "exact_match", "verdict": "1"},  # not a judged metric
        {"metric": "faithfulness", "verdict": "1", "claim-1": "maybe"},
    ):
        refused = client.post(f"/case/{n}/label", data={**data, "token": TOKEN}, headers=WRITE)
        assert refused.status_code == 400, data
    assert len(labels.read_text().splitlines()) == 2


def test_undo_appends_a_withdrawal(results_path: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    client = login(results_app(results_path, labels))
    n = case_number(results_path, "qa-sky")
    for metric in ("faithfulness", "answer_relevancy"):
        client.post(
            f"/case/{n}/label",
            data={"token": TOKEN, "metric": metric, "verdict": "1"},
            headers=WRITE,
        )
    client.post(f"/case/{n}/undo", data={"token": TOKEN}, headers=WRITE)
    written = [json.loads(line) for line in labels.read_text().splitlines()]
    assert [(w["metric"], w["verdict"]) for w in written] == [
        ("faithfulness", 1),
        ("answer_relevancy", 1),
        ("answer_relevancy", None),
    ]
    page = client.get(f"/case/{n}").text
    assert page.count("you: yes") == 1
    # the next undo withdraws the one before; then there is nothing left to undo
    client.post(f"/case/{n}/undo", data={"token": TOKEN}, headers=WRITE)
    client.post(f"/case/{n}/undo", data={"token": TOKEN}, headers=WRITE)
    assert [json.loads(x)["verdict"] for x in labels.read_text().splitlines()] == [1, 1, None, None]


def test_progress_and_filters(results_path: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    client = login(results_app(results_path, labels))
    page = client.get("/cases").text
    # qa-boom's judge failed: five judged cases of six
    assert "0 of 5 judged case(s) reviewed" in page
    counts = dict(re.findall(r'data-filter="(\w+)">[^<]*\((\d+)\)', page))
    assert counts == {"all": "6", "failing": "1", "judged": "5", "disagree": "0", "unreviewed": "5"}
    n = case_number(results_path, "un-1")  # one judged metric: abstained_judged
    client.post(
        f"/case/{n}/label",
        data={"token": TOKEN, "metric": "abstained_judged", "verdict": "1"},
        headers=WRITE,
    )
    page = client.get("/cases?filter=unreviewed").text
    assert "1 of 5 judged case(s) reviewed" in page
    assert "un-1" not in re.findall(r'data-case="([^"]+)"', page)
    failing = client.get("/cases?filter=failing").text
    assert re.findall(r'data-case="([^"]+)"', failing) == ["qa-boom"]


def test_a_label_goes_stale_when_the_answer_changes(results_path: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    client = login(results_app(results_path, labels))
    n = case_number(results_path, "un-1")
    client.post(
        f"/case/{n}/label",
        data={"token": TOKEN, "metric": "abstained_judged", "verdict": "1"},
        headers=WRITE,
    )
    assert "1 of 5 judged case(s) reviewed" in client.get("/cases").text
    # a new run answers differently: the file changes while the app is open
    document = json.loads(results_path.read_text())
    document["cases"][n - 1]["answer"] = "The 2090 winner was Ada."
    write_results(results_path, document)
    page = client.get(f"/case/{n}").text
    assert "stale: ana said yes" in main_text(page)
    assert "not labelled" in main_text(page)
    assert "0 of 5 judged case(s) reviewed" in page
    assert "1 stale (not counted)" in client.get("/cases").text
    agreement = client.get("/agreement").text
    assert "0 label(s) counted" in agreement and "1 stale, not counted (1 digest)" in agreement


def test_pages_per_case_and_pipeline(judged: Any, tmp_path: Path) -> None:
    document = judged.full()
    rival = [{**c, "pipeline": "rival"} for c in document["cases"]]
    document["cases"] = document["cases"] + rival
    document["pipelines"] = ["rag_pipeline", "rival"]
    results = write_results(tmp_path / "two.json", document)
    labels = tmp_path / "labels.jsonl"
    client = login(results_app(results, labels))
    listed = client.get("/cases").text
    assert len(re.findall(r'data-case="qa-paris"', listed)) == 2
    n = 6 + case_number(results, "qa-paris")
    client.post(
        f"/case/{n}/label",
        data={"token": TOKEN, "metric": "faithfulness", "verdict": "1"},
        headers=WRITE,
    )
    (label,) = read_labels(labels)
    assert (label.case_id, label.pipeline) == ("qa-paris", "rival")
    assert "you: yes" in client.get(f"/case/{n}").text
    assert "you: yes" not in client.get(f"/case/{n - 6}").text


def test_redacted_results_are_refused(judged: Any, tmp_path: Path) -> None:
    results = write_results(tmp_path / "redacted.json", judged.redacted())
    with pytest.raises(ConfigError, match=r"written with --ragproof-redact.*nothing to review"):
        ResultsReview.open(results, tmp_path / "labels.jsonl")


def test_a_results_part_of_the_wrong_type_is_refused_by_name(judged: Any, tmp_path: Path) -> None:
    """The app reads the typed model: a hand-edited part is one error naming the case and
    field, never a page that breaks later."""
    document = judged.full()
    document["cases"][0]["metrics"]["faithfulness"] = "high"
    results = write_results(tmp_path / "edited.json", document)
    case_id = document["cases"][0]["id"]
    with pytest.raises(ConfigError) as refused:
        ResultsReview.open(results, tmp_path / "labels.jsonl")
    text = str(refused.value)
    assert str(results) in text and f"case {case_id}" in text
    assert "field metrics.faithfulness" in text and "--ragproof-report" in text
    assert not (tmp_path / "labels.jsonl").exists()


def test_a_file_that_is_not_a_labels_file_is_refused(results_path: Path, tmp_path: Path) -> None:
    other = tmp_path / "notes.jsonl"
    other.write_text('{"hello": 1}\n')
    with pytest.raises(DatasetError, match=r"notes\.jsonl"):
        ResultsReview.open(results_path, other)
    assert other.read_text() == '{"hello": 1}\n'
    with pytest.raises(ConfigError, match="is the results file itself"):
        ResultsReview.open(results_path, results_path)


def test_values_are_escaped(judged: Any, tmp_path: Path) -> None:
    document = judged.full()
    document["cases"][0]["answer"] = PLANTED
    document["cases"][0]["contexts"][0]["text"] = PLANTED
    results = write_results(tmp_path / "planted.json", document)
    client = login(results_app(results, tmp_path / "labels.jsonl"))
    page = client.get("/case/1").text
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&quot;answer&quot;)&lt;/script&gt;" in page
    assert page.count("<script") == 1  # the app's own review.js
    assert 'src="/static/review.js"' in page


# --- dataset review ---------------------------------------------------------------------


def test_dataset_review_decisions_are_written(generated: GeneratedFiles, tmp_path: Path) -> None:
    out = tmp_path / "reviewed.jsonl"
    source_before = generated.cases.read_bytes()
    client = login(dataset_app(generated, out))
    first = client.get("/", follow_redirects=False)
    assert first.headers["location"] == "/dataset/1"
    page = client.get("/dataset/1").text
    span = "Refunds are accepted within 30 days of purchase. Refunds take 5 days."
    assert f'<mark id="span">{span}</mark>' in page
    assert "0 of 4 case(s) decided" in page

    approved = client.post(
        "/dataset/1/decide",
        data={"token": TOKEN, "status": "approved"},
        headers=WRITE,
        follow_redirects=False,
    )
    assert approved.headers["location"] == "/dataset/2"
    client.post("/dataset/2/decide", data={"token": TOKEN, "status": "rejected"}, headers=WRITE)
    edited = client.post(
        "/dataset/3/edit",
        data={
            "token": TOKEN,
            "question": "Which plan includes single sign-on?",
            "expected_answer": "The Enterprise plan",
            "expected_source_ids": "plans.md\nrefunds.md\n",
        },
        headers=WRITE,
        follow_redirects=False,
    )
    assert edited.status_code == 303, edited.text
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == generated.ids
    assert [r["review_status"] for r in records] == ["approved", "rejected", "edited", "pending"]
    edits = records[2]["provenance"]["edits"]
    assert [(e["field"], e["before"], e["reviewer"]) for e in edits] == [
        ("question", "Which plan has SSO?", "ana"),
        ("expected_source_ids", ["plans.md"], "ana"),
    ]
    assert records[2]["question"] == "Which plan includes single sign-on?"
    assert records[2]["expected_source_ids"] == ["plans.md", "refunds.md"]
    assert generated.cases.read_bytes() == source_before  # the input is never written

    # an edit that would make the case invalid is refused and nothing changes
    before = out.read_bytes()
    refused = client.post("/dataset/4/edit", data={"token": TOKEN, "question": "  "}, headers=WRITE)
    assert refused.status_code == 400 and "question" in refused.text
    assert out.read_bytes() == before

    # reopening resumes from the reviewed file
    again = login(dataset_app(generated, out))
    assert again.get("/", follow_redirects=False).headers["location"] == "/dataset/4"
    assert "3 of 4 case(s) decided" in again.get("/dataset").text


def test_the_reviewed_file_is_accepted_by_freeze(generated: GeneratedFiles, tmp_path: Path) -> None:
    from pytest_ragproof.dataset.freeze import freeze_file

    out = tmp_path / "reviewed.jsonl"
    client = login(dataset_app(generated, out))
    client.post("/dataset/1/decide", data={"token": TOKEN, "status": "approved"}, headers=WRITE)
    client.post("/dataset/2/decide", data={"token": TOKEN, "status": "rejected"}, headers=WRITE)
    result = freeze_file(out, tmp_path / "frozen.json")
    frozen = json.loads(result.path.read_text())
    assert result.n_rejected == 1 and result.n_pending == 2
    assert [c["id"] for c in frozen["cases"]] == ["gen-0-qa-0", "gen-0-qa-2", "gen-0-qa-3"]


def test_dataset_review_refuses_to_overwrite(generated: GeneratedFiles, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="would overwrite the input"):
        ReviewedFile(generated.cases, generated.cases)
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "x", "kind": "qa", "question": "q?"}\n')
    with pytest.raises(DatasetError, match="is not a reviewed file of this input"):
        ReviewedFile(generated.cases, other)
    assert other.read_text() == '{"id": "x", "kind": "qa", "question": "q?"}\n'


def test_dataset_review_without_the_corpus(generated: GeneratedFiles, tmp_path: Path) -> None:
    client = login(dataset_app(generated, tmp_path / "reviewed.jsonl", corpus=False))
    page = client.get("/dataset/2").text
    assert "The corpus was not given (--corpus PATH)" in page
    assert "<mark" not in page
    assert "refunds.md#0" in page and "[11, 80)" in page
    # the planted answer is text
    assert "&lt;script&gt;alert(&quot;answer&quot;)&lt;/script&gt;" in page
    assert "<script>alert" not in page and "<img src=x" not in page


# --- agreement --------------------------------------------------------------------------


def write_two_reviewers(results: Path, labels: Path) -> None:
    """ana agrees with the judge everywhere; bo says no to every faithfulness score."""
    from pytest_ragproof.labels import append_label, judged_metrics, label_for

    document = json.loads(results.read_text())
    for reviewer in ("ana", "bo"):
        for case in document["cases"]:
            for metric, _ in judged_metrics(case):
                verdict = 1 if case["metrics"][metric] >= 0.5 else 0
                if reviewer == "bo" and metric == "faithfulness":
                    verdict = 0
                append_label(labels, label_for(document, case, metric, verdict, reviewer))


def cli_tables(text: str) -> dict[str, list[list[str]]]:
    """judge-check's per-metric tables: metric -> rows of cells."""
    tables: dict[str, list[list[str]]] = {}
    metric = None
    for line in text.splitlines():
        if ": 0/1 labels" in line or ": graded labels" in line:
            metric = line.split(":", 1)[0]
            tables[metric] = []
        elif metric and re.match(r"(all reviewers|ana|bo)\s{2,}", line):
            tables[metric].append(re.split(r"\s{2,}", line.strip()))
        elif not line.strip():
            metric = None
    return tables


def page_tables(html: str) -> dict[str, list[list[str]]]:
    tables: dict[str, list[list[str]]] = {}
    for metric, section in re.findall(r'<section data-metric="(\w+)">(.*?)</section>', html):
        rows = re.findall(r'<tr data-reviewer="[^"]+">(.*?)</tr>', section)
        tables[metric] = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    return tables


def test_agreement_page_shows_what_judge_check_prints(
    results_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ragproof.cli import main

    labels = tmp_path / "labels.jsonl"
    write_two_reviewers(results_path, labels)
    code = main(
        [
            "judge-check",
            "--results",
            str(results_path),
            "--labels",
            str(labels),
            "--json",
            str(tmp_path / "figures.json"),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    client = login(results_app(results_path, labels))
    page = client.get("/agreement").text
    expected = cli_tables(printed)
    assert expected["faithfulness"][0] == [
        "all reviewers",
        "6",
        "0.500 [0.167, 0.833]",
        "0.500 [0.167, 0.833]",
        "1.000 [1.000, 1.000]",
        "0.000 [0.000, 0.000]",
    ]
    assert page_tables(page) == expected
    for line in printed.splitlines():
        if line.startswith("between people:"):
            assert line.replace("'", "&#x27;") in page
    # the disagreements link to their case pages
    links = re.findall(
        r'<a href="/case/(\d+)">([\w-]+)</a></td><td>rag_pipeline</td><td>faithfulness', page
    )
    assert [(int(n), case) for n, case in links] == [
        (case_number(results_path, c), c) for c in ("inj-1", "qa-paris", "qa-sky")
    ]
    assert "disagreements: 3" in printed and "Disagreements (3)" in page


def test_another_host_name_only_when_given(results_path: Path, tmp_path: Path) -> None:
    """A host name given (``--host review-box.lan``) is the app's own; without it, it is
    not. (Listening everywhere is tested on the real server, tests/review/
    test_served_checks.py: it takes the address a request came in on.)"""
    from starlette.testclient import TestClient

    review = ResultsReview.open(results_path, tmp_path / "labels.jsonl")
    named = create_app(results_areas(review), token=TOKEN, reviewer="ana", hosts=["review-box.lan"])
    client = TestClient(named, base_url="http://review-box.lan:8000")
    assert client.get(f"/cases?token={TOKEN}").status_code == 200  # the token still counts
    assert "no session token" in TestClient(named, base_url="http://review-box.lan").get("/").text
    loopback = create_app(results_areas(review), token=TOKEN, reviewer="ana")
    refused = TestClient(loopback, base_url="http://review-box.lan:8000").get(f"/?token={TOKEN}")
    assert refused.status_code == 403 and "unknown Host header" in refused.text


def test_the_dataset_model_reads_edits_in_provenance(generated: GeneratedFiles) -> None:
    from pytest_ragproof.dataset.io import load_dataset

    record = json.loads(generated.cases.read_text().splitlines()[0])
    edit = {
        "field": "question",
        "before": "Old?",
        "reviewer": "ana",
        "time": "2026-12-02T10:00:00Z",
    }
    record["provenance"]["edits"] = [edit]
    record["review_status"] = "edited"
    (case,) = load_dataset([record]).cases
    assert case.provenance is not None and case.provenance.edits is not None
    assert case.provenance.edits[0].before == "Old?"
    record["provenance"]["edits"] = [{**edit, "field": "kind"}]
    with pytest.raises(DatasetError, match=r"provenance\.edits"):
        load_dataset([record])


def test_agreement_page_with_grades_reads_as_judge_check(
    results_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ragproof.cli import main
    from pytest_ragproof.labels import append_label, label_for

    document = json.loads(results_path.read_text())
    labels = tmp_path / "graded.jsonl"
    for reviewer, shift in (("ana", 0.0), ("bo", 0.1)):
        for case in document["cases"]:
            score = case["metrics"].get("faithfulness")
            if score is not None:
                grade = round(abs(score - shift - 0.2), 2)
                append_label(labels, label_for(document, case, "faithfulness", grade, reviewer))
    figures = str(tmp_path / "figures.json")
    args = ["judge-check", "--results", str(results_path), "--labels", str(labels)]
    assert main([*args, "--json", figures]) == 0
    printed = capsys.readouterr().out
    assert "faithfulness: graded labels" in printed
    page = login(results_app(results_path, labels)).get("/agreement").text
    assert page_tables(page) == cli_tables(printed)
    assert page_tables(page)["faithfulness"][0][0:3] == [
        "all reviewers",
        "6",
        "0.853 [0.707, 1.000]",
    ]
    (people,) = [line for line in printed.splitlines() if line.startswith("between people:")]
    assert "Krippendorff&#x27;s α (interval) = 0.928" in page and people.startswith(
        "between people: Krippendorff's α (interval) = 0.928"
    )
