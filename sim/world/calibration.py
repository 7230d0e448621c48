"""The quick run's time scale, chosen from what this machine sustains, measured when the world starts.

A quick run (`specops run` on a `sim:PROFILE` host without --time-scale) runs modelled
time faster than the wall clock, so the benchmark's figures are the simulated server's
only while this machine keeps up: the simulated server (one asyncio process) must
write, and the benchmark client (the one runs use, handed in: use_level_client) must read, every
chunk on time, and every wall-clock millisecond a request spends outside the model
(the client sending it, the server's timers) is multiplied by the scale into modelled
time. So before the world starts, a short calibration measures both on this machine:

1. streaming: a throwaway simulated server for the profile's busiest layout (the most
   chunks per modelled second: autoregressive, one token a chunk) at a scale that asks
   for far more than any machine gives, read by the benchmark client at that layout's
   concurrency for STREAM_SECONDS: the chunks/s they sustained together, wall clock;
2. per request: the same server at C=1 for a few closed-loop requests, each
   REFERENCE_ANSWER_TOKENS long: the wall seconds each took beyond its modelled time
   (the client's round trip, the server's timers), its overhead.

The rule (choose_time_scale), the scale the lowest of
- the streaming bound: STREAM_HEADROOM x sustained chunks/s / the profile's peak
  chunks per modelled second (so the peak stays well within what was sustained);
- the request bound: REQUEST_SHARE x the modelled time of a REFERENCE_ANSWER_TOKENS
  answer at the profile's fastest single stream / the overhead (so a closed-loop level
  at C=1 loses at most that share of its time to this machine);
- the profile's fast_time_scale (the most a quick run goes);
rounded down to a SCALE_STEP, and at least MIN_TIME_SCALE. The figures and the rule's
terms are kept (TimeScaleChoice) and go into the world's summary, its log and the run's
host_opened event, so a report can say how the scale was chosen. An explicit time
scale skips all this.

A calibration is kept for CACHE_SECONDS in this process (per profile and peak), so
the many worlds one test session or eval suite starts measure once.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..profiles.schema import ParallelConfig, Profile, ServingSpec

if TYPE_CHECKING:  # the serving model loads only when a launch is calibrated
    from ..serving.performance import Launch

STREAM_HEADROOM = 0.4  # the peak streams at most this share of the chunks/s sustained at saturation
REQUEST_SHARE = 0.015  # a C=1 request loses at most this share of its modelled time to this machine
REFERENCE_ANSWER_TOKENS = 64  # the quick run's benchmark answers (the playbook's bench_output_len)
SCALE_STEP = 0.5
MIN_TIME_SCALE = 1.0
STREAM_SECONDS = 0.5  # wall seconds of saturated streaming read
ASK_CHUNKS_S = 200_000.0  # what the streaming measurement asks for: far past any machine
OVERHEAD_REQUESTS = 6
CACHE_SECONDS = 600.0
INPUT_TOKENS = 128


@dataclass(frozen=True)
class Level:
    """One level the calibration asks the benchmark client for: `duration_s` of streaming (cut at its end when
    `end` is "cut"), or a number of closed-loop `requests`."""

    concurrency: int
    input_len: int
    output_len: int
    duration_s: float | None = None
    requests: int | None = None
    end: str = "window"


# Runs a Level of the benchmark client that runs use against a URL and returns its raw level output (per request:
# start_s, end_s, chunk_s, chunk_tokens, error; and duration_s, client_cpu_s). The simulator measures with the
# client it is measured by, but imports no tool: whoever offers simulated hosts hands it in
# (cli/simulated_hosts.py).
LevelClient = Callable[[str, Level], dict[str, Any]]

_level_client: LevelClient | None = None


def use_level_client(client: LevelClient) -> None:
    """The benchmark client quick runs are calibrated with (set once by whoever offers simulated hosts)."""
    global _level_client
    _level_client = client


@dataclass(frozen=True)
class Peak:
    """What the profile asks a machine to stream at most, per modelled second, and where."""

    chunks_s: float  # modelled chunks/s at the busiest layout's top level (autoregressive: one token a chunk)
    config: str  # that layout
    concurrency: int
    single_stream_tok_s: float  # the fastest C=1 figure over every layout and speculative config

    @property
    def reference_request_s(self) -> float:
        """Modelled seconds of a REFERENCE_ANSWER_TOKENS answer at the fastest single stream."""
        return REFERENCE_ANSWER_TOKENS / self.single_stream_tok_s


@dataclass(frozen=True)
class Measured:
    """What this machine sustained, wall clock."""

    sustained_chunks_s: float  # simulator and benchmark client together, at the peak's concurrency, saturated
    request_overhead_s: float  # per C=1 request, beyond its modelled time
    tokens_per_chunk: float  # at saturation (the engine catches up by putting more tokens in each chunk)
    client_cpu_fraction: float  # the client's CPU over the streaming measurement
    seconds: float  # how long the calibration took


@dataclass(frozen=True)
class TimeScaleChoice:
    time_scale: float
    by_stream: float
    by_requests: float
    most: float  # the profile's fast_time_scale
    peak: Peak
    measured: Measured

    @property
    def bound(self) -> str:
        """Which term set the scale."""
        low = min(self.by_stream, self.by_requests, self.most)
        if self.time_scale <= MIN_TIME_SCALE and low < MIN_TIME_SCALE:
            return "floor"
        return "stream" if low == self.by_stream else "requests" if low == self.by_requests else "profile"

    def describe(self) -> str:
        m, p = self.measured, self.peak
        return (
            f"calibrated in {m.seconds:.1f} s: simulator and benchmark client sustained {m.sustained_chunks_s:,.0f} "
            f"chunks/s at C={p.concurrency} ({p.config}); the peak {p.chunks_s:,.0f} chunks per modelled second at "
            f"{STREAM_HEADROOM:.0%} of it allows {self.by_stream:.1f}x; {1000 * m.request_overhead_s:.2f} ms per "
            f"request beyond the model at {REQUEST_SHARE:.0%} of a {REFERENCE_ANSWER_TOKENS}-token answer at "
            f"{p.single_stream_tok_s:g} tok/s allows {self.by_requests:.1f}x; the profile's most {self.most:g}x: "
            f"{self.time_scale:g}x ({self.bound} bound)"
        )

    def facts(self) -> dict[str, Any]:
        """For the world's summary and the run's host_opened event."""
        return {
            "time_scale": self.time_scale,
            "by_stream": round(self.by_stream, 3),
            "by_requests": round(self.by_requests, 3),
            "most": self.most,
            "bound": self.bound,
            "peak": asdict(self.peak),
            "measured": asdict(self.measured),
            "rule": {
                "stream_headroom": STREAM_HEADROOM,
                "request_share": REQUEST_SHARE,
                "reference_answer_tokens": REFERENCE_ANSWER_TOKENS,
                "step": SCALE_STEP,
                "min": MIN_TIME_SCALE,
            },
        }


def peak_load(profile: Profile) -> Peak:
    """The profile's busiest autoregressive layout at its top level (every config of every target), and its
    fastest single stream (autoregressive or speculative, at C=1 or the lowest known level)."""
    busiest: tuple[float, str, int] | None = None
    single = 0.0
    for serving in profile.serving_specs:
        for config in serving.configs:
            points = config.throughput.known_points()
            c, tok_s = max(points, key=lambda p: p[1])
            if busiest is None or tok_s > busiest[0]:
                busiest = (tok_s, config.name, c)
            single = max(single, points[0][1] / points[0][0])
        for spec in serving.speculative:
            points = spec.throughput.known_points()
            single = max(single, points[0][1] / points[0][0])
    assert busiest is not None, "a profile has at least one configuration"
    return Peak(chunks_s=busiest[0], config=busiest[1], concurrency=busiest[2], single_stream_tok_s=single)


def _floor_step(value: float) -> float:
    return math.floor(value / SCALE_STEP + 1e-9) * SCALE_STEP


def choose_time_scale(peak: Peak, measured: Measured, most: float) -> TimeScaleChoice:
    """The rule (see the module's docstring): the lowest bound, rounded down to SCALE_STEP, at least MIN_TIME_SCALE."""
    by_stream = STREAM_HEADROOM * measured.sustained_chunks_s / peak.chunks_s
    overhead = max(measured.request_overhead_s, 1e-6)
    by_requests = REQUEST_SHARE * peak.reference_request_s / overhead
    scale = max(MIN_TIME_SCALE, _floor_step(min(by_stream, by_requests, most)))
    return TimeScaleChoice(
        time_scale=scale, by_stream=by_stream, by_requests=by_requests, most=most, peak=peak, measured=measured
    )


_cache: dict[tuple[str, Peak, float], tuple[float, TimeScaleChoice]] = {}
_cache_lock = threading.Lock()


def calibrated_time_scale(profile: Profile) -> TimeScaleChoice:
    """Measure this machine (or reuse a measurement of this process younger than CACHE_SECONDS) and choose."""
    peak = peak_load(profile)
    key = (profile.name, peak, profile.sim.fast_time_scale)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        choice = choose_time_scale(peak, measure(profile, peak), profile.sim.fast_time_scale)
        _cache[key] = (time.monotonic(), choice)
        return choice


# -- the measurement ---------------------------------------------------------------------------------------------


def _busiest(profile: Profile, peak: Peak) -> tuple[ServingSpec, ParallelConfig]:
    for serving in profile.serving_specs:
        for config in serving.configs:
            if config.name == peak.config:
                return serving, config
    raise KeyError(peak.config)


def measure(profile: Profile, peak: Peak) -> Measured:
    """Run the two measurements against a throwaway simulated server process (the module's docstring)."""
    started = time.monotonic()
    serving, config = _busiest(profile, peak)
    scale = ASK_CHUNKS_S / peak.chunks_s
    with _Server(serving, config, scale) as server:
        stream = server.level(Level(peak.concurrency, INPUT_TOKENS, 1_000_000, duration_s=STREAM_SECONDS, end="cut"))
        single = server.level(Level(1, INPUT_TOKENS, REFERENCE_ANSWER_TOKENS, requests=OVERHEAD_REQUESTS))
        modelled = server.modelled_request_s(REFERENCE_ANSWER_TOKENS)
    requests = [r for r in stream["requests"] if r["chunk_s"]]
    first = max(r["start_s"] + r["chunk_s"][0] for r in requests)  # every stream under way
    last = min(r["start_s"] + r["chunk_s"][-1] for r in requests)  # none cut yet
    chunks = sum(1 for r in requests for t in r["chunk_s"] if first < r["start_s"] + t <= last)
    tokens = sum(
        n
        for r in requests
        for t, n in zip(r["chunk_s"], r["chunk_tokens"], strict=False)
        if first < r["start_s"] + t <= last
    )
    wall = max(last - first, 1e-6)
    done = sorted(single["requests"], key=lambda r: r["start_s"])
    done = [r for r in done if r["end_s"] is not None and not r.get("error")]
    # Closed loop at C=1: each request's wall time beyond its modelled time, from its send to its end, and the
    # client's turn-around to the next send, together.
    span = done[-1]["end_s"] - done[0]["start_s"] if done else 0.0
    overhead = max(span / len(done) - modelled / scale, 0.0) if done else 1.0
    wall_level = float(stream.get("duration_s") or wall)
    return Measured(
        sustained_chunks_s=chunks / wall,
        request_overhead_s=overhead,
        tokens_per_chunk=tokens / chunks if chunks else 0.0,
        client_cpu_fraction=round(float(stream.get("client_cpu_s", 0.0)) / max(wall_level, 1e-6), 3),
        seconds=time.monotonic() - started,
    )


class _Server:
    """A simulated SGLang server process for one layout at one scale (no world, no GPUs: the engine and the API)."""

    def __init__(self, serving: ServingSpec, config: ParallelConfig, time_scale: float) -> None:
        self.serving, self.config, self.time_scale = serving, config, time_scale
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> _Server:
        spec = json.dumps(
            {"serving": self.serving.model_dump(mode="json"), "config": self.config.name, "time_scale": self.time_scale}
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "specops.sim.world.calibration"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # the streams the client cuts end in aiohttp's tracebacks
            text=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(spec + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.__exit__()
            raise RuntimeError(f"the calibration server did not start: {line!r}")
        self.port = int(line)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()  # the server stops when its stdin closes
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def modelled_request_s(self, tokens: int) -> float:
        from ..serving.performance import build_performance_model

        model = build_performance_model(self.serving, _launch(self.config), 1)
        return model.prefill_seconds(INPUT_TOKENS) + (tokens - 1) * model.step_time(1)

    def level(self, level: Level) -> dict[str, Any]:
        """One level of the benchmark client, as runs use it here: its raw output."""
        if _level_client is None:
            raise RuntimeError(
                "a quick run's time scale is measured with the benchmark client, and none was handed in: "
                "offer simulated hosts through specops.cli.simulated_hosts, or give the world a time scale"
            )
        return _level_client(f"http://127.0.0.1:{self.port}", level)


def _launch(config: ParallelConfig) -> Launch:
    from ..serving.performance import Launch

    return Launch(
        tp=config.tp,
        ep=config.ep,
        pp=config.pp,
        dp=config.dp,
        dp_attention=config.dp_attention,
        cuda_graphs=config.cuda_graphs,
    )


# -- the calibration server (this module run as a process) ----------------------------------------------------------


async def _serve(spec: dict[str, Any]) -> None:
    import asyncio

    from aiohttp import web

    from ..serving.engine import Engine
    from ..serving.http_api import ServerState, build_app
    from ..serving.performance import build_performance_model
    from ..world import ports

    serving = ServingSpec.model_validate(spec["serving"])
    config = serving.config(spec["config"])
    model = build_performance_model(serving, _launch(config), 1)
    engine = Engine(
        model=model,
        time_scale=float(spec["time_scale"]),
        max_running_requests=4096,
        max_total_tokens=1 << 40,
        cuda_graph_max_bs=512,
        cuda_graphs=config.cuda_graphs,
        decode_log_interval=1 << 30,
        decode_log=lambda _: None,
        prefill_log=lambda _: None,
        accept_rate_in_log=False,
    )
    state = ServerState(
        engine=engine,
        served_model_name=serving.target.repo_id,
        model_path=serving.target.repo_id,
        tokenizer_path=serving.target.repo_id,
        model_type="calibration",
        architectures=[],
        context_length=1 << 21,
        version="",
        server_args={"max_running_requests": 4096},
        speculative_algorithm=None,
        random_seed=0,
        dp_size=1,
        enable_metrics=False,
        incremental_streaming_output=True,
        ready=True,
    )
    sock = ports.bind_loopback()
    engine.start()
    runner = web.AppRunner(build_app(state), access_log=None, handle_signals=False)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    print(sock.getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    closed = loop.create_future()

    def stdin_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    loop.add_reader(sys.stdin.fileno(), stdin_closed)
    await closed
    await runner.cleanup()
    await engine.stop()


def main() -> None:
    import asyncio

    spec = json.loads(sys.stdin.readline())
    asyncio.run(_serve(spec))


if __name__ == "__main__":
    main()
