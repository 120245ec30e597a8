"""Bad trace files: one line naming file and line, no traceback, nothing written."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.interop.conftest import Ran
from tests.traces.otlp import rag_trace, read_jsonl, request, span, write_jsonl

Cli = Callable[..., Ran]
SECRET = "the secret question of Ann Example?"


def refused(cli: Cli, tmp_path: Path, *files: Path) -> str:
    """The one error line of an import that must write nothing."""
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", *files, "-o", out)
    assert ran.code != 0
    assert not out.exists()
    assert "Traceback" not in ran.err and SECRET not in ran.err and SECRET not in ran.out
    [line] = ran.err.splitlines()
    return line


def good_line() -> str:
    return json.dumps(request(rag_trace(1, SECRET)))


def test_a_truncated_last_line(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    text = good_line() + "\n" + good_line()[:-40] + "\n"
    path.write_text(text)
    line = refused(cli, tmp_path, path)
    assert line == (
        f"ragproof import: error: {path}, line 2: the JSON is cut short (was the export still "
        "being written?). Fix: remove or complete that line"
    )


def test_a_truncated_first_line_of_jsonl(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(good_line()[:-3] + "\n" + good_line() + "\n")
    assert f"{path}, line 1: the JSON is cut short" in refused(cli, tmp_path, path)


def test_a_line_cut_inside_a_string(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = good_line()
    path.write_text(line + "\n" + line[: line.index(SECRET) + 5] + "\n")
    assert f"{path}, line 2: the JSON is cut short" in refused(cli, tmp_path, path)


def test_invalid_json_inside_a_pretty_printed_file(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    text = json.dumps(request(rag_trace(1, SECRET)), indent=1).splitlines()
    text[5] = text[5] + " oops"
    path.write_text("\n".join(text))
    assert f"{path}, line 6: invalid JSON:" in refused(cli, tmp_path, path)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"question": SECRET}, "not an OTLP trace export (no resourceSpans)"),
        ({"resourceMetrics": []}, "OTLP metrics, not traces"),
        ({"resourceLogs": {"x": 1}}, "resourceLogs is not a list"),
        ({"resourceLogs": [{"scopeLogs": [{"logRecords": [7]}]}]}, "a log record is not an object"),
        (
            {
                "resourceLogs": [
                    {
                        "scopeLogs": [
                            {
                                "logRecords": [
                                    {
                                        "eventName": "gen_ai.choice",
                                        "traceId": "ab" * 16,
                                        "spanId": "cd" * 8,
                                        "timeUnixNano": "soon",
                                    }
                                ]
                            }
                        ]
                    }
                ]
            },
            "a log record's timeUnixNano is not an integer",
        ),
        ([1, 2], "a JSON list, not an OTLP request object"),
        ({"resourceSpans": {"x": 1}}, "resourceSpans is not a list"),
        (
            {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "00000000000000ab"}]}]}]},
            "no traceId",
        ),
        (
            {"resourceSpans": [{"scopeSpans": [{"spans": [{**span(1, 1), "attributes": {}}]}]}]},
            "attributes is not a list",
        ),
        (
            {
                "resourceSpans": [
                    {"scopeSpans": [{"spans": [{**span(1, 1), "attributes": [{"key": "k"}, 1]}]}]}
                ]
            },
            "an attribute is not a {key, value} object",
        ),
    ],
)
def test_json_that_is_not_otlp_traces(cli: Cli, tmp_path: Path, value: object, reason: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(good_line() + "\n" + json.dumps(value) + "\n")
    line = refused(cli, tmp_path, path)
    assert line.startswith(f"ragproof import: error: {path}, line 2: ")
    assert reason in line and "Fix: give an OTLP JSON trace export" in line


def test_damaged_gzip_and_non_utf8(cli: Cli, tmp_path: Path) -> None:
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(gzip.compress((good_line() + "\n").encode())[:-30])
    assert "the gzip data is damaged or cut short" in refused(cli, tmp_path, gz)
    latin = tmp_path / "l.jsonl"
    latin.write_bytes(good_line().encode() + b"\n" + b'{"x": "\xe9"}\n')
    assert f"{latin}, line 2: is not UTF-8 text" in refused(cli, tmp_path, latin)


def test_spans_without_attributes_are_counted_not_guessed(cli: Cli, tmp_path: Path) -> None:
    bare = [span(2, 1), span(2, 2, parent=1), span(3, 1, attributes={})]
    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(1, "Q?")), request(bare)])
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", path, "-o", out)
    assert ran.code == 0, ran.err
    assert len(read_jsonl(out)) == 1
    assert f"  2: no recognisable question: {2:032x}, {3:032x}" in ran.out


def test_only_traces_without_a_question_write_nothing(cli: Cli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [request([span(2, 1)])])
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", path, "-o", out)
    assert ran.code != 0 and not out.exists()
    assert f"1: no recognisable question: {2:032x}" in ran.err
    assert "wrote nothing to" in ran.err


def test_huge_attributes(cli: Cli, tmp_path: Path) -> None:
    huge_doc = rag_trace(1, "Q?")
    huge_doc[1]["attributes"].append(
        {"key": "retrieval.documents.0.document.content", "value": {"stringValue": "x" * 5_000_000}}
    )
    huge_question = rag_trace(2, "y" * 100_001)
    path = write_jsonl(tmp_path / "t.jsonl", [request(huge_doc), request(huge_question)])
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", path, "-o", out)
    assert ran.code == 0, ran.err
    [case] = read_jsonl(out)
    assert case["metadata"]["trace"]["retrieved"][0]["id"] == "faq.md#2"
    assert out.stat().st_size < 2000  # document texts are not kept
    assert f"  1: a question, answer or message over 100,000 characters: {2:032x}" in ran.out


def test_output_is_never_an_input_nor_a_file_import_did_not_write(cli: Cli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(1, "Q?"))])
    other = write_jsonl(tmp_path / "u.jsonl", [request(rag_trace(2, "R?"))])
    ran = cli("import", "--from", "otel", other, path, "-o", path)
    assert ran.code != 0 and f"-o {path} is the input file" in ran.err
    mine = tmp_path / "mine.jsonl"
    mine.write_text('{"id": "a", "kind": "qa", "question": "Q?", "expected_source_ids": ["x"]}\n')
    ran = cli("import", "--from", "otel", path, "-o", mine)
    assert ran.code != 0 and "was not written by ragproof import" in ran.err
    assert cli("import", "--from", "otel", path, "-o", tmp_path / "c.jsonl").code == 0
    # an earlier import is replaced, but not by a failed one
    assert cli("import", "--from", "otel", other, "-o", tmp_path / "c.jsonl").code == 0
    before = (tmp_path / "c.jsonl").read_bytes()
    broken = tmp_path / "broken.jsonl"
    broken.write_text(good_line()[:-5] + "\n")
    assert cli("import", "--from", "otel", broken, "-o", tmp_path / "c.jsonl").code != 0
    assert (tmp_path / "c.jsonl").read_bytes() == before


def test_a_trace_whose_case_is_invalid_is_skipped_and_named(cli: Cli, tmp_path: Path) -> None:
    requests = [request(rag_trace(1, "Fine?")), request(rag_trace(2, "A bell \x07 here?"))]
    path = write_jsonl(tmp_path / "t.jsonl", requests)
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", path, "-o", out)
    assert ran.code == 0, ran.err
    assert [c["question"] for c in read_jsonl(out)] == ["Fine?"]
    assert "  1: not a valid case (" in ran.out and f"{2:032x}" in ran.out
    assert "\x07" not in ran.out
    # what was written is the canonical form ragproof writes for those cases
    from pytest_ragproof.dataset.io import load_dataset
    from pytest_ragproof.dataset.io import write_jsonl as write_cases

    again = tmp_path / "again.jsonl"
    write_cases(load_dataset(out).cases, again)
    assert again.read_bytes() == out.read_bytes()


def test_cases_are_validated_in_chunks_in_order(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ragproof.interop import otel_select

    monkeypatch.setattr(otel_select, "CHUNK", 2)
    questions = ["Q0?", "Q1?", "Q2?", "Bad \x1b[31m?", "Q4?"]
    requests = [request(rag_trace(i + 1, q, start=i)) for i, q in enumerate(questions)]
    path = write_jsonl(tmp_path / "t.jsonl", requests)
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", path, "-o", out)
    assert ran.code == 0, ran.err
    assert [c["question"] for c in read_jsonl(out)] == ["Q0?", "Q1?", "Q2?", "Q4?"]
    assert "wrote 4 case(s)" in ran.out and f"{4:032x}" in ran.out
    assert "root span input.value -> question: 4" in " ".join(ran.out.split())


@pytest.mark.parametrize("start", ["99999999999999999999999", "-5", "soon"])
def test_a_start_time_that_is_no_time(cli: Cli, tmp_path: Path, start: str) -> None:
    spans = rag_trace(1, SECRET)
    spans[0]["startTimeUnixNano"] = start
    path = write_jsonl(tmp_path / "t.jsonl", [request(spans)])
    line = refused(cli, tmp_path, path)
    assert f"{path}, line 1: startTimeUnixNano is not" in line


def test_scores_that_are_not_finite_are_left_out(cli: Cli, tmp_path: Path) -> None:
    spans = rag_trace(1, "Q?")
    for attr in spans[1]["attributes"]:
        if attr["key"] == "retrieval.documents.0.document.score":
            attr["value"] = {"doubleValue": "Infinity"}
        if attr["key"] == "retrieval.documents.1.document.score":
            attr["value"] = {"intValue": str(10**400)}
    path = write_jsonl(tmp_path / "t.jsonl", [request(spans)])
    out = tmp_path / "cases.jsonl"
    assert cli("import", "--from", "otel", path, "-o", out).code == 0
    assert read_jsonl(out)[0]["metadata"]["trace"]["retrieved"] == [
        {"id": "faq.md#2", "rank": 1},
        {"id": "faq.md#7", "rank": 2},
    ]
