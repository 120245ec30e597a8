"""Do a dataset's ``expected_source_ids`` exist in a corpus? (``ragproof validate --corpus``)

A corpus's ids are its document ids (paths relative to the corpus root, ``/``
separated) and, for ids that end in ``#<n>``, the chunk ids ``<document id>#<n>``
of the default chunking, the ids ``--ragproof-source-match=chunk`` compares. An id
is known when it is a document id or, ending in ``#<n>``, a chunk id. Each unknown
id gets the closest real id (difflib) and, when the file is there but was skipped
or has fewer chunks, that reason.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_ragproof.corpus import Corpus
from pytest_ragproof.corpus.chunking import chunk_corpus
from pytest_ragproof.dataset.models import Case

_CHUNK_SUFFIX = re.compile(r"#(\d+)\Z")


@dataclass(frozen=True)
class UnknownSource:
    """One expected source id the corpus does not have."""

    case_id: str
    source_id: str
    closest: str | None
    why: str  # "is not in the corpus", "was skipped (too_large)", ...

    def describe(self) -> str:
        text = f"case '{self.case_id}': '{self.source_id}' {self.why}"
        if self.closest is not None:
            text += f"; closest: '{self.closest}'"
        return text


@dataclass(frozen=True)
class SourceCheck:
    n_checked: int
    n_documents: int
    n_chunks: int | None  # None when no expected id names a chunk
    unknown: tuple[UnknownSource, ...]


def check_sources(cases: Iterable[Case], corpus: Corpus) -> SourceCheck:
    """Every (case, expected source id) pair checked against ``corpus``."""
    pairs = [(case.id, source_id) for case in cases for source_id in case.expected_source_ids]
    documents = {doc.id for doc in corpus.documents}
    skipped = {s.id: s.reason for s in corpus.skipped}
    chunk_counts: dict[str, int] | None = None
    if any(_CHUNK_SUFFIX.search(source_id) for _, source_id in pairs):
        chunk_counts = {}
        for chunk in chunk_corpus(corpus.documents):
            chunk_counts[chunk.document_id] = chunk_counts.get(chunk.document_id, 0) + 1
    chunk_ids: list[str] | None = None
    unknown: list[UnknownSource] = []
    for case_id, source_id in pairs:
        if source_id in documents:
            continue
        match = _CHUNK_SUFFIX.search(source_id)
        if match is None:
            why = _skipped(skipped.get(source_id)) or "is not in the corpus"
            unknown.append(UnknownSource(case_id, source_id, _closest(source_id, documents), why))
            continue
        assert chunk_counts is not None
        doc_id, index = source_id[: match.start()], int(match.group(1))
        count = chunk_counts.get(doc_id)
        if count is not None and index < count:
            continue
        if count is not None:
            why = f"is not a chunk of '{doc_id}', which has {count} chunk(s) (#0 to #{count - 1})"
            closest: str | None = f"{doc_id}#{count - 1}"
        else:
            why = _skipped(skipped.get(doc_id)) or "is not a chunk in the corpus"
            if chunk_ids is None:
                chunk_ids = [f"{d}#{n}" for d, c in chunk_counts.items() for n in range(c)]
            closest = _closest(source_id, chunk_ids)
        unknown.append(UnknownSource(case_id, source_id, closest, why))
    return SourceCheck(
        n_checked=len(pairs),
        n_documents=len(documents),
        n_chunks=None if chunk_counts is None else sum(chunk_counts.values()),
        unknown=tuple(unknown),
    )


def _skipped(reason: str | None) -> str | None:
    return None if reason is None else f"is in the corpus folder but was skipped ({reason})"


def _closest(source_id: str, known: Iterable[str]) -> str | None:
    match = difflib.get_close_matches(source_id, list(known), n=1, cutoff=0.5)
    return match[0] if match else None
