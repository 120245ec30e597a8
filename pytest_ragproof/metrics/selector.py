"""Selectors: which cases a threshold, a tolerance, a gate or a summary row is about.

``*`` (every case), a kind (``qa``), a question type (``distracting``) or
``tag=NAME``. One parser (:func:`parse_selector`) and one rule
(:meth:`Selector.matches`) serve thresholds, regression tolerances, the aggregate
gates, the baseline comparison and the summary. Pure: no pytest, no pydantic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.vocabulary import KINDS, QUESTION_TYPES, is_selector

__all__ = ["ALL", "CaseLike", "Selector", "metric_label", "parse_selector"]


class CaseLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def question_type(self) -> str: ...
    @property
    def tags(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class Selector:
    """One parsed selector; ``str(selector)`` is how it is written."""

    text: str

    def __str__(self) -> str:
        return self.text

    def matches_fields(self, kind: str, question_type: str, tags: Sequence[str]) -> bool:
        sel = self.text
        if sel == "*":
            return True
        if sel.startswith("tag="):
            return sel[4:] in tags
        if sel in KINDS:
            return kind == sel
        return question_type == sel

    def matches(self, case: CaseLike) -> bool:
        """Does this selector take ``case`` (a Case, a CaseRecord or anything alike)?"""
        return self.matches_fields(case.kind, case.question_type, case.tags)

    def matches_entry(self, entry: Mapping[str, Any]) -> bool:
        """The same rule for a case entry of a results document (a dict)."""
        return self.matches_fields(
            str(entry.get("kind", "")),
            str(entry.get("question_type", "simple")),
            tuple(str(t) for t in entry.get("tags") or ()),
        )


ALL = Selector("*")


def metric_label(selector: str, metric: str) -> str:
    """How a (selector, metric) pair is named in tables and charts: ``qa:recall@5``, or
    the bare metric for every case (``latency_s``)."""
    return metric if selector == ALL.text else f"{selector}:{metric}"


def parse_selector(text: str, *, where: str, example: str) -> Selector:
    """Parse and validate; ``where`` names the expression, ``example`` a correct one."""
    selector = text.strip() or "*"
    if not is_selector(selector):
        raise ConfigError(
            f"Unknown selector '{selector}' in {where}; use a kind "
            f"({', '.join(KINDS)}), a question type ({', '.join(QUESTION_TYPES)}), "
            f"tag=NAME or *, e.g. {example}"
        )
    return Selector(selector)
