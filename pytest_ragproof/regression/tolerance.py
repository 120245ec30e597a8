"""Regression tolerances: parse ``[SELECTOR:]METRIC=DELTA`` and look them up.

A tolerance is how far a metric's mean may move in the worse direction, against
the baseline, before a significant change counts as a regression. SELECTOR is
the same as in thresholds (a kind, a question type, ``tag=NAME`` or ``*``, the
default); DELTA is a finite number >= 0 in the metric's own unit (``0.02`` is
two points of recall). Without a tolerance a metric's tolerance is 0.

Lookup: a tolerance for exactly (selector, metric) wins; otherwise one written
for ``*`` and that metric applies to every selector of the metric.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.metrics import registry
from pytest_ragproof.metrics.selector import Selector, parse_selector

__all__ = ["Tolerance", "parse_tolerance", "parse_tolerances", "tolerance_for"]

EXAMPLE = "--ragproof-regression-tolerance 'qa:recall@5=0.02'"
_EXPR = re.compile(
    r"""^\s*
    (?:(?P<selector>[^:]+?)\s*:\s*)?
    (?P<metric>[A-Za-z_][A-Za-z0-9_]*(?:@[0-9]+)?)
    \s*=\s*
    (?P<number>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
    \s*$""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Tolerance:
    """One parsed tolerance expression."""

    selector: str
    metric: str
    delta: float

    @property
    def sel(self) -> Selector:
        return Selector(self.selector)

    @property
    def expression(self) -> str:
        return f"{self.selector}:{self.metric}={self.delta:g}"


def parse_tolerance(text: str) -> Tolerance:
    """Parse one expression; raise ConfigError with a correct example on failure."""
    m = _EXPR.match(text)
    if m is None:
        raise ConfigError(
            f"Could not parse regression tolerance '{text}'; expected "
            f"[SELECTOR:]METRIC=DELTA, e.g. {EXAMPLE}"
        )
    selector = parse_selector(
        m.group("selector") or "*", where=f"regression tolerance '{text}'", example=EXAMPLE
    ).text
    metric = m.group("metric")
    if registry.resolve(metric) is None:
        raise ConfigError(
            f"Unknown metric '{metric}' in regression tolerance '{text}'; known metrics: "
            f"{', '.join(registry.known_names())}, e.g. {EXAMPLE}"
        )
    delta = float(m.group("number"))
    if not math.isfinite(delta) or delta < 0:
        raise ConfigError(
            f"Regression tolerance '{text}' needs a finite DELTA >= 0 (how far the mean may "
            f"move in the worse direction), e.g. {EXAMPLE}"
        )
    return Tolerance(selector, metric, delta)


def parse_tolerances(values: Iterable[str | Tolerance]) -> list[Tolerance]:
    """Parse every expression (already parsed ones pass through); a later one replaces an
    earlier one for the same selector and metric."""
    by_key: dict[tuple[str, str], Tolerance] = {}
    for value in values:
        if isinstance(value, str) and not value.strip():
            continue
        tol = value if isinstance(value, Tolerance) else parse_tolerance(value)
        by_key[(tol.selector, tol.metric)] = tol
    return list(by_key.values())


def tolerance_for(tolerances: Iterable[Tolerance], selector: str, metric: str) -> float:
    """The tolerance of (selector, metric): exact match, else ``*`` for the metric, else 0."""
    fallback = 0.0
    for tol in tolerances:
        if tol.metric != metric:
            continue
        if tol.selector == selector:
            return tol.delta
        if tol.selector == "*":
            fallback = tol.delta
    return fallback
