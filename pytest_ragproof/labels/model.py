"""One human label (``ragproof.label/1``): its fields, their checks and its JSON line.

A label is one person's verdict on one judged metric of one case of one pipeline,
tied to exactly what the judge read (``digest``, see
:func:`pytest_ragproof.labels.cases.case_digest`)::

    {"format": "ragproof.label/1", "dataset_sha256": "<64 hex>"|null, "case_id": "q1",
     "pipeline": "rag", "digest": "sha256:<64 hex>", "metric": "faithfulness",
     "verdict": 1, "claims": [{"index": 2, "verdict": "unsupported"}], "note": "...",
     "reviewer": "ana", "time": "2026-12-02T10:00:00Z"}

``verdict`` is 0 or 1 (a yes/no verdict), a number in [0, 1] (a grade), or null:
null withdraws the reviewer's earlier label of the same key (undo, append-only).
``claims`` (faithfulness only) overrule single claim verdicts of the judge; indexes
are 1-based positions in the judge's claim list, as the results number contexts.
``claims`` and ``note`` are left out of the line when absent. Keys are written in
this fixed order; the constructor refuses a label the reader would refuse.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from pytest_ragproof.errors import LabelError
from pytest_ragproof.metrics.judged import JUDGE_SPECS

__all__ = [
    "CLAIM_METRICS",
    "CLAIM_VERDICTS",
    "FIELDS",
    "LABELLED_METRICS",
    "LABEL_FORMAT",
    "VERDICT_MEANINGS",
    "ClaimVerdict",
    "Label",
    "LabelKey",
    "now",
]

LABEL_FORMAT = "ragproof.label/1"

#: The keys of a label line, in the order they are written.
FIELDS = (
    "format",
    "dataset_sha256",
    "case_id",
    "pipeline",
    "digest",
    "metric",
    "verdict",
    "claims",
    "note",
    "reviewer",
    "time",
)
_OPTIONAL = frozenset({"claims", "note"})

#: The metrics a person can label: every judge's own metric (results' metric keys).
LABELLED_METRICS = tuple(s.name for s in JUDGE_SPECS)
#: What a verdict of yes (1) and of no (0) says on each labelled metric, as the review app
#: shows it beside the buttons: yes is what a judge score of 1 says (a person's grade and a
#: judge's score both read as yes from 0.5), so on ``abstained_judged`` yes is a refusal.
VERDICT_MEANINGS: dict[str, tuple[str, str]] = {s.name: (s.yes, s.no) for s in JUDGE_SPECS}
#: The metrics whose judgement lists claims a label may overrule, and that list's key.
CLAIM_METRICS = {s.name: s.claims_key for s in JUDGE_SPECS if s.claims_key is not None}
CLAIM_VERDICTS = ("supported", "unsupported")

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

#: (reviewer, dataset_sha256, case_id, pipeline, metric): the latest label of a key wins.
LabelKey = tuple[str, str | None, str, str, str]


def now() -> str:
    """The current UTC time as a label writes it (``2026-12-02T10:00:00Z``)."""
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fail(field: str, problem: str, fix: str) -> LabelError:
    return LabelError(f"field '{field}': {problem}", hint=fix)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _identifier(field: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip() or _CONTROL.search(value):
        got = _kind(value) if not isinstance(value, str) else "an empty or multi-line string"
        raise _fail(field, f"must be a non-empty one-line string, got {got}", f"give the {field}")


@dataclass(frozen=True)
class ClaimVerdict:
    """A person's verdict on the judge's claim number ``index`` (1-based)."""

    index: int
    verdict: Literal["supported", "unsupported"]

    def __post_init__(self) -> None:
        if not isinstance(self.index, int) or isinstance(self.index, bool) or self.index < 1:
            raise _fail(
                "claims.index",
                f"must be a whole number >= 1, got {_kind(self.index)}",
                "number claims from 1, as the results list them",
            )
        if self.verdict not in CLAIM_VERDICTS:
            raise _fail(
                "claims.verdict",
                f"must be 'supported' or 'unsupported', got {_kind(self.verdict)}",
                'write e.g. {"index": 1, "verdict": "unsupported"}',
            )

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "verdict": self.verdict}


@dataclass(frozen=True)
class Label:
    """One line of a labels file. The constructor checks every field (:class:`LabelError`)."""

    dataset_sha256: str | None
    case_id: str
    pipeline: str
    digest: str
    metric: str
    verdict: float | None
    reviewer: str
    time: str
    claims: tuple[ClaimVerdict, ...] | None = None
    note: str | None = None

    def __post_init__(self) -> None:
        if self.dataset_sha256 is not None and not (
            isinstance(self.dataset_sha256, str) and _SHA256.fullmatch(self.dataset_sha256)
        ):
            raise _fail(
                "dataset_sha256",
                "must be null or 64 lowercase hex digits",
                "copy the sha256 of the case's dataset from the results (datasets[].sha256)",
            )
        _identifier("case_id", self.case_id)
        _identifier("pipeline", self.pipeline)
        if not isinstance(self.digest, str) or not _DIGEST.fullmatch(self.digest):
            raise _fail(
                "digest",
                "must be 'sha256:' and 64 lowercase hex digits",
                "compute it with pytest_ragproof.labels.case_digest(case)",
            )
        if self.metric not in LABELLED_METRICS:
            raise _fail(
                "metric",
                "is not a judged metric"
                + (f" ('{self.metric}')" if isinstance(self.metric, str) else ""),
                f"choose from {', '.join(LABELLED_METRICS)}",
            )
        self._check_verdict()
        _identifier("reviewer", self.reviewer)
        if not isinstance(self.time, str) or not _TIME.fullmatch(self.time):
            raise _fail(
                "time",
                "must be a UTC time like 2026-12-02T10:00:00Z",
                "write the time in UTC, to the second, with a trailing Z",
            )
        self._check_claims()
        if self.note is not None and not isinstance(self.note, str):
            raise _fail("note", f"must be a string, got {_kind(self.note)}", "leave it out")

    def _check_verdict(self) -> None:
        value = self.verdict
        if value is None:
            return
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0 <= value <= 1
        ):
            raise _fail(
                "verdict",
                f"must be 0, 1, a number in [0, 1] or null, got {_kind(value)}"
                + (" out of range" if isinstance(value, int | float) else ""),
                "write 1 (yes), 0 (no), a grade such as 0.5, or null to withdraw a label",
            )
        if value in (0, 1) and not isinstance(value, int):
            object.__setattr__(self, "verdict", int(value))  # 1.0 and 1 are the same verdict

    def _check_claims(self) -> None:
        claims = self.claims
        if claims is None:
            return
        if isinstance(claims, list):
            object.__setattr__(self, "claims", claims := tuple(claims))
        if not isinstance(claims, tuple) or not all(isinstance(c, ClaimVerdict) for c in claims):
            raise _fail("claims", "must be a list of claim verdicts", "leave it out")
        if self.metric not in CLAIM_METRICS:
            raise _fail(
                "claims",
                f"only a label of {', '.join(CLAIM_METRICS)} may overrule claims",
                "leave claims out of this label",
            )
        if self.verdict is None and claims:
            raise _fail("claims", "a withdrawal (verdict null) carries no claims", "leave it out")
        indexes = [c.index for c in claims]
        if len(set(indexes)) != len(indexes):
            raise _fail("claims", "a claim index appears twice", "give each claim once")

    @property
    def key(self) -> LabelKey:
        """What a later label replaces: (reviewer, dataset_sha256, case_id, pipeline, metric)."""
        return (self.reviewer, self.dataset_sha256, self.case_id, self.pipeline, self.metric)

    @property
    def withdrawn(self) -> bool:
        return self.verdict is None

    def to_dict(self) -> dict[str, Any]:
        """The label as its line holds it: keys in the fixed order, absent options left out."""
        out: dict[str, Any] = {
            "format": LABEL_FORMAT,
            "dataset_sha256": self.dataset_sha256,
            "case_id": self.case_id,
            "pipeline": self.pipeline,
            "digest": self.digest,
            "metric": self.metric,
            "verdict": self.verdict,
        }
        if self.claims is not None:
            out["claims"] = [c.to_dict() for c in self.claims]
        if self.note is not None:
            out["note"] = self.note
        out["reviewer"] = self.reviewer
        out["time"] = self.time
        return out

    def to_line(self) -> str:
        """One JSON line (UTF-8 text, ends with ``\\n``), keys in the fixed order."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)
        return text + "\n"

    @classmethod
    def from_dict(cls, data: object) -> Label:
        """A label from a parsed line; :class:`LabelError` naming the field otherwise."""
        if not isinstance(data, dict):
            raise LabelError(
                f"expected a JSON object, got {_kind(data)}", hint="one label object per line"
            )
        fmt = data.get("format")
        if fmt != LABEL_FORMAT:
            shown = f"'{fmt}'" if isinstance(fmt, str) and len(fmt) <= 40 else _kind(fmt)
            raise _fail(
                "format",
                f"unknown format {shown}, expected '{LABEL_FORMAT}'",
                "read it with the pytest-ragproof version that wrote it, or give a labels file",
            )
        unknown = sorted(str(k) for k in data if k not in FIELDS)
        if unknown:
            raise LabelError(
                f"unknown field(s) {', '.join(repr(u[:40]) for u in unknown)}",
                hint=f"a label has {', '.join(FIELDS)}",
            )
        missing = [k for k in FIELDS if k not in data and k not in _OPTIONAL]
        if missing:
            raise LabelError(
                f"missing field(s) {', '.join(missing)}", hint=f"a label has {', '.join(FIELDS)}"
            )
        claims = data.get("claims")
        parsed: tuple[ClaimVerdict, ...] | None = None
        if claims is not None:
            if not isinstance(claims, list) or not all(
                isinstance(c, dict) and set(c) == {"index", "verdict"} for c in claims
            ):
                raise _fail(
                    "claims",
                    'must be a list of {"index": ..., "verdict": ...} objects',
                    'write e.g. "claims": [{"index": 1, "verdict": "unsupported"}]',
                )
            parsed = tuple(ClaimVerdict(c["index"], c["verdict"]) for c in claims)
        return cls(
            dataset_sha256=data["dataset_sha256"],
            case_id=data["case_id"],
            pipeline=data["pipeline"],
            digest=data["digest"],
            metric=data["metric"],
            verdict=data["verdict"],
            reviewer=data["reviewer"],
            time=data["time"],
            claims=parsed,
            note=data.get("note"),
        )
