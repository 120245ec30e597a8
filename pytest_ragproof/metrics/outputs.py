"""Normalization of whatever a pipeline returns into one scorable shape.

Accepted shapes (docs/metrics.md), all duck-typed so that no LangChain, LlamaIndex
or Haystack import is ever needed:

* a string: the answer alone, no contexts;
* a mapping or an object with ``answer`` (or ``response``) and ``contexts`` (or
  ``retrieved_contexts``, ``context`` as in LangChain's ``create_retrieval_chain``
  output, ``source_nodes`` as on a LlamaIndex ``Response``); either part may be
  missing or None;
* each context: a string; a mapping with its text under ``text``, ``content`` or
  ``page_content`` (id under ``id``, ``doc_id``, ``source`` or ``document_id``);
  a LangChain ``Document`` (``page_content``, ``metadata``, ``id``); a Haystack
  ``Document`` (``id``, ``content``, ``meta``, ``score``); a LlamaIndex
  ``NodeWithScore`` (``node``, ``score``) or bare node (``node_id``, ``text``).

A context's ``document_id`` (``--ragproof-source-match=document``) is, first
found: ``metadata["document_id"]``; a mapping's own ``document_id``, then its
``source``; a LlamaIndex node's ``ref_doc_id``; ``metadata["source"]`` (LangChain's
loaders set it); else the context id.

Errors name the expected shape and never echo values: answers and contexts are
sensitive (docs/datasets.md). For a shape that is not recognised they list the key or
attribute names seen, which are not values.
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
    "and 'contexts' (or 'retrieved_contexts', LangChain's 'context', "
    "LlamaIndex's 'source_nodes')"
)
CONTEXT_SHAPES = (
    "a string; a mapping {id, text, metadata} (text also as 'content' or 'page_content', "
    "id also as 'doc_id', 'source' or 'document_id', metadata also as 'meta'); "
    "a LangChain Document (page_content, metadata); a Haystack Document "
    "(id, content, meta, score); a LlamaIndex NodeWithScore (node, score) or node "
    "(node_id, text)"
)
_TEXT_KEYS = ("text", "content", "page_content")
_ID_KEYS = ("id", "doc_id", "source", "document_id")
_META_KEYS = ("metadata", "meta")
# Types whose attributes say nothing about what was meant (their methods would be noise).
_PLAIN = (str, int, float, complex, bool, bytes, bytearray, list, tuple, set, frozenset, type(None))
_MAX_NAMES = 12
_CONTEXTS_NAMES = ("contexts", "retrieved_contexts", "context", "source_nodes")


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


def _names(raw: object) -> str:
    """The key names of a mapping or public attribute names of an object (never values)."""
    if isinstance(raw, Mapping):
        names = [str(k)[:40] for k in raw]
        what = "keys"
    else:
        names = [n for n in dir(raw) if not n.startswith("_")]
        what = "attributes"
    if not names:
        return f"no {what}"
    shown = ", ".join(f"'{n}'" for n in names[:_MAX_NAMES])
    more = f" (+{len(names) - _MAX_NAMES} more)" if len(names) > _MAX_NAMES else ""
    return f"{what} {shown}{more}"


def _unrecognised(what: str, expected: str, raw: object) -> OutputShapeError:
    """A shape not recognised: its type and the names it has, then the accepted shapes."""
    if isinstance(raw, _PLAIN):
        return _shape_error(what, expected, raw)
    name = type(raw).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return OutputShapeError(
        f"{what}: {article} {name} with {_names(raw)} is not a recognised shape; "
        f"expected {expected}"
    )


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


def _first_key(raw: Mapping[Any, Any], keys: tuple[str, ...]) -> tuple[str | None, object]:
    for key in keys:
        if key in raw:
            return key, raw[key]
    return None, None


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise _shape_error(what, "a string", value)
    return value


def _mapping_context(raw: Mapping[Any, Any], where: str) -> Context:
    key, text_value = _first_key(raw, _TEXT_KEYS)
    if key is None:
        raise OutputShapeError(
            f"{where}: a mapping with {_names(raw)} has no text under 'text', 'content' or "
            f"'page_content'; expected {CONTEXT_SHAPES}"
        )
    text = _text(text_value, f"{where} '{key}'")
    metadata = _metadata(_first_key(raw, _META_KEYS)[1], where)
    id_key, id_value = _first_key(raw, _ID_KEYS)
    ident = _optional_str(id_value, f"{where} '{id_key}'")
    own_doc = _optional_str(raw.get("document_id"), f"{where} 'document_id'")
    if own_doc is None:
        own_doc = _optional_str(raw.get("source"), f"{where} 'source'")
    score = _score(raw.get("score"), where)
    return _finish(where, text, ident, score, metadata, own_doc)


def _node_context(node: object, score: float | None, where: str, prefix: str) -> Context:
    ident = _optional_str(getattr(node, "node_id", None), f"{where} {prefix}node_id")
    getter = getattr(node, "get_content", None)
    text = _text(
        getter() if callable(getter) else getattr(node, "text", None), f"{where} {prefix}text"
    )
    metadata = _metadata(getattr(node, "metadata", None), where)
    ref_doc = _optional_str(getattr(node, "ref_doc_id", None), f"{where} {prefix}ref_doc_id")
    return _finish(where, text, ident, score, metadata, ref_doc)


def _context(raw: object, index: int) -> Context:
    where = f"context {index} (1-based)"
    if isinstance(raw, str):
        return _finish(where, raw, None, None, _EMPTY, None)
    if isinstance(raw, Mapping):
        return _mapping_context(raw, where)
    if hasattr(raw, "page_content"):  # LangChain Document
        text = _text(raw.page_content, f"{where} page_content")
        metadata = _metadata(getattr(raw, "metadata", None), where)
        # The spec names metadata["id"]; recent LangChain also sets Document.id.
        ident = _optional_str(metadata.get("id"), f"{where} metadata 'id'")
        if ident is None:
            ident = _optional_str(getattr(raw, "id", None), f"{where} id")
        return _finish(where, text, ident, None, metadata, None)
    if hasattr(raw, "node"):  # LlamaIndex NodeWithScore
        return _node_context(raw.node, _score(getattr(raw, "score", None), where), where, "node.")
    if hasattr(raw, "node_id"):  # a bare LlamaIndex node
        return _node_context(raw, None, where, "")
    if hasattr(raw, "content") and (hasattr(raw, "meta") or hasattr(raw, "id")):  # Haystack
        text = _text(getattr(raw, "content", None), f"{where} content")
        metadata = _metadata(getattr(raw, "meta", None), where)
        ident = _optional_str(getattr(raw, "id", None), f"{where} id")
        score = _score(getattr(raw, "score", None), where)
        return _finish(where, text, ident, score, metadata, None)
    raise _unrecognised(where, CONTEXT_SHAPES, raw)


def _finish(
    where: str,
    text: str,
    ident: str | None,
    score: float | None,
    metadata: Mapping[str, Any],
    own_document_id: str | None,
) -> Context:
    """The context with its id (else the content hash) and its resolved document id."""
    if ident is None:
        ident = content_id(text)
    document_id = None
    if metadata:
        document_id = _optional_str(metadata.get("document_id"), f"{where} metadata 'document_id'")
    document_id = document_id or own_document_id
    if document_id is None and metadata:
        document_id = _optional_str(metadata.get("source"), f"{where} metadata 'source'")
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
    has_contexts, contexts_raw = _get(raw, *_CONTEXTS_NAMES)
    if not has_answer and not has_contexts:
        raise _unrecognised("pipeline output", OUTPUT_SHAPES, raw)
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
