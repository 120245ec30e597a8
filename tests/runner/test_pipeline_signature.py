"""A pipeline requiring a parameter ragproof never passes is refused, not silently starved."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from pytest_ragproof import evaluate
from pytest_ragproof.dataset.models import Case, Message
from pytest_ragproof.errors import ConfigError, PipelineSignatureError
from pytest_ragproof.execution.call import bind, check_signature

CASE = Case(
    id="qa-1",
    kind="qa",
    question="What is the refund window?",
    expected_source_ids=("refunds.md",),
    conversation_history=(Message(role="user", content="hi"),),
)


def _refusal(pipeline: Any) -> PipelineSignatureError:
    with pytest.raises(PipelineSignatureError) as info:
        check_signature(pipeline)
    # bind() hands the same error to every way of running cases, as the case's error.
    call = bind(pipeline, CASE, "append")
    with pytest.raises(PipelineSignatureError) as from_bind:
        call()
    assert str(from_bind.value) == str(info.value)
    return info.value


@pytest.mark.parametrize("name", ["chat_history", "conversation", "messages"])
@pytest.mark.parametrize("default", ["", "=None"])
def test_a_conversation_parameter_is_refused_even_with_a_default(name: str, default: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"def rag(question, {name}{default}):\n    return 'x'", namespace)
    error = _refusal(namespace["rag"])
    assert error.parameters == (name,)
    message = str(error)
    assert f"the pipeline 'rag' declares the parameter '{name}', which ragproof never passes" in (
        message
    )
    assert "a default would be used for every case" in message
    assert "'history' (the case's conversation_history" in message
    assert "'case' (the Case)" in message
    assert f"Fix: rename '{name}' to 'history'" in message
    assert "default value" not in message  # a default would defeat the check
    assert isinstance(error, ConfigError)


def test_another_required_parameter_may_take_a_default() -> None:
    def rag(question: str, top_k: int) -> str:
        return question

    error = _refusal(rag)
    assert "the pipeline 'rag' requires the parameter 'top_k'" in str(error)
    assert "Fix: give 'top_k' a default value" in str(error)


def test_required_keyword_only_and_several_parameters_are_all_named() -> None:
    def rag(question: str, chat_history: list[Any], *, top_k: int, case: Case) -> str:
        return "x"

    error = _refusal(rag)
    assert error.parameters == ("chat_history", "top_k")
    assert "declares the parameters 'chat_history', 'top_k'" in str(error)


def test_no_positional_parameter_for_the_question_is_refused() -> None:
    def rag(*, question: str) -> str:
        return question

    error = _refusal(rag)
    assert "has no positional parameter for the question" in str(error)


def test_a_positional_only_history_cannot_be_passed() -> None:
    def rag(question: str, history: list[Any], /) -> str:
        return question

    assert _refusal(rag).parameters == ("history",)


def _plain(question: str) -> str:
    return question


def _with_history(question: str, history: list[dict[str, str]]) -> str:
    return f"{question}|{len(history)}"


def _with_case(question: str, *, case: Case, history: list[dict[str, str]]) -> str:
    return f"{case.id}|{len(history)}"


def _defaults(question: str, context_window: Any = None, top_k: int = 5) -> str:
    return f"{context_window}|{top_k}"


def _kwargs(question: str, **kwargs: Any) -> str:
    return ",".join(sorted(kwargs))


def _varargs(*args: Any) -> str:
    return str(len(args))


class _Chain:
    def __call__(self, question: str, history: list[dict[str, str]]) -> str:
        return str(len(history))


@pytest.mark.parametrize(
    ("pipeline", "expected"),
    [
        (_plain, "What is the refund window?"),
        (_with_history, "What is the refund window?|1"),
        (_with_case, "qa-1|1"),
        (_defaults, "None|5"),
        (_kwargs, "case,history"),
        (_varargs, "1"),
        (_Chain(), "1"),
        (functools.partial(_defaults, top_k=3), "None|3"),
        (max, "w"),  # no inspectable signature: called with the question alone
    ],
)
def test_accepted_signatures_are_called(pipeline: Any, expected: object) -> None:
    check_signature(pipeline)
    assert bind(pipeline, CASE, "append")() == expected


def test_evaluate_refuses_before_running_any_case() -> None:
    calls: list[str] = []

    def rag(question: str, messages: list[Any]) -> str:
        calls.append(question)
        return "x"

    with pytest.raises(PipelineSignatureError, match="declares the parameter 'messages'"):
        evaluate([CASE.model_dump(mode="json")], {"good": _plain, "bad": rag})
    assert calls == []


def test_the_message_names_a_fixture_closure_and_a_callable_object_plainly() -> None:
    def rag_pipeline() -> Any:
        def pipeline(question: str, chat_history: list[Any]) -> str:
            return question

        return pipeline

    assert "the pipeline 'pipeline' declares" in str(_refusal(rag_pipeline()))

    class Chain:
        def __call__(self, question: str, messages: list[Any]) -> str:
            return question

    assert "the pipeline 'Chain' declares the parameter 'messages'" in str(_refusal(Chain()))
