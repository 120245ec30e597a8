"""Helpers for dataset tests: writing files and a secret planted in bad records."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SECRET = "SECRET-PLANTED-7f3a"


def qa(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "q1",
        "kind": "qa",
        "question": f"What does {SECRET} mean?",
        "expected_answer": f"It means {SECRET}.",
        "expected_source_ids": ["docs/a.md"],
    }
    base.update(over)
    return base


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    def write(records: list[Any], name: str = "cases.jsonl", raw: str | None = None) -> Path:
        path = tmp_path / name
        if raw is not None:
            path.write_text(raw, encoding="utf-8")
        else:
            path.write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                encoding="utf-8",
            )
        return path

    return write
