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
    "answer_metrics",
    "completeness",
    "exact_match",
    "rouge_l",
    "squad_normalize",
    "token_f1",
    "tokenize",
]

_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)
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
    # translate deletes exactly the characters of string.punctuation, as the
    # script's per-character filter does, in C.
    text = text.lower().translate(_DROP_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(answer: str, expected: str) -> float:
    """1.0 when both normalize (SQuAD rules) to the same string, else 0.0."""
    return 1.0 if squad_normalize(answer) == squad_normalize(expected) else 0.0


def _f1(predicted: list[str], reference: list[str]) -> float:
    # The size of the bag intersection, sum(min(count)) as in the script's
    # Counter(predicted) & Counter(reference), without building the second bag.
    left = Counter(reference)
    shared = 0
    for token in predicted:
        count = left.get(token)
        if count:
            shared += 1
            left[token] = count - 1
    if shared == 0:
        return 0.0
    precision = shared / len(predicted)
    recall = shared / len(reference)
    return 2 * precision * recall / (precision + recall)


def token_f1(answer: str, expected: str) -> float:
    """SQuAD v1.1 token F1 over bags of normalized tokens; 0.0 without a shared token."""
    return _f1(squad_normalize(answer).split(), squad_normalize(expected).split())


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
    """Length of the longest common subsequence, bit-parallel (Allison-Dix / Hyyrö).

    Bit j of ``row`` stands for position j of ``b``; after each token of ``a`` the
    zero bits of ``row`` count the LCS so far. Python's big integers carry the
    whole row in one addition, so each token of ``a`` costs a few integer
    operations instead of a loop over ``b``. The length equals the classic
    dynamic programme's (tests compare it with rouge-score and with that programme).
    """
    if len(a) < len(b):
        a, b = b, a
    masks: dict[str, int] = {}
    for j, token in enumerate(b):
        masks[token] = masks.get(token, 0) | (1 << j)
    full = (1 << len(b)) - 1
    row = full
    get = masks.get
    for token in a:
        match = get(token)
        if match:
            u = row & match
            row = ((row + u) | (row - u)) & full
    return len(b) - row.bit_count()


def rouge_l(answer: str, expected: str) -> float:
    """ROUGE-L F-measure (beta = 1); 0.0 when either side has no token."""
    return _rouge_l(tokenize(answer), tokenize(expected))


def _rouge_l(predicted: list[str], reference: list[str]) -> float:
    if not predicted or not reference:
        return 0.0
    lcs = _lcs_length(predicted, reference)
    if lcs == 0:
        return 0.0
    precision = lcs / len(predicted)
    recall = lcs / len(reference)
    return 2 * precision * recall / (precision + recall)


def answer_metrics(answer: str, expected: str) -> dict[str, float]:
    """``exact_match``, ``token_f1``, ``rouge_l`` and (when defined) ``completeness``.

    The same values as the four functions, with each side normalized and
    tokenized once instead of once per metric.
    """
    squad_answer, squad_expected = squad_normalize(answer), squad_normalize(expected)
    predicted, reference = tokenize(answer), tokenize(expected)
    out = {
        "exact_match": 1.0 if squad_answer == squad_expected else 0.0,
        "token_f1": _f1(squad_answer.split(), squad_expected.split()),
        "rouge_l": _rouge_l(predicted, reference),
    }
    share = _completeness(predicted, reference)
    if share is not None:
        out["completeness"] = share
    return out


def completeness(answer: str, expected: str) -> float | None:
    """Share of the expected answer's distinct content words found in the answer.

    Falls back to all of its tokens when the expected answer is only stopwords;
    None (metric absent) when it has no token at all.
    """
    return _completeness(tokenize(answer), tokenize(expected))


def _completeness(predicted: list[str], reference: list[str]) -> float | None:
    expected_tokens = set(reference)
    wanted = expected_tokens - STOPWORDS or expected_tokens
    if not wanted:
        return None
    present = wanted.intersection(predicted)
    return len(present) / len(wanted)
