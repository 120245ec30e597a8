"""The provider's slot gate: a bound on requests in flight, served by priority then arrival."""

from __future__ import annotations

import asyncio

from pytest_ragproof.llm.slots import SlotGate, request_priority


async def _hold(
    gate: SlotGate, name: str, priority: int, log: list[str], go: asyncio.Event
) -> None:
    request_priority.set(priority)
    async with gate:
        log.append(name)
        await go.wait()


def test_a_freed_slot_goes_to_the_lowest_priority_then_the_first_to_arrive() -> None:
    async def scenario() -> list[str]:
        gate, go = SlotGate(1), asyncio.Event()
        log: list[str] = []
        go.set()  # holders leave at once, one after another
        first = asyncio.Event()
        holder = asyncio.create_task(_hold(gate, "holder", 0, log, first))
        await asyncio.sleep(0)
        waiters = [
            asyncio.create_task(_hold(gate, name, priority, log, go))
            for name, priority in (("late-3", 3), ("early-1", 1), ("mid-2", 2), ("early-1b", 1))
        ]
        await asyncio.sleep(0)
        first.set()
        await asyncio.gather(holder, *waiters)
        assert gate.free == 1
        return log

    assert asyncio.run(scenario()) == ["holder", "early-1", "early-1b", "mid-2", "late-3"]


def test_no_more_holders_than_slots_and_a_cancelled_waiter_takes_no_slot() -> None:
    async def scenario() -> tuple[int, list[str]]:
        gate, go = SlotGate(2), asyncio.Event()
        log: list[str] = []
        inside = 0
        most = 0

        async def job(name: str) -> None:
            nonlocal inside, most
            async with gate:
                inside += 1
                most = max(most, inside)
                log.append(name)
                await go.wait()
                inside -= 1

        tasks = {name: asyncio.create_task(job(name)) for name in "abcde"}
        await asyncio.sleep(0)
        tasks["c"].cancel()  # waiting: a, b hold the two slots
        await asyncio.sleep(0)
        go.set()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        assert gate.free == 2
        return most, log

    most, log = asyncio.run(scenario())
    assert most == 2
    assert log == ["a", "b", "d", "e"]
