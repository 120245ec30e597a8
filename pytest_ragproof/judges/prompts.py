"""The versioned prompt step every judge module builds its prompt from.

A step's version is part of its cache key: changing a prompt's wording means a new
version, so cached verdicts of the old wording are never served for the new one.
The first line of each system message names the step and its version (servers'
logs and scripted test servers read it). Each judge module holds its own step
(``faithfulness.STEP``, ...); docs/judges.md quotes what each step sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class Step:
    name: str
    version: int
    instructions: str

    @property
    def prompt_version(self) -> str:
        return f"{self.name}/{self.version}"

    def messages(self, user: str) -> Messages:
        system = f"ragproof judge step: {self.prompt_version}\n\n{self.instructions}"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {text}" for i, text in enumerate(items, 1))


def passages(contexts: Sequence[str]) -> str:
    return "\n\n".join(f"[{i}] {text}" for i, text in enumerate(contexts, 1))
