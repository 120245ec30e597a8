"""Judges under test: the real LLM client, litellm's real HTTP path, a scripted judge server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.judges import JUDGES, JudgeSettings
from pytest_ragproof.judges.engine import Budget, CaseJudgement, JudgeEngine, JudgeInputs
from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache
from pytest_ragproof.llm.client import load_litellm
from tests.judge_stub import ScriptedJudge
from tests.judges.project import CASES, CONFTEST
from tests.llm_stub import StubServer
from tests.pytester_projects import write_frozen

# litellm is imported here, once per test process, not inside an in-process pytester run:
# pytester drops the modules a run imported, and a litellm imported inside a run and
# dropped afterwards leaves the next in-process run without its plugins.
load_litellm()

SECRET = "sk-judge-SECRET42"
MODEL = "openai/stub-judge"

Judge = Callable[..., CaseJudgement]


@pytest.fixture(autouse=True)
def _planted_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture
def scripted(llm_stub: StubServer) -> ScriptedJudge:
    judge = ScriptedJudge()
    llm_stub.set_handler(judge)
    return judge


@pytest.fixture
def judge_case(llm_stub: StubServer, tmp_path: Path) -> Judge:
    """Judge one case with a fresh engine: ``judge_case(inputs, judges=..., **settings)``."""

    def run(
        inputs: JudgeInputs,
        *,
        judges: tuple[str, ...] = JUDGES,
        cache: bool = False,
        max_calls: int | None = None,
        budget_usd: float | None = None,
        dry_run: bool = False,
        **config: Any,
    ) -> CaseJudgement:
        settings = JudgeSettings(
            judges=frozenset(judges),
            model=MODEL,
            dry_run=dry_run,
            max_calls=max_calls,
            budget_usd=budget_usd,
        )
        llm = LLMConfig(
            **{
                "model": MODEL,
                "api_base": llm_stub.url,
                "timeout_s": 5.0,
                "max_retries": 2,
                "max_total_s": 20.0,
                "backoff_base_s": 0.01,
                "backoff_max_s": 0.05,
                **config,
            }
        )
        client = LLMClient(llm, ResponseCache(tmp_path / "cache", enabled=cache))
        engine = JudgeEngine(settings, client, Budget(max_calls, budget_usd))
        return asyncio.run(engine.judge(inputs))

    return run


def qa(
    answer: str | None = "Paris is the capital of France.",
    contexts: tuple[str, ...] | None = ("Paris is the capital of France and its largest city.",),
    reference: str | None = "Paris is the capital of France.",
    **fields: Any,
) -> JudgeInputs:
    values: dict[str, Any] = {
        "kind": "qa",
        "question": "What is the capital of France?",
        "answer": answer,
        "contexts": contexts,
        "reference": reference,
        **fields,
    }
    return JudgeInputs(**values)


@pytest.fixture
def project(
    pytester: pytest.Pytester, llm_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("RAGPROOF_JUDGE_MODEL", raising=False)
    write_frozen(pytester, CASES)
    pytester.makeconftest(CONFTEST)
    return pytester
