"""Request slots: at most N requests in flight, handed out by priority then arrival."""

from __future__ import annotations

import contextvars
import heapq
import itertools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

__all__ = ["SlotGate", "request_priority"]

#: The order in which waiting requests get a free slot: lower first, then first come.
#: A caller sets it for the requests it starts (the judge stage: the case's position,
#: so an earlier case's verdict steps go before a later case's first steps, and the
#: case pytest waits for is done first). Tasks inherit it from their creator.
request_priority: contextvars.ContextVar[int] = contextvars.ContextVar(
    "ragproof_request_priority", default=0
)


class SlotGate:
    """At most ``slots`` holders at once; waiters get a freed slot by :data:`request_priority`.

    A semaphore whose queue is ordered by (priority, arrival) instead of arrival only.
    A released slot goes straight to the next waiter. Used from one event loop.
    """

    def __init__(self, slots: int) -> None:
        self.slots = max(slots, 1)
        self.free = self.slots
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    def limit(self, slots: int) -> None:
        """From now on at most ``slots`` holders: slots held above it are not passed on."""
        slots = max(slots, 1)
        self.free -= self.slots - slots  # negative while more than ``slots`` are held
        self.slots = slots

    async def __aenter__(self) -> None:
        import asyncio

        if self.free > 0 and not self._waiting:
            self.free -= 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (request_priority.get(), next(self._arrivals), granted))
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._release()  # the slot came with the cancellation: pass it on
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        if self.free < 0:
            self.free += 1  # the gate was narrowed: this slot is gone
            return
        while self._waiting:
            granted = heapq.heappop(self._waiting)[2]
            if not granted.done():  # a cancelled waiter is skipped
                granted.set_result(None)
                return
        self.free += 1
