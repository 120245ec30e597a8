"""A case's whole judgement, cached beside the judge calls that made it.

A fully cached re-run used to replay every judge step of every case from the LLM
cache: build each request, look its reply up, parse and validate it, check the
claims, run the judge's scoring. The judgement is a pure function of the case's
judge inputs, the judges that apply, the judge model and the code that asks and
scores; so once a case is judged without an error, its :class:`CaseJudgement` is
stored as one more cache entry, and a later run with the same inputs, judges,
model and code takes it whole: one lookup per case instead of one per step.

The key is a cache key (:func:`pytest_ragproof.llm.cache.cache_key`) of model
``judgement:<judge model>`` over the canonical judge inputs and the judges, with
the digest of the source of the judges, the LLM layer and the text helpers they
use as its version: changed code (a new release, or an edited checkout) misses and
judges again from the per-call entries, which stay the source of truth. The value
is an ordinary cache entry whose text is the judgement's JSON, so the store's
checksums guard it like any reply; a value that does not decode is a miss.

Only complete judgements are stored: no error, nothing left unjudged for the budget
or a dry run. A hit counts as that many cached calls, priced as the calls were.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from pathlib import Path

from pytest_ragproof.judges.base import CaseJudgement, JudgeInputs
from pytest_ragproof.llm.cache import CachedResponse, ResponseCache, cache_key

__all__ = ["Hit", "Memo", "code_digest"]

#: Reasons for a metric left unjudged that depend on the run, not on the case.
_RUN_REASONS = frozenset({"budget", "dry_run"})
#: The sources a judgement depends on, relative to the package.
_SOURCES = ("judges", "llm", "textnorm.py", "metrics/answer.py")


@functools.cache
def code_digest() -> str | None:
    """A digest of the code that makes a judgement, or None when it cannot be read."""
    import xxhash

    package = Path(__file__).resolve().parent.parent
    digest = xxhash.xxh3_128()
    try:
        for name in _SOURCES:
            path = package / name
            files = sorted(path.glob("*.py")) if path.is_dir() else [path]
            for file in files:
                digest.update(file.relative_to(package).as_posix().encode() + b"\x00")
                digest.update(file.read_bytes())
    except OSError:
        return None  # no sources to read (a frozen build): no memo, every step replayed
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class Hit:
    """A stored judgement and how many cached calls it stands for."""

    judgement: CaseJudgement
    calls: int
    priced: bool


class Memo:
    """Stored judgements of one judge model in one cache."""

    def __init__(self, cache: ResponseCache, model: str) -> None:
        self.cache = cache
        self.model = model
        self.version = code_digest()

    @property
    def enabled(self) -> bool:
        return self.cache.enabled and self.version is not None

    def key(self, inputs: JudgeInputs, judges: list[str]) -> str:
        assert self.version is not None
        x = inputs  # every field of JudgeInputs, in order (a test checks each one counts)
        fields = (x.kind, x.question, x.answer, x.contexts, x.reference, x.payload, x.abstained)
        case = json.dumps(fields, ensure_ascii=False)
        return cache_key(
            model=f"judgement:{self.model}",
            prompt_version=self.version,
            messages=[{"role": "case", "content": case}],
            params={"judges": sorted(judges)},
            schema=None,
        )

    def get(self, key: str) -> Hit | None:
        entry = self.cache.get(key)
        if entry is None or entry.text is None:
            return None
        return _decode(entry.text)

    def put(self, key: str, judgement: CaseJudgement) -> None:
        """Store ``judgement`` if it is complete (see the module docstring)."""
        usage = judgement.usage
        if (
            judgement.error is not None
            or judgement.estimate is not None
            or _RUN_REASONS.intersection(judgement.not_judged.values())
        ):
            return
        value = {
            "metrics": judgement.metrics,
            "not_judged": judgement.not_judged,
            "details": judgement.details,
            "calls": usage.calls + usage.cached,
            "priced": usage.cost_usd is not None,
        }
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return  # not JSON: judged again next time
        self.cache.put(key, CachedResponse(text))


def _decode(text: str) -> Hit | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    metrics, not_judged = value.get("metrics"), value.get("not_judged")
    details, calls, priced = value.get("details"), value.get("calls"), value.get("priced")
    if not (
        isinstance(metrics, dict)
        and all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in metrics.values()
        )
        and isinstance(not_judged, dict)
        and all(isinstance(v, str) for v in not_judged.values())
        and isinstance(details, dict)
        and all(isinstance(v, dict) for v in details.values())
        and type(calls) is int
        and calls >= 0
        and isinstance(priced, bool)
    ):
        return None
    judgement = CaseJudgement(
        metrics=dict(metrics),
        not_judged=dict(not_judged),
        details=details,
    )
    judgement.usage.cached = calls
    judgement.usage.cost_usd = 0.0 if priced else None
    return Hit(judgement, calls, priced)
