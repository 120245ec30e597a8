"""The fixed vocabularies of the case schema, shared without importing pydantic.

The pydantic models (``dataset/models.py``) use them as ``Literal`` types; the
threshold grammar, the runner's options and the reports check names against them.
"""

from __future__ import annotations

KINDS: tuple[str, ...] = ("qa", "unanswerable", "injection")
QUESTION_TYPES: tuple[str, ...] = (
    "simple",
    "complex",
    "distracting",
    "situational",
    "double",
    "conversational",
    "out_of_scope",
)
SPLITS: tuple[str, ...] = ("optimize", "validation", "test")
REVIEW_STATUSES: tuple[str, ...] = ("pending", "approved", "edited", "rejected")


def is_selector(selector: str) -> bool:
    """A threshold/tolerance selector: a kind, a question type, ``tag=NAME`` or ``*``."""
    return (
        selector == "*"
        or selector in KINDS
        or selector in QUESTION_TYPES
        or (selector.startswith("tag=") and len(selector) > 4)
    )
