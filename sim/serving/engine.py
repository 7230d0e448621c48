"""The continuous-batching engine: one asyncio task stepping the running batch.

The server runs on the world's clock (sim/host/host_time.py: its asyncio loop's
time is the modelled host's), so a decode step of n running requests lasts
step_time(n) modelled seconds and step k ends at a fixed point on that clock;
the engine's wait for it is a horizon the clock does not pass until the engine
has run the step, so a starved server stops the clock instead of falling
behind it; after each step (and each prefill's first tokens, and a burst of
arrivals at an idle engine) the clock stands until the world has taken them in
(pacing.py). When the loop is late all the same (a clock reading taken before a
step), the engine runs every step that is due at once before yielding, and a
request's stream then carries all the tokens made since its last write in one
chunk (as SGLang's detokenizer does when it falls behind). Except when the batch
grows past the most it has run since the engine was idle (a level opening):
then the owed steps are dropped, so each new request's first token is followed
by a full step (_joined_on_time).

As in SGLang, the prefill pass samples a request's first token: a request of N
tokens has its first at the end of its prefill and the other N - 1 from decode
(or verify) steps. A request that arrives while the engine is idle is admitted at
the moment the server received it (GenerationRequest.arrived, stamped by the HTTP
layer), not when this task next runs. Within a step, the streams of requests
that finished in it are woken after the others, so a request's last chunk never
arrives before the chunks its batch-mates made in the same step (a client that
closes its measuring window at the first finished request then counts that
whole step).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ..profiles.schema import PromptKind
from .pacing import RealTimePacer, WorldPacer
from .performance import AcceptanceSampler, PerformanceModel

MAX_CATCH_UP_STEPS = 2000  # per loop turn, so a long stall cannot freeze the loop


@dataclass
class GenerationRequest:
    rid: str
    prompt_tokens: int
    max_new_tokens: int
    kind: PromptKind
    sampler: AcceptanceSampler | None
    stop_after: int | None  # natural end of the answer (EOS) when not ignore_eos
    block_size: int
    arrived: float = field(default_factory=time.monotonic)
    generated: int = 0
    sent: int = 0
    verify_ct: int = 0
    first_token_at: float | None = None
    finished_at: float | None = None
    finish_reason: str | None = None
    aborted: bool = False
    prefill_done_at: float = 0.0
    log_metrics: bool = True  # False for /health_generate's probe, which SGLang keeps out of its counters
    correct_drafts_histogram: list[int] = field(default_factory=list)
    responded: bool = True  # False while a stream's handler has yet to end the response (http_api.py)
    _update: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.correct_drafts_histogram = [0] * max(self.block_size, 1)

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    @property
    def limit(self) -> int:
        return self.max_new_tokens if self.stop_after is None else min(self.max_new_tokens, self.stop_after)

    async def next_update(self) -> tuple[int, bool]:
        """Wait for tokens not yet sent; returns (how many, finished)."""
        while self.sent >= self.generated and not self.finished:
            self._update.clear()
            await self._update.wait()
        new = self.generated - self.sent
        self.sent = self.generated
        return new, self.finished and self.sent >= self.generated

    def notify(self) -> None:
        """Wake whoever waits in next_update: tokens were made or the request finished."""
        self._update.set()

    # Speculative bookkeeping, as SGLang reports it per request.
    @property
    def accept_length(self) -> float:
        return self.generated / self.verify_ct if self.verify_ct else 0.0

    @property
    def num_proposed_drafts(self) -> int:
        return self.verify_ct * (self.block_size - 1)

    @property
    def num_correct_drafts(self) -> int:
        return max(self.generated - self.verify_ct, 0)

    @property
    def accept_rate(self) -> float:
        return self.num_correct_drafts / self.num_proposed_drafts if self.num_proposed_drafts else 0.0


@dataclass
class EngineStats:
    """Counters /metrics, /server_info and the decode log read.

    As in SGLang: the Prometheus token and verify counters grow when a request
    finishes (the tokenizer manager counts them), so their differences over a
    stretch of time are that stretch's finished requests; the scheduler's
    speculative totals behind `avg_spec_accept_length` grow only when a decode
    log line is written, and a successful /flush_cache resets them.
    """

    prompt_tokens_total: int = 0
    generation_tokens_total: int = 0  # of finished (or aborted) requests
    spec_verify_calls_total: int = 0  # their verify steps
    requests_total: int = 0
    finished_total: int = 0
    aborted_total: int = 0
    verify_steps_total: int = 0  # every verify step, as it runs
    last_gen_throughput: float = 0.0
    last_accept_length: float = 0.0  # of the last decode log interval (the gauges)
    last_accept_rate: float = 0.0
    spec_total_accept_tokens: int = 0  # summed at each decode log line, since start or the last flush
    spec_total_forward_ct: int = 0
    ttft_seconds: list[float] = field(default_factory=list)
    e2e_seconds: list[float] = field(default_factory=list)

    @property
    def avg_spec_accept_length(self) -> float | None:
        """What /server_info reports: tokens per verify step over the logged intervals; None before the first."""
        return self.spec_total_accept_tokens / self.spec_total_forward_ct if self.spec_total_forward_ct else None

    def count_finished(self, request: GenerationRequest) -> None:
        if not request.log_metrics:
            return
        self.generation_tokens_total += request.generated
        self.spec_verify_calls_total += request.verify_ct


class Engine:
    def __init__(
        self,
        model: PerformanceModel,
        max_running_requests: int,
        max_total_tokens: int,
        cuda_graph_max_bs: int,
        cuda_graphs: bool,
        decode_log_interval: int,
        decode_log: Callable[[str], None],
        prefill_log: Callable[[str], None],
        accept_rate_in_log: bool,
        on_running: Callable[[int], None] | None = None,
        on_failure: Callable[[BaseException], None] | None = None,
        time_scale: float = 1.0,
        pacer: RealTimePacer | WorldPacer | None = None,
    ) -> None:
        self.model = model
        # Modelled seconds per second of the loop's clock: 1 on the world's clock (a server on a sim host); the
        # server run outside a sim host (tests, benchmarks) runs on this machine's clock, time_scale times faster.
        self.time_scale = time_scale
        self.pacer = pacer if pacer is not None else RealTimePacer()
        self._stepped: list[GenerationRequest] = []  # the requests given tokens since the last settle
        self._on_failure = on_failure  # the engine loop died: the server must not sit on its requests
        self.max_running_requests = max_running_requests
        self.max_total_tokens = max_total_tokens
        self.cuda_graph_max_bs = cuda_graph_max_bs
        self.cuda_graphs = cuda_graphs
        self.decode_log_interval = max(decode_log_interval, 1)
        self._decode_log = decode_log
        self._prefill_log = prefill_log
        self._accept_rate_in_log = accept_rate_in_log
        self._on_running = on_running
        self.waiting: deque[GenerationRequest] = deque()
        self.prefilling: list[GenerationRequest] = []
        self.running: list[GenerationRequest] = []
        self.stats = EngineStats()
        self.stalled = False  # a crash under load hangs the batch
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._clock = 0.0
        self._peak_running = 0  # the most requests running since the engine was last idle
        self._steps = 0
        self._interval_tokens = 0
        self._interval_verify = 0
        self._interval_started = time.monotonic()
        self._ids = itertools.count()

    # Lifecycle
    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="sglang-sim-engine")
        self._task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """The loop only ends when stopped; an exception ending it is the scheduler's crash, said and acted on."""
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        assert error is not None
        if self._on_failure is not None:
            self._on_failure(error)

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():  # a loop that failed was reported by _ended
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    # Requests
    def next_rid(self) -> str:
        return f"{next(self._ids):032x}"

    def submit(self, request: GenerationRequest) -> None:
        self.stats.requests_total += 1
        self.stats.prompt_tokens_total += request.prompt_tokens
        self.waiting.append(request)
        self._wakeup.set()

    def abort(self, request: GenerationRequest) -> None:
        """The client went away: drop the request wherever it is."""
        if request.finished:
            return
        request.aborted = True
        request.finish_reason = "abort"
        self.stats.aborted_total += 1
        self.stats.count_finished(request)
        for queue in (self.running, self.prefilling):
            if request in queue:
                queue.remove(request)
        if request in self.waiting:
            self.waiting.remove(request)
        request.notify()

    def reset_metrics(self) -> None:
        """What a successful /flush_cache does to the scheduler's counters (SGLang's reset_metrics)."""
        self.stats.spec_total_accept_tokens = self.stats.spec_total_forward_ct = 0
        self._interval_tokens = self._interval_verify = 0

    @property
    def num_tokens(self) -> int:
        return sum(r.prompt_tokens + r.generated for r in self.running)

    @property
    def token_usage(self) -> float:
        return self.num_tokens / self.max_total_tokens if self.max_total_tokens else 0.0

    @property
    def queue_len(self) -> int:
        return len(self.waiting) + len(self.prefilling)

    # The loop
    def _admit(self, now: float) -> None:
        admitted: list[GenerationRequest] = []
        tokens = self.num_tokens + sum(r.prompt_tokens for r in self.prefilling)
        while self.waiting and len(self.running) + len(self.prefilling) < self.max_running_requests:
            request = self.waiting[0]
            if tokens + request.prompt_tokens > self.max_total_tokens and (self.running or self.prefilling):
                break
            self.waiting.popleft()
            request.prefill_done_at = now + self.model.prefill_seconds(request.prompt_tokens) / self.time_scale
            self.prefilling.append(request)
            tokens += request.prompt_tokens
            admitted.append(request)
        if admitted:
            self._prefill_log(
                f"Prefill batch, #new-seq: {len(admitted)}, #new-token: {sum(r.prompt_tokens for r in admitted)}, "
                f"#cached-token: 0, token usage: {self.token_usage:.2f}, #running-req: {len(self.running)}, "
                f"#queue-req: {len(self.waiting)},"
            )

    def _join_prefilled(self, now: float) -> bool:
        """Prefilled requests join the running batch with their first token; True when the batch grew past the
        most it has run since the engine was last idle (a level opening, not a finished request's replacement)."""
        ready = [r for r in self.prefilling if r.prefill_done_at <= now]
        grew = False
        if ready:
            wall = time.monotonic()
            for r in ready:
                self.prefilling.remove(r)
                if r.limit >= 1:  # the prefill pass samples the first token (no verify step)
                    r.generated = 1
                    r.first_token_at = wall
                    self._interval_tokens += 1  # the decode log's tokens are the requests' (completion_tokens)
                if r.generated >= r.limit:  # max_new_tokens 0 or 1 (or an EOS at once): done at prefill
                    r.finish_reason = "length" if r.generated >= r.max_new_tokens else "stop"
                    r.finished_at = wall
                    self.stats.finished_total += 1
                    self.stats.count_finished(r)
                r.notify()
            self._stepped.extend(ready)
            ready = [r for r in ready if not r.finished]
            self.running.extend(ready)
            if len(self.running) > self._peak_running:
                self._peak_running, grew = len(self.running), True
            if self._on_running is not None:
                self._on_running(len(self.running))
        return grew

    def _joined_on_time(self, grew: bool, loop: asyncio.AbstractEventLoop) -> None:
        """Drop the steps owed when the batch grew past its peak (a burst of arrivals opening a level).

        The server's handling of a burst of requests is this machine's time: while it accepts them the loop falls
        behind, and catching up would run the owed steps at once, after which the last request's first token (made
        on the late clock, delivered now) would be followed by its next step sooner than a step's time: a client
        whose window opens at that first token would count steps made before it. So the clock moves to now: every
        request of the grown batch sees its first token, then a full step. A replacement (the batch at or below its
        peak) keeps the catch-up: the running requests' token rate follows the model, not this machine.
        """
        if grew:
            self._clock = max(self._clock, loop.time())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        pacer = self.pacer
        while True:
            if self.stalled or not (self.running or self.prefilling or self.waiting):
                pacer.idle()
                self._wakeup.clear()
                await self._wakeup.wait()
                if self.stalled:
                    continue
                self._peak_running = 0
                # From when the server received the first waiting request: its own handling is not modelled time.
                self._clock = max(self._clock, min((r.arrived for r in self.waiting), default=loop.time()))
                # On the world's clock, the clock stands there until the client has sent what it sends at once (a
                # level's first requests): they all arrive at that moment, as from a client a real host runs.
                await pacer.reach(loop, self._clock)
                await pacer.settle(lambda: True)
            now = loop.time()
            self._clock = max(self._clock, now - 1.0)  # never owe more than a second after idling
            self._admit(self._clock)
            self._joined_on_time(self._join_prefilled(self._clock), loop)
            if self._stepped:  # first tokens out of a prefill: taken in before the clock moves on
                await self._settle()
            if not self.running:
                due = min(r.prefill_done_at for r in self.prefilling) if self.prefilling else now
                self._clock = max(self._clock, due)
                await pacer.reach(loop, due)
                continue
            end = self._clock + self.model.step_time(len(self.running)) / self.time_scale
            if end > now:
                await pacer.reach(loop, end)
            # Run every step that is due by now (at least one), then yield.
            for _ in range(MAX_CATCH_UP_STEPS):
                self._clock = end
                self._step(loop.time())
                if self.stalled or not self.running:
                    break
                self._admit(self._clock)
                self._joined_on_time(self._join_prefilled(self._clock), loop)
                end = self._clock + self.model.step_time(len(self.running)) / self.time_scale
                if end > loop.time():
                    break
            await self._settle()

    async def _settle(self) -> None:
        """Let the world take in the tokens made since the last settle before the clock moves on (pacing.py)."""
        stepped = self._stepped
        await self.pacer.settle(
            lambda: all(r.aborted or (r.sent >= r.generated and (r.responded or not r.finished)) for r in stepped)
        )
        stepped.clear()

    def _step(self, wall: float) -> None:
        running = self.running
        finished: list[GenerationRequest] = []
        tokens = 0
        for r in running:
            gained = r.sampler.draw() if r.sampler is not None else 1
            room = r.limit - r.generated
            if gained > room:
                gained = room
            if r.sampler is not None:
                r.verify_ct += 1
                r.correct_drafts_histogram[min(gained - 1, len(r.correct_drafts_histogram) - 1)] += 1
            r.generated += gained
            tokens += gained
            if r.first_token_at is None:
                r.first_token_at = wall
            if r.generated >= r.limit:
                r.finish_reason = "length" if r.generated >= r.max_new_tokens else "stop"
                r.finished_at = wall
                finished.append(r)
            else:
                r.notify()
        for r in finished:  # their streams are woken last: a last chunk follows its batch-mates' chunks
            r.notify()
        self._stepped.extend(running)
        self._stepped.extend(finished)
        self._interval_tokens += tokens
        if self.model.speculative:
            self.stats.verify_steps_total += len(running)
            self._interval_verify += len(running)
        for r in finished:
            running.remove(r)
            self.stats.finished_total += 1
            self.stats.count_finished(r)
            self.stats.ttft_seconds.append((r.first_token_at or wall) - r.arrived)
            self.stats.e2e_seconds.append(wall - r.arrived)
            if len(self.stats.ttft_seconds) > 10000:  # keep memory bounded on long runs
                del self.stats.ttft_seconds[:5000]
                del self.stats.e2e_seconds[:5000]
        self._steps += 1
        if self._steps % self.decode_log_interval == 0:
            self._log_decode(len(running) + len(finished))

    def _log_decode(self, batch_size: int) -> None:
        now = time.monotonic()
        elapsed = max(now - self._interval_started, 1e-9)
        self.stats.last_gen_throughput = self._interval_tokens / (elapsed * self.time_scale)
        parts = [
            f"#running-req: {batch_size}",
            f"#token: {self.num_tokens}",
            f"token usage: {self.token_usage:.2f}",
        ]
        if self.model.speculative and self._interval_verify:
            accept = self._interval_tokens / self._interval_verify
            rate = (accept - 1) / (self.model.block_size - 1) if self.model.block_size > 1 else 0.0
            self.stats.last_accept_length = accept
            self.stats.last_accept_rate = rate
            # SGLang adds each logged interval to its lifetime totals, and only then.
            self.stats.spec_total_accept_tokens += self._interval_tokens
            self.stats.spec_total_forward_ct += self._interval_verify
            parts.append(f"accept len: {accept:.2f}")
            if self._accept_rate_in_log:
                parts.append(f"accept rate: {rate:.2f}")
        if self._accept_rate_in_log:
            parts.append(f"cuda graph: {self.cuda_graphs and batch_size <= self.cuda_graph_max_bs}")
        parts.append(f"gen throughput (token/s): {self.stats.last_gen_throughput:.2f}")
        parts.append(f"#queue-req: {self.queue_len},")
        head = "Decode batch," if self._accept_rate_in_log else "Decode batch."
        self._decode_log(f"{head} {', '.join(parts)}")
        self._interval_tokens = 0
        self._interval_verify = 0
        self._interval_started = now
