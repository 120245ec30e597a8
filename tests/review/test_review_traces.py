"""Dataset review of cases imported from OpenTelemetry traces (``ragproof import --from
otel``), through Starlette's test client: the page shows what production did, escaped;
edits are recorded in ``metadata.review_edits`` (the case has no generation provenance);
a case marked unanswerable loses its sources; the result validates and freezes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_ragproof.cli import main
from pytest_ragproof.review.app import create_app
from pytest_ragproof.review.dataset import DatasetReview, dataset_area
from pytest_ragproof.review.reviewed import ReviewedFile
from tests.review.conftest import (
    PLANTED,
    PLANTED_ID,
    TOKEN,
    GeneratedFiles,
    ImportedFiles,
    login,
)
from tests.review.test_app import WRITE, dataset_app, main_text


def imported_app(files: ImportedFiles, out: Path) -> Any:
    review = DatasetReview(ReviewedFile(files.cases, out))
    return create_app([dataset_area(review)], token=TOKEN, reviewer="ana")


def records_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_an_imported_case_shows_what_production_did(
    imported: ImportedFiles, tmp_path: Path
) -> None:
    client = login(imported_app(imported, tmp_path / "reviewed.jsonl"))
    html = client.get("/dataset/1").text
    text = main_text(html)
    assert "What production did" in text
    assert "Retrieved documents" in text
    assert "service rag-api" in " ".join(text.split())
    assert 'id="take-answer"' in html and 'id="take-sources"' in html
    assert 'id="unanswerable"' in html
    assert "Source span" not in text  # no generation provenance: no span to show
    # the production answer, the ids and the scores, every one escaped
    assert PLANTED not in html and PLANTED_ID not in html
    escaped = "&lt;script&gt;alert(&quot;answer&quot;)&lt;/script&gt;&lt;img src=x onerror=&quot;"
    assert f'<p class="text" id="trace-answer">Use the reset link. {escaped}' in html
    rows = html.split('id="trace-retrieved"', 1)[1].split("</table>", 1)[0]
    assert '<td class="num">1</td><td><code>faq.md#2</code></td><td class="num">0.820</td>' in rows
    assert "<code>faq.md#&lt;img src=x onerror=&quot;alert(4)&quot;&gt;</code>" in rows
    assert '<td class="num">0.410</td>' in rows
    assert html.count("<script") == 1  # the app's own review.js


def test_a_generated_case_shows_no_trace(generated: GeneratedFiles, tmp_path: Path) -> None:
    html = login(dataset_app(generated, tmp_path / "reviewed.jsonl")).get("/dataset/1").text
    assert "What production did" not in html and 'id="unanswerable"' not in html
    assert "Provenance" in main_text(html)


def test_an_edit_of_an_imported_case_is_recorded_in_its_metadata(
    imported: ImportedFiles, tmp_path: Path
) -> None:
    out = tmp_path / "reviewed.jsonl"
    client = login(imported_app(imported, out))
    saved = client.post(
        "/dataset/2/edit",
        data={
            "token": TOKEN,
            "question": "What is the refund window?",
            "expected_answer": "30 days.",
            "expected_source_ids": "faq.md#2\n",
        },
        headers=WRITE,
        follow_redirects=False,
    )
    assert saved.status_code == 303, saved.text
    record = records_of(out)[1]
    assert record["review_status"] == "edited"
    assert "provenance" not in record  # no generation provenance is made up
    assert record["expected_answer"] == "30 days."
    assert record["expected_source_ids"] == ["faq.md#2"]
    edits = record["metadata"]["review_edits"]
    assert [(e["field"], e["before"], e["reviewer"]) for e in edits] == [
        ("expected_answer", None, "ana"),
        ("expected_source_ids", None, "ana"),
    ]
    assert record["metadata"]["trace"]["answer"] == "30 days."  # the trace stays as it was
    # the page of the edited case lists its edits
    side = client.get("/dataset/2").text.split('id="trace"', 1)[1]
    assert 'class="edits"' in side and "expected_source_ids" in side


def test_marking_an_imported_case_unanswerable(imported: ImportedFiles, tmp_path: Path) -> None:
    out = tmp_path / "reviewed.jsonl"
    client = login(imported_app(imported, out))
    saved = client.post(
        "/dataset/3/edit",
        data={"token": TOKEN, "kind": "unanswerable", "expected_source_ids": ""},
        headers=WRITE,
        follow_redirects=False,
    )
    assert saved.status_code == 303, saved.text
    record = records_of(out)[2]
    assert (record["kind"], record["review_status"]) == ("unanswerable", "edited")
    assert "expected_source_ids" not in record
    edits = record["metadata"]["review_edits"]
    assert [(e["field"], e["before"]) for e in edits] == [("kind", "qa")]


def test_a_kind_other_than_qa_or_unanswerable_is_refused(
    imported: ImportedFiles, tmp_path: Path
) -> None:
    out = tmp_path / "reviewed.jsonl"
    client = login(imported_app(imported, out))
    refused = client.post(
        "/dataset/1/edit", data={"token": TOKEN, "kind": "injection"}, headers=WRITE
    )
    assert refused.status_code == 400 and "kind must be qa or unanswerable" in refused.text
    assert not out.exists()


def test_a_generated_case_keeps_its_kind(generated: GeneratedFiles, tmp_path: Path) -> None:
    out = tmp_path / "reviewed.jsonl"
    client = login(dataset_app(generated, out))
    refused = client.post(
        "/dataset/1/edit",
        data={"token": TOKEN, "kind": "unanswerable", "expected_source_ids": ""},
        headers=WRITE,
    )
    assert refused.status_code == 400 and "only an imported case" in refused.text
    assert not out.exists()


def test_approving_a_draft_without_sources_is_still_refused(
    imported: ImportedFiles, tmp_path: Path
) -> None:
    client = login(imported_app(imported, tmp_path / "reviewed.jsonl"))
    refused = client.post(
        "/dataset/1/decide", data={"token": TOKEN, "status": "approved"}, headers=WRITE
    )
    assert refused.status_code == 400
    assert "a qa case needs at least one expected_source_ids entry" in refused.text


def test_reviewed_imports_validate_and_freeze_approved_only(
    imported: ImportedFiles, tmp_path: Path
) -> None:
    out = tmp_path / "reviewed.jsonl"
    client = login(imported_app(imported, out))
    trace = records_of(imported.cases)[0]["metadata"]["trace"]
    client.post(
        "/dataset/1/edit",
        data={
            "token": TOKEN,
            "expected_answer": trace["answer"],
            "expected_source_ids": "\n".join(d["id"] for d in trace["retrieved"]),
        },
        headers=WRITE,
    )
    client.post(
        "/dataset/3/edit",
        data={"token": TOKEN, "kind": "unanswerable", "expected_source_ids": ""},
        headers=WRITE,
    )
    assert [r["review_status"] for r in records_of(out)] == ["edited", "pending", "edited"]
    assert main(["validate", str(out)]) == 0
    frozen = tmp_path / "frozen.json"
    assert main(["freeze", str(out), "--approved-only", "-o", str(frozen)]) == 0
    cases = json.loads(frozen.read_text(encoding="utf-8"))["cases"]
    assert [(c["id"], c["kind"]) for c in cases] == [
        (imported.ids[0], "qa"),
        (imported.ids[2], "unanswerable"),
    ]
    assert cases[0]["expected_answer"] == trace["answer"]
    assert cases[0]["expected_source_ids"] == ["faq.md#2", PLANTED_ID]
    assert cases[0]["metadata"]["review_edits"][0]["reviewer"] == "ana"
