"""``ragproof generate`` options, usage errors (exit 2) and the shortfall exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from tests.generation.conftest import MODEL, write_text_corpus
from tests.generation.fake_model import FakeModel
from tests.llm_stub import StubServer, closed_url


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qa", "0"], "nothing to generate"),
        (["--qa", "2", "--types", "simple,tricky"], "unknown types 'tricky'"),
        (["--qa", "2", "--types", "simple,,double"], "comma-separated"),
        (["--qa", "-1"], "must be at least 0"),
        (["--qa", "2", "--concurrency", "0"], "must be at least 1"),
        (["--qa", "2", "--columns", "title"], "apply to a .csv or .jsonl"),
        (["--qa", "2", "--chunk-size", "10", "--chunk-overlap", "9"], "chunk_overlap"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    text_corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    base = ["generate", "--corpus", str(text_corpus), "--out", str(tmp_path / "o.jsonl")]
    try:
        code = main([*base, *args])
    except SystemExit as exc:  # argparse rejects malformed values itself
        code = int(exc.code or 0)
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_missing_corpus_out_and_model_are_usage_errors(
    text_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.jsonl"
    missing = tmp_path / "nope"
    assert main(["generate", "--corpus", str(missing), "--out", str(out), "--qa", "1"]) == 2
    assert "corpus path not found" in capsys.readouterr().err
    assert main(["generate", "--corpus", str(text_corpus), "--qa", "1"]) == 2
    assert "--out is required" in capsys.readouterr().err
    assert main(["generate", "--corpus", str(text_corpus), "--out", str(out), "--qa", "1"]) == 2
    err = capsys.readouterr().err
    assert "RAGPROOF_GEN_MODEL" in err and "--model" in err
    out.write_text("reviewed by hand\n", encoding="utf-8")
    args = ["generate", "--corpus", str(text_corpus), "--out", str(out), "--qa", "1"]
    assert main([*args, "--model", MODEL]) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "reviewed by hand\n"


def test_shortfall_is_reported_and_fails_only_when_asked(
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # where the default cache folder would appear
    corpus = write_text_corpus(
        tmp_path / "corpus",
        {
            "a.txt": "FAULT_COUNT Gift cards never expire and can be combined freely.",
            "b.txt": "Refunds are processed within fourteen days of the request.",
        },
    )
    out = tmp_path / "o.jsonl"
    args = ["generate", "--corpus", str(corpus), "--out", str(out), "--qa", "2", "-q"]
    args += ["--types", "simple", "--items-per-request", "1", "--model", MODEL]
    args += ["--api-base", llm_stub.url, "--no-cache", "--language", "de"]
    assert main(args) == 0
    assert (
        "shortfall of 1 case(s) (1 of 2 written after 1 round(s): "
        "no unused chunk left for the short kinds and types)"
    ) in capsys.readouterr().err
    summary = json.loads((tmp_path / "o.jsonl.summary.json").read_text("utf-8"))
    assert summary["discarded"] == {"count_mismatch": 1}
    assert summary["language"] == "de" and summary["language_source"] == "option"
    # --language reaches every prompt; --no-cache wrote no cache folder.
    assert all("German" in json.dumps(body) for body in llm_stub.requests)
    assert not (tmp_path / ".ragproof_cache").exists()
    assert main([*args, "--overwrite", "--fail-on-shortfall"]) == 1


def test_a_csv_knowledge_base_with_columns_and_id_column(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = tmp_path / "kb.csv"
    kb.write_text(
        "sku,title,body,price\n"
        "R-1,Router,The router blinks green when the connection is ready.,30\n"
        "M-2,Modem,The modem needs a firmware update every spring season.,20\n",
        encoding="utf-8",
    )
    out = tmp_path / "o.jsonl"
    args = ["generate", "--corpus", str(kb), "--out", str(out), "--qa", "2", "-q"]
    args += ["--columns", "title,body", "--id-column", "sku", "--types", "simple"]
    args += ["--items-per-request", "1", "--model", MODEL, "--api-base", llm_stub.url]
    args += ["--agent-description", "A helpdesk bot for ACME routers", "--no-cache"]
    assert main(args) == 0
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert sorted(r["expected_source_ids"][0] for r in records) == ["M-2", "R-1"]
    contexts = {r["reference_contexts"][0] for r in records}
    assert "Router\n\nThe router blinks green when the connection is ready." in contexts
    assert all("30" not in c for c in contexts)  # price was not a chosen column
    generation = [b for b in llm_stub.requests if "You write test questions" in json.dumps(b)]
    assert all("A helpdesk bot for ACME routers" in json.dumps(b) for b in generation)


def test_the_parser_defaults_mirror_the_library() -> None:
    from pytest_ragproof.commands import generate as command
    from pytest_ragproof.corpus import DEFAULT_MAX_FILE_BYTES
    from pytest_ragproof.corpus.chunking import DEFAULT_CHUNK_SIZE
    from pytest_ragproof.generation import QA_TYPES, GenerationSettings
    from pytest_ragproof.llm import LLMConfig

    defaults = GenerationSettings(qa=1)
    assert command.QA_TYPES == QA_TYPES == defaults.types
    assert defaults.items_per_request == command.DEFAULT_ITEMS_PER_REQUEST
    assert defaults.max_rounds == command.DEFAULT_MAX_ROUNDS
    assert command.DEFAULT_CHUNK_SIZE == DEFAULT_CHUNK_SIZE == defaults.chunk_size
    assert command.DEFAULT_MAX_FILE_BYTES == DEFAULT_MAX_FILE_BYTES
    assert LLMConfig(model="x/y").concurrency == command.DEFAULT_CONCURRENCY


def test_response_format_json_schema_is_sent_to_a_server_litellm_knows_nothing_about(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel
) -> None:
    corpus = write_text_corpus(
        tmp_path / "corpus", {"a.txt": "Refunds are processed within fourteen days."}
    )
    out = tmp_path / "o.jsonl"
    args = ["generate", "--corpus", str(corpus), "--out", str(out), "--qa", "1", "-q"]
    args += ["--types", "simple", "--items-per-request", "1", "--model", MODEL, "--no-cache"]
    args += ["--api-base", llm_stub.url, "--language", "en", "--response-format", "json_schema"]
    assert main(args) == 0
    assert llm_stub.requests
    assert all(b["response_format"]["type"] == "json_schema" for b in llm_stub.requests)


def test_max_tokens_and_instructions_reach_every_generation_request(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel
) -> None:
    """Issue 38: ``--max-tokens`` bounds every call; without it each step has a budget."""
    corpus = write_text_corpus(
        tmp_path / "corpus", {"a.txt": "Refunds are processed within fourteen days."}
    )
    base = ["generate", "--corpus", str(corpus), "--qa", "1", "-q", "--types", "simple"]
    base += ["--items-per-request", "1", "--model", MODEL, "--no-cache"]
    base += ["--api-base", llm_stub.url, "--language", "en"]
    assert main([*base, "--out", str(tmp_path / "a.jsonl")]) == 0
    assert llm_stub.requests and all(
        isinstance(b["max_tokens"], int) and b["max_tokens"] > 256 for b in llm_stub.requests
    )
    sent = llm_stub.request_count
    args = ["--out", str(tmp_path / "b.jsonl"), "--max-tokens", "900", "--instructions", "user"]
    assert main([*base, *args]) == 0
    later = llm_stub.requests[sent:]
    assert later and all(b["max_tokens"] == 900 for b in later)
    assert all(m["role"] != "system" for b in later for m in b["messages"])


def test_a_model_without_its_key_is_one_usage_error_before_any_call(
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    corpus = write_text_corpus(tmp_path / "corpus")
    out = tmp_path / "o.jsonl"
    args = ["generate", "--corpus", str(corpus), "--out", str(out), "--qa", "2", "--no-cache"]
    args += ["--model", "anthropic/claude-3-5-haiku-latest", "--api-base", llm_stub.url]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("ANTHROPIC_API_KEY") == 1 and "no API key is set" in err
    assert "Traceback" not in err
    assert llm_stub.request_count == 0 and not out.exists()


def test_a_run_where_every_call_failed_writes_nothing_and_blocks_no_rerun(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = write_text_corpus(
        tmp_path / "corpus",
        {
            "a.txt": "FAULT_401 Refunds are processed within fourteen days.",
            "b.txt": "FAULT_401 Invoices are issued monthly for each customer.",
        },
    )
    out = tmp_path / "out.jsonl"
    args = ["generate", "--corpus", str(corpus), "--out", str(out), "--qa", "2"]
    args += ["--model", MODEL, "--api-base", llm_stub.url, "--no-cache"]
    assert main(args) == 1  # the stub refuses every call (401, not retried)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]  # no empty out.jsonl
    err = capsys.readouterr().err
    assert "every model call failed" in err
    assert f"no case was generated, so nothing was written to {out}\n" in err

    # The provider fixed: the same command runs (no --overwrite needed) and writes.
    (corpus / "a.txt").write_text("Refunds are processed within fourteen days.", "utf-8")
    (corpus / "b.txt").write_text("Invoices are issued monthly for each customer.", "utf-8")
    assert main(args) == 0
    written = out.read_text(encoding="utf-8")
    assert len(written.splitlines()) == 2

    # A failing --overwrite run keeps the file it would have replaced.
    (corpus / "a.txt").write_text("FAULT_401 Refunds are processed within fourteen days.", "utf-8")
    (corpus / "b.txt").write_text("FAULT_401 Invoices are issued monthly for each one.", "utf-8")
    capsys.readouterr()
    assert main([*args, "--overwrite"]) == 1
    assert "nothing was written to" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == written


def test_a_refused_connection_is_one_error_naming_the_address_not_a_retried_500(
    tmp_path: Path, text_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = closed_url()
    out = tmp_path / "o.jsonl"
    args = ["generate", "--corpus", str(text_corpus), "--out", str(out), "--qa", "4"]
    args += ["--model", MODEL, "--api-base", address, "--cache-dir", str(tmp_path / "c")]
    assert main(args) == 1
    err = capsys.readouterr().err
    expected = f"ragproof generate: error: cannot reach {address} (connection refused)"
    assert err.count(expected) == 1, err
    assert "HTTP 500" not in err and "InternalServerError" not in err
    assert "every model call failed" not in err and "Traceback" not in err
    assert not out.exists()
