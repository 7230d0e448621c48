"""The engine against the truth's replay, and a level opening on a busy loop.

- Replay: a greedy request's draws are seeded from the server's seed and its prompt, so
  truth.replayed_verify_steps gives the verify steps the engine ran (the grader's truth of a
  speculative level's own acceptance rests on it).
- Ramp: while the server accepts a burst of requests its loop falls behind; the engine must
  not run the owed steps at once after the batch grew, or the last request's first token
  would be followed by its next step sooner than a step's time (a benchmark window opening
  at that first token would count steps made before it).
"""

from __future__ import annotations

import asyncio
import time

from specops.sim.profiles import load_profile
from specops.sim.serving.engine import Engine, GenerationRequest
from specops.sim.serving.performance import (
    Launch,
    build_performance_model,
    default_random_seed,
    ids_prompt_text,
    sampler_seed_material,
)
from specops.sim.serving.prompt_kind import classify_prompt
from specops.sim.serving.truth import replayed_verify_steps

PROFILE = load_profile("seed-ct200")
MODEL = build_performance_model(PROFILE.serving, Launch(tp=8, ep=4, speculative_algorithm="DFLASH"), 8)
SEED = default_random_seed("DFLASH")


def _engine(time_scale: float) -> Engine:
    return Engine(
        model=MODEL,
        time_scale=time_scale,
        max_running_requests=64,
        max_total_tokens=200_000,
        cuda_graph_max_bs=64,
        cuda_graphs=True,
        decode_log_interval=1000,
        decode_log=lambda _: None,
        prefill_log=lambda _: None,
        accept_rate_in_log=True,
    )


def _request(engine: Engine, index: int, tokens: int) -> tuple[GenerationRequest, str]:
    text = ids_prompt_text([1000 + 37 * index + k for k in range(128)])  # as the HTTP layer renders input_ids
    kind = classify_prompt(text)
    request = GenerationRequest(
        rid=engine.next_rid(),
        prompt_tokens=128,
        max_new_tokens=tokens,
        kind=kind,
        sampler=MODEL.sampler(kind, sampler_seed_material(SEED, text, 0.0)),
        stop_after=None,  # ignore_eos
        block_size=MODEL.block_size,
    )
    return request, text


async def _finish(request: GenerationRequest) -> None:
    while not (await request.next_update())[1]:
        pass


def test_replayed_verify_steps_are_the_engines():
    async def scenario() -> list[tuple[int, int | None]]:
        engine = _engine(time_scale=1000.0)
        engine.start()
        try:
            made = [_request(engine, i, tokens) for i, tokens in enumerate([64, 64, 17, 2, 1, 200])]
            for request, _ in made:
                engine.submit(request)
            await asyncio.wait_for(asyncio.gather(*(_finish(r) for r, _ in made)), 30)
            return [
                (r.verify_ct, replayed_verify_steps(MODEL, text, r.generated, random_seed=SEED)) for r, text in made
            ]
        finally:
            await engine.stop()

    pairs = asyncio.run(scenario())
    assert all(ran == replayed for ran, replayed in pairs), pairs
    assert pairs[4] == (0, 0)  # one token: the prefill's, no verify step
    assert replayed_verify_steps(MODEL, "x", 64, random_seed=SEED, temperature=0.7) is None  # sampled: not replayable


def test_a_batch_grown_on_a_late_loop_gets_a_full_step_after_its_first_token():
    time_scale = 1.0
    step = MODEL.step_time(4) / time_scale  # about 45 ms

    async def scenario() -> tuple[int, float]:
        engine = _engine(time_scale)
        engine.start()
        try:
            running, _ = _request(engine, 0, 500)
            engine.submit(running)
            await asyncio.sleep(3 * step)  # it decodes for a few steps
            burst = [_request(engine, i, 500)[0] for i in range(1, 4)]
            for request in burst:
                engine.submit(request)
            time.sleep(2.5 * step)  # the loop is busy accepting them: the engine owes steps when it runs again
            last = burst[-1]
            first, _ = await last.next_update()
            at = time.monotonic()
            await last.next_update()
            return first, time.monotonic() - at
        finally:
            await engine.stop()

    first, gap = asyncio.run(scenario())
    assert first == 1  # its first token alone, not with steps run in a burst behind it
    assert gap >= 0.8 * step, (gap, step)
