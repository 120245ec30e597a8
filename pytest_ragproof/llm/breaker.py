"""When an endpoint answers nothing: lower the concurrency once, then stop once.

A local server that cannot keep up (or a model that writes until its context is
full) times out on every request; retrying every call of every case then takes
hours, and servers that do not cancel an abandoned request (llama-cpp-python's)
queue each retry behind the last. The :class:`Breaker` of a provider watches the
requests of one endpoint:

- after :data:`UNANSWERED_LIMIT` consecutive requests without an answer (timeouts,
  connection failures) it lowers the concurrency to what the endpoint showed it can
  serve: the most requests that were in flight when one was answered (at most half
  the concurrency), else 1;
- after :data:`UNANSWERED_LIMIT` more, started at that concurrency, it stops: every
  call from then on raises one :class:`~pytest_ragproof.errors.LLMUnresponsiveError`
  (a configuration error: said once, like a rejected key), without a request.

Any answer (even an HTTP error) resets the count: the endpoint is alive. Requests
that were already in flight when the concurrency was lowered do not count towards
the stop: they were sent at the old concurrency.
"""

from __future__ import annotations

from pytest_ragproof.errors import LLMUnresponsiveError

#: Consecutive unanswered requests on one endpoint before the concurrency is lowered,
#: and again (at the lowered concurrency) before the run stops calling it.
UNANSWERED_LIMIT = 4


class Breaker:
    """The state of one endpoint: unanswered requests in a row, and what was done."""

    def __init__(self, endpoint: str, concurrency: int) -> None:
        self.endpoint = endpoint
        self.concurrency = concurrency
        self.started_with = concurrency
        self.epoch = 0  # raised when the concurrency is lowered
        self.unanswered = 0
        self.served_at_once = 0  # the most requests in flight when one was answered
        self.in_flight = 0
        self.stopped: str | None = None  # what happened, once given up on

    def check(self) -> None:
        """Raise the stop error when the endpoint has been given up on."""
        if self.stopped is not None:
            raise LLMUnresponsiveError(self.endpoint, self.stopped)

    def sent(self) -> int:
        """A request goes out; returns the epoch it was sent in."""
        self.in_flight += 1
        return self.epoch

    def answered(self) -> None:
        self.served_at_once = max(self.served_at_once, self.in_flight)
        self.in_flight -= 1
        self.unanswered = 0

    def unanswered_request(self, epoch: int, reason: str) -> int | None:
        """A request sent in ``epoch`` got no answer (``reason``: timeout, connection).

        Returns the new concurrency when it is to be lowered; raises the stop error when
        the endpoint still answers nothing at the lowered concurrency.
        """
        self.in_flight -= 1
        if epoch != self.epoch or self.stopped is not None:
            return None  # sent before the last change: it says nothing about it
        self.unanswered += 1
        if self.unanswered < UNANSWERED_LIMIT:
            return None
        self.unanswered = 0
        self.epoch += 1
        lower = max(1, min(self.served_at_once, self.concurrency // 2))
        if self.epoch == 1 and lower < self.concurrency:
            self.concurrency = lower
            return lower
        self.stopped = f"{UNANSWERED_LIMIT} requests in a row got no answer ({reason})" + (
            f" at concurrency {self.started_with}, and {UNANSWERED_LIMIT} more after it was "
            f"lowered to {self.concurrency}"
            if self.started_with != self.concurrency
            else f" at concurrency {self.concurrency}"
        )
        self.check()
        return None  # not reached: check() raises
