"""Top-up rounds: discards are made up from unused chunks, round by round, through the
CLI and litellm's real HTTP path; ``--max-rounds``, a corpus that runs out, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.corpus.chunking import chunk_corpus
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.generation import (
    GenerationSettings,
    chunk_order,
    documents_from_rows,
    generate,
    plan,
)
from pytest_ragproof.generation.sampling import Need, plan_requests, plan_top_up
from tests.generation.conftest import MODEL, MakeClient, write_text_corpus
from tests.generation.fake_model import FakeModel
from tests.generation.test_resume_privacy import _child
from tests.llm_stub import StubServer

OK = {
    "ok1.txt": "Refunds are processed within fourteen days of the request.",
    "ok2.txt": "Invoices are issued monthly and list every subscription separately.",
    "ok3.txt": "Parcels travel with regional carriers across the whole country.",
}
#: Both DUPKEY documents get the same question (the second is a near-duplicate);
#: the malformed one gets prose twice (invalid output after the repair).
BAD = {
    "dup1.txt": "DUPKEY The first document about duplicate policy wording.",
    "dup2.txt": "DUPKEY The second document about duplicate policy wording.",
    "malformed.txt": "FAULT_MALFORMED The router resets after holding the button.",
}


def _settings(n: int, seed: int, max_rounds: int = 3) -> GenerationSettings:
    return GenerationSettings(
        qa=n, types=("simple",), items_per_request=1, seed=seed, max_rounds=max_rounds
    )


def _seed_where(corpus: Path, n: int, first: set[str]) -> int:
    """A seed whose round 1 (``n`` one-item requests) sends exactly the documents ``first``."""
    for seed in range(500):
        docs = {r.chunk.document_id for r in plan(corpus, _settings(n, seed)).requests}
        if docs == first:
            return seed
    raise AssertionError("no such seed")


@pytest.fixture
def shortfall_corpus(tmp_path: Path) -> tuple[Path, int]:
    """Six one-chunk documents and a seed whose 3 planned requests all hit a bad one."""
    corpus = write_text_corpus(tmp_path / "corpus", {**BAD, **OK})
    return corpus, _seed_where(corpus, 3, set(BAD))


def _cli(corpus: Path, out: Path, stub: StubServer, cache: Path, seed: int, *extra: str) -> int:
    args = ["generate", "--corpus", str(corpus), "--out", str(out), "--qa", "3"]
    args += ["--types", "simple", "--items-per-request", "1", "--seed", str(seed)]
    args += ["--model", MODEL, "--api-base", stub.url, "--cache-dir", str(cache), *extra]
    return main(args)


def test_a_second_round_tops_up_duplicates_and_invalid_output(
    shortfall_corpus: tuple[Path, int],
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    corpus, seed = shortfall_corpus
    out = tmp_path / "out.jsonl"
    assert _cli(corpus, out, llm_stub, tmp_path / "cache", seed) == 0
    err = capsys.readouterr().err
    assert "generate: round 2 tops up 2 item(s) with 2 request(s)" in err
    assert "generate: 5/5 requests" in err
    assert "rounds: 2 of at most 3 (5 requests; written after each: 1, 3); " in err
    assert "stopped: every requested count was met" in err
    assert "shortfall of" not in err

    summary = json.loads((tmp_path / "out.jsonl.summary.json").read_text("utf-8"))
    assert (summary["requested"], summary["written"], summary["shortfall"]) == (3, 3, 0)
    assert summary["discarded"] == {"invalid_output": 1, "duplicate": 1}
    assert summary["settings"]["max_rounds"] == 3
    assert summary["planned_requests"] == 3
    assert summary["rounds"] == {
        "run": 2,
        "stopped": "complete",
        "requests": 5,
        "by_round": [
            {"round": 1, "requests": 3, "items": 3, "written": 1, "shortfall": 2},
            {"round": 2, "requests": 2, "items": 2, "written": 3, "shortfall": 0},
        ],
        "out_of_chunks": [],
    }
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r["id"] for r in records] == [f"gen-{seed}-qa-{n}" for n in (1, 2, 3)]
    docs = [r["provenance"]["document_id"] for r in records]
    assert docs[0] in {"dup1.txt", "dup2.txt"}  # round 1's case keeps its place and id
    assert len(set(docs[1:]) & set(OK)) == 2  # round 2 asked two chunks never sent before
    # 5 generation requests (+1 repair of the malformed one); 4 verifications.
    assert fake.calls["gen"] == 6 and fake.calls["verify_qa"] == 4


def test_max_rounds_1_keeps_the_first_round_and_reports_the_shortfall(
    shortfall_corpus: tuple[Path, int],
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    corpus, seed = shortfall_corpus
    one = tmp_path / "one.jsonl"
    assert _cli(corpus, one, llm_stub, tmp_path / "c1", seed, "--max-rounds", "1") == 0
    err = capsys.readouterr().err
    assert "round 2" not in err
    assert "rounds: 1 of at most 1 (3 requests; written after each: 1); " in err
    assert "shortfall of 2 case(s) (1 of 3 written after 1 round(s): --max-rounds reached)" in err
    assert fake.calls["gen"] == 3 + 1  # the plan and one repair: no top-up request
    summary = json.loads((tmp_path / "one.jsonl.summary.json").read_text("utf-8"))
    assert summary["shortfall"] == 2
    assert summary["rounds"]["stopped"] == "max_rounds" and summary["rounds"]["run"] == 1
    args = ["--max-rounds", "1", "--fail-on-shortfall", "-q"]
    assert _cli(corpus, tmp_path / "x.jsonl", llm_stub, tmp_path / "c1", seed, *args) == 1

    # The first round's case is the same line in a run with top-up.
    full = tmp_path / "full.jsonl"
    assert _cli(corpus, full, llm_stub, tmp_path / "c1", seed, "-q") == 0
    first = one.read_text("utf-8").splitlines()
    assert full.read_text("utf-8").splitlines()[:1] == first
    for bad in ("0", "x"):
        with pytest.raises(SystemExit) as exc:
            _cli(corpus, tmp_path / "y.jsonl", llm_stub, tmp_path / "c1", seed, "--max-rounds", bad)
        assert exc.value.code == 2
    assert "--max-rounds" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="max_rounds must be an integer of at least 1"):
        _settings(1, 0, max_rounds=0)


def test_a_corpus_that_runs_out_stops_early_with_a_clear_shortfall(
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dups = {f"dup{i}.txt": f"DUPKEY Document {i} about duplicate policy wording." for i in "abc"}
    corpus = write_text_corpus(tmp_path / "corpus", {**dups, "ok1.txt": OK["ok1.txt"]})
    corpus = write_text_corpus(corpus, {"ok2.txt": OK["ok2.txt"]})
    seed = next(
        s
        for s in range(500)
        if set(dups) <= {r.chunk.document_id for r in plan(corpus, _settings(4, s)).requests}
    )
    out = tmp_path / "out.jsonl"
    args = ["generate", "--corpus", str(corpus), "--out", str(out), "--qa", "4", "--seed"]
    args += [str(seed), "--types", "simple", "--items-per-request", "1", "--model", MODEL]
    args += ["--api-base", llm_stub.url, "--no-cache", "--max-rounds", "5"]
    assert main(args) == 0
    err = capsys.readouterr().err
    # Round 1: one dup and one ok written; round 2 gets the last unused chunk only.
    assert "generate: round 2 tops up 1 item(s) with 1 request(s)" in err
    assert "round 3" not in err
    assert "out of chunks: qa simple" in err
    assert (
        "shortfall of 1 case(s) (3 of 4 written after 2 round(s): "
        "no unused chunk left for the short kinds and types)"
    ) in err
    summary = json.loads((tmp_path / "out.jsonl.summary.json").read_text("utf-8"))
    rounds = summary["rounds"]
    assert rounds["stopped"] == "corpus_exhausted" and rounds["run"] == 2
    assert [r["shortfall"] for r in rounds["by_round"]] == [2, 1]
    assert rounds["out_of_chunks"] == [{"kind": "qa", "question_type": "simple"}]
    assert summary["discarded"] == {"duplicate": 2} and summary["shortfall"] == 1
    # No chunk is sent twice to the same generator.
    gen_bodies = [b for b in llm_stub.requests if "You write test questions" in json.dumps(b)]
    assert len(gen_bodies) == 5 == len({json.dumps(b["messages"]) for b in gen_bodies})


def test_provider_failures_are_not_topped_up(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel, make_client: MakeClient
) -> None:
    corpus = write_text_corpus(
        tmp_path / "corpus",
        {"e500.txt": "FAULT_500 Batteries are covered for twelve months.", **OK},
    )
    seed = _seed_where(corpus, 1, {"e500.txt"})
    result = generate(corpus, _settings(1, seed), client=make_client(enabled=False))
    rounds = result.summary["rounds"]
    assert rounds["stopped"] == "provider_errors" and rounds["run"] == 1
    assert result.summary["discarded"] == {"provider_error": 1} and result.shortfall == 1


def test_same_seed_and_cache_give_identical_files_and_a_cached_top_up_calls_nothing(
    shortfall_corpus: tuple[Path, int],
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
) -> None:
    corpus, seed = shortfall_corpus
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert _cli(corpus, a, llm_stub, tmp_path / "ca", seed, "-q") == 0
    assert _cli(corpus, b, llm_stub, tmp_path / "cb", seed, "-q") == 0
    assert a.read_bytes() == b.read_bytes()
    summary_a = (tmp_path / "a.jsonl.summary.json").read_bytes()
    assert (tmp_path / "b.jsonl.summary.json").read_bytes() == summary_a
    assert json.loads(summary_a)["rounds"]["run"] == 2

    sent = llm_stub.request_count
    args = ["generate", "--corpus", str(corpus), "--qa", "3", "--types", "simple", "-q"]
    args += ["--items-per-request", "1", "--seed", str(seed), "--model", MODEL]
    args += ["--api-base", llm_stub.url, "--cache-dir", str(tmp_path / "ca")]
    cached = _child(*args, "--out", str(tmp_path / "c.jsonl"))
    assert cached["rc"] == 0 and cached["litellm"] is False
    assert llm_stub.request_count == sent
    assert (tmp_path / "c.jsonl").read_bytes() == a.read_bytes()
    summary_c = json.loads((tmp_path / "c.jsonl.summary.json").read_text("utf-8"))
    assert summary_c["rounds"] == json.loads(summary_a)["rounds"]


def test_top_up_prefers_chunks_no_request_sent_then_ones_its_generator_was_not_sent() -> None:
    corpus = documents_from_rows([{"text": f"Document {i} about topic {i}."} for i in range(4)])
    chunks = chunk_corpus(corpus.documents)
    assert len(chunks) == 4
    round1 = plan_requests(
        chunks, [Need("qa", "simple", 2), Need("qa", "complex", 1)], seed=3, items_per_request=1
    )
    sent_ids = {r.chunk.id for r in round1}
    needs = [Need("qa", "complex", 2), Need("qa", "simple", 4)]
    requests, unplanned = plan_top_up(
        chunks, needs, seed=3, items_per_request=1, sent=round1, first_position=3
    )
    assert [r.position for r in requests] == list(range(3, 3 + len(requests)))
    complex_ids = [r.chunk.id for r in requests if r.question_type == "complex"]
    simple_ids = [r.chunk.id for r in requests if r.question_type == "simple"]
    # complex: the one chunk nobody was sent, then one that only simple was sent.
    assert len(complex_ids) == 2 and complex_ids[0] not in sent_ids
    assert complex_ids[1] in {r.chunk.id for r in round1 if r.question_type == "simple"}
    # simple: the chunks simple was not sent (complex's one and the fresh one) -- two of four.
    simple_sent = {r.chunk.id for r in round1 if r.question_type == "simple"}
    assert len(simple_ids) == 2 and not set(simple_ids) & simple_sent
    assert unplanned == {("qa", "simple"): 2}


def test_a_later_round_never_displaces_an_earlier_case(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel, make_client: MakeClient
) -> None:
    # Round 1: the qa request hits the malformed document, the injection one a
    # DUPKEY document (kept). Round 2's qa request hits the other DUPKEY document:
    # its question is a near-duplicate of the injection case written before, so it
    # is the one discarded (though qa cases come first in the output), and round 3
    # makes it up from an ok document.
    corpus = write_text_corpus(tmp_path / "corpus", {**BAD, **OK})
    dups = {"dup1.txt", "dup2.txt"}

    def fits(seed: int) -> bool:
        the_plan = plan(corpus, GenerationSettings(qa=1, injection=1, types=("simple",), seed=seed))
        order = [c.document_id for c in chunk_order(the_plan.chunks, seed)]
        docs = [r.chunk.document_id for r in the_plan.requests]
        return docs == order[:2] and order[0] == "malformed.txt" and set(order[1:3]) == dups

    seed = next(s for s in range(500) if fits(s))
    settings = GenerationSettings(
        qa=1, injection=1, types=("simple",), items_per_request=1, seed=seed
    )
    result = generate(corpus, settings, client=make_client(enabled=False))
    summary = result.summary
    assert [r["written"] for r in summary["rounds"]["by_round"]] == [1, 1, 2]
    assert summary["discarded"] == {"invalid_output": 1, "duplicate": 1}
    qa, injection = result.cases
    assert injection.id == f"gen-{seed}-injection-1"
    assert injection.provenance is not None and injection.provenance.document_id in dups
    assert qa.id == f"gen-{seed}-qa-1"
    assert qa.provenance is not None and qa.provenance.document_id in OK
