"""A parsed results document as its typed model (:mod:`pytest_ragproof.results.models`).

:func:`results_model` checks the schema and returns the model every reader reads;
:func:`load_results` (and :func:`check_results`, which keeps no model) checks a parsed
``ragproof.results/1`` document once, on read, as merges and baselines need it: the
fields merging and comparing use have the right types, every metric is a finite number
inside its range, no case appears twice, and, when the file carries one, its digest
matches its contents (an edited or truncated file); a file of a release that writes
digests must carry one. Each refusal is a :class:`~pytest_ragproof.errors.ConfigError`
naming the file, the case and the field, never the text of a case. Imported only where
a results file is read (pydantic is not loaded by a plain pytest run).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.results.checked import CheckedResults
from pytest_ragproof.results.models import Results

__all__ = ["as_model", "check_results", "load_results", "metric_range", "results_model"]


def metric_range(name: str) -> tuple[float, float] | None:
    """The values a metric can take: ``latency_s`` >= 0, every registered metric in
    [0, 1]; None (any finite number) for a bring-your-own evaluator's metric."""
    from pytest_ragproof.metrics import registry

    if name == "latency_s":
        return (0.0, math.inf)
    if ":" in name or registry.resolve(name) is None:
        return None
    return (0.0, 1.0)


def _case_label(doc: Mapping[str, Any], index: int) -> str:
    cases = doc.get("cases")
    case = cases[index] if isinstance(cases, list) and index < len(cases) else None
    if isinstance(case, Mapping) and isinstance(case.get("id"), str):
        return f"case {case['id']} (cases[{index}])"
    return f"cases[{index}]"


def _where(doc: Mapping[str, Any], loc: tuple[int | str, ...]) -> str:
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        rest = ".".join(str(p) for p in loc[2:]) or "the entry"
        return f"{_case_label(doc, loc[1])}, field {rest}"
    return "field " + ".".join(str(p) for p in loc)


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # nan, inf: no text of a case
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


_FIX = "was it edited by hand? write it again with --ragproof-report (or ragproof merge -o)"


def results_model(doc: Mapping[str, Any], name: str = "the results document") -> Results:
    """The typed model of a parsed document (:class:`~pytest_ragproof.results.models.Results`):
    what a renderer reads of any document, the one a run has just built, a hand-built one or
    a file read without :func:`load_results`'s checks (a part it lacks is its default).

    ConfigError naming ``name`` and the field when a part has the wrong type.
    """
    return _validated(Results, doc, name)


def _validated(model: type[Results], doc: Mapping[str, Any], name: str) -> Results:
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = tuple(err["loc"])
        if err["type"] == "missing":
            problem = "missing"
        elif err["type"] in ("model_type", "model_attributes_type"):
            problem = f"should be an object, got {_kind_of(err.get('input'))}"
        else:
            problem = f"{err['msg'].rstrip('.')}, got {_kind_of(err.get('input'))}"
        raise ConfigError(f"{name}: {_where(doc, loc)}: {problem}; {_FIX}") from None


def as_model(doc: Mapping[str, Any] | Results, name: str = "the results document") -> Results:
    """``doc`` as its model: the model itself, or :func:`results_model` of a parsed one."""
    return doc if isinstance(doc, Results) else results_model(doc, name)


def load_results(doc: Mapping[str, Any], name: str) -> Results:
    """The typed model of a document that merging or comparing can trust; ConfigError
    (naming ``name``, the case and the field) for one it cannot: the schema with the fields
    they read required (:class:`~pytest_ragproof.results.models.CheckedResults`), a case
    twice, a metric outside its range, the digest."""
    results = _validated(CheckedResults, doc, name)
    seen: dict[tuple[str, str], int] = {}
    for i, case in enumerate(results.cases):
        key = (case.pipeline, case.id)
        if key in seen:
            raise ConfigError(
                f"{name}: {_case_label(doc, i)}, field id: the case appears twice for pipeline "
                f"{key[0]} (first at cases[{seen[key]}]); {_FIX}"
            )
        seen[key] = i
        for metric, value in case.metrics.items():
            bounds = metric_range(metric)
            if bounds is not None and not bounds[0] <= value <= bounds[1]:
                high = "" if math.isinf(bounds[1]) else f" and {bounds[1]:g}"
                raise ConfigError(
                    f"{name}: {_case_label(doc, i)}, field metrics.{metric}: {value:g} is outside "
                    f"the metric's range (between {bounds[0]:g}{high}); {_FIX}"
                )
    _check_digest(doc, name)
    return results


def check_results(doc: Mapping[str, Any], name: str) -> None:
    """Refuse (ConfigError naming ``name``, the case and the field) a document that merging
    or comparing cannot trust (:func:`load_results`, its model not kept)."""
    load_results(doc, name)


def _release(doc: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The pytest-ragproof release that wrote ``doc`` (its ``versions``), when it names one."""
    versions = doc.get("versions")
    text = versions.get("pytest-ragproof") if isinstance(versions, Mapping) else None
    if not isinstance(text, str):
        return None
    parts = text.split("+")[0].split(".")[:3]
    if not all(p.isdigit() for p in parts) or not parts:
        return None
    return tuple(int(p) for p in parts)


def _check_digest(doc: Mapping[str, Any], name: str) -> None:
    from pytest_ragproof.results.digest import (
        DIGEST_COVERS,
        DIGEST_SINCE,
        LEGACY_COVERS,
        digest,
    )

    recorded = doc.get("digest")
    if recorded is None:
        release = _release(doc)
        if release is not None and release < DIGEST_SINCE:
            return  # written before digests: the schema and ranges above are all it has
        wrote = (
            "the pytest-ragproof release it names writes"
            if release is not None
            else "every pytest-ragproof release writes"
        )
        raise ConfigError(
            f"{name}: field digest: missing, but {wrote} one with every results file, so "
            f"the file was edited after it was written; {_FIX}"
        )
    covers = tuple(recorded["covers"])
    if covers not in (DIGEST_COVERS, LEGACY_COVERS):
        raise ConfigError(
            f"{name}: field digest.covers: {list(covers)}, expected {list(DIGEST_COVERS)}; {_FIX}"
        )
    if digest(doc, covers) != recorded["sha256"]:
        what = "cases" if covers == LEGACY_COVERS else "contents"
        raise ConfigError(
            f"{name}: field digest: the file's {what} do not match the digest "
            f"written with them (the file was edited or truncated after it was written); use "
            "the file as pytest-ragproof wrote it, or run again to write a new one"
        )
