"""The confidence interval of a change in a 0/1 metric over paired cases.

The paired t interval of :mod:`.stats` assumes differences spread like a normal
variable. Differences of a 0/1 metric take only the values -1, 0 and 1, and with few
pairs its interval reaches outside [-1, 1] (two pairs gave about [-6.85, 5.85]): a
range the change of a proportion can never take. For 0/1 metrics the comparison uses
Newcombe's hybrid score interval for the difference of paired proportions (Newcombe,
*Statistics in Medicine* 17, 1998, method 10; the "Newcombe square-and-add" interval
of Fagerland, Lydersen and Laake, *BMC Medical Research Methodology* 13, 2013), which
always lies within [-1, 1]:

* with the pairs counted as ``a`` (1 before, 1 after), ``b`` (0 before, 1 after),
  ``c`` (1 before, 0 after) and ``d`` (0 and 0), ``n`` in all, the proportions after
  and before are ``p1 = (a + b) / n`` and ``p2 = (a + c) / n`` and the change is
  ``p1 - p2 = (b - c) / n``;
* ``l1, u1`` and ``l2, u2`` are the Wilson score limits of ``p1`` and ``p2``;
* ``phi`` is the correlation of the two margins, ``(ad - bc) / sqrt((a+b)(c+d)(a+c)(b+d))``
  (0 when a margin is empty), with ``ad - bc`` lowered by ``n / 2`` (not below 0) when
  positive, as Newcombe gives it;
* ``low = p1 - p2 - sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2)``,
  ``high = p1 - p2 + sqrt((u1 - p1)^2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)^2)``.

No random numbers, so a report is the same every time. As the t interval, it is a
picture of the uncertainty beside the gate's exact McNemar test, not the gate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from pytest_ragproof.numeric import is_binary
from pytest_ragproof.regression.stats import MeanInterval

__all__ = ["paired_proportion_interval"]

METHOD = "newcombe-paired"


def _wilson(successes: int, n: int, z: float) -> tuple[float, float]:
    p = successes / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)


def paired_proportion_interval(
    before: Sequence[float], after: Sequence[float], level: float = 0.95
) -> MeanInterval | None:
    """Newcombe's interval of ``mean(after) - mean(before)`` for paired 0/1 values.

    ``None`` with fewer than two pairs, as the t interval. Raises ``ValueError`` when a
    value is not 0 or 1 or the sequences differ in length.
    """
    if not 0.0 < level < 1.0:
        raise ValueError("level must be strictly between 0 and 1")
    if len(before) != len(after):
        raise ValueError("before and after must pair up")
    if not is_binary((*before, *after)):
        raise ValueError("paired proportions need values that are 0 or 1")
    n = len(before)
    if n < 2:
        return None
    a = sum(1 for x, y in zip(before, after, strict=True) if x == 1 and y == 1)
    b = sum(1 for x, y in zip(before, after, strict=True) if x == 0 and y == 1)
    c = sum(1 for x, y in zip(before, after, strict=True) if x == 1 and y == 0)
    d = n - a - b - c
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = _wilson(a + b, n, z)
    l2, u2 = _wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross: float = a * d - b * c
    if cross > 0:
        cross = max(cross - n / 2, 0.0)
    phi = cross / math.sqrt(margins) if margins else 0.0
    change = p1 - p2
    low = change - math.sqrt(
        max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    high = change + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return MeanInterval(METHOD, level, max(-1.0, low), min(1.0, high))
