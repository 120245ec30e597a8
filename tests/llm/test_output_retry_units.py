"""Pure helpers: tolerant JSON extraction, error summaries, backoff and Retry-After."""

from __future__ import annotations

import email.utils
import random

import pytest
from pydantic import BaseModel

from pytest_ragproof.llm.output import OutputParseError, extract_json, parse_structured
from pytest_ragproof.llm.retry import backoff_delay, parse_retry_after


class Item(BaseModel):
    name: str
    count: int


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  [1, 2]\n", [1, 2]),
        ('```json\n{"a": [1, {"b": 2}]}\n```', {"a": [1, {"b": 2}]}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Here you go: {"a": {"b": "}"}} hope it helps', {"a": {"b": "}"}}),
        ('Items: [{"a": 1}, {"a": 2}].', [{"a": 1}, {"a": 2}]),
    ],
)
def test_json_is_found_in_common_wrappings(text: str, expected: object) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (None, "empty"),
        ("   ", "empty"),
        ("no braces at all", "no JSON object or array"),
        ('{"name": "x", "count": ', "truncated"),
        ("{'single': 'quotes'}", "not valid JSON"),
    ],
)
def test_unusable_text_is_described(text: str | None, reason: str) -> None:
    with pytest.raises(OutputParseError, match=reason):
        extract_json(text)


def test_validation_summary_names_fields_not_values() -> None:
    with pytest.raises(OutputParseError) as info:
        parse_structured('{"name": "SENSITIVE-VALUE", "count": "many", "extra": 1}', Item)
    summary = info.value.summary
    assert "count" in summary
    assert "SENSITIVE-VALUE" not in summary and "many" not in summary
    ok = parse_structured('{"name": "n", "count": 3}', Item)
    assert ok == Item(name="n", count=3)


def test_backoff_grows_is_capped_and_jittered() -> None:
    rng = random.Random(1)
    delays = [backoff_delay(i, 1.0, 8.0, rng) for i in range(6)]
    for i, delay in enumerate(delays):
        step = min(8.0, 2.0**i)
        assert step / 2 <= delay <= step
    assert len({round(backoff_delay(3, 1.0, 8.0, rng), 6) for _ in range(20)}) > 1


def test_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "-3"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "nan"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=1_000_000.0) == pytest.approx(30.0)
