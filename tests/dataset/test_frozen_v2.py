"""Format ragproof.dataset/2: per-case digests name what changed; format 1 loads and upgrades."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ragproof import DatasetError, freeze, load_dataset
from pytest_ragproof.cli import main
from pytest_ragproof.dataset.canonical import (
    FORMAT_V1,
    canonical_json,
    case_digests,
    dataset_hash,
    frozen_text,
)
from pytest_ragproof.dataset.changes import case_changes
from pytest_ragproof.errors import FrozenDatasetModifiedError
from tests.dataset.conftest import SECRET, qa

RECORDS = [qa(id=f"c{i}", question=f"Question {i} {SECRET}?") for i in range(1, 6)]


@pytest.fixture
def frozen(write_jsonl: Callable[..., Path]) -> Path:
    return freeze(write_jsonl(RECORDS))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines), encoding="utf-8")


def _refusal(path: Path) -> str:
    with pytest.raises(FrozenDatasetModifiedError) as info:
        load_dataset(path)
    text = str(info.value)
    assert SECRET not in text and "Question" not in text
    return text


def _case_line(path: Path, case_id: str) -> int:
    return next(i for i, line in enumerate(_lines(path)) if f'"id":"{case_id}"' in line)


def test_a_changed_value_names_its_case(frozen: Path) -> None:
    lines = _lines(frozen)
    n = _case_line(frozen, "c3")
    lines[n] = lines[n].replace("Question 3", "Question 33")
    _write_lines(frozen, lines)
    assert _refusal(frozen) == (
        f"{frozen}, line {n + 1}: its cases differ from their digests (changed: 'c3'): "
        "the file was modified after freezing. Fix: restore it from version control, or "
        "re-freeze the reviewed source with 'ragproof freeze'"
    )


def test_a_removed_case_is_named(frozen: Path) -> None:
    lines = _lines(frozen)
    del lines[_case_line(frozen, "c5")]
    lines[_case_line(frozen, "c4")] = lines[_case_line(frozen, "c4")].rstrip(",")
    _write_lines(frozen, lines)
    assert "its cases differ from their digests (removed: 'c5')" in _refusal(frozen)


def test_an_added_case_is_named(frozen: Path) -> None:
    lines = _lines(frozen)
    n = _case_line(frozen, "c2")
    lines.insert(n, canonical_json(qa(id="new-1", question=SECRET)) + ",")
    _write_lines(frozen, lines)
    text = _refusal(frozen)
    assert "its cases differ from their digests (added: 'new-1')" in text
    assert f"line {n + 1}:" in text


def test_moved_cases_are_named(frozen: Path) -> None:
    lines = _lines(frozen)
    last = lines.pop(_case_line(frozen, "c5"))
    lines[_case_line(frozen, "c4")] = lines[_case_line(frozen, "c4")].rstrip(",")
    lines.insert(1, last + ",")  # the last case moved to the front
    _write_lines(frozen, lines)
    text = _refusal(frozen)
    assert "its cases differ from their digests (moved: 'c5')" in text
    assert "line 2:" in text


def test_a_renamed_id_is_removed_and_added(frozen: Path) -> None:
    lines = _lines(frozen)
    n = _case_line(frozen, "c1")
    lines[n] = lines[n].replace('"id":"c1"', '"id":"c1-renamed"')
    _write_lines(frozen, lines)
    assert "(added: 'c1-renamed'; removed: 'c1')" in _refusal(frozen)


def test_an_edited_digest_is_told_apart_from_an_edited_case(frozen: Path) -> None:
    lines = _lines(frozen)
    n = next(i for i, line in enumerate(lines) if line.startswith('["c2",'))
    lines[n] = lines[n][:-4] + ("0" if lines[n][-4] != "0" else "1") + lines[n][-3:]
    _write_lines(frozen, lines)
    assert f"line {n + 1}: its 'digests' do not match its cases" in _refusal(frozen)


def test_an_edited_dataset_hash_is_refused(frozen: Path) -> None:
    doc = json.loads(frozen.read_text(encoding="utf-8"))
    text = frozen.read_text(encoding="utf-8").replace(doc["sha256"], "0" * 64, 1)
    frozen.write_text(text, encoding="utf-8")
    assert "its cases do not match the stored sha256" in _refusal(frozen)


def test_many_changes_are_counted_not_all_listed() -> None:
    before = [(f"id{i}", "a") for i in range(30)]
    after = [(f"id{i}", "b") for i in range(30)]
    described = case_changes(before, after).describe()
    assert described.startswith("changed: 'id0', 'id1',")
    assert described.endswith("'id9' and 20 more")
    assert not case_changes(before, before)


def _v1_file(path: Path, records: list[dict[str, Any]]) -> Path:
    ds = load_dataset(records)
    path.write_text(
        frozen_text(list(ds.canonical_cases), 2, ds.sha256, fmt=FORMAT_V1), encoding="utf-8"
    )
    return path


def test_a_format_1_file_loads_and_freeze_upgrades_it_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _v1_file(tmp_path / "cases.frozen.json", RECORDS)
    v1 = load_dataset(old)
    assert v1.frozen and v1.frozen_format == FORMAT_V1
    assert main(["freeze", str(old)]) == 0
    out = capsys.readouterr().out
    assert f"upgraded {old} from format ragproof.dataset/1 to ragproof.dataset/2 (5 case(s))" in out
    v2 = load_dataset(old)
    assert v2.frozen_format == "ragproof.dataset/2"
    assert v2.sha256 == v1.sha256 and v2.cases == v1.cases  # the same hash in both formats
    assert json.loads(old.read_text(encoding="utf-8"))["digests"][0][0] == "c1"


def test_a_modified_format_1_file_is_still_refused(tmp_path: Path) -> None:
    old = _v1_file(tmp_path / "cases.frozen.json", RECORDS)
    old.write_text(old.read_text(encoding="utf-8").replace("Question 2", "Question 22"))
    with pytest.raises(FrozenDatasetModifiedError, match="do not match the stored sha256"):
        load_dataset(old)
    with pytest.raises(FrozenDatasetModifiedError):  # and freeze will not upgrade it
        freeze(old)


def test_freeze_overwrites_only_its_own_frozen_files(
    write_jsonl: Callable[..., Path], tmp_path: Path
) -> None:
    src = write_jsonl(RECORDS)
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": true}', encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        freeze(src, notes)
    assert str(info.value) == (
        f"{notes}: exists and is not a ragproof frozen file; freezing never overwrites other "
        "files. Fix: choose another output path with -o, or move that file away"
    )
    assert notes.read_text(encoding="utf-8") == '{"mine": true}'
    first = freeze(src)
    assert freeze(src) == first  # re-freezing replaces a frozen file


def test_freeze_in_place_of_a_plain_source_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "x.frozen.json"
    src.write_text(json.dumps(RECORDS), encoding="utf-8")  # a JSON array, named like a frozen
    with pytest.raises(DatasetError, match="overwrite the input"):
        freeze(src)


_TEXTS: dict[str, str] = {}


def _text(fmt: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    if fmt not in _TEXTS:
        ds = load_dataset(RECORDS[:3])
        jsons = list(ds.canonical_cases)
        _TEXTS[fmt] = frozen_text(jsons, 2, dataset_hash(jsons), fmt=fmt)
    return _TEXTS[fmt]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_single_character_change_to_a_format_1_file_is_refused(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = _text(FORMAT_V1, tmp_path_factory)
    pos = data.draw(st.integers(min_value=0, max_value=len(text) - 1), label="pos")
    char = data.draw(st.sampled_from(list(' ,:"{}[]\\0aZ\n\t\u00e9')), label="char")
    if text[pos] == char:
        return
    path = tmp_path_factory.mktemp("v1") / "cases.frozen.json"
    path.write_text(text[:pos] + char + text[pos + 1 :], encoding="utf-8", newline="")
    with pytest.raises(DatasetError):
        load_dataset(path)


def test_digests_are_of_each_cases_canonical_json() -> None:
    ds = load_dataset(RECORDS[:1])
    import hashlib

    expected = hashlib.sha256(b"ragproof.case/1\x00" + ds.canonical_cases[0].encode()).hexdigest()
    assert case_digests(ds.canonical_cases) == [expected]


def test_validate_says_a_file_is_in_format_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _v1_file(tmp_path / "cases.frozen.json", RECORDS)
    assert main(["validate", str(old)]) == 0
    assert (
        "state: frozen (hash verified), format ragproof.dataset/1 "
        f"(ragproof freeze {old} upgrades it to ragproof.dataset/2)"
    ) in capsys.readouterr().out


def test_canonical_json_is_the_standard_encoding() -> None:
    import json
    import random

    from pytest_ragproof.dataset.canonical import canonical_json

    rng = random.Random(3)

    def value(depth: int) -> object:
        pick = rng.randrange(7 if depth < 3 else 4)
        if pick == 0:
            return rng.choice(["", "a", 'é\u2028"\\\n', "日本", "\U0001f600"])
        if pick == 1:
            return rng.choice([0, -7, 10**30, 1.5, -0.0, 1e-300, 2.5e17])
        if pick == 2:
            return rng.choice([True, False])
        if pick == 3:
            return None
        if pick == 4:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(["b", "a", "é", "Z", "10", "9"]): value(depth + 1) for _ in range(3)}

    for _ in range(2000):
        v = value(0)
        expected = json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert canonical_json(v) == expected
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})
