"""The order every list of cases in the app follows, and the steps through it.

Case ids sort naturally (``qa-1, qa-3, qa-11``, :func:`pytest_ragproof.textnorm.natural_key`),
and the pager, the keys and the move after a decision walk that same order: a filter
is a subsequence of :func:`natural_order`, and :func:`neighbours` / :func:`following`
step through it by position, never by the cases' index in the file.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragproof.textnorm import natural_key

__all__ = ["following", "natural_order", "neighbours"]


def natural_order(ids: Sequence[str], groups: Sequence[str] | None = None) -> list[int]:
    """0-based indexes of ``ids`` in natural order of id (within each of ``groups``, kept
    in the order a group first appears; a case's pages under two pipelines stay apart)."""
    rank: dict[str, int] = {}
    for g in groups or ():
        rank.setdefault(g, len(rank))
    return sorted(
        range(len(ids)),
        key=lambda i: (rank[groups[i]] if groups else 0, natural_key(ids[i]), i),
    )


def neighbours(
    sequence: Sequence[int], shown: Sequence[int], index: int
) -> tuple[int | None, int | None]:
    """The cases of ``shown`` just before and just after case ``index`` in ``sequence``
    (``shown`` a subsequence of it; ``index`` need not be one of ``shown``)."""
    position = {i: p for p, i in enumerate(sequence)}
    at = position[index]
    before = [i for i in shown if position[i] < at]
    after = [i for i in shown if position[i] > at]
    return (before[-1] if before else None, after[0] if after else None)


def following(sequence: Sequence[int], shown: Sequence[int], index: int) -> int | None:
    """The case of ``shown`` after ``index`` in ``sequence``, else the first other one
    (wrapping round), else None."""
    _, after = neighbours(sequence, shown, index)
    if after is not None:
        return after
    return next((i for i in shown if i != index), None)
