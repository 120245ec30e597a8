"""Which language to write questions in, when the user did not say.

Detection is deterministic and offline, done once per run on a corpus sample:

1. Sample: the first 2,000 characters of each document, in corpus order, until
   20,000 characters are collected.
2. Script: when at least 10% of the sample's letters are kana the language is
   Japanese (``ja``: Japanese mixes kana with ideographs); else at least 30%
   Hangul means Korean (``ko``) and at least 30% CJK ideographs Chinese (``zh``).
3. Otherwise the sample is tokenized like the BM25 index (lowercased runs of
   letters and digits) and every token found in a language's stop-word list
   counts one for that language. The language with the most hits wins; ties go
   to the earlier language of :data:`STOPWORDS`. With fewer than 3 hits in all
   (numbers, code, tables) the default ``en`` is used.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_ragproof.corpus.retrieval import tokenize

DEFAULT_LANGUAGE = "en"
SAMPLE_PER_DOCUMENT = 2_000
SAMPLE_TOTAL = 20_000
MIN_HITS = 3
SCRIPT_SHARE = 0.3
KANA_SHARE = 0.1

# Frequent function words, chosen to be distinctive: a word shared by several
# languages ("de", "en", "a") still counts for each, and the rest decides.
STOPWORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in (
        ("en", "the and of to is in that it for with are this be on was as you not have by"),
        ("fr", "le la les des est et une du que qui dans pour pas sur au avec ce sont il nous"),
        ("de", "der die das und ist nicht ein eine zu mit den dem von sich auf für auch im wird"),
        ("es", "el los las que es del por una con para se su como pero más está son al lo muy"),
        ("it", "il di che è della per una sono con non gli del le dei anche come questo nel più"),
        ("pt", "o os as que não uma com para do da em dos das mais como ao por se sua são"),
        ("nl", "de het een en van is dat niet op te zijn voor met die ook aan er bij wordt naar"),
        ("sv", "och att det som är en på för med av inte den till har jag ett om var men kan"),
        ("pl", "i w nie na się z że do jest to jak ale od po są przez dla tak czy oraz"),
        ("ru", "и в не на что с по как это из за для от он так все но его также или"),
        ("tr", "ve bir bu da de için ile ne çok gibi daha olan olarak ama var değil mi her"),
        ("id", "yang dan di ini itu dengan untuk tidak dari dalam akan pada juga ada atau"),
    )
}

LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "sv": "Swedish",
    "pl": "Polish",
    "ru": "Russian",
    "tr": "Turkish",
    "id": "Indonesian",
    "ja": "Japanese",
    "zh": "Chinese",
    "ko": "Korean",
}


def language_name(language: str) -> str:
    """The English name of a known language code, else ``language`` unchanged."""
    return LANGUAGE_NAMES.get(language.strip().lower(), language.strip())


def corpus_sample(texts: Iterable[str]) -> str:
    """The detection sample (see module docstring) from document texts in corpus order."""
    parts: list[str] = []
    total = 0
    for text in texts:
        if total >= SAMPLE_TOTAL:
            break
        piece = text[: min(SAMPLE_PER_DOCUMENT, SAMPLE_TOTAL - total)]
        parts.append(piece)
        total += len(piece)
    return "\n".join(parts)


def detect_language(texts: Iterable[str]) -> str:
    """The language code of a corpus given its document texts (module docstring)."""
    sample = corpus_sample(texts)
    by_script = _script_language(sample)
    if by_script is not None:
        return by_script
    hits = dict.fromkeys(STOPWORDS, 0)
    for token in tokenize(sample):
        for code, words in STOPWORDS.items():
            if token in words:
                hits[code] += 1
    best = max(STOPWORDS, key=lambda code: hits[code])  # max keeps the first of ties
    return best if hits[best] >= MIN_HITS else DEFAULT_LANGUAGE


def _script_language(sample: str) -> str | None:
    letters = kana = hangul = han = 0
    for ch in sample:
        if not ch.isalpha():
            continue
        letters += 1
        code = ord(ch)
        if 0x3040 <= code <= 0x30FF:
            kana += 1
        elif 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF:
            hangul += 1
        elif 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
            han += 1
    if not letters:
        return None
    # Japanese text mixes kana with ideographs; a modest share of kana identifies it.
    if kana / letters >= KANA_SHARE:
        return "ja"
    if hangul / letters >= SCRIPT_SHARE:
        return "ko"
    if han / letters >= SCRIPT_SHARE:
        return "zh"
    return None
