"""Generated text that repeats our own prompts is invalid output, never a case.

A model that loses track of the conversation may copy the instructions, the JSON
schema or a repair request ("Your previous reply could not be used: ...") into a
question, an answer or a conversation turn. Such an item is discarded as
``prompt_text`` before verification (a verifier may well accept it).

What counts as our prompt text: every instruction the built-in generators and
verifiers send (their messages built for an empty passage, examples left out:
a generated question may rightly resemble an example), the JSON and repair
instructions of the LLM layer, its error summaries, and the field descriptions
of the reply schemas. An item echoes it when one of its fields shares a run of
:data:`WINDOW` consecutive words with that text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator

from pytest_ragproof.generation.types import GeneratedItem

#: Consecutive words an item must share with our prompts to count as an echo. Six
#: words of an instruction ("your previous reply could not be used") are not
#: written by chance; shorter runs ("the capital of France") can be.
WINDOW = 6

_WORD = re.compile(r"\w+")


def _windows(text: str) -> Iterator[tuple[str, ...]]:
    words = _WORD.findall(text.casefold())
    for i in range(len(words) - WINDOW + 1):
        yield tuple(words[i : i + WINDOW])


def _prompt_texts() -> Iterator[str]:
    from pytest_ragproof.corpus.chunking import Chunk
    from pytest_ragproof.generation.prompts import builtin_generators
    from pytest_ragproof.generation.types import ItemRequest
    from pytest_ragproof.generation.verify import qa_messages, scope_messages
    from pytest_ragproof.llm.output import OutputParseError, extract_json
    from pytest_ragproof.llm.request import JSON_INSTRUCTION, REPAIR_INSTRUCTION

    yield JSON_INSTRUCTION.replace("{schema}", "")
    yield REPAIR_INSTRUCTION.replace("{summary}", "")
    yield "the JSON does not match the schema"
    for broken in ("", "no json", "{"):
        try:
            extract_json(broken)
        except OutputParseError as err:
            yield err.summary
    empty = Chunk("x#0", "x", 0, 0, 0, "")
    for (kind, question_type), generator in builtin_generators().items():
        request = ItemRequest(kind, question_type, empty, 1, "en", "English", distractor=empty)
        messages = generator.build_messages(request)
        if kind == "qa":
            messages += qa_messages(request, [GeneratedItem("", "")])
        else:
            messages += scope_messages(request, GeneratedItem(""), [])
        for message in messages:
            lines = message["content"].splitlines()
            yield "\n".join(line for line in lines if not line.startswith("Example:"))
        yield json.dumps(generator.schema.model_json_schema())


@functools.cache
def _prompt_windows() -> frozenset[tuple[str, ...]]:
    return frozenset(w for text in _prompt_texts() for w in _windows(text))


def fields_of(item: GeneratedItem) -> Iterable[str]:
    """Every text of ``item`` that would be written into a case."""
    yield item.question
    if item.answer:
        yield item.answer
    for _role, content in item.conversation_history:
        yield content
    yield from item.metadata.values()


def echoes_prompt(item: GeneratedItem) -> bool:
    """Does a field of ``item`` repeat text of our prompts?"""
    known = _prompt_windows()
    return any(w in known for text in fields_of(item) for w in _windows(text))
