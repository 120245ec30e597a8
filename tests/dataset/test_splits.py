"""Split assignment: the bucket rule, stability across processes, grouping."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from typing import Any

import pytest

from pytest_ragproof import DatasetError, load_dataset
from pytest_ragproof.dataset.splits import assign_splits, bucket, parse_ratios, split_for
from pytest_ragproof.errors import ConfigError


def _cases(n: int, group: bool = False) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{i}",
            "kind": "unanswerable",
            "question": f"Question {i}?",
            "metadata": {"doc": f"d{i % 7}"} if group else {},
        }
        for i in range(n)
    ]


def test_bucket_is_the_documented_formula() -> None:
    digest = hashlib.sha256(b"7\x00case-1").digest()
    assert bucket(7, "case-1") == int.from_bytes(digest[:8], "big") / 2**64


def test_split_for_uses_cumulative_ratios() -> None:
    ratios = (0.8, 0.1, 0.1)
    assert split_for(0.0, ratios) == "optimize"
    assert split_for(0.7999, ratios) == "optimize"
    assert split_for(0.85, ratios) == "validation"
    assert split_for(0.95, ratios) == "test"
    assert split_for(0.5, (0.0, 0.0, 1.0)) == "test"
    assert split_for(0.9999999999, (0.5, 0.5, 0.0)) == "validation"


def test_assignment_roughly_follows_ratios_and_is_stable() -> None:
    ds = load_dataset(_cases(2000))
    first = [c.split for c in assign_splits(ds.cases, "s1")]
    again = [c.split for c in assign_splits(ds.cases, "s1")]
    other = [c.split for c in assign_splits(ds.cases, "s2")]
    assert first == again and first != other
    assert 1500 < first.count("optimize") < 1700
    assert 120 < first.count("test") < 280


def test_stable_across_python_processes() -> None:
    code = (
        "from pytest_ragproof.dataset.splits import bucket, split_for;"
        "print(','.join(split_for(bucket('seed', f'c{i}'), (0.8, 0.1, 0.1)) for i in range(50)))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
        ).stdout
        for seed in (1, 2)
    }
    assert len(outputs) == 1
    here = ",".join(split_for(bucket("seed", f"c{i}"), (0.8, 0.1, 0.1)) for i in range(50))
    assert outputs == {here + "\n"}


def test_group_by_keeps_groups_together() -> None:
    ds = load_dataset(_cases(200, group=True))
    out = assign_splits(ds.cases, 3, group_by="doc")
    by_group: dict[str, set[str | None]] = {}
    for case in out:
        by_group.setdefault(str(case.metadata["doc"]), set()).add(case.split)
    assert all(len(s) == 1 for s in by_group.values())


def test_group_by_missing_key_names_the_record() -> None:
    ds = load_dataset(_cases(3))
    with pytest.raises(DatasetError, match="metadata\\['doc'\\] is missing") as info:
        assign_splits(ds.cases, 1, group_by="doc", source="x.jsonl")
    assert info.value.record == 1


@pytest.mark.parametrize("text", ["0.8,0.1", "0.8,0.1,0.2", "a,b,c", "1.1,-0.1,0", "nan,0.5,0.5"])
def test_bad_ratios(text: str) -> None:
    with pytest.raises(ConfigError, match=r"e\.g\. 0\.8,0\.1,0\.1|sum to 1"):
        parse_ratios(text)


def test_ratios_sum_tolerance() -> None:
    assert parse_ratios("0.7,0.2,0.1") == (0.7, 0.2, 0.1)
