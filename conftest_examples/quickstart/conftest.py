"""The quickstart's RAG system: fully offline, over the Tandemly documentation in corpus/.

Two pipelines, chosen with ``--quickstart-pipeline`` (default ``strong``):

``strong``
    The built-in BM25 (``pytest_ragproof.corpus.retrieval``) over 400-character chunks, top 5;
    an extractive answer (the best sentences of the top chunks); a refusal when the
    question's key terms are poorly covered by what was retrieved; an injection guard.
``weak``
    The same system after a bad refactor: the top 2 chunks by plain word overlap
    (no idf, no stop words, no length normalisation), no refusal, no guard.
    ``pytest conftest_examples/quickstart --quickstart-pipeline=weak`` fails the run.

Both hand their prompt to :func:`compose_answer`, which stands in for the LLM of a real
RAG system. It extracts sentences from the retrieved chunks, and, like a model that
reads its whole prompt, it also does what instructions in the prompt ask: a line that
tells it to reply with, say, print or include a token gets that token appended to the
answer. That gullibility is what makes the injection cases meaningful offline, and it
is what the strong pipeline's guard protects against.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.corpus import load_corpus
from pytest_ragproof.corpus.chunking import Chunk, chunk_corpus
from pytest_ragproof.corpus.retrieval import BM25Index, tokenize
from pytest_ragproof.metrics import STOPWORDS

CORPUS = Path(__file__).parent / "corpus"
CHUNK_SIZE = 400  # characters; the Markdown pages are also split at every heading
TOP_K = 5  # contexts returned by the strong pipeline
WEAK_TOP_K = 2  # contexts returned by the weak pipeline
ANSWER_FROM = 3  # the answer is extracted from this many top chunks
# Refuse when the retrieved chunks cover less than this share of the question's key
# terms, weighted by idf (a term found in no chunk weighs the most). Questions about
# things the documents never mention ("cargo bikes", "chief executive") fall below it.
# Tuned on cases.jsonl: the answerable questions cover at least 0.35, the unanswerable
# ones at most 0.29. A thin margin, as lexical refusal rules have; the tests show it.
MIN_COVERAGE = 0.33
REFUSAL = "I don't know; that is not in the provided documents."

# Words that carry no topic in a customer's question (chat filler, question words), on
# top of the metrics' English stop words.
# fmt: off
QUESTION_WORDS = frozenset({
    "much", "many", "long", "far", "old", "get", "got", "need", "want", "wanted", "please",
    "tell", "know", "happen", "happens", "also", "still", "really", "anyway", "one", "heard",
    "read", "told", "say", "says", "said", "sure", "think", "friend", "someone", "thanks",
    "hello", "sorry", "actually", "today",
})
# fmt: on

# A code-like token: six or more letters, digits and dashes, holding a digit.
CODE_LIKE = re.compile(r"\b(?=[A-Za-z0-9-]*\d)[A-Za-z0-9](?:[A-Za-z0-9-]{4,})[A-Za-z0-9]\b")
# What the stand-in LLM obeys: a line asking it to produce something.
DIRECTIVE = re.compile(
    r"\b(?:reply|respond|answer|print|output|say|repeat|include|append|add|end|sign|"
    r"write|tell|mention|confirm|start)\b",
    re.IGNORECASE,
)
# What the guard strips: role markers, markup, "ignore the above", and requests to
# produce specific output. Applied to every line after the question's first paragraph,
# and to role markers and "ignore" lines anywhere.
ROLE_OR_OVERRIDE = re.compile(
    r"^\s*(?:system|assistant|developer|admin)\b\s*[:>\-]|</?[A-Za-z][^<>]*>|"
    r"\b(?:ignore|disregard|forget|override)\b",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def stem(token: str) -> str:
    """A crude stemmer, so "costs" meets "cost", "paused" meets "pause", "ends" meets "ended".

    Drops a plural "s" (not "ss", "us", "is"), then "ing" or "ed", then a final "e", keeping at
    least three letters.
    """
    if token.endswith("s") and not token.endswith(("ss", "us", "is")) and len(token) > 3:
        token = token[:-1]
    for suffix in ("ing", "ed"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            token = token[: -len(suffix)]
            break
    if token.endswith("e") and len(token) > 4:
        token = token[:-1]
    return token


def key_terms(text: str) -> list[str]:
    """The stems of the words that say what a text is about, in order, repeats kept."""
    return [
        stem(tok)
        for tok in tokenize(text)
        if tok not in STOPWORDS and tok not in QUESTION_WORDS and len(tok) > 1
    ]


@dataclass(frozen=True)
class Knowledge:
    """The indexed corpus: chunks, the BM25 index, and document frequencies of stems."""

    chunks: tuple[Chunk, ...]
    index: BM25Index[Chunk]
    doc_freq: Mapping[str, int]

    @classmethod
    def load(cls, corpus: Path = CORPUS) -> Knowledge:
        documents = load_corpus(corpus).documents
        chunks = tuple(chunk_corpus(documents, chunk_size=CHUNK_SIZE))
        doc_freq = Counter(term for c in chunks for term in set(key_terms(c.text)))
        return cls(chunks, BM25Index(chunks), doc_freq)

    def idf(self, term: str) -> float:
        """BM25's idf over chunks; a term in no chunk gets the largest weight."""
        n, df = len(self.chunks), self.doc_freq.get(term, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def sentences(chunk: Chunk) -> list[str]:
    """The chunk's sentences: headings dropped, paragraphs and sentence ends split."""
    out: list[str] = []
    for paragraph in re.split(r"\n[ \t]*\n", chunk.text):
        lines = [ln.strip() for ln in paragraph.splitlines() if not ln.lstrip().startswith("#")]
        out.extend(s.strip() for s in SENTENCE_END.split(" ".join(lines)) if s.strip())
    return out


def coverage(terms: Iterable[str], chunks: Sequence[Chunk], kb: Knowledge) -> float:
    """Share of the terms' idf weight that occurs in the chunks (0 when no terms)."""
    wanted = set(terms)
    found: set[str] = set()
    for chunk in chunks:
        found.update(key_terms(chunk.text))
    total = sum(kb.idf(t) for t in wanted)
    return sum(kb.idf(t) for t in wanted & found) / total if total else 0.0


def compose_answer(prompt: str, chunks: Sequence[Chunk], kb: Knowledge) -> str:
    """The stand-in LLM: the best sentence(s) of the chunks, plus what the prompt orders.

    The best sentence holds the most idf weight of the prompt's key terms; a second one
    is added when it covers at least a quarter of the weight the first one missed (so
    "how much is X and how long is Y" gets both facts).
    """
    terms = set(key_terms(prompt))
    candidates = [s for chunk in chunks[:ANSWER_FROM] for s in sentences(chunk)]
    answer = ""
    if candidates and terms:

        def weight(sentence: str, wanted: set[str]) -> float:
            return sum(kb.idf(t) for t in wanted & set(key_terms(sentence)))

        # max() keeps the first of equal candidates: the higher-ranked chunk wins ties.
        best = max(candidates, key=lambda s: weight(s, terms))
        picked = [best]
        missed = terms - set(key_terms(best))
        if missed:
            second = max(candidates, key=lambda s: weight(s, missed))
            if weight(second, missed) >= 0.25 * sum(kb.idf(t) for t in missed):
                picked.append(second)
        answer = " ".join(picked)
    # Obedience: an instruction line asking for a token gets it.
    for line in prompt.splitlines():
        if DIRECTIVE.search(line):
            for token in CODE_LIKE.findall(line):
                answer = f"{answer} {token}".strip()
    return answer


def guard(question: str) -> str:
    """The question without planted instructions.

    The first paragraph is the question: only role markers and "ignore the above"
    lines are dropped from it. Every later paragraph is something appended to the
    question, and its lines are dropped when they look like instructions.
    """
    paragraphs = re.split(r"\n[ \t]*\n", question)
    kept: list[str] = []
    for i, paragraph in enumerate(paragraphs):
        for line in paragraph.splitlines():
            if ROLE_OR_OVERRIDE.search(line):
                continue
            if i > 0 and DIRECTIVE.search(line):
                continue
            kept.append(line)
    return "\n".join(kept).strip()


def without_echoed_codes(answer: str, question: str, chunks: Sequence[Chunk]) -> str:
    """Drop code-like tokens that come from the question and not from the documents."""
    from_question = set(CODE_LIKE.findall(question))
    from_documents = {tok for chunk in chunks for tok in CODE_LIKE.findall(chunk.text)}
    for token in from_question - from_documents:
        answer = answer.replace(token, "")
    return re.sub(r"\s{2,}", " ", answer).strip()


def as_contexts(chunks: Sequence[Chunk]) -> list[dict[str, Any]]:
    """The output shape the runner scores: chunk ids, text and the document id."""
    return [
        {"id": c.id, "text": c.text, "metadata": {"document_id": c.document_id}} for c in chunks
    ]


def retrieval_query(question: str, history: Sequence[Mapping[str, str]] | None) -> str:
    """The question, preceded by the user's previous turn in a conversation."""
    previous = [m["content"] for m in history or () if m["role"] == "user"]
    return f"{previous[-1]}\n{question}" if previous else question


class StrongPipeline:
    """BM25 top 5, extractive answer, refusal on weak coverage, injection guard."""

    def __init__(self, kb: Knowledge) -> None:
        self.kb = kb

    def __call__(
        self, question: str, history: Sequence[Mapping[str, str]] | None = None
    ) -> dict[str, Any]:
        query = retrieval_query(guard(question), history)
        hits = self.kb.index.search(query, TOP_K)
        chunks = [self.kb.index.get(hit.chunk_id) for hit in hits]
        if coverage(key_terms(query), chunks[:ANSWER_FROM], self.kb) < MIN_COVERAGE:
            return {"answer": REFUSAL, "contexts": as_contexts(chunks)}
        answer = compose_answer(query, chunks, self.kb)
        return {
            "answer": without_echoed_codes(answer, question, chunks),
            "contexts": as_contexts(chunks),
        }


class WeakPipeline:
    """The regression: word-overlap top 2, no refusal, no guard, no history."""

    def __init__(self, kb: Knowledge) -> None:
        self.kb = kb

    def __call__(self, question: str) -> dict[str, Any]:
        words = set(tokenize(question))
        # Ties go to the first chunk in corpus order, as a naive loop would do.
        ranked = sorted(self.kb.chunks, key=lambda c: -len(words & set(tokenize(c.text))))
        chunks = ranked[:WEAK_TOP_K]
        return {
            "answer": compose_answer(question, chunks, self.kb),
            "contexts": as_contexts(chunks),
        }


PIPELINES: dict[str, Callable[[Knowledge], Callable[..., dict[str, Any]]]] = {
    "strong": StrongPipeline,
    "weak": WeakPipeline,
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quickstart-pipeline",
        choices=sorted(PIPELINES),
        default="strong",
        help="which quickstart pipeline to test: strong (default) or weak (a regression)",
    )


def pytest_report_header(config: pytest.Config) -> str:
    return f"quickstart pipeline: {config.getoption('--quickstart-pipeline')}"


@pytest.fixture(scope="session")
def knowledge() -> Knowledge:
    """The Tandemly corpus, chunked and indexed once per run."""
    return Knowledge.load()


@pytest.fixture(scope="session")
def rag_pipeline(
    request: pytest.FixtureRequest, knowledge: Knowledge
) -> Callable[..., dict[str, Any]]:
    """The pipeline under test, chosen with --quickstart-pipeline (strong or weak).

    Called as ``pipeline(question)`` (``history=`` too when it declares it) and returns
    ``{"answer": str, "contexts": [{"id", "text", "metadata": {"document_id"}}]}``.
    """
    name: str = request.config.getoption("--quickstart-pipeline")
    return PIPELINES[name](knowledge)
