"""How the engine's steps keep time: on the world's clock (a server on a sim host) or on this machine's (the
server run outside a sim host, in tests and benchmarks, which runs time_scale times faster than the host it
models).

On the world's clock a step's end is a horizon: the clock does not pass it until the engine has run the step, so a
starved server stops the clock instead of falling behind it. After the step the engine settles: the clock stands
at the step's end while the step's streams are written and the world's programs take them in (world/quiescence.py),
and runs again toward the next step's end once the world is quiet. So a client's readings of a token's arrival,
and its next request's departure, are the step's modelled time however long this machine took to run the client.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

from ..world.clock import WorldClock, this_machine_monotonic, until, wall_sleep
from ..world.quiescence import Quiescence, cpu_seconds

# A settle waits for the world's programs however long this machine keeps them from running (a starved client is
# no time of the host's), but not for a program that computes: one that has used this much CPU time since the settle
# began is at work of its own (not taking in a step's tokens), and the clock runs on beside it.
MAX_SETTLE_CPU_S = 0.5
# And never longer than this (this machine's seconds): a queue nobody reads, a program stuck in the kernel.
MAX_SETTLE_WALL_S = 30.0
SETTLE_POLL_S = 0.0003  # how often a settle looks again (this machine's seconds)
_HANDLER_TURNS = 16  # loop turns a settle gives the step's stream handlers to take their tokens


class RealTimePacer:
    """This machine's clock: a step ends when its timer fires, and nothing waits for anyone."""

    async def reach(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        await until(loop, when)

    async def settle(self, written: Callable[[], bool]) -> None:
        return None

    def idle(self) -> None:
        return None


class WorldPacer:
    """The world's clock, read through this process's host clock (its loop's time is seconds since `boot`)."""

    def __init__(self, clock: WorldClock, boot: float, quiescence: Quiescence) -> None:
        self.clock = clock
        self.boot = boot
        self.quiescence = quiescence
        self._horizon = math.inf

    async def reach(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        """Hold the clock at loop time `when` and wait until it reads that."""
        horizon = when + self.boot
        while horizon - self.boot < when:  # epoch seconds are coarser: never stop the clock short of `when`
            horizon = math.nextafter(horizon, math.inf)
        if horizon != self._horizon:
            self.clock.wait_for(horizon)
            self._horizon = horizon
        await until(loop, when)

    async def settle(self, written: Callable[[], bool]) -> None:
        """Keep the clock at the step's end until the step's streams are written (`written()`) and the world is
        quiet, or a program busy meanwhile has used MAX_SETTLE_CPU_S of CPU time (it computes; MAX_SETTLE_WALL_S
        at most)."""
        for _ in range(_HANDLER_TURNS):
            await asyncio.sleep(0)  # a turn of the loop: the stream handlers take their tokens and write
            if written():
                break
        await asyncio.sleep(0)
        quiescence = self.quiescence
        ports = quiescence.world_ports()
        deadline = this_machine_monotonic() + MAX_SETTLE_WALL_S
        cpu_at_start: dict[int, float | None] = {}  # each busy program's CPU time when this settle first saw it busy
        while this_machine_monotonic() < deadline:
            busy = quiescence.busy_program()
            if busy is None:
                if not quiescence.bytes_on_their_way(ports):
                    return
            else:
                used = cpu_seconds(busy)
                first = cpu_at_start.setdefault(busy, used)
                if used is not None and first is not None and used - first > MAX_SETTLE_CPU_S:
                    return
            # Not asyncio.sleep: the loop's clock is the world's, which this very wait keeps standing.
            await wall_sleep(SETTLE_POLL_S)

    def idle(self) -> None:
        """Nothing to step: the clock runs on without this server."""
        if math.isfinite(self._horizon):
            self.clock.wait_for(math.inf)
            self._horizon = math.inf
