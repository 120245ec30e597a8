"""The bootstrap of judge agreement, vectorised with NumPy (issue 39.4).

``ragproof judge-check`` and the review app's Agreement page both call
:func:`bootstrap`, so their intervals are the same numbers. Every resample draws
``n`` items with replacement: the whole ``resamples x n`` index matrix comes from
``numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))``.

- 0/1 figures depend on the confusion table only: its four counts per resample are
  taken from the drawn cells at once, then ``figures_of`` gives the figures.
- Spearman's ρ: average ranks of each resample (ties sharing the mean rank) from
  one sort of all resamples, then Pearson's r per row.
- Kendall's τ-b: from each resample's contingency table of (label, score) values,
  in exact integer arithmetic (concordant minus discordant pairs, ties corrected).

A figure undefined on a resample (a constant row) is left out of its interval and
counted, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragproof.numeric import percentile

Figures = Callable[[Sequence[float], Sequence[float]], dict[str, float | None]]
_CELLS_PER_CHUNK = 20_000_000  # contingency cells held at once (Kendall's τ-b)


@dataclass
class Interval:
    low: float | None
    high: float | None
    resamples: int  # resamples on which the figure was defined


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with the llm and review extras
        from pytest_ragproof.errors import MissingExtraError

        raise MissingExtraError(
            "review", "numpy", "bootstrap intervals of judge agreement"
        ) from None
    return numpy


def _row_ranks(np: Any, codes: Any, m: int) -> Any:
    """1-based average ranks within each row of ``codes`` (integers in [0, m))."""
    rows, n = codes.shape
    offset = np.arange(rows, dtype=np.int64)[:, None]
    keys = codes + offset * m
    ordered = np.sort(keys, axis=None)
    left = np.searchsorted(ordered, keys, side="left") - offset * n
    right = np.searchsorted(ordered, keys, side="right") - offset * n
    return (left + right + 1) / 2.0


def _pearson_rows(np: Any, x: Any, y: Any) -> list[float | None]:
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    sxy = (dx * dy).sum(axis=1)
    sxx = (dx * dx).sum(axis=1)
    syy = (dy * dy).sum(axis=1)
    out: list[float | None] = []
    for a, b, c in zip(sxy.tolist(), sxx.tolist(), syy.tolist(), strict=True):
        out.append(None if b == 0 or c == 0 else max(-1.0, min(1.0, a / (b * c) ** 0.5)))
    return out


def _kendall_rows(np: Any, cx: Any, cy: Any, mx: int, my: int) -> list[float | None]:
    rows, n = cx.shape
    n0 = n * (n - 1) // 2
    out: list[float | None] = []
    chunk = max(1, _CELLS_PER_CHUNK // max(1, mx * my))
    for start in range(0, rows, chunk):
        part_x, part_y = cx[start : start + chunk], cy[start : start + chunk]
        k = part_x.shape[0]
        flat = (np.arange(k, dtype=np.int64)[:, None] * (mx * my) + part_x * my + part_y).ravel()
        table = np.bincount(flat, minlength=k * mx * my).reshape(k, mx, my)
        # above[a, b]: items with a larger label and a larger score than (a, b);
        # below[a, b]: a larger label and a smaller score.
        tail = np.flip(np.cumsum(np.flip(table, axis=1), axis=1), axis=1)  # labels >= a
        later = np.zeros_like(tail)
        later[:, :-1, :] = tail[:, 1:, :]  # labels > a
        right = np.flip(np.cumsum(np.flip(later, axis=2), axis=2), axis=2)  # scores >= b
        above = np.zeros_like(right)
        above[:, :, :-1] = right[:, :, 1:]
        left = np.cumsum(later, axis=2)  # scores <= b
        below = np.zeros_like(left)
        below[:, :, 1:] = left[:, :, :-1]
        s = (table * (above - below)).sum(axis=(1, 2))
        by_x, by_y = table.sum(axis=2), table.sum(axis=1)
        tied_x = (by_x * (by_x - 1) // 2).sum(axis=1)
        tied_y = (by_y * (by_y - 1) // 2).sum(axis=1)
        for si, tx, ty in zip(s.tolist(), tied_x.tolist(), tied_y.tolist(), strict=True):
            den = (n0 - tx) * (n0 - ty)
            out.append(None if den == 0 else max(-1.0, min(1.0, si / den**0.5)))
    return out


def _graded(np: Any, labels: Any, scores: Any, picks: Any) -> dict[str, list[float | None]]:
    xs, cx_all = np.unique(labels, return_inverse=True)
    ys, cy_all = np.unique(scores, return_inverse=True)
    cx, cy = cx_all[picks], cy_all[picks]
    rx = _row_ranks(np, cx, len(xs))
    ry = _row_ranks(np, cy, len(ys))
    return {
        "spearman": _pearson_rows(np, rx, ry),
        "kendall_tau_b": _kendall_rows(np, cx, cy, len(xs), len(ys)),
    }


def _binary(
    np: Any, labels: Any, predicted: Any, picks: Any, figures_of: Callable[..., Any]
) -> dict[str, list[float | None]]:
    cells = (2 * labels.astype(np.int64) + predicted.astype(np.int64))[picks]
    tn, fp, fn, tp = ((cells == v).sum(axis=1).tolist() for v in range(4))
    drawn: dict[str, list[float | None]] = {}
    for row in zip(tp, fp, fn, tn, strict=True):
        for name, value in figures_of(*row).items():
            drawn.setdefault(name, []).append(value)
    return drawn


def bootstrap(
    labels: Sequence[float],
    scores: Sequence[float],
    *,
    binary: bool,
    figures_of: Callable[..., dict[str, float | None]],
    resamples: int,
    seed: int,
) -> dict[str, Interval]:
    """95% percentile intervals of the figures, over ``resamples`` seeded resamples.

    ``binary``: ``scores`` are the judge's 0/1 decisions and the figures are
    ``figures_of(tp, fp, fn, tn)``'s; otherwise Spearman's ρ and Kendall's τ-b.
    """
    n = len(labels)
    if not n or resamples <= 0:
        return {}
    np = _numpy()
    picks = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    x = np.asarray(labels, dtype=np.float64)
    y = np.asarray(scores, dtype=np.float64)
    drawn = _binary(np, x, y, picks, figures_of) if binary else _graded(np, x, y, picks)
    out: dict[str, Interval] = {}
    for name, found in drawn.items():
        values = sorted(v for v in found if v is not None)
        if values:
            out[name] = Interval(percentile(values, 0.025), percentile(values, 0.975), len(values))
        else:
            out[name] = Interval(None, None, 0)
    return out
