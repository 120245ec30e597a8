"""Answer metrics against the case's single ``expected_answer``.

* ``exact_match`` / ``token_f1``: the official SQuAD v1.1 evaluation rules with
  one reference, quirks included (an answer of only articles and punctuation
  normalizes to the empty string: two such strings are an exact match but have
  F1 0, because F1 is 0 whenever no token is shared).
* ``rouge_l``: LCS F-measure (beta = 1) over lowercased alphanumeric runs, no
  stemming. On ASCII text the tokens are exactly rouge-score's (runs of
  ``[a-z0-9]``); beyond ASCII a token is a run of Unicode letters, digits and
  combining marks, so "Café Zürich" or "東京" are not silently dropped.
* ``completeness``: the share of the expected answer's distinct content words
  (tokens as for ROUGE-L, minus :data:`STOPWORDS`) that occur in the answer.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

__all__ = [
    "STOPWORDS",
    "completeness",
    "exact_match",
    "rouge_l",
    "squad_normalize",
    "token_f1",
    "tokenize",
]

_PUNCTUATION = frozenset(string.punctuation)
# \b in a str pattern is Unicode-aware, as in the SQuAD script under Python 3.
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_ASCII_RUN = re.compile(r"[a-z0-9]+")

# A deliberately small list of English function words; content words are what
# remains. Kept in the docs (docs/metrics.md) so users can see what is ignored.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just me more most my myself no
    nor not of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a block of words reviews better than 130 quoted items
)


def squad_normalize(text: str) -> str:
    """SQuAD v1.1 answer normalization: lowercase, drop punctuation, articles, extra spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(answer: str, expected: str) -> float:
    """1.0 when both normalize (SQuAD rules) to the same string, else 0.0."""
    return 1.0 if squad_normalize(answer) == squad_normalize(expected) else 0.0


def token_f1(answer: str, expected: str) -> float:
    """SQuAD v1.1 token F1 over bags of normalized tokens; 0.0 without a shared token."""
    predicted = squad_normalize(answer).split()
    reference = squad_normalize(expected).split()
    shared = sum((Counter(predicted) & Counter(reference)).values())
    if shared == 0:
        return 0.0
    precision = shared / len(predicted)
    recall = shared / len(reference)
    return 2 * precision * recall / (precision + recall)


def _is_word_char(ch: str) -> bool:
    # Combining marks (category M) belong to the word they modify: Devanagari
    # vowel signs or a decomposed accent would otherwise split a word in two.
    return ch.isalnum() or unicodedata.category(ch)[0] == "M"


def tokenize(text: str) -> list[str]:
    """Lowercased alphanumeric runs: rouge-score's tokens on ASCII, Unicode-aware beyond."""
    text = text.lower()
    if text.isascii():
        return _ASCII_RUN.findall(text)
    text = unicodedata.normalize("NFC", text)
    tokens: list[str] = []
    current: list[str] = []
    for ch in text:
        if _is_word_char(ch):
            current.append(ch)
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    return tokens


def _lcs_length(a: list[str], b: list[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    # One row of the classic dynamic programme, over the shorter sequence.
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            if x == y:
                current.append(previous[j] + 1)
            else:
                left = current[j]
                up = previous[j + 1]
                current.append(left if left > up else up)
        previous = current
    return previous[-1]


def rouge_l(answer: str, expected: str) -> float:
    """ROUGE-L F-measure (beta = 1); 0.0 when either side has no token."""
    predicted = tokenize(answer)
    reference = tokenize(expected)
    if not predicted or not reference:
        return 0.0
    lcs = _lcs_length(predicted, reference)
    if lcs == 0:
        return 0.0
    precision = lcs / len(predicted)
    recall = lcs / len(reference)
    return 2 * precision * recall / (precision + recall)


def completeness(answer: str, expected: str) -> float | None:
    """Share of the expected answer's distinct content words found in the answer.

    Falls back to all of its tokens when the expected answer is only stopwords;
    None (metric absent) when it has no token at all.
    """
    expected_tokens = set(tokenize(expected))
    wanted = expected_tokens - STOPWORDS or expected_tokens
    if not wanted:
        return None
    present = wanted & set(tokenize(answer))
    return len(present) / len(wanted)
