"""Round trips (issue 29): TOOL -> ragproof -> TOOL gives the tool's records back field by field,
and ragproof -> TOOL -> ragproof gives the same cases (ids included).

Ragas's own sample models read the exports (as ``Testset.from_jsonl`` builds them); DeepEval's
(``EvaluationDataset.add_goldens_from_json_file``) where deepeval is installed: not in the
dev extra (it registers a pytest plugin that would load in every run of the suite), so
`.ci/run` runs this file once more in a venv of its own with deepeval, where
RAGPROOF_REQUIRE_DEEPEVAL=1 turns a missing deepeval into a failure. Giskard is not a dev
dependency (``giskard[llm]`` pulls torch and
numpy<2), so RAGET files are compared as ``QATestset.load`` reads them: one JSON object
per line, field by field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof import freeze, load_dataset
from pytest_ragproof.dataset.models import Case
from tests.interop.conftest import CORPUS, FIXTURES, Ran

Cli = Callable[..., Ran]


def imported(cli: Cli, path: Path, tool: str, out: Path, *extra: str | Path) -> list[Case]:
    ran = cli("import", "--from", tool, path, "-o", out, *extra)
    assert ran.code == 0, ran.err
    return list(load_dataset(freeze(out)).cases)


def exported(cli: Cli, cases_file: Path, tool: str, out: Path) -> Path:
    ran = cli("export", cases_file, "--to", tool, "-o", out)
    assert ran.code == 0, ran.err
    return out


def plain(case: Case) -> dict[str, Any]:
    """A case field by field; ``metadata.imported_from`` says which import wrote it last."""
    dump = case.model_dump(mode="json")
    dump["metadata"] = {k: v for k, v in dump["metadata"].items() if k != "imported_from"}
    return dump


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# -- Ragas ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["ragas_testset.jsonl", "ragas_testset.csv", "ragas_old_testset.json"]
)
def test_ragas_to_ragproof_to_ragas_keeps_every_case_and_id(
    cli: Cli, tmp_path: Path, name: str
) -> None:
    first = imported(cli, FIXTURES / name, "ragas", tmp_path / "first.jsonl")
    out = exported(cli, tmp_path / "first.jsonl", "ragas", tmp_path / "testset.jsonl")
    second = imported(cli, out, "ragas", tmp_path / "second.jsonl")
    assert [plain(c) for c in second] == [plain(c) for c in first]
    assert [c.id for c in second] == [c.id for c in first]


def _ragas_samples(path: Path) -> list[tuple[str, Any]]:
    """(synthesizer_name, sample) per row, built as ``Testset.from_list`` builds them (a list
    ``user_input`` is a ``MultiTurnSample``); ``ragas.testset`` itself is not imported: its
    import fetches a tiktoken encoding over the network."""
    from ragas.dataset_schema import MultiTurnSample, SingleTurnSample

    out: list[tuple[str, Any]] = []
    for row in jsonl(path):
        name = row.pop("synthesizer_name")
        model = MultiTurnSample if isinstance(row.get("user_input"), list) else SingleTurnSample
        out.append((name, model(**row)))
    return out


def test_ragas_loads_the_export_as_it_loads_the_original(cli: Cli, tmp_path: Path) -> None:
    pytest.importorskip("ragas")
    original = FIXTURES / "ragas_testset.jsonl"
    imported(cli, original, "ragas", tmp_path / "cases.jsonl")
    out = exported(cli, tmp_path / "cases.jsonl", "ragas", tmp_path / "testset.jsonl")
    theirs, ours = _ragas_samples(original), _ragas_samples(out)
    assert len(ours) == len(theirs)
    for (my_name, mine), (their_name, their) in zip(ours, theirs, strict=True):
        assert type(mine) is type(their) and my_name == their_name
        assert mine.model_dump() == their.model_dump()


def test_ragas_labels_go_back_where_they_came_from(cli: Cli, tmp_path: Path) -> None:
    src = tmp_path / "testset.jsonl"
    row = {
        "user_input": "What is the flat rate?",
        "reference": "$5.99",
        "reference_contexts": ["For orders below $50, we charge a flat rate of $5.99."],
        "synthesizer_name": "single_hop",
        "persona_name": "Shopper",
        "query_style": "Formal",
        "query_length": "short",
    }
    src.write_text(json.dumps(row) + "\n", encoding="utf-8")
    imported(cli, src, "ragas", tmp_path / "cases.jsonl")
    out = exported(cli, tmp_path / "cases.jsonl", "ragas", tmp_path / "back.jsonl")
    assert jsonl(out) == [row]


# -- DeepEval -------------------------------------------------------------------------

GOLDEN_FIELDS = ("input", "expected_output", "context", "name", "comments")


def _without_block(meta: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (meta or {}).items() if k != "ragproof"}


def test_deepeval_to_ragproof_to_deepeval(cli: Cli, tmp_path: Path) -> None:
    original = FIXTURES / "deepeval_goldens.json"
    first = imported(cli, original, "deepeval", tmp_path / "first.jsonl")
    out = exported(cli, tmp_path / "first.jsonl", "deepeval", tmp_path / "goldens.json")
    theirs, ours = json.loads(original.read_text(encoding="utf-8")), json.loads(out.read_text())
    assert len(ours) == len(theirs)
    for mine, their in zip(ours, theirs, strict=True):
        assert {f: mine.get(f) for f in GOLDEN_FIELDS} == {f: their.get(f) for f in GOLDEN_FIELDS}
        assert _without_block(mine["additional_metadata"]) == _without_block(
            their.get("additional_metadata")
        )
    second = imported(cli, out, "deepeval", tmp_path / "second.jsonl")
    assert [plain(c) for c in second] == [plain(c) for c in first]


def test_deepeval_loads_the_export_as_it_loads_the_original(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    if os.environ.get("RAGPROOF_REQUIRE_DEEPEVAL") != "1":
        pytest.importorskip("deepeval")
    from deepeval.dataset import EvaluationDataset

    original = FIXTURES / "deepeval_goldens.json"
    imported(cli, original, "deepeval", tmp_path / "cases.jsonl")
    out = exported(cli, tmp_path / "cases.jsonl", "deepeval", tmp_path / "goldens.json")
    theirs, ours = EvaluationDataset(), EvaluationDataset()
    theirs.add_goldens_from_json_file(str(original))
    ours.add_goldens_from_json_file(str(out))
    assert len(ours.goldens) == len(theirs.goldens)
    for mine, their in zip(ours.goldens, theirs.goldens, strict=True):
        for name in GOLDEN_FIELDS:
            field = "input" if name == "input" else name
            assert getattr(mine, field) == getattr(their, field), name
        assert _without_block(mine.additional_metadata) == _without_block(their.additional_metadata)


# -- RAGET ----------------------------------------------------------------------------

RAGET_FIELDS = ("id", "question", "reference_answer", "reference_context", "conversation_history")


def test_raget_to_ragproof_to_raget(cli: Cli, tmp_path: Path) -> None:
    """With --corpus the cases expect corpus document ids (shipping.md), yet the export
    writes RAGET's own knowledge-base ids back, in reference_context and seed_document_id."""
    original = FIXTURES / "raget_testset.jsonl"
    first = imported(cli, original, "raget", tmp_path / "first.jsonl", "--corpus", CORPUS)
    assert first[0].expected_source_ids == ("shipping.md",)
    out = exported(cli, tmp_path / "first.jsonl", "raget", tmp_path / "testset.jsonl")
    theirs, ours = jsonl(original), jsonl(out)
    assert len(ours) == len(theirs)
    for mine, their in zip(ours, theirs, strict=True):
        fields: tuple[str, ...] = RAGET_FIELDS
        if their["metadata"]["question_type"] == "out of scope":  # documented: not imported
            fields = ("id", "question", "conversation_history")
        assert {f: mine[f] for f in fields} == {f: their[f] for f in fields}
        assert _without_block(mine["metadata"]) == their["metadata"]
    second = imported(cli, out, "raget", tmp_path / "second.jsonl")
    assert [plain(c) for c in second] == [plain(c) for c in first]


SHIPPING = "For orders below $50, we charge a flat rate of $5.99."
TRACKING = "Once your order ships, you receive a tracking number."
RETURNS = "Returns are accepted within 30 days of delivery."
NATIVE: list[dict[str, Any]] = [
    {  # a double question: two passages of one document
        "id": "double",
        "kind": "qa",
        "question": "What is the flat rate, and do I get a tracking number?",
        "expected_answer": "$5.99, and yes.",
        "expected_source_ids": ["pricing.md"],
        "reference_contexts": [SHIPPING, TRACKING],
        "question_type": "double",
        "tags": ["smoke", "synthesizer:ours"],
        "split": "test",
        "review_status": "approved",
        "metadata": {"name": "double rate", "comments": "from support", "topic": "Shipping"},
    },
    {  # three passages, two documents: no id per passage
        "id": "three",
        "kind": "qa",
        "question": "What are the rate, the tracking and the return window?",
        "expected_source_ids": ["pricing.md", "returns.txt"],
        "reference_contexts": [SHIPPING, TRACKING, RETURNS],
        "question_type": "complex",
        "synthetic": True,
    },
    {  # a passage holding a line RAGET's format would split on
        "id": "marker",
        "kind": "qa",
        "question": "What does the log say?",
        "expected_source_ids": ["log.txt"],
        "reference_contexts": ["First entry.\n\nDocument 7: second entry."],
    },
    {
        "id": "drone",
        "kind": "unanswerable",
        "question": "Do you deliver by drone?",
        "expected_answer": "We cannot say.",
        "question_type": "out_of_scope",
        "metadata": {"seed_document_id": "kb-9"},
    },
]


@pytest.mark.parametrize("tool,suffix", [("raget", ".jsonl"), ("deepeval", ".json")])
def test_ragproof_to_tool_to_ragproof_is_exact(
    cli: Cli, tmp_path: Path, tool: str, suffix: str
) -> None:
    src = tmp_path / "cases.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in NATIVE), encoding="utf-8")
    frozen = freeze(src)
    out = exported(cli, frozen, tool, tmp_path / f"export{suffix}")
    back = imported(cli, out, tool, tmp_path / "back.jsonl")
    assert [plain(c) for c in back] == [plain(c) for c in load_dataset(frozen).cases]
    if tool == "raget":
        row = jsonl(out)[0]
        assert row["reference_context"] == (
            f"Document pricing.md: {SHIPPING}\n\nDocument pricing.md: {TRACKING}"
        )
        assert row["metadata"]["seed_document_id"] == "pricing.md"
    else:
        golden = json.loads(out.read_text(encoding="utf-8"))[0]
        assert (golden["name"], golden["comments"]) == ("double rate", "from support")
        assert "name" not in golden["additional_metadata"]
