"""``ragproof import``: every tool's fixture files become cases that validate and freeze."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof import freeze, load_dataset
from pytest_ragproof.dataset.models import Case
from pytest_ragproof.metrics.outputs import content_id
from tests.interop.conftest import Ran

Cli = Callable[..., Ran]


def said(ran: Ran) -> str:
    """The report with runs of spaces collapsed (its columns are aligned)."""
    return " ".join(ran.out.split())


def imported(cli: Cli, tmp_path: Path, *args: str | Path) -> tuple[Ran, list[Case]]:
    out = tmp_path / "imported.jsonl"
    ran = cli("import", *args, "-o", out)
    assert ran.code == 0, ran.err
    assert cli("validate", out).code == 0
    frozen = freeze(out)
    cases = list(load_dataset(frozen).cases)
    assert [c.id for c in cases] == [c.id for c in load_dataset(out).cases]
    return ran, cases


def test_raget_maps_question_types_history_and_out_of_scope(
    cli: Cli, files: Path, tmp_path: Path
) -> None:
    ran, cases = imported(
        cli,
        tmp_path,
        "--from",
        "raget",
        files / "raget_testset.jsonl",
        "--corpus",
        files / "corpus",
    )
    by_type = {c.question_type: c for c in cases}
    assert [c.question_type for c in cases] == [
        "simple",
        "complex",
        "distracting",
        "conversational",
        "out_of_scope",
    ]
    assert [c.id[-2:] for c in cases] == ["01", "02", "03", "04", "05"]
    oos = by_type["out_of_scope"]
    assert oos.kind == "unanswerable" and oos.expected_answer is None
    assert not oos.expected_source_ids and not oos.reference_contexts
    assert by_type["simple"].expected_source_ids == ("shipping.md",)
    assert by_type["complex"].expected_source_ids == ("returns.txt",)
    # "Document <id>: " prefixes are split off; two passages, both in shipping.md
    distracting = by_type["distracting"]
    assert len(distracting.reference_contexts) == 2
    assert not any(t.startswith("Document ") for t in distracting.reference_contexts)
    conv = by_type["conversational"]
    assert [m.role for m in conv.conversation_history] == ["user", "assistant"]
    assert conv.metadata["topic"] == "Returns"
    assert conv.metadata["seed_document_id"] == "2d9f0c11-returns"
    assert all(c.metadata["imported_from"] == "raget" for c in cases)
    assert "wrote 5 case(s)" in ran.out and "qa 4, unanswerable 1" in ran.out
    assert "metadata.question_type 'out of scope' -> kind unanswerable: 1" in ran.out
    assert "expected_source_ids: 4 from the corpus (document ids)" in ran.out
    assert "--ragproof-source-match=document" in ran.out
    assert "reference_answer 1: an out-of-scope answer describes the refusal" in said(ran)


def test_raget_without_corpus_uses_seed_document_ids(cli: Cli, files: Path, tmp_path: Path) -> None:
    ran, cases = imported(cli, tmp_path, "--from", "raget", files / "raget_testset.jsonl")
    assert cases[0].expected_source_ids == ("7c1e4b2a-shipping",)
    assert "expected_source_ids: 4 from metadata.seed_document_id" in ran.out
    assert "note: RAGET's seed_document_id is the id of the knowledge-base row" in ran.out


@pytest.mark.parametrize(
    "name", ["ragas_testset.csv", "ragas_testset.jsonl", "ragas_old_testset.json"]
)
def test_ragas_files_resolve_reference_contexts_in_the_corpus(
    cli: Cli, files: Path, tmp_path: Path, name: str
) -> None:
    ran, cases = imported(
        cli, tmp_path, "--from", "ragas", files / name, "--corpus", files / "corpus"
    )
    assert all(c.kind == "qa" and c.expected_answer for c in cases)
    assert all(c.expected_source_ids for c in cases)
    assert "not found in the corpus" not in ran.out
    if name == "ragas_testset.csv":
        # the Python list literals of pandas/csv, and a passage whose line breaks differ
        # from the corpus file's (found after collapsing whitespace)
        assert [c.expected_source_ids for c in cases] == [
            ("shipping.md",),
            ("returns.txt",),
            ("shipping.md",),
        ]
        assert cases[0].reference_contexts[0].startswith("# Shipping policy\n\nWe offer")
        assert cases[0].tags == ("synthesizer:single_hop_specifc_query_synthesizer",)
    if name == "ragas_testset.jsonl":
        conv = cases[1]
        assert conv.question_type == "conversational"
        assert [m.role for m in conv.conversation_history] == ["user", "assistant"]
        assert conv.question == "How many days do I have?"
    if name == "ragas_old_testset.json":
        assert "ground_truth -> expected_answer: 2" in said(ran)
        assert cases[1].tags == ("evolution:multi_context",)
        assert cases[1].expected_source_ids == ("shipping.md",)
        assert "episode_done 2: a Ragas generation detail" in ran.out


def test_without_a_corpus_reference_texts_get_content_ids_and_a_note(
    cli: Cli, files: Path, tmp_path: Path
) -> None:
    ran, cases = imported(cli, tmp_path, "--from", "ragas", files / "ragas_testset.csv")
    second = cases[1]
    assert second.expected_source_ids == tuple(content_id(t) for t in second.reference_contexts)
    assert "expected_source_ids: 3 from the reference texts (content ids)" in ran.out
    assert "retrieval metrics need document ids: re-import with --corpus PATH" in ran.out


def test_unresolved_passages_are_counted_by_line_without_their_text(
    cli: Cli, files: Path, tmp_path: Path
) -> None:
    secret = "A passage that is in no corpus file SECRET-9d1"
    rows = [
        {"user_input": "Q one?", "reference": "A.", "reference_contexts": [secret]},
        {
            "user_input": "Q two?",
            "reference_contexts": ["Returns are accepted within 30 days of delivery.", secret],
        },
    ]
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ran, cases = imported(cli, tmp_path, "--from", "ragas", src, "--corpus", files / "corpus")
    assert "2 reference context(s) not found in the corpus (lines 1, 2)" in ran.out
    assert secret not in ran.out + ran.err
    # the unresolved first record falls back to the content id; the second keeps its hit
    assert cases[0].expected_source_ids == (content_id(secret),)
    assert cases[1].expected_source_ids == ("returns.txt",)
    assert "1 from the reference texts (content ids), 1 from the corpus (document ids)" in ran.out
    assert "1 qa case(s) have no reference text found in the corpus" in ran.out


@pytest.mark.parametrize("name", ["deepeval_goldens.json", "deepeval_goldens.csv"])
def test_deepeval_goldens(cli: Cli, files: Path, tmp_path: Path, name: str) -> None:
    ran, cases = imported(
        cli, tmp_path, "--from", "deepeval", files / name, "--corpus", files / "corpus"
    )
    assert cases[0].metadata["topic"] == "Shipping policy"
    assert cases[0].expected_source_ids == ("shipping.md",)
    assert cases[1].expected_source_ids == ("returns.txt",)
    assert cases[1].metadata["name"] in ("refunds", "returns")
    assert "expected_output -> expected_answer: 2" in said(ran)
    if name.endswith(".csv"):  # DeepEval joins context passages with "|"
        assert len(cases[1].reference_contexts) == 2
    else:
        assert "actual_output 1: an earlier run's output" in said(ran)
        assert "retrieval_context 1: what a pipeline retrieved in an earlier run" in ran.out


@pytest.mark.parametrize("name", ["promptfoo_tests.yaml", "promptfoo_tests.csv"])
def test_promptfoo_tests_with_var_mapping(cli: Cli, files: Path, tmp_path: Path, name: str) -> None:
    ran, cases = imported(
        cli,
        tmp_path,
        "--from",
        "promptfoo",
        files / name,
        "--var",
        "question=query",
        "--var",
        "reference_contexts=context",
        "--corpus",
        files / "corpus",
    )
    assert cases[0].question == "What is the flat shipping rate below $50?"
    assert cases[0].expected_answer == "$5.99"
    assert cases[0].expected_source_ids == ("shipping.md",)
    assert cases[0].metadata["description"] == "flat shipping rate"
    if name.endswith(".yaml"):
        assert cases[1].expected_answer == "30 days"
        assert cases[1].metadata["owner"] == "support"
        assert "vars.locale 2: a var not named by --var" in said(ran)  # from defaultTest
        assert "assert llm-rubric 1: an assertion with no ragproof equivalent" in ran.out
    else:
        assert cases[1].expected_answer == "Canada and Mexico"  # plain __expected: equals


def test_promptfoo_needs_the_question_var(cli: Cli, files: Path, tmp_path: Path) -> None:
    ran = cli(
        "import", "--from", "promptfoo", files / "promptfoo_tests.yaml", "-o", tmp_path / "o.jsonl"
    )
    assert ran.code == 1
    assert (
        "--var question=NAME" in ran.err and "(vars in the file: context, locale, query)" in ran.err
    )
    assert not (tmp_path / "o.jsonl").exists()
    assert (
        cli(
            "import",
            "--from",
            "ragas",
            files / "ragas_testset.csv",
            "-o",
            tmp_path / "o.jsonl",
            "--var",
            "question=q",
        ).code
        == 2
    )


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_an_existing_file_is_never_replaced_unless_an_import_wrote_it(
    cli: Cli, files: Path, tmp_path: Path
) -> None:
    src = files / "ragas_testset.csv"
    mine = tmp_path / "notes.jsonl"
    mine.write_text('{"kind": "qa", "question": "mine"}\n', encoding="utf-8")
    ran = cli("import", "--from", "ragas", src, "-o", mine)
    assert ran.code == 2 and "was not written by ragproof import" in ran.err
    assert mine.read_text(encoding="utf-8") == '{"kind": "qa", "question": "mine"}\n'
    out = tmp_path / "out.jsonl"
    assert cli("import", "--from", "ragas", src, "-o", out).code == 0
    first = out.read_text(encoding="utf-8")
    assert cli("import", "--from", "ragas", src, "-o", out, "--corpus", files / "corpus").code == 0
    assert out.read_text(encoding="utf-8") != first  # replaced: it was an earlier import
    assert cli("import", "--from", "ragas", src, "-o", src).code == 2


def test_bad_records_name_file_and_line_never_the_value(cli: Cli, tmp_path: Path) -> None:
    secret = "SECRET-question-4b2"
    src = tmp_path / "raget.jsonl"
    src.write_text(
        json.dumps({"question": secret, "reference_answer": "a", "reference_context": "c"})
        + "\n{not json\n",
        encoding="utf-8",
    )
    ran = cli("import", "--from", "raget", src, "-o", tmp_path / "o.jsonl")
    assert ran.code == 1
    assert f"{src}, line 2: invalid JSON" in ran.err and secret not in ran.err
    _write(src, [{"question": secret, "reference_answer": "a"}])  # no context, no seed id
    ran = cli("import", "--from", "raget", src, "-o", tmp_path / "o.jsonl")
    assert ran.code == 1 and "no record could be imported" in ran.err
    assert "1: no reference context and no source id" in ran.err and secret not in ran.err
    _write(
        src,
        [
            {
                "question": "fine?",
                "reference_context": "c",
                "metadata": {"question_type": "simple"},
            },
            {
                "question": secret,
                "reference_context": "c2",
                "metadata": {"question_type": "conversational"},
            },
        ],
    )
    ran = cli("import", "--from", "raget", src, "-o", tmp_path / "o.jsonl")
    assert ran.code == 1
    assert f"{src}, line 2: the imported case is invalid: " in ran.err
    assert "conversation_history" in ran.err and secret not in ran.err + ran.out
    assert "wrote nothing" in ran.err and not (tmp_path / "o.jsonl").exists()
    _write(src, [{"question": 7}])
    ran = cli("import", "--from", "raget", src, "-o", tmp_path / "o.jsonl")
    assert ran.code == 1 and "line 1: question is a int, not text" in ran.err


def test_records_without_sources_and_duplicates_are_dropped_and_reported(
    cli: Cli, tmp_path: Path
) -> None:
    rows = [
        {"input": "Where?", "expected_output": "Here.", "context": ["Here it is."]},
        {"input": "No context?", "expected_output": "None."},
        {"input": "Where?", "expected_output": "Here.", "context": ["Here it is."]},
        {"input": "", "expected_output": "x"},
        {"scenario": "a chat", "turns": [{"role": "user", "content": "hi"}]},
    ]
    src = tmp_path / "goldens.json"
    src.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    ran, cases = imported(cli, tmp_path, "--from", "deepeval", src)
    assert len(cases) == 1
    assert "read 5 record(s)" in ran.out and "dropped records: 4" in ran.out
    assert "1: no reference context and no source id" in ran.out
    assert "1: the same content as an earlier record (line 13)" in ran.out
    assert "1: no question (input is empty) (line 20)" in ran.out
    assert "expected_source_ids: 1 from the reference texts" in ran.out
    assert "1: a multi-turn golden (scenario, turns) has no single question" in ran.out


def test_promptfoo_list_and_file_questions_are_dropped_and_bad_vars_are_usage_errors(
    cli: Cli, tmp_path: Path
) -> None:
    src = tmp_path / "tests.yaml"
    src.write_text(
        "- vars:\n    q: [one, two]\n    ctx: c\n"
        "- vars:\n    q: file://questions.txt\n    ctx: c\n"
        "- vars:\n    q: Kept?\n    ctx: c\n    doc: shipping.md\n",
        encoding="utf-8",
    )
    out = tmp_path / "o.jsonl"
    args = ("import", "--from", "promptfoo", src, "-o", out, "--var", "question=q")
    ran = cli(*args, "--var", "expected_source_ids=doc")
    assert ran.code == 0, ran.err
    text = " ".join(ran.out.split())
    assert "1: vars.q is a list (promptfoo runs one test per value" in text and "(line 1)" in text
    assert "1: vars.q is loaded from a file by promptfoo (file://); inline it (line 4)" in text
    assert "vars.doc -> expected_source_ids: 1" in text
    assert load_dataset(out).cases[0].expected_source_ids == ("shipping.md",)
    ran = cli(*args, "--var", "answer=ctx")
    assert ran.code == 2 and "--var 'answer=ctx': expected FIELD=VAR" in ran.err


def test_promptfoo_yaml_without_pyyaml_names_the_extra(
    cli: Cli, files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)
    ran = cli(
        "import", "--from", "promptfoo", files / "promptfoo_tests.yaml", "-o",
        tmp_path / "o.jsonl", "--var", "question=query",
    )  # fmt: skip
    assert ran.code == 1
    assert "pip install 'pytest-ragproof[interop]'" in ran.err
