"""Normalization of whatever a pipeline returns into one scorable shape.

Accepted shapes (PRODUCT.md §4), all duck-typed so that no LangChain or
LlamaIndex import is ever needed:

* a string: the answer alone, no contexts;
* a mapping or an object with ``answer`` (or ``response``) and ``contexts``
  (or ``retrieved_contexts``); either part may be missing or None;
* each context: a string, a mapping ``{id, text, metadata}``, a LangChain-style
  document (``page_content``, ``metadata``) or a LlamaIndex-style node with
  score (``node`` with ``node_id``, ``score``).

Errors name the expected shape and never echo values: answers and contexts are
sensitive (PRODUCT.md §2).
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pytest_ragproof.errors import OutputShapeError

__all__ = ["Context", "PipelineOutput", "content_id", "normalize_output"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})

OUTPUT_SHAPES = (
    "a string (the answer), or a mapping/object with 'answer' (or 'response') "
    "and 'contexts' (or 'retrieved_contexts')"
)
CONTEXT_SHAPES = (
    "a string, a mapping {id, text, metadata}, a LangChain-style document "
    "(page_content, metadata) or a LlamaIndex-style NodeWithScore (node.node_id)"
)


@dataclass(frozen=True)
class Context:
    """One retrieved context; its rank is its position in ``PipelineOutput.contexts``.

    ``document_id`` is already resolved: ``metadata["document_id"]`` when present,
    else ``id``.
    """

    id: str
    text: str
    document_id: str
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, hash=False, compare=False)


@dataclass(frozen=True)
class PipelineOutput:
    """A pipeline output in scorable form.

    ``contexts is None`` means the pipeline reported no retrieval at all (no
    retrieval metrics); an empty tuple means it retrieved nothing (all zero).
    """

    answer: str | None
    contexts: tuple[Context, ...] | None


def content_id(text: str) -> str:
    """Id of a context given without one: first 16 hex digits of sha256 of its NFC text."""
    nfc = unicodedata.normalize("NFC", text)
    return hashlib.sha256(nfc.encode("utf-8")).hexdigest()[:16]


def _shape_error(what: str, expected: str, got: object) -> OutputShapeError:
    # Only the type name is shown: the value may be a sensitive answer or passage.
    return OutputShapeError(f"{what}: expected {expected}, got {type(got).__name__}")


def _get(raw: object, *names: str) -> tuple[bool, object]:
    """First of ``names`` present as a key (mappings) or attribute (objects)."""
    for name in names:
        if isinstance(raw, Mapping):
            if name in raw:
                return True, raw[name]
        elif hasattr(raw, name):
            return True, getattr(raw, name)
    return False, None


def _metadata(raw: object, where: str) -> Mapping[str, Any]:
    if raw is None:
        return _EMPTY
    if not isinstance(raw, Mapping):
        raise _shape_error(f"{where} metadata", "a mapping or None", raw)
    # A read-only copy: the frozen Context must not change when the pipeline's dict does.
    return MappingProxyType(dict(raw))


def _optional_str(value: object, what: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _shape_error(what, "a string", value)
    return value


def _score(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _shape_error(f"{where} score", "a finite number or None", value)
    score = float(value)
    if not math.isfinite(score):
        raise OutputShapeError(f"{where} score: expected a finite number or None")
    return score


def _context(raw: object, index: int) -> Context:
    where = f"context {index} (1-based)"
    ident: str | None
    score: float | None = None
    if isinstance(raw, str):
        text, ident, metadata = raw, None, _EMPTY
    elif isinstance(raw, Mapping):
        text_value = raw.get("text")
        if not isinstance(text_value, str):
            raise _shape_error(f"{where} 'text'", "a string", text_value)
        text = text_value
        metadata = _metadata(raw.get("metadata"), where)
        ident = _optional_str(raw.get("id"), f"{where} 'id'")
        score = _score(raw.get("score"), where)
    elif hasattr(raw, "page_content"):
        text_value = raw.page_content
        if not isinstance(text_value, str):
            raise _shape_error(f"{where} page_content", "a string", text_value)
        text = text_value
        metadata = _metadata(getattr(raw, "metadata", None), where)
        # The spec names metadata["id"]; recent LangChain also sets Document.id.
        ident = _optional_str(metadata.get("id"), f"{where} metadata 'id'")
        if ident is None:
            ident = _optional_str(getattr(raw, "id", None), f"{where} id")
    elif hasattr(raw, "node"):
        node = raw.node
        ident = _optional_str(getattr(node, "node_id", None), f"{where} node.node_id")
        getter = getattr(node, "get_content", None)
        text_value = getter() if callable(getter) else getattr(node, "text", None)
        if not isinstance(text_value, str):
            raise _shape_error(f"{where} node text", "a string", text_value)
        text = text_value
        metadata = _metadata(getattr(node, "metadata", None), where)
        score = _score(getattr(raw, "score", None), where)
    else:
        raise _shape_error(where, CONTEXT_SHAPES, raw)
    if ident is None:
        ident = content_id(text)
    document_id = _optional_str(metadata.get("document_id"), f"{where} metadata 'document_id'")
    return Context(ident, text, document_id or ident, score, metadata)


def normalize_output(raw: object) -> PipelineOutput:
    """Turn any accepted pipeline output into a :class:`PipelineOutput`.

    Raises :class:`~pytest_ragproof.errors.OutputShapeError` for anything else.
    """
    if isinstance(raw, PipelineOutput):
        return raw
    if isinstance(raw, str):
        return PipelineOutput(raw, None)
    if raw is None or isinstance(raw, bytes | bytearray | int | float | Sequence):
        # A bare list is ambiguous (contexts? answers?), so it is refused too.
        raise _shape_error("pipeline output", OUTPUT_SHAPES, raw)
    has_answer, answer = _get(raw, "answer", "response")
    has_contexts, contexts_raw = _get(raw, "contexts", "retrieved_contexts")
    if not has_answer and not has_contexts:
        raise _shape_error("pipeline output", OUTPUT_SHAPES, raw)
    if answer is not None and not isinstance(answer, str):
        raise _shape_error("pipeline output answer", "a string or None", answer)
    if contexts_raw is None:
        return PipelineOutput(answer, None)
    if isinstance(contexts_raw, str | bytes | bytearray | Mapping) or not isinstance(
        contexts_raw, Sequence
    ):
        raise _shape_error(
            "pipeline output contexts",
            f"a list whose items are each {CONTEXT_SHAPES}",
            contexts_raw,
        )
    contexts = tuple(_context(item, i) for i, item in enumerate(contexts_raw, 1))
    return PipelineOutput(answer, contexts)
