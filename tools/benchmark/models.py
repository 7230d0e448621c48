"""The benchmark tool's arguments and results: a concurrency sweep, one LevelResult per concurrency.

Names say what is measured: `itl_per_token` splits each gap between chunks over
the tokens the later chunk carried (what a user sees per token); `inter_chunk_gap`
is the raw gap between chunks (what the network sees). Under speculative
decoding a chunk holds several tokens, so the two differ by the tokens per chunk.
"""

from __future__ import annotations

from collections.abc import Sized
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..inputs import Concurrency, Port
from ..sglang.node_fault import NodeFault
from .goodput import DEFAULT_GOODPUT_TARGETS, GoodputTargets

# A level whose throughput interval is this wide (half-width over the figure) stalled inside its window.
STALLED_HALF_WIDTH = 0.25

# random token ids; a standard dataset fetched on the host (tools/datasets); a shipped prompt set, or all three.
PromptSource = Literal[
    "random", "gsm8k", "math500", "humaneval", "mbpp", "mt-bench", "math", "code", "chat", "acceptance-mix"
]
Api = Literal["auto", "sglang", "openai"]
ClientPlace = Literal["host", "local", "bench_serving"]
LevelEnd = Literal["window", "drain", "cut"]
AcceptSource = Literal["meta_info", "metrics_counters"]
ServerState = Literal["died", "not_answering"]
Arrival = Literal["poisson", "constant"]


class BenchmarkArgs(BaseModel):
    """A closed-loop concurrency sweep (each level keeps `concurrency` requests in flight)."""

    model_config = ConfigDict(extra="forbid")

    port: Port = 30000
    levels: list[Concurrency] = Field(min_length=1, max_length=32, description="Concurrency levels, run in this order")
    prompts: PromptSource = Field(
        "random",
        description="random: input_len token ids, new per level (no prefix-cache hits); or a dataset's prompts",
    )
    input_len: int = Field(512, ge=1, le=1_000_000, description="Prompt tokens, for random prompts")
    output_len: int = Field(256, ge=1, le=1_000_000, description="max_tokens per request")
    ignore_eos: bool = Field(True, description="Generate exactly output_len tokens, so runs are comparable")
    warmup_requests: int = Field(1, ge=0, le=1024, description="Per level, before the clock starts; not counted")
    requests_per_level: int | None = Field(None, ge=1, le=1_000_000, description="Fixed count per level")
    rounds: int = Field(
        3, ge=1, le=1000, description="Without a count or duration: rounds x concurrency requests per level"
    )
    duration_s: float | None = Field(
        None,
        gt=0,
        le=24 * 3600,
        description="Seconds per level, from every first request's first token (the host's seconds for a client on "
        "the host, this machine's for client='local')",
    )
    end: LevelEnd = Field(
        "window",
        description="With a duration, how a level ends: window (when the first request finishes past the duration, "
        "the steady window closes and the rest are cut: the throughput a full drain gives, sooner), drain (every "
        "request finishes; more latency samples) or cut (at the duration's end: fastest, needs a client that keeps "
        "up with the stream). Cut requests' tokens count, their latencies do not",
    )
    flush_cache: bool = Field(True, description="POST /flush_cache before each level when the server has it")
    api: Api = Field(
        "auto", description="sglang: native /generate; openai: /v1/completions; auto: sglang when it answers"
    )
    model: str | None = Field(None, max_length=512, pattern=r"^[^\x00-\x1f]+$", description="Model name (OpenAI API)")
    client: ClientPlace = Field(
        "host",
        description="host: our client runs on the host (the SSH link is not measured); local: here, through a "
        "port forward; bench_serving: SGLang's own sglang.bench_serving on the host",
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    seed: int = Field(1, ge=0)
    request_timeout_s: float = Field(600.0, gt=0, le=24 * 3600)
    timeout_s: float = Field(3600.0, ge=10, le=48 * 3600, description="Bound on the whole sweep")
    rates: list[float] | None = Field(
        None,
        min_length=1,
        max_length=32,
        description="Open loop instead of closed: request rates (req/s), one level each, arriving on the clock "
        "whatever is in flight; levels then holds one value, the cap on requests in flight",
    )
    arrival: Arrival = Field("poisson", description="Open loop: poisson (exponential gaps, seeded) or constant gaps")
    ttft_target_ms: float = Field(
        DEFAULT_GOODPUT_TARGETS.ttft_ms,
        gt=0,
        description="Goodput: a good request's time to first token is at most this",
    )
    tpot_target_ms: float = Field(
        DEFAULT_GOODPUT_TARGETS.tpot_ms,
        gt=0,
        description="Goodput: a good request's time per output token at most this",
    )

    @property
    def goodput_targets(self) -> GoodputTargets:
        return GoodputTargets(ttft_ms=self.ttft_target_ms, tpot_ms=self.tpot_target_ms)

    @model_validator(mode="after")
    def _open_loop(self) -> BenchmarkArgs:
        if self.rates is None:
            return self
        if any(r <= 0 for r in self.rates):
            raise ValueError(f"rates must be positive requests per second, got {self.rates}")
        if self.duration_s is None and self.requests_per_level is None:
            raise ValueError("open-loop rates need duration_s or requests_per_level (arrivals go on until then)")
        if len(self.levels) != 1:
            raise ValueError("with rates, levels holds one value: the cap on requests in flight")
        if self.client == "bench_serving":
            raise ValueError("open-loop rates run on our client (client host or local), not sglang.bench_serving")
        return self

    @model_validator(mode="after")
    def _one_stop_rule(self) -> BenchmarkArgs:
        if self.requests_per_level is not None and self.duration_s is not None:
            raise ValueError("give requests_per_level or duration_s, not both")
        if len(set(self.levels)) != len(self.levels):
            raise ValueError(f"levels repeat a concurrency: {self.levels}")
        if self.client == "bench_serving" and self.duration_s is not None:
            raise ValueError("sglang.bench_serving runs a request count, not a duration")
        return self

    def requests_at(self, concurrency: int) -> int | None:
        if self.duration_s is not None:
            return None
        return self.requests_per_level if self.requests_per_level is not None else self.rounds * concurrency


class LatencySummary(BaseModel):
    """Milliseconds. A percentile is None where the source does not report it (bench_serving before 0.5.23 has no
    p90 of TTFT, TPOT or ITL and p95 of ITL only)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    samples: int
    mean_ms: float | None
    p50_ms: float | None
    p90_ms: float | None
    p95_ms: float | None = None
    p99_ms: float | None


class ClientLoad(BaseModel):
    """Whether our own client kept up: if it did not, the level measured the client, not the server."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cpu_fraction: float = Field(
        description="Client CPU seconds / the level's seconds, both as the client read them (1.0 = one core saturated)"
    )
    loop_lag_p99_ms: float = Field(description="How late a 5 ms timer fired, p99: the client's scheduling delay")
    limited: bool = Field(description="True when the client was busy enough to distort the figures")
    edge_aligned_chunks: int = Field(
        default=0,
        description="Chunks that worker processes read within half a step after the window's edges, placed at them "
        "as one process reading the step in order would have (stream_client.align_edges)",
    )


class ServerFailure(BaseModel):
    """The server died or stopped answering during a level (the check after it failed), and what its log says."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    state: ServerState = Field(
        description="died: its process is gone (or nothing listens); not_answering: it is up but hangs"
    )
    health: str = Field(
        description="What the check after the level got, e.g. 'GET /health_generate: ConnectionRefusedError'"
    )
    cause: str | None = Field(
        description="From the server's log (tools/sglang/diagnosis.py): crash, out_of_memory, ...; None: log not found"
    )
    cause_words: str = Field(description="The cause in words, e.g. 'NCCL watchdog timeout (a collective hung)'")
    log_lines: list[str] = Field(default_factory=list, description="The log lines that show the cause")
    log_path: str | None = Field(None, description="The server's log on the host (from its launch record)")
    node: NodeFault | None = Field(
        None, description="A server over several nodes that lost one: which node, how, and what to do (not load)"
    )


class ServerMetricsSummary(BaseModel):
    """The server's own load during a level, from its Prometheus gauges sampled by the client (server_metrics.py):
    a plain mean over the samples (taken at a steady pace) and the highest sample. None: no sample had that gauge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    samples: int = Field(description="Samples of /metrics taken during the level")
    running_mean: float | None = Field(description="Requests the server was running (sglang:num_running_reqs)")
    running_max: float | None
    queued_mean: float | None = Field(description="Requests waiting in the server's queue (sglang:num_queue_reqs)")
    queued_max: float | None
    token_usage_mean: float | None = Field(description="Share of the KV-cache token pool in use, 0-1 (token_usage)")
    token_usage_max: float | None


RequestStatus = Literal["ok", "cut", "failed"]
# One letter per request in LevelRequests.status.
STATUS_LETTERS: dict[str, tuple[RequestStatus, bool]] = {
    "g": ("ok", True),
    "o": ("ok", False),
    "c": ("cut", False),
    "f": ("failed", False),
}


class LevelRequests(BaseModel):
    """Every measured request of a level, column by column (one entry per request, in the order the client issued
    them: the index is the position). Kept for the report's requests.jsonl and left out of the model's view; columns
    keep the tool's result compact. Seconds, to 0.1 ms."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start_s: list[float] = Field(description="When the request was sent, from the level's first dispatch")
    scheduled_s: list[float | None] | None = Field(
        None, description="Open loop: when the request was due to be sent; None: a closed-loop level"
    )
    ttft_s: list[float | None] = Field(description="First streamed chunk carrying output; None: nothing streamed")
    e2e_s: list[float | None] = Field(
        description="Start to the end of the stream (for a cut request: to the cut; failed: to the failure)"
    )
    output_tokens: list[int | None] = Field(description="The server's count; None: it gave none")
    status: str = Field(
        description="One letter per request: g completed and good (met the goodput targets), o completed and not "
        "good, c cut by the client at the level's end, f failed"
    )
    spec_verify_ct: list[int | None] | None = Field(
        None, description="The server's verify steps per request (meta_info); None: no request carried one"
    )

    @model_validator(mode="after")
    def _one_entry_per_request(self) -> LevelRequests:
        n = len(self.start_s)
        columns: list[Sized | None] = [
            self.ttft_s,
            self.e2e_s,
            self.output_tokens,
            self.status,
            self.scheduled_s,
            self.spec_verify_ct,
        ]
        if any(c is not None and len(c) != n for c in columns):
            raise ValueError("every column of a level's requests has one entry per request")
        if set(self.status) - set(STATUS_LETTERS):
            raise ValueError(f"request status letters are {''.join(STATUS_LETTERS)}")
        return self


class LevelResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    concurrency: int = Field(description="Requested: requests kept in flight (open loop: the cap, else the peak)")
    arrival_rate_per_s: float | None = Field(
        None, description="Open loop: the request rate asked (req/s), arrivals on the clock; None: closed loop"
    )
    achieved_concurrency: float = Field(description="Measured: sum of request latencies / level duration")
    requests_completed: int
    requests_cut: int = Field(
        0, description="Still running when a timed level ended: their tokens count, latencies not"
    )
    requests_failed: int
    errors: list[str] = Field(description="The first few failures, verbatim")
    duration_s: float = Field(description="First dispatch to last response")
    total_input_tokens: int
    total_output_tokens: int = Field(description="From the server's own counts (usage / meta_info), never re-tokenised")
    output_tok_s: float = Field(
        description="Tokens streamed while the level's concurrency was held / that steady window (ramp-up and drain "
        "left out); the overall figure when the window is unknown (no per-chunk counts) or too thin"
    )
    output_tok_s_ci95: tuple[float, float] | None = Field(
        None, description="95% batch-means interval of output_tok_s over the steady window (None: no steady window)"
    )
    unstable: bool = Field(
        False,
        description="The interval's half-width exceeds 10% of output_tok_s: the level's figure moved while measured",
    )
    output_tok_s_overall: float | None = Field(
        None, description="total_output_tokens / duration_s: sglang.bench_serving's figure, ramp and drain included"
    )
    steady_window_s: float | None = Field(
        None, description="Length of the steady window; None: output_tok_s is the overall figure"
    )
    request_rate_per_s: float
    ttft: LatencySummary
    tpot: LatencySummary = Field(description="Per request (e2e - ttft) / (output tokens - 1): per token")
    tpot_per_chunk: LatencySummary | None = Field(
        None, description="Per request (e2e - ttft) / (chunks - 1): per streamed chunk, a verify step under speculation"
    )
    itl_per_token: LatencySummary | None = Field(
        description="Each chunk gap divided over the tokens that chunk carried; None when the server gave no per-chunk counts"
    )
    inter_chunk_gap: LatencySummary | None = Field(description="Gap between successive streamed chunks, per chunk")
    e2e: LatencySummary
    tokens_per_chunk: float | None = Field(description="Output tokens / chunks: above 1 under speculative decoding")
    accept_length: float | None = Field(
        description="This level's tokens per verify step, from counter differences over the level only: "
        "sum(completion_tokens) / sum(spec_verify_ct) of its completed native requests' meta_info, else the "
        "level's difference of the Prometheus counters generation_tokens_total / spec_verify_calls_total "
        "(accept_length_source says which); None: not speculative, or no per-level counts"
    )
    accept_length_source: AcceptSource | None = Field(None, description="Where accept_length came from")
    accept_verify_steps: int | None = Field(None, description="The verify steps behind accept_length")
    accept_length_lifetime: float | None = Field(
        None,
        description="The server's own internal_states[0].avg_spec_accept_length after the level: since its start "
        "(or last /flush_cache), over the decode intervals it logged; not this level's figure",
    )
    cache_flushed: bool | None = Field(
        description="True: flushed before the level; None: the server has no /flush_cache"
    )
    client: ClientLoad | None = Field(description="None for sglang.bench_serving, which does not report it")
    valid: bool = Field(
        True,
        description="False: the server died or stopped answering during the level; its figures measure the failure",
    )
    invalid_reason: str | None = Field(
        None, description="Why the level is not valid, with the cause from the server's log"
    )
    remedy: str | None = Field(None, description="What to do about an invalid level")
    server_failure: ServerFailure | None = Field(None, description="The server's failure that made the level invalid")
    warnings: list[str] = Field(
        default_factory=list,
        description="This level's warnings, each with what to do (also in the result's, as 'C=N: ...')",
    )
    goodput_tok_s: float | None = Field(
        None,
        description="Output tok/s of good requests (completed within the result's goodput_targets): output_tok_s x "
        "(tokens good requests streamed in output_tok_s's window / tokens all completed requests streamed in it), "
        "the window being the steady window, or the whole level when output_tok_s is the overall figure. With no "
        "cut request this is exactly good requests' tokens in the window / the window; requests cut at a timed "
        "level's end cannot be judged and are taken to be good in the completed ones' share. None: no completed "
        "request, or no per-request timings (sglang.bench_serving)",
    )
    good_requests: int | None = Field(None, description="Completed requests that met both goodput targets")
    good_fraction: float | None = Field(
        None,
        description="good_requests / (completed + failed): a failed request is not good; cut ones are not judged. "
        "None: nothing to judge",
    )
    server_metrics: ServerMetricsSummary | None = Field(
        None, description="The server's running/queued requests and KV-cache use over the level; None: not sampled"
    )
    requests: LevelRequests | None = Field(
        None, description="Every request of the level (for the report's requests.jsonl; not in the model's view)"
    )

    @property
    def stalled(self) -> bool:
        """The interval's half-width is over STALLED_HALF_WIDTH of the figure: far past a short level's noise (a
        level of a few requests, each accepting per its own tau, is `unstable` at about 10%), the server or the
        client stood still for part of the window, so the figure is not the configuration's: measure the level again."""
        interval = self.output_tok_s_ci95
        if interval is None or self.output_tok_s <= 0:
            return False
        return (interval[1] - interval[0]) / 2 > STALLED_HALF_WIDTH * self.output_tok_s


class BenchmarkResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str
    port: int
    client: ClientPlace
    api: str = Field(
        description="What was driven: sglang (/generate), openai (/v1/completions) or bench_serving's backend"
    )
    model: str | None
    server_version: str | None
    speculative_algorithm: str | None
    prompts: str
    input_len: int | None
    output_len: int
    ignore_eos: bool
    warmup_requests: int
    levels: list[LevelResult]
    best_output_tok_s: float = Field(
        description="The highest output tok/s over the valid levels (over all levels when none is valid)"
    )
    best_at_concurrency: int
    levels_not_run: list[int] = Field(
        default_factory=list, description="Requested levels never run: the server had died or stopped answering before"
    )
    method: str = Field(description="How the figures were measured and counted, in words")
    warnings: list[str]
    goodput_targets: GoodputTargets = Field(
        DEFAULT_GOODPUT_TARGETS,
        description="The latency targets the levels' goodput was judged against",
    )
