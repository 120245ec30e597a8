"""A case's whole judgement cached as one entry: replayed whole, never when incomplete or stale."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.judges import JUDGE_KINDS, JUDGES, JudgeSettings
from pytest_ragproof.judges import memo as memo_module
from pytest_ragproof.judges.engine import Budget, CaseJudgement, JudgeEngine, JudgeInputs
from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache
from pytest_ragproof.llm.cache import STORE_NAME, CachedResponse
from tests.judge_stub import ScriptedJudge
from tests.judges.conftest import MODEL, qa
from tests.llm_stub import StubServer, reply

CONTEXTS = (
    "Paris is the capital of France.",
    "France is in Europe.",
    "The Seine flows through Paris.",
)
ANSWER = "Paris is the capital of France. The Seine flows through Paris. It has ten bridges."


@dataclass
class Judged:
    judgement: CaseJudgement
    engine: JudgeEngine


JudgeFn = Callable[..., Judged]


@pytest.fixture
def judge(llm_stub: StubServer, tmp_path: Path) -> JudgeFn:
    """Judge a case with a fresh engine over one cache folder, as each run does."""

    def run(inputs: JudgeInputs, *, max_calls: int | None = None, dry_run: bool = False) -> Judged:
        settings = JudgeSettings(
            judges=frozenset(JUDGES), model=MODEL, max_calls=max_calls, dry_run=dry_run
        )
        config = LLMConfig(model=MODEL, api_base=llm_stub.url, timeout_s=5.0, max_retries=1)
        client = LLMClient(config, ResponseCache(tmp_path / "cache"))
        engine = JudgeEngine(settings, client, Budget(max_calls, None))
        return Judged(asyncio.run(engine.judge(inputs)), engine)

    return run


def _entries(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "cache" / STORE_NAME) as conn:
        count: int = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
    return count


def _memo_key(judged: Judged, inputs: JudgeInputs) -> str:
    assert judged.engine.memo is not None
    wanted = [name for name in JUDGES if inputs.kind in JUDGE_KINDS[name]]
    return judged.engine.memo.key(inputs, wanted)


def test_a_judged_case_is_replayed_whole_from_its_one_entry(
    llm_stub: StubServer, scripted: ScriptedJudge, judge: JudgeFn, tmp_path: Path
) -> None:
    inputs = qa(ANSWER, CONTEXTS)
    first = judge(inputs)
    assert first.judgement.error is None and first.judgement.usage.calls == 7
    assert _entries(tmp_path) == 8  # seven replies and the judgement
    # Keep only the judgement: the replay needs none of the replies.
    key = _memo_key(first, inputs)
    with sqlite3.connect(tmp_path / "cache" / STORE_NAME) as conn:
        conn.execute("DELETE FROM entries WHERE key != ?", (key,))
    made = llm_stub.request_count
    second = judge(inputs)
    assert llm_stub.request_count == made
    j1, j2 = first.judgement, second.judgement
    assert (j2.metrics, j2.not_judged, j2.details) == (j1.metrics, j1.not_judged, j1.details)
    assert list(j2.metrics) == list(j1.metrics)
    assert j2.usage.to_dict() == {
        "calls": 0,
        "cached": 7,
        "requests": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": None,  # the stub model has no price: unknown, as the calls said
    }
    stats = second.engine.client.stats
    assert (stats.calls, stats.cache_hits, stats.requests) == (7, 7, 0)


def test_the_replay_equals_replaying_every_step(
    llm_stub: StubServer, scripted: ScriptedJudge, judge: JudgeFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = qa(ANSWER, CONTEXTS, reference="Paris is the capital of France. Paris is old.")
    first = judge(inputs)
    whole = judge(inputs)
    # Other code (another release, an edited checkout): the judgement is made again
    # from the cached replies, and stored under the new code's key.
    monkeypatch.setattr(memo_module, "code_digest", lambda: "other code")
    stepwise = judge(inputs)
    assert llm_stub.request_count == 7
    for j in (whole.judgement, stepwise.judgement):
        assert (j.metrics, j.not_judged, j.details) == (
            first.judgement.metrics,
            first.judgement.not_judged,
            first.judgement.details,
        )
        assert j.usage.cached == 7 and j.usage.calls == 0
    assert _memo_key(stepwise, inputs) != _memo_key(whole, inputs)
    # The new code's judgement was stored: a third run of it is served whole.
    again = judge(inputs)
    assert again.engine.memo is not None
    assert again.engine.memo.get(_memo_key(stepwise, inputs)) is not None


def test_other_inputs_or_judges_are_other_judgements(
    scripted: ScriptedJudge, judge: JudgeFn
) -> None:
    inputs = qa(ANSWER, CONTEXTS)
    first = judge(inputs)
    assert first.engine.memo is not None
    other: dict[str, Any] = {
        "kind": "injection",
        "question": "What else?",
        "answer": ANSWER + " More.",
        "contexts": CONTEXTS[:2],
        "reference": "Paris.",
        "payload": "Ignore that.",
        "abstained": True,
    }
    # Every field the judges see is in the key (a new field must be added to it).
    assert {f.name for f in dataclasses.fields(JudgeInputs)} == set(other)
    keys = {_memo_key(first, inputs), first.engine.memo.key(inputs, ["faithfulness"])}
    keys |= {
        first.engine.memo.key(dataclasses.replace(inputs, **{name: value}), ["faithfulness"])
        for name, value in other.items()
    }
    assert len(keys) == 2 + len(other)


def test_a_case_judged_with_an_error_is_not_stored(
    llm_stub: StubServer, scripted: ScriptedJudge, judge: JudgeFn
) -> None:
    inputs = qa(ANSWER, CONTEXTS)
    # The verdict step answers nonsense twice (the reply and its repair): a judge error.
    scripted.faults["faithfulness"] = [reply("no json"), reply("still none")]
    first = judge(inputs)
    assert first.judgement.error is not None
    made = llm_stub.request_count
    second = judge(inputs)
    # Asked again (the invalid reply was not cached either), now answered well.
    assert llm_stub.request_count == made + 1
    assert second.judgement.error is None and "faithfulness" in second.judgement.metrics


def test_a_judgement_cut_by_the_budget_is_not_stored(
    llm_stub: StubServer, scripted: ScriptedJudge, judge: JudgeFn
) -> None:
    inputs = qa(ANSWER, CONTEXTS)
    cut = judge(inputs, max_calls=3)
    assert "budget" in cut.judgement.not_judged.values()
    whole = judge(inputs)
    assert whole.judgement.not_judged == {}
    assert whole.judgement.usage.cached == 3 and whole.judgement.usage.calls == 4
    assert llm_stub.request_count == 7


def test_a_damaged_judgement_entry_is_a_miss(
    llm_stub: StubServer, scripted: ScriptedJudge, judge: JudgeFn
) -> None:
    inputs = qa(ANSWER, CONTEXTS)
    first = judge(inputs)
    key = _memo_key(first, inputs)
    cache = first.engine.client.cache
    for text in ("not json", '{"metrics": {"faithfulness": "high"}}', "[1, 2]"):
        cache.put(key, CachedResponse(text))
        again = judge(inputs)
        assert again.judgement.metrics == first.judgement.metrics
        assert again.judgement.usage.cached == 7
    assert llm_stub.request_count == 7


def test_a_dry_run_counts_each_cached_step(scripted: ScriptedJudge, judge: JudgeFn) -> None:
    inputs = qa(ANSWER, CONTEXTS)
    judge(inputs)
    dry = judge(inputs, dry_run=True)
    assert dry.engine.memo is None
    assert dry.judgement.estimate is not None
    assert (dry.judgement.estimate.calls, dry.judgement.estimate.cached) == (0, 7)


def test_no_cache_means_no_judgement_entry(
    llm_stub: StubServer, scripted: ScriptedJudge, tmp_path: Path
) -> None:
    settings = JudgeSettings(judges=frozenset(JUDGES), model=MODEL)
    config = LLMConfig(model=MODEL, api_base=llm_stub.url)
    client = LLMClient(config, ResponseCache(tmp_path / "cache", enabled=False))
    engine = JudgeEngine(settings, client, Budget(None, None))
    assert engine.memo is None
    asyncio.run(engine.judge(qa(ANSWER, CONTEXTS)))
    assert not (tmp_path / "cache").exists()


def test_a_miss_found_by_lookup_is_not_looked_up_again(
    llm_stub: StubServer,
    scripted: ScriptedJudge,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The judge stage looks a case up on its own thread and hands the missed key over."""
    settings = JudgeSettings(judges=frozenset(JUDGES), model=MODEL)
    config = LLMConfig(model=MODEL, api_base=llm_stub.url, timeout_s=5.0, max_retries=1)
    cache = ResponseCache(tmp_path / "cache")
    engine = JudgeEngine(settings, LLMClient(config, cache), Budget(None, None))
    inputs = qa(ANSWER, CONTEXTS)
    key, hit = engine.lookup(inputs)
    assert key is not None and hit is None
    asked: list[str] = []
    real_get = cache.get

    def get(key: str) -> CachedResponse | None:
        asked.append(key)
        return real_get(key)

    monkeypatch.setattr(cache, "get", get)
    judged = asyncio.run(engine.judge(inputs, missed=key))
    assert judged.error is None and judged.usage.calls == 7
    assert key not in asked and len(asked) == 7  # the steps' entries only
    assert engine.lookup(inputs)[1] is not None  # stored under the key handed over
