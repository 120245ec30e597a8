"""Running the pipeline ahead of pytest's one-item-at-a-time loop (``--ragproof-concurrency``).

Upcoming cases are submitted while the current one runs, at most N calls at
once: a pool of N daemon threads for sync callables, one event loop on a
background thread with a semaphore of N for ``async def`` callables. Each item
still waits for its own outcome, so reports stay in order. Timeouts are measured
from the moment a call starts. ``close()`` cancels what is queued and waits for
running calls (bounded), so nothing outlives the session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.execution.call import bind
from pytest_ragproof.execution.execute import Outcome, timed, timed_async
from pytest_ragproof.verdict.config import RunConfig


def is_async(pipeline: Any) -> bool:
    return inspect.iscoroutinefunction(pipeline) or inspect.iscoroutinefunction(
        getattr(pipeline, "__call__", None)  # noqa: B004 - async __call__ objects
    )


OnOutcome = Callable[[str, Case, Outcome], None]


class _Task:
    def __init__(
        self, fn: Callable[[], Any], done: Callable[[Outcome], None] | None = None
    ) -> None:
        self.fn = fn
        self.on_done = done
        self.started = threading.Event()
        self.done = threading.Event()
        self.start = 0.0
        self.outcome = Outcome()

    def run(self) -> None:
        __tracebackhide__ = True
        self.start = time.perf_counter()
        self.started.set()
        try:
            self.outcome = timed(self._call, self.start)
            if self.on_done is not None:
                self.on_done(self.outcome)  # hand over to judging before the item asks
        finally:
            self.done.set()

    def _call(self) -> Any:
        __tracebackhide__ = True
        result = self.fn()
        if inspect.isawaitable(result):
            result = asyncio.run(_as_coroutine(result))
        return result


async def _as_coroutine(awaitable: Any) -> Any:
    __tracebackhide__ = True
    return await awaitable


def stop_loop(
    loop: asyncio.AbstractEventLoop,
    thread: threading.Thread | None,
    wait_s: float,
    *,
    deadline: float | None = None,
) -> None:
    """Cancel every task of ``loop`` (run forever on ``thread``), stop it, join, close.

    Bounded by ``wait_s`` for the cancellation, and for the join by what is left until
    ``deadline`` (a ``time.monotonic()`` value) when given, else ``wait_s`` again.
    """

    async def cancel_all() -> None:
        current = asyncio.current_task()
        tasks = [t for t in asyncio.all_tasks() if t is not current]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
        asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(wait_s)
    loop.call_soon_threadsafe(loop.stop)
    if thread is not None:
        thread.join(wait_s if deadline is None else max(deadline - time.monotonic(), 0.0))
    if not loop.is_running():
        loop.close()


class Prefetcher:
    """Runs pipeline calls for upcoming cases; ``outcome(key)`` waits for one."""

    def __init__(
        self,
        cfg: RunConfig,
        n: int,
        *,
        window: int | None = None,
        on_outcome: OnOutcome | None = None,
    ) -> None:
        """``n`` calls at once; ``window`` cases submitted ahead (default ``n``);
        ``on_outcome(key, case, outcome)`` is called on the calling thread as each
        call ends (the judging stage starts there)."""
        self.cfg = cfg
        self.n = n
        self.window = max(window or n, n)
        self.on_outcome = on_outcome
        self._tasks: dict[str, _Task] = {}
        self._futures: dict[str, concurrent.futures.Future[Outcome]] = {}
        self._queue: queue.Queue[_Task | None] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._semaphore: asyncio.Semaphore | None = None

    # -- submission ---------------------------------------------------------
    def submit(self, items: Iterable[tuple[str, Case]], pipeline: Any) -> None:
        """Start calls for ``items`` (current first) that are not started yet."""
        asynchronous = is_async(pipeline)
        for key, case in items:
            if key in self._tasks or key in self._futures:
                continue
            if asynchronous:
                self._submit_async(key, case, pipeline)
            else:
                self._submit_sync(key, case, pipeline)

    def _submit_sync(self, key: str, case: Case, pipeline: Any) -> None:
        hand_over = self.on_outcome
        task = _Task(
            bind(pipeline, case, self.cfg.injection_delivery),
            None if hand_over is None else (lambda outcome: hand_over(key, case, outcome)),
        )
        self._tasks[key] = task
        if len(self._threads) < self.n:
            thread = threading.Thread(target=self._worker, name="ragproof-prefetch", daemon=True)
            self._threads.append(thread)
            thread.start()
        self._queue.put(task)

    def _worker(self) -> None:
        while True:
            task = self._queue.get()
            if task is None:
                return
            task.run()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                self._semaphore = asyncio.Semaphore(self.n)
                ready.set()
                loop.run_forever()

            self._loop_thread = threading.Thread(target=run, name="ragproof-loop", daemon=True)
            self._loop_thread.start()
            ready.wait()
            self._loop = loop
        return self._loop

    def _submit_async(self, key: str, case: Case, pipeline: Any) -> None:
        loop = self._ensure_loop()
        start_call = bind(pipeline, case, self.cfg.injection_delivery)
        timeout = self.cfg.timeout

        async def call() -> Outcome:
            __tracebackhide__ = True
            assert self._semaphore is not None
            async with self._semaphore:
                outcome = await timed_async(start_call, timeout)
            if self.on_outcome is not None:
                self.on_outcome(key, case, outcome)
            return outcome

        self._futures[key] = asyncio.run_coroutine_threadsafe(call(), loop)

    # -- waiting ------------------------------------------------------------
    def outcome(self, key: str) -> Outcome:
        future = self._futures.pop(key, None)
        if future is not None:
            return future.result()
        task = self._tasks.pop(key)
        timeout = self.cfg.timeout
        if timeout is None:
            task.done.wait()
            return task.outcome
        while not task.started.wait(0.05):
            pass
        remaining = task.start + timeout - time.perf_counter()
        if task.done.wait(max(remaining, 0.0)):
            return task.outcome
        return Outcome(timed_out=True, latency_s=time.perf_counter() - task.start)

    def close(self, wait_s: float = 5.0) -> None:
        """Drop queued calls, stop the workers and wait (bounded) for running ones."""
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        for _ in self._threads:
            self._queue.put(None)
        deadline = time.monotonic() + wait_s
        for thread in self._threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        self._threads.clear()
        self._tasks.clear()
        loop = self._loop
        if loop is not None:
            for future in self._futures.values():
                future.cancel()

            stop_loop(loop, self._loop_thread, wait_s, deadline=deadline)
            self._loop = None
            self._futures.clear()
