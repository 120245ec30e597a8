"""The deeply immutable JSON object that holds case metadata (no pydantic here)."""

from __future__ import annotations

from typing import Any


class FrozenDict(dict[str, Any]):
    """A dict that refuses mutation: the deeply immutable JSON object of ``metadata``.

    It stays a ``dict`` subclass so ``json.dumps`` serializes it natively.
    """

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("case metadata is immutable")

    __setitem__ = _refuse
    __delitem__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse  # type: ignore[assignment]
    setdefault = _refuse
    update = _refuse
    __ior__ = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted((k, _hashable(v)) for k, v in self.items())))


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


class CheckedFrozenDict(FrozenDict):
    """A FrozenDict that normalization built from verified JSON (finite, string keys).

    Validation accepts it without walking it again; only this package creates it.
    """

    __slots__ = ()
