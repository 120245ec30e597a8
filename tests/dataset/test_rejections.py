"""One test per rejection rule: the error names source, record and line, never values."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof import DatasetError, DatasetFieldMap, load_dataset
from tests.dataset.conftest import SECRET, qa

GOOD = qa(id="ok")


def _error(write_jsonl: Callable[..., Path], bad: dict[str, Any]) -> DatasetError:
    path = write_jsonl([GOOD, bad])
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    err = info.value
    assert err.source == str(path)
    assert err.record == 2
    assert err.line == 2
    assert SECRET not in str(err)
    assert "Fix:" in str(err)
    return err


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        (qa(question="   "), "question is empty"),
        (qa(question=f"{SECRET} \x07 bell"), "U+0007"),
        (qa(question=f"{SECRET} \u202e reversed"), "U+202E"),
        (qa(expected_answer=f"{SECRET}\u2066"), "U+2066"),
        (qa(kind="essay"), "field 'kind'"),
        (qa(expected_source_ids=[]), "at least one expected_source_ids"),
        (qa(expected_source_ids=[SECRET, 3]), "'expected_source_ids[1]': expected a string"),
        (qa(tags=[SECRET, None]), "tags[1]"),
        (qa(split="train"), "field 'split'"),
        (qa(review_status="maybe"), "field 'review_status'"),
        (qa(question_type="trick"), "field 'question_type'"),
        (qa(question_type="out_of_scope"), "out_of_scope belongs to kind unanswerable"),
        (qa(question_type="conversational"), "needs a conversation_history"),
        (qa(secret_field=SECRET), "unknown field 'secret_field'"),
        (qa(metadata=[SECRET]), "field 'metadata': expected an object, got an array"),
        (qa(metadata={"k": {"deep": 1e400}}), "NaN or Infinity"),
        (qa(synthetic="yes"), "field 'synthetic'"),
        (qa(expected_source_ids=["a", "a"]), "same id twice"),
        (qa(question=12345), "field 'question'"),
        (qa(id="has space"), "id contains whitespace"),
        (qa(canary=SECRET), "only allowed on injection cases"),
        (
            {"id": "u", "kind": "unanswerable", "question": SECRET, "expected_source_ids": ["a"]},
            "cannot have expected_source_ids",
        ),
        ({"id": "i", "kind": "injection", "question": SECRET}, "needs adversarial_payload"),
        (
            {
                "id": "i",
                "kind": "injection",
                "question": SECRET,
                "adversarial_payload": "please say hello",
            },
            "add 'canary'",
        ),
        (qa(conversation_history=[{"role": "system", "content": SECRET}]), "role"),
        (qa(provenance={"document_id": SECRET}), "provenance"),
        (qa(expected_answer=""), "expected_answer is empty"),
    ],
)
def test_each_rule(write_jsonl: Callable[..., Path], bad: dict[str, Any], fragment: str) -> None:
    err = _error(write_jsonl, bad)
    assert fragment in str(err)


@pytest.mark.parametrize(
    ("bad", "text"),
    [
        (
            qa(expected_sources=[SECRET]),
            "unknown field 'expected_sources'; did you mean 'expected_source_ids'? "
            "Fix: rename 'expected_sources' to 'expected_source_ids'",
        ),
        (
            qa(answer=SECRET),
            "unknown field 'answer'; did you mean 'expected_answer'? "
            "Fix: rename 'answer' to 'expected_answer'",
        ),
        (
            qa(user_input=SECRET),
            "unknown field 'user_input'; did you mean 'question'? "
            "Fix: rename 'user_input' to 'question'",
        ),
        (
            qa(retrieved_contexts=[SECRET]),
            "unknown field 'retrieved_contexts': it names what the pipeline returns, not a case "
            "field. Fix: remove 'retrieved_contexts': ragproof calls the pipeline and scores its "
            "answer and contexts (gold passages go in 'reference_contexts', their ids in "
            "'expected_source_ids')",
        ),
        (
            qa(colour=SECRET),
            "unknown field 'colour'. Fix: remove 'colour', or move it into 'metadata' "
            "(see the Datasets guide for the case schema)",
        ),
        (
            qa(expected_source_ids=SECRET),
            "field 'expected_source_ids': expected a list of strings, got a string. "
            "Fix: make 'expected_source_ids' a JSON array of strings, "
            'e.g. "expected_source_ids": ["…"]',
        ),
        (
            qa(tags=None),
            "field 'tags': expected a list of strings, got null. "
            'Fix: make \'tags\' a JSON array of strings, e.g. "tags": ["…"]',
        ),
        (
            qa(kind="essay"),
            "field 'kind' must be 'qa', 'unanswerable' or 'injection' "
            "[ValidationError:literal_error]. Fix: change 'kind' to one of them",
        ),
        (
            {"id": "q", "kind": "qa", "expected_source_ids": ["a"]},
            "missing field 'question' [ValidationError:missing]. Fix: add 'question' to the record",
        ),
        (
            qa(question=12345),
            "field 'question': expected a string, got a number [ValidationError:string_type]. "
            "Fix: make 'question' a string",
        ),
        (
            qa(synthetic=SECRET),
            "field 'synthetic': expected true or false, got a string "
            "[ValidationError:bool_type]. Fix: make 'synthetic' true or false",
        ),
        (
            qa(conversation_history=SECRET),
            'field \'conversation_history\': expected a list of {"role": …, "content": …} '
            "objects, got a string [ValidationError:tuple_type]. Fix: make "
            '\'conversation_history\' a list of {"role": …, "content": …} objects',
        ),
        (
            qa(conversation_history=[{"role": "user", "contnt": SECRET}]),
            "missing field 'conversation_history[0].content' [ValidationError:missing]. "
            "Fix: add 'conversation_history[0].content' to the record",
        ),
        (
            qa(
                provenance={
                    "document_id": "d",
                    "model": "m",
                    "prompt_version": "1",
                    "generator_version": "1",
                    "sede": 1,
                }
            ),
            "missing field 'provenance.seed' [ValidationError:missing]. "
            "Fix: add 'provenance.seed' to the record",
        ),
        (
            qa(provenance=SECRET),
            "field 'provenance': expected an object, got a string [ValidationError:model_type]. "
            "Fix: make 'provenance' an object",
        ),
    ],
)
def test_errors_speak_the_language_of_the_file(
    write_jsonl: Callable[..., Path], bad: dict[str, Any], text: str
) -> None:
    err = _error(write_jsonl, bad)
    assert str(err) == f"{err.source}, record 2, line 2: {text}"
    assert "docs/" not in str(err) and "DatasetFieldMap" not in str(err)
    assert "valid tuple" not in str(err) and "Input should" not in str(err)


def test_an_unknown_nested_field_gets_the_closest_nested_field(
    write_jsonl: Callable[..., Path],
) -> None:
    turn = {"role": "user", "content": SECRET, "contnet": SECRET}
    err = _error(write_jsonl, qa(conversation_history=[turn]))
    assert str(err).endswith(
        ": unknown field 'conversation_history[0].contnet'; did you mean 'content'? "
        "[ValidationError:extra_forbidden]. Fix: rename 'contnet' to 'content'"
    )


def test_csv_unknown_column_names_the_field_map(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(f"Query,Kind,expected_sources\n{SECRET},qa,{SECRET}\n", encoding="utf-8")
    fmap = DatasetFieldMap({"Query": "question", "Kind": "kind"})
    with pytest.raises(DatasetError) as info:
        load_dataset(path, field_map=fmap)
    assert str(info.value) == (
        f"{path}, record 1, line 2: unknown column 'expected_sources'; did you mean "
        "'expected_source_ids'? Fix: map it with --map 'expected_sources=expected_source_ids' "
        "(a DatasetFieldMap in Python), or drop it with --ignore-column 'expected_sources'"
    )


def test_duplicate_id(write_jsonl: Callable[..., Path]) -> None:
    err = _error(write_jsonl, qa(id="ok", question=f"other {SECRET}"))
    assert "same id as record 1" in str(err)


def test_identical_implicit_records_collide(write_jsonl: Callable[..., Path]) -> None:
    rec = qa()
    del rec["id"]
    path = write_jsonl([rec, dict(rec)])
    with pytest.raises(DatasetError, match="no id and the same content as record 1") as info:
        load_dataset(path)
    assert info.value.record == 2 and SECRET not in str(info.value)


def test_malformed_json_line(write_jsonl: Callable[..., Path]) -> None:
    good = json.dumps(GOOD)
    path = write_jsonl([], raw=f'{good}\n\n{{"question": "{SECRET}", \n')
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert info.value.line == 3 and info.value.record == 2
    assert "JSONDecodeError" in str(info.value) and SECRET not in str(info.value)


def test_nan_in_jsonl(write_jsonl: Callable[..., Path]) -> None:
    path = write_jsonl([], raw=json.dumps(GOOD) + f'\n{{"question": "{SECRET}", "x": NaN}}\n')
    with pytest.raises(DatasetError, match="NaN or Infinity") as info:
        load_dataset(path)
    assert info.value.line == 2 and SECRET not in str(info.value)


def test_record_not_an_object(write_jsonl: Callable[..., Path]) -> None:
    path = write_jsonl([GOOD, [SECRET]])
    with pytest.raises(DatasetError, match="not an object") as info:
        load_dataset(path)
    assert info.value.line == 2 and SECRET not in str(info.value)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + SECRET.encode() + b"\xff\xfe\n")
    with pytest.raises(DatasetError, match="not UTF-8") as info:
        load_dataset(path)
    assert info.value.line == 2 and SECRET not in str(info.value)


def test_json_array_error_names_the_element_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(
        "[\n" + json.dumps(GOOD) + ",\n\n" + json.dumps(qa(id="b", kind="essay")) + "\n]\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert info.value.record == 2 and info.value.line is None
    path.write_text("[\n" + json.dumps(GOOD) + ",\n\n" + json.dumps(SECRET) + "\n]\n")
    with pytest.raises(DatasetError, match="not an object") as info:
        load_dataset(path)
    assert info.value.record == 2 and info.value.line == 4
    assert SECRET not in str(info.value)


def test_csv_needs_a_field_map(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("question,kind\nWhat?,unanswerable\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="explicit field map"):
        load_dataset(path)


def test_csv_errors_name_row_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(
        "Query,Kind,Sources\n"
        '"multi\nline question",qa,"[""a.md""]"\n'
        f'{SECRET},qa,"[""a.md"", 3]"\n',
        encoding="utf-8",
    )
    fmap = DatasetFieldMap({"Query": "question", "Kind": "kind", "Sources": "expected_source_ids"})
    with pytest.raises(DatasetError) as info:
        load_dataset(path, field_map=fmap)
    assert info.value.record == 2 and info.value.line == 4
    assert SECRET not in str(info.value)


def test_csv_bad_json_cell(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(f"Query,Kind,Sources\n{SECRET},qa,[{SECRET}\n", encoding="utf-8")
    fmap = DatasetFieldMap({"Query": "question", "Kind": "kind", "Sources": "expected_source_ids"})
    with pytest.raises(DatasetError, match="not valid JSON") as info:
        load_dataset(path, field_map=fmap)
    assert info.value.line == 2 and SECRET not in str(info.value)


def test_csv_unmapped_column_is_reported_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(f"Query,Kind,Notes\n{SECRET},unanswerable,x\n", encoding="utf-8")
    fmap = DatasetFieldMap({"Query": "question", "Kind": "kind"})
    with pytest.raises(DatasetError, match="unknown column 'Notes'"):
        load_dataset(path, field_map=fmap)
    kept = DatasetFieldMap({"Query": "question", "Kind": "kind", "Notes": "metadata.notes"})
    assert load_dataset(path, field_map=kept).cases[0].metadata == {"notes": "x"}
    dropped = DatasetFieldMap({"Query": "question", "Kind": "kind"}, ignore=frozenset({"Notes"}))
    assert load_dataset(path, field_map=dropped).cases[0].metadata == {}


def test_iterable_source_names_record(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        load_dataset([GOOD, qa(id="x", kind="nope")])
    assert info.value.source == "<python>" and info.value.record == 2
    assert SECRET not in str(info.value)


def test_empty_dataset(write_jsonl: Callable[..., Path]) -> None:
    with pytest.raises(DatasetError, match="no cases"):
        load_dataset(write_jsonl([], raw="\n\n"))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="cannot read"):
        load_dataset(tmp_path / "nope.jsonl")


def test_wrong_source_type() -> None:
    with pytest.raises(DatasetError, match="iterable of mappings"):
        load_dataset(42)  # type: ignore[arg-type]


def test_non_finite_metadata_from_python() -> None:
    with pytest.raises(DatasetError, match=r"metadata\.k\.deep holds a non-finite number") as info:
        load_dataset([GOOD, qa(id="b", metadata={"k": {"deep": float("nan")}})])
    assert info.value.record == 2


def _nested(depth: int) -> list[Any]:
    value: list[Any] = [SECRET]
    for _ in range(depth - 1):
        value = [value]
    return value


def test_metadata_nested_deeper_than_the_limit(write_jsonl: Callable[..., Path]) -> None:
    from pytest_ragproof.dataset.normalize import MAX_DEPTH

    assert load_dataset([qa(id="a", metadata={"x": _nested(MAX_DEPTH - 1)})])
    err = _error(write_jsonl, qa(metadata={"x": _nested(MAX_DEPTH + 5)}))
    assert "metadata is nested more than 100 levels deep" in str(err)


def test_json_too_deep_to_parse_is_an_error_not_a_crash(write_jsonl: Callable[..., Path]) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    path = write_jsonl([], raw=json.dumps(GOOD) + f'\n{{"question": "{SECRET}", "x": {deep}}}\n')
    with pytest.raises(DatasetError, match="nested too deeply to parse") as info:
        load_dataset(path)
    assert info.value.record == 2 and info.value.line == 2
    array = write_jsonl([], name="cases.json", raw=f"[{json.dumps(GOOD)}, {deep}]")
    with pytest.raises(DatasetError, match="nested too deeply to parse"):
        load_dataset(array)


def test_metadata_that_contains_itself(tmp_path: Path) -> None:
    from pytest_ragproof.dataset.models import Case

    loop: dict[str, Any] = {"secret": SECRET}
    loop["self"] = loop
    with pytest.raises(DatasetError, match="contains itself") as info:
        load_dataset([GOOD, qa(id="b", metadata=loop)])
    assert info.value.record == 2 and SECRET not in str(info.value)
    with pytest.raises(ValueError, match="contains itself"):  # pydantic's ValidationError
        Case.model_validate({"id": "c", "kind": "unanswerable", "question": "Q", "metadata": loop})


def test_csv_cell_too_deep_to_parse(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    deep = "[" * 5_000 + "]" * 5_000  # within csv's field size limit, beyond Python's recursion
    path.write_text(f'q,tags\nWhat?,"{deep}"\n', encoding="utf-8")
    fmap = DatasetFieldMap({"q": "question", "tags": "tags"})
    with pytest.raises(DatasetError, match="nested too deeply to parse") as info:
        load_dataset(path, field_map=fmap)
    assert info.value.record == 1 and info.value.line == 2


def test_integer_too_long_to_read(write_jsonl: Callable[..., Path]) -> None:
    # Python reads at most 4300 digits of an integer: an error, never mistaken for NaN.
    huge = "7" * 5000
    path = write_jsonl([], raw=json.dumps(GOOD) + f'\n{{"question": "{SECRET}", "x": {huge}}}\n')
    with pytest.raises(DatasetError, match="integer too long to read") as info:
        load_dataset(path)
    assert info.value.record == 2 and info.value.line == 2
    assert SECRET not in str(info.value) and huge not in str(info.value)
    with pytest.raises(DatasetError, match="integer of over 4300 digits") as info:
        load_dataset([GOOD, qa(id="b", metadata={"n": 10**5000})])
    assert info.value.record == 2
    implicit = qa(metadata={"n": 10**5000})
    del implicit["id"]  # the derived id hashes the content: the same error, not a crash
    with pytest.raises(DatasetError, match="integer of over 4300 digits"):
        load_dataset([implicit])
