"""Threshold expressions: parse ``[SELECTOR:]METRIC[.AGG] OP NUMBER`` and evaluate them.

SELECTOR is a case kind (``qa``), a question type (``distracting``), ``tag=NAME``
or ``*`` (the default). AGG (aggregate thresholds only) is ``mean`` (default),
``min``, ``max``, ``p50``, ``p90`` or ``p95``. OP is ``>=``, ``>``, ``<=`` or ``<``.

A threshold applies to a case when its selector matches the case and the metric
is declared for the case's kind in the metric registry. Pure: no pytest here.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_ragproof import defaults
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.metrics import registry
from pytest_ragproof.metrics.selector import CaseLike, Selector, parse_selector
from pytest_ragproof.numeric import percentile
from pytest_ragproof.vocabulary import KINDS, is_selector

AGGREGATORS = ("mean", "min", "max", "p50", "p90", "p95")
DEFAULT_CASE_THRESHOLDS = defaults.CASE_THRESHOLDS

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
_EXPR = re.compile(
    r"""^\s*
    (?:(?P<selector>[^:<>]+?)\s*:\s*)?
    (?P<metric>(?:[a-z][a-z_]*:)?[A-Za-z_][A-Za-z0-9_]*(?:@[0-9]+)?)
    (?:\.(?P<agg>[A-Za-z0-9]+))?
    \s*(?P<op>>=|<=|>|<)\s*
    (?P<number>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
    \s*$""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Threshold:
    """One parsed threshold expression (its selector parsed once, as ``sel``)."""

    expression: str
    selector: str
    metric: str
    aggregator: str | None
    op: str
    value: float
    scope: str  # "case" or "aggregate"
    sel: Selector = field(init=False, repr=False, compare=False)

    kinds: frozenset[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sel", Selector(self.selector))
        spec = registry.resolve(self.metric)
        object.__setattr__(self, "kinds", None if spec is None else frozenset(spec.kinds))

    def selects(self, case: CaseLike) -> bool:
        """Does the selector match this case (ignoring the metric's kinds)?"""
        return self.sel.matches(case)

    def applies_to(self, case: CaseLike) -> bool:
        kinds = self.kinds
        return (kinds is None or case.kind in kinds) and self.sel.matches(case)

    def check(self, observed: float) -> bool:
        return _OPS[self.op](observed, self.value)

    @property
    def bound(self) -> str:
        """The right-hand side, e.g. ``>= 0.8``."""
        return f"{self.op} {self.value:g}"


def misses(
    case: CaseLike, metrics: Mapping[str, float], thresholds: Iterable[Threshold]
) -> list[tuple[Threshold, float | None]]:
    """The thresholds that apply to ``case`` and that its ``metrics`` miss, with the observed
    value (None: the metric is absent, which is a miss too). The one rule a case's status
    follows, when it is scored and when ``ragproof merge`` checks a shard's file."""
    out: list[tuple[Threshold, float | None]] = []
    for t in thresholds:
        if not t.applies_to(case):
            continue
        observed = metrics.get(t.metric)
        if observed is None or not t.check(observed):
            out.append((t, observed))
    return out


def _example(scope: str) -> str:
    return "'qa:recall@5>=0.8'" if scope == "aggregate" else "'qa:hit@5>=1'"


def _evaluator_prefix(word: str, metric: str) -> bool:
    """Is ``word`` (before the first colon) an evaluator's name rather than a selector?

    Not a selector, shaped like a name, and not a likely typo of one (``qx`` stays an
    unknown selector, so its error says what a selector is).
    """
    import difflib

    from pytest_ragproof.vocabulary import KINDS, QUESTION_TYPES

    if is_selector(word) or registry.resolve(f"{word}:{metric}") is None:
        return False
    cutoff = 0.5 if len(word) <= 3 else 0.75
    return not difflib.get_close_matches(word, [*KINDS, *QUESTION_TYPES], n=1, cutoff=cutoff)


def parse_threshold(text: str, scope: str) -> Threshold:
    """Parse one expression; raise ConfigError with a correct example on failure."""
    option = f"--ragproof-{scope}-threshold"
    m = _EXPR.match(text)
    if m is None:
        raise ConfigError(
            f"Could not parse {scope} threshold '{text}'; expected "
            f"[SELECTOR:]METRIC{'[.AGG]' if scope == 'aggregate' else ''} OP NUMBER, "
            f"e.g. {option} {_example(scope)}"
        )
    given = m.group("selector")
    metric = m.group("metric")
    if given is not None and ":" not in metric and _evaluator_prefix(given.strip(), metric):
        # 'ragas:faithfulness>=0.8': an evaluator's metric, not a selector and a metric.
        metric, given = f"{given.strip()}:{metric}", None
    try:
        selector = parse_selector(
            given or "*",
            where=f"{scope} threshold '{text}'",
            example=f"{option} {_example(scope)}",
        ).text
    except ConfigError as exc:
        if given is not None and registry.resolve(f"{given.strip()}:{metric}") is not None:
            raise ConfigError(
                f"{exc}; for the metric '{metric}' of an evaluator named '{given.strip()}' "
                f"write '*:{given.strip()}:{metric}'"
            ) from None
        raise
    agg = m.group("agg")
    spec = registry.resolve(metric)
    if spec is None:
        close = closest_metric(metric)
        hint = f" (did you mean '{close}'?)" if close else ""
        raise ConfigError(
            f"Unknown metric '{metric}' in {scope} threshold '{text}'{hint}; known metrics: "
            f"{', '.join(registry.known_names())}, e.g. {option} {_example(scope)}"
        )
    _check_kinds(text, scope, selector, metric, spec.kinds)
    if scope == "case" and agg is not None:
        raise ConfigError(
            f"Case threshold '{text}' has an aggregator '.{agg}'; aggregators belong to "
            f"aggregate thresholds, e.g. --ragproof-aggregate-threshold 'latency_s.p95<=2'"
        )
    if agg is not None and agg not in AGGREGATORS:
        raise ConfigError(
            f"Unknown aggregator '.{agg}' in '{text}'; use one of {', '.join(AGGREGATORS)}, "
            f"e.g. --ragproof-aggregate-threshold 'latency_s.p95<=2'"
        )
    value = float(m.group("number"))
    if not math.isfinite(value):
        raise ConfigError(f"Threshold '{text}' needs a finite number, e.g. {_example(scope)}")
    return Threshold(
        expression=text.strip(),
        selector=selector,
        metric=metric,
        aggregator=(agg or "mean") if scope == "aggregate" else None,
        op=m.group("op"),
        value=value,
        scope=scope,
    )


def closest_metric(name: str) -> str | None:
    """The registered metric nearest to an unknown ``name`` (``recal@5`` -> ``recall@5``)."""
    import difflib

    k = registry.cutoff_of(name) or 5
    names = [n[:-2] + f"@{k}" if n.endswith("@k") else n for n in registry.known_names()]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


# The kinds a selector can take: a kind, or the question type only one kind may have.
_SELECTOR_KINDS = {
    **{k: frozenset({k}) for k in KINDS},
    "out_of_scope": frozenset({"unanswerable"}),
}


def _check_kinds(text: str, scope: str, selector: str, metric: str, kinds: frozenset[str]) -> None:
    """Refuse a threshold whose selector takes only cases of kinds the metric never has
    (``unanswerable:recall@5``): it would never apply, or fail at the end with no data."""
    taken = _SELECTOR_KINDS.get(selector)
    if taken is None or taken & kinds:
        return
    on = [k for k in KINDS if k in kinds]
    what = selector if selector in KINDS else f"{selector} (kind {', '.join(sorted(taken))})"
    theirs = ", ".join(s.name for s in registry.specs() if taken & s.kinds)
    rest = text.split(":", 1)[1].strip()
    raise ConfigError(
        f"{scope.capitalize()} threshold '{text}' can never apply: {metric} is measured on "
        f"{' and '.join(on)} cases, not on {what} cases; write e.g. "
        f"--ragproof-{scope}-threshold '{on[0]}:{rest}', or name a metric of {what} cases "
        f"({theirs})"
    )


def parse_case_thresholds(values: Iterable[str]) -> list[Threshold]:
    """User case thresholds plus the defaults, unless a value is ``none``."""
    values = [v for v in values if v.strip()]
    use_defaults = not any(v.strip().lower() == "none" for v in values)
    exprs = [v for v in values if v.strip().lower() != "none"]
    if use_defaults:
        exprs = list(DEFAULT_CASE_THRESHOLDS) + [
            e for e in exprs if e not in DEFAULT_CASE_THRESHOLDS
        ]
    return [parse_threshold(e, "case") for e in exprs]


def parse_aggregate_thresholds(values: Iterable[str]) -> list[Threshold]:
    return [parse_threshold(v, "aggregate") for v in values if v.strip() and v.strip() != "none"]


def aggregate(values: Sequence[float]) -> dict[str, float]:
    """mean, min, max, p50, p90, p95 of non-empty values."""
    ordered = sorted(values)
    return {
        "mean": math.fsum(ordered) / len(ordered),
        "min": float(ordered[0]),
        "max": float(ordered[-1]),
        "p50": percentile(ordered, 0.50),
        "p90": percentile(ordered, 0.90),
        "p95": percentile(ordered, 0.95),
    }


def cutoffs(thresholds: Iterable[Threshold]) -> set[int]:
    """The k values thresholds refer to (so they are always computed)."""
    out: set[int] = set()
    for t in thresholds:
        k = registry.cutoff_of(t.metric)
        if k is not None:
            out.add(k)
    return out
