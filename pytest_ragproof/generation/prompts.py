"""The built-in question generators: one per question type, prompts versioned.

Every request sends two messages: a system message (role, rules, language, the
assistant's description when given, the reply shape) and a user message (the
question type with an example, the exact number of items, the passage, and for
``distracting`` questions an unrelated excerpt). Nothing else from the corpus is
sent: no file names, ids or other chunks. Bump :data:`PROMPT_REVISION` whenever
any text here changes: it is part of the cache key and of every case's
provenance, so stale cached answers are never reused for a new prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from pytest_ragproof.generation.types import GeneratedItem, GenKind, ItemRequest

PROMPT_REVISION = 1
#: Longest distractor excerpt sent, in characters: enough for one unrelated fact.
DISTRACTOR_CHARS = 400


class QAItem(BaseModel):
    question: str = Field(min_length=1, description="the question, as the user would ask it")
    answer: str = Field(min_length=1, description="the correct answer, from the passage")


class DistractingItem(QAItem):
    distractor: str = Field(min_length=1, description="the distracting element used")


class SituationalItem(QAItem):
    situation: str = Field(min_length=1, description="the user's situation given in the question")


class DoubleItem(QAItem):
    parts: list[str] = Field(
        min_length=2, max_length=2, description="the two parts of the question"
    )


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)


class ConversationalItem(QAItem):
    history: list[Turn] = Field(
        min_length=2, description="earlier turns, user first, alternating, assistant last"
    )

    @model_validator(mode="after")
    def _alternating(self) -> ConversationalItem:
        roles = [t.role for t in self.history]
        expected = ["user" if i % 2 == 0 else "assistant" for i in range(len(roles))]
        if roles != expected or roles[-1] != "assistant":
            raise ValueError(
                "history must alternate user/assistant, start with user and end with assistant"
            )
        return self


class UnanswerableItem(BaseModel):
    question: str = Field(min_length=1, description="the question, as the user would ask it")
    missing: str = Field(min_length=1, description="what information the answer would need")


class SimpleQuestions(BaseModel):
    items: list[QAItem]


class ComplexQuestions(BaseModel):
    items: list[QAItem]


class DistractingQuestions(BaseModel):
    items: list[DistractingItem]


class SituationalQuestions(BaseModel):
    items: list[SituationalItem]


class DoubleQuestions(BaseModel):
    items: list[DoubleItem]


class ConversationalQuestions(BaseModel):
    items: list[ConversationalItem]


class UnanswerableQuestions(BaseModel):
    items: list[UnanswerableItem]


_QA_RULES = (
    "Every question must be answerable from the passage alone, without outside knowledge, "
    "and must make sense to someone who has not seen the passage (never say 'the passage' "
    "or 'the text'). Every answer must be correct and complete according to the passage, "
    "in one to three sentences."
)
_UNANSWERABLE_RULES = (
    "Every question must be one a real user could plausibly ask, but the passage must NOT "
    "contain its answer, not even partly: answering would need information that is absent. "
    "Never ask about something the passage does state. Do not mention the passage."
)

# question type -> (what to write, example, extra fields the item has)
_QA_TYPES: dict[str, tuple[str, str, str]] = {
    "simple": (
        "a direct question about one fact stated in the passage",
        "What is the capital of France?",
        "",
    ),
    "complex": (
        "a question about one fact of the passage, made harder by paraphrasing: use other "
        "words than the passage and refer to things indirectly, so that matching words is "
        "not enough; the answer stays the same fact",
        "What is the capital of the country of Victor Hugo?",
        "",
    ),
    "distracting": (
        "a question about the passage that also mentions an element taken from the "
        "unrelated excerpt below, which plays no part in the answer; put that element in "
        "'distractor'",
        "Italy is beautiful, but what is the capital of France?",
        "distractor",
    ),
    "situational": (
        "a question that starts with a short description of the user's own situation, "
        "which gives context; 'question' holds the whole message, situation included, and "
        "'situation' repeats the situation alone",
        "I am planning a trip to Europe; what is the capital of France?",
        "situation",
    ),
    "double": (
        "a question with two distinct parts, both answered by the passage; 'parts' lists "
        "the two parts and the answer covers both",
        "What is the capital and the population of France?",
        "parts",
    ),
    "conversational": (
        "the last message of a short conversation: 'history' holds the earlier turns, "
        "starting with a user message that sets up the subject, alternating user and "
        "assistant, ending with an assistant turn; 'question' is the user's final message, "
        "which cannot be understood without the history",
        "history: user 'I would like some information about France.', assistant 'Of "
        "course, what would you like to know?'; question: 'What is its capital?'",
        "history",
    ),
}

_UNANSWERABLE_TYPES: dict[str, tuple[str, str]] = {
    "simple": (
        "a question on the passage's own subject about a detail the passage does not give",
        "(passage on the refund policy, which gives no fees) How much does a refund cost?",
    ),
    "out_of_scope": (
        "a question the assistant's users could plausibly ask, in the same domain, but on a "
        "subject the passage does not cover at all",
        "(passage on refunds of a web shop) Do you offer gift wrapping?",
    ),
}

_SCHEMAS: dict[tuple[GenKind, str], type[BaseModel]] = {
    ("qa", "simple"): SimpleQuestions,
    ("qa", "complex"): ComplexQuestions,
    ("qa", "distracting"): DistractingQuestions,
    ("qa", "situational"): SituationalQuestions,
    ("qa", "double"): DoubleQuestions,
    ("qa", "conversational"): ConversationalQuestions,
    ("unanswerable", "simple"): UnanswerableQuestions,
    ("unanswerable", "out_of_scope"): UnanswerableQuestions,
}


def language_line(request: ItemRequest) -> str:
    if request.language_name != request.language:
        return f"Write in {request.language_name} (language code '{request.language}')."
    return f"Write in this language: {request.language}."


def agent_line(request: ItemRequest) -> str:
    if not request.agent_description:
        return "The assistant answers users' questions from a documentation corpus."
    return f"The assistant under test is described as: {request.agent_description}"


@dataclass(frozen=True)
class BuiltinGenerator:
    """The built-in generator of one kind and question type (a :class:`QuestionGenerator`)."""

    kind: GenKind
    question_type: str

    @property
    def name(self) -> str:
        return f"builtin.{self.kind}.{self.question_type}"

    @property
    def question_types(self) -> tuple[str, ...]:
        return (self.question_type,)

    @property
    def prompt_version(self) -> str:
        return f"ragproof.gen.{self.kind}.{self.question_type}/{PROMPT_REVISION}"

    @property
    def schema(self) -> type[BaseModel]:
        return _SCHEMAS[(self.kind, self.question_type)]

    def build_messages(self, request: ItemRequest) -> list[dict[str, str]]:
        n = request.n_items
        if self.kind == "qa":
            what, example, extra = _QA_TYPES[self.question_type]
            rules = _QA_RULES
            fields = "question, answer" + (f", {extra}" if extra else "")
        else:
            what, example = _UNANSWERABLE_TYPES[self.question_type]
            rules = _UNANSWERABLE_RULES
            fields = "question, missing (what information an answer would need)"
        system = "\n".join(
            (
                "You write test questions for evaluating a retrieval-augmented assistant.",
                agent_line(request),
                rules,
                language_line(request),
                f'Reply with a JSON object {{"items": [...]}} holding exactly {n} item(s); '
                f"each item has the fields: {fields}.",
            )
        )
        parts = [
            f"Question type: {self.question_type}: {what}.",
            f"Example: {example}",
            f"Write exactly {n} item(s), each about a different point where possible.",
        ]
        if self.question_type == "distracting":
            if request.distractor is not None:
                excerpt = request.distractor.text[:DISTRACTOR_CHARS]
                parts.append(f"Unrelated excerpt (for the distracting element only):\n{excerpt}")
            else:
                parts.append("Invent a plausible distracting element unrelated to the answer.")
        parts.append(f"Passage:\n<passage>\n{request.chunk.text}\n</passage>")
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": "\n\n".join(parts)},
        ]

    def parse_items(self, reply: BaseModel, request: ItemRequest) -> list[GeneratedItem]:
        items = getattr(reply, "items", None)
        if not isinstance(items, list):
            raise ValueError("the reply has no list of items")
        return [self._item(item) for item in items]

    def _item(self, item: BaseModel) -> GeneratedItem:
        if isinstance(item, UnanswerableItem):
            return GeneratedItem(item.question, metadata={"missing_information": item.missing})
        if isinstance(item, ConversationalItem):
            history = tuple((t.role, t.content) for t in item.history)
            return GeneratedItem(item.question, item.answer, conversation_history=history)
        if isinstance(item, DistractingItem):
            return GeneratedItem(
                item.question, item.answer, metadata={"distractor": item.distractor}
            )
        if isinstance(item, SituationalItem):
            return GeneratedItem(item.question, item.answer, metadata={"situation": item.situation})
        if isinstance(item, DoubleItem):
            parts = " | ".join(p.strip() for p in item.parts)
            return GeneratedItem(item.question, item.answer, metadata={"parts": parts})
        if isinstance(item, QAItem):
            return GeneratedItem(item.question, item.answer)
        raise ValueError(f"unexpected item type {type(item).__name__}")


def builtin_generators() -> dict[tuple[GenKind, str], BuiltinGenerator]:
    """Every built-in generator, keyed by (kind, question type)."""
    return {key: BuiltinGenerator(*key) for key in _SCHEMAS}
