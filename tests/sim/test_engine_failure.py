"""The simulated scheduler's loop never dies silently: an exception ending it reaches the server's failure hook (which
logs SGLang's "Scheduler hit an exception" and ends the server), so no client waits on requests nothing will serve;
a stop (cancellation) is no failure."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from specops.sim.profiles import load_profile
from specops.sim.serving.engine import Engine, GenerationRequest
from specops.sim.serving.performance import Launch, build_performance_model

PROFILE = load_profile("seed-ct200")
MODEL = build_performance_model(PROFILE.serving, Launch(tp=8, ep=4), 1)


def _engine(failures: list[BaseException], decode_log: Callable[[str], None]) -> Engine:
    return Engine(
        model=MODEL,
        time_scale=100.0,
        max_running_requests=8,
        max_total_tokens=100_000,
        cuda_graph_max_bs=8,
        cuda_graphs=True,
        decode_log_interval=1,
        decode_log=decode_log,
        prefill_log=lambda _: None,
        accept_rate_in_log=False,
        on_failure=failures.append,
    )


def _request(engine: Engine) -> GenerationRequest:
    return GenerationRequest(
        rid=engine.next_rid(),
        prompt_tokens=16,
        max_new_tokens=8,
        kind="chat",
        sampler=None,
        stop_after=None,
        block_size=1,
    )


def test_an_exception_in_the_loop_reaches_the_failure_hook():
    failures: list[BaseException] = []

    def broken(line: str) -> None:
        raise RuntimeError("decode log broke")

    async def scenario() -> None:
        engine = _engine(failures, broken)  # the first decode step's log line raises inside the loop
        engine.start()
        engine.submit(_request(engine))
        for _ in range(200):
            if failures:
                break
            await asyncio.sleep(0.01)
        await engine.stop()

    asyncio.run(scenario())
    assert [str(f) for f in failures] == ["decode log broke"]


def test_a_stopped_engine_is_no_failure_and_a_request_completes():
    failures: list[BaseException] = []
    log: list[str] = []

    async def scenario() -> GenerationRequest:
        engine = _engine(failures, log.append)
        engine.start()
        request = _request(engine)
        engine.submit(request)
        done = False
        while not done:
            _, done = await asyncio.wait_for(request.next_update(), 5)
        await engine.stop()
        return request

    request = asyncio.run(scenario())
    assert request.generated == 8 and request.finish_reason == "length"
    assert failures == [] and log  # decode lines were logged, and stopping failed nothing
