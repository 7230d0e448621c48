"""A benchmark level is valid only while the server lives, broken requests are failed, and every warning says what to do.

No simulated world here: the client runs against small asyncio servers in this
process that break their streams the way a dying server does, and the server
check reads a fake host (its launch record, its process, its log).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from specops.tools.benchmark import BenchmarkArgs, ClientLoad, LatencySummary, LevelResult, stream_client
from specops.tools.benchmark.statistics import level_result
from specops.tools.benchmark.sweep import (
    acceptance_warning,
    check_server,
    failed_level,
    level_notes,
    level_warnings,
)
from specops.tools.context import ToolContext
from specops.tools.hosts import CommandResult, DetachedProcess

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

WATCHDOG_LOG = (
    "[2026-05-01 10:00:00] Decode batch. #running-req: 96, #token: 181234, gen throughput (token/s): 2210.4\n"
    "[rank3]:[E0501 10:10:00.000000 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1282411, OpType=ALLREDUCE) ran for 600043 milliseconds before timing out.\n"
    "terminate called after throwing an instance of 'c10::DistBackendError'\n"
    "[2026-05-01 10:10:01] Received sigquit from a child process. It usually means the child failed.\n"
)


# -- the client against servers that break their streams -------------------------------------------------------


def _sse(payload: dict | str) -> bytes:
    data = b"data: " + (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()) + b"\n\n"
    return b"%x\r\n" % len(data) + data + b"\r\n"


class BreakingServer:
    """Native SGLang API. /generate streams `chunks` chunks of 4 tokens, then: `close` (the connection drops, as a
    killed server's does), `end` (a clean end of the body but no finish_reason nor [DONE]) or `finish` (a proper end).
    /health_generate answers 200, or (die_after_level) nothing: the listener is gone after the first level."""

    def __init__(self, chunks: int, how: str, die_after_level: bool = False) -> None:
        self.chunks, self.how, self.die_after_level = chunks, how, die_after_level
        self.listener: asyncio.base_events.Server | None = None
        self.generated = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await reader.readline()
                if not request:
                    return
                _method, path, _ = request.decode().split(" ", 2)
                length = 0
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if length:
                    await reader.readexactly(length)
                if path == "/generate":
                    if not await self.generate(writer):
                        return
                elif path in ("/server_info", "/health_generate"):
                    body = b"{}"
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                else:
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def generate(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for k in range(1, self.chunks + 1):
            done = self.how == "finish" and k == self.chunks
            meta = {
                "completion_tokens": 4 * k,
                "prompt_tokens": 4,
                "finish_reason": {"type": "length"} if done else None,
            }
            writer.write(_sse({"text": "x", "meta_info": meta}))
            await writer.drain()
            await asyncio.sleep(0.002)
        self.generated += 1
        if self.how == "close":
            writer.transport.abort()  # no closing chunk: what a killed server's socket gives
            return False
        if self.how == "finish":
            writer.write(_sse("[DONE]"))
        writer.write(b"0\r\n\r\n")
        return True


async def _run(server: BreakingServer, levels: list[int]) -> dict:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.listener = listener
    port = listener.sockets[0].getsockname()[1]
    config = {
        "base_url": f"http://127.0.0.1:{port}",
        "api": "sglang",
        "output_len": 4 * server.chunks,
        "request_timeout_s": 5,
        "prompts": {"kind": "random_ids", "input_len": 4, "seed": 1},
        "levels": [
            {"concurrency": c, "num_requests": 2 * c, "warmup_requests": 0, "flush_cache": False} for c in levels
        ],
    }
    client = stream_client.Client(config)
    if server.die_after_level:
        real = client.health

        async def health_after_death() -> dict:
            listener.close()
            await listener.wait_closed()
            return await real()

        client.health = health_after_death  # the server dies as the level ends
    try:
        settled = await client.settle_api()
        out = []
        for i, level in enumerate(config["levels"]):
            out.append(await client.run_level(i, level))
            if out[-1]["server_health"]["ok"] is False:
                break
        return {**settled, "levels": out}
    finally:
        listener.close()


@pytest.mark.parametrize("how", ["close", "end"])
def test_a_stream_the_server_broke_off_is_failed_and_counts_no_tokens_or_latency(how):
    raw = asyncio.run(_run(BreakingServer(chunks=3, how=how), [2]))
    level = level_result(raw["levels"][0])
    assert level.requests_completed == 0 and level.requests_failed == 4
    assert level.total_output_tokens == 0 and level.tpot.samples == 0 and level.e2e.samples == 0
    assert level.ttft.samples == 0 and level.output_tok_s == 0.0
    expected = "StreamBroken" if how == "close" else "without finishing"
    assert all(expected in e for e in level.errors)


def test_a_stream_that_finishes_is_completed():
    raw = asyncio.run(_run(BreakingServer(chunks=3, how="finish"), [2]))
    level = level_result(raw["levels"][0])
    assert level.requests_completed == 4 and level.requests_failed == 0 and level.total_output_tokens == 48
    assert raw["levels"][0]["server_health"] == {"ok": True, "path": "/health_generate", "status": 200, "error": None}


def test_a_server_that_stops_answering_after_a_level_ends_the_sweep_there():
    raw = asyncio.run(_run(BreakingServer(chunks=2, how="finish", die_after_level=True), [2, 4]))
    assert len(raw["levels"]) == 1
    health = raw["levels"][0]["server_health"]
    assert health["ok"] is False and "Refused" in health["error"]


# -- the server check on a host ----------------------------------------------------------------------------------


class FakeHost:
    """Just enough of a Host: the launch records, the times of a file written now and of the log, the process table
    and the log."""

    spec = "fake:gpu"

    def __init__(self, record: DetachedProcess | None, alive: bool, log: str, log_age_s: float = 0.0) -> None:
        self.record, self.alive, self.log, self.log_age_s = record, alive, log, log_age_s

    def _done(self, argv: list[str], stdout: str) -> CommandResult:
        return CommandResult(
            argv=argv, exit_code=0, stdout=stdout, stderr="", duration_s=0.0, timed_out=False, host=self.spec
        )

    def run(self, argv, **_: object) -> CommandResult:
        script = argv[2]
        if "mktemp" in script and "stat -c %Y" in script:
            now = int(datetime.now(UTC).timestamp())
            return self._done(argv, f"{now}\n{int(now - self.log_age_s)}\n")
        return self._done(argv, self.record.model_dump_json() + "\n" if self.record else "")

    def is_running(self, proc: DetachedProcess) -> bool:
        return self.alive

    def tail(self, log_path: str, lines: int = 50) -> str:
        return self.log


def _record(port: int = 30000) -> DetachedProcess:
    return DetachedProcess(
        pid=4242,
        pgid=4242,
        log_path="/root/.specops/logs/sglang-30000.log",
        argv=["python3", "-m", "sglang.launch_server", "--port", str(port)],
        started_at=datetime.now(UTC),
        host="fake:gpu",
    )


def _ctx(host: FakeHost) -> ToolContext:
    return ToolContext(host=host, home="/root", allowed_roots=("/root",))  # type: ignore[arg-type]


def _summary(n: int) -> LatencySummary:
    return LatencySummary(
        samples=n,
        mean_ms=10.0 if n else None,
        p50_ms=10.0 if n else None,
        p90_ms=10.0 if n else None,
        p99_ms=10.0 if n else None,
    )


def _level(
    concurrency: int = 64, *, accept: float | None = None, limited: bool = False, failed: int = 0
) -> LevelResult:
    return LevelResult(
        concurrency=concurrency,
        achieved_concurrency=concurrency * 0.98,
        requests_completed=3 * concurrency,
        requests_failed=failed,
        errors=["HTTP 400: too long"] * min(failed, 1),
        duration_s=10.0,
        total_input_tokens=100,
        total_output_tokens=1000,
        output_tok_s=100.0,
        request_rate_per_s=1.0,
        ttft=_summary(5),
        tpot=_summary(5),
        itl_per_token=_summary(5),
        inter_chunk_gap=_summary(5),
        e2e=_summary(5),
        tokens_per_chunk=accept or 1.0,
        accept_length=accept,
        cache_flushed=True,
        client=ClientLoad(
            cpu_fraction=0.97 if limited else 0.1, loop_lag_p99_ms=9.0 if limited else 1.0, limited=limited
        ),
    )


def test_a_dead_server_is_diagnosed_from_the_log_its_launch_record_names():
    failure = check_server(
        _ctx(FakeHost(_record(), alive=False, log=WATCHDOG_LOG)),
        30000,
        "GET /health_generate: ConnectionRefusedError",
        since=datetime.now(UTC).timestamp() - 60,
    )
    assert failure.state == "died" and failure.cause == "crash" and "NCCL watchdog" in failure.cause_words
    assert failure.log_path == "/root/.specops/logs/sglang-30000.log"
    level = failed_level(_level(96), failure, 30000, cap=None)
    assert not level.valid and level.server_failure == failure
    assert "died during the level at C=96" in level.invalid_reason and "Watchdog caught" in level.invalid_reason
    assert "--max-running-requests) below 96, e.g. 48" in level.remedy
    note = level_notes([level])[0]
    assert note.startswith("C=96: NOT VALID") and "Remedy: Relaunch" in note


def test_the_server_cap_bounds_the_running_requests_the_remedy_names():
    failure = check_server(_ctx(FakeHost(_record(), alive=False, log=WATCHDOG_LOG)), 30000, "refused")
    assert "below 64, e.g. 32" in failed_level(_level(128), failure, 30000, cap=64).remedy


def test_a_hung_server_is_not_answering_and_the_remedy_stops_it_first():
    quiet = "[2026-05-01 10:00:00] Decode batch. #running-req: 96\n"
    failure = check_server(_ctx(FakeHost(_record(), alive=True, log=quiet)), 30000, "GET /health_generate: no answer")
    assert (
        failure.state == "not_answering" and failure.cause is None and failure.cause_words == "its log names no error"
    )
    level = failed_level(_level(96), failure, 30000, cap=None)
    assert "stopped answering" in level.invalid_reason and level.remedy.startswith("Stop the hung server (stop_server)")
    assert "/root/.specops/logs/sglang-30000.log" in level.remedy


def test_a_record_of_another_port_or_a_stale_log_is_not_the_servers():
    for host in (
        FakeHost(_record(port=30001), alive=False, log=WATCHDOG_LOG),
        FakeHost(_record(), alive=False, log=WATCHDOG_LOG, log_age_s=3600),
    ):
        failure = check_server(
            _ctx(host), 30000, "GET /health_generate: ConnectionRefusedError", since=datetime.now(UTC).timestamp() - 60
        )
        assert failure.cause is None and "no launch record" in failure.cause_words and failure.state == "died"
        assert "read the server's log" in failed_level(_level(8), failure, 30000, cap=None).remedy


# -- warnings with remedies -------------------------------------------------------------------------------------


def test_an_acceptance_of_one_warns_in_the_acceptance_tools_words():
    args = BenchmarkArgs(levels=[8])
    note = acceptance_warning(_level(8, accept=1.0))
    assert note is not None and "1.00 (1.00: drafts are never accepted) is below 1.5" in note
    assert "slower than the baseline" in note and "cuda_graphs off" in note and "drafter matches the target" in note
    assert note in level_warnings(args, _level(8, accept=1.0), speculative=True)
    assert acceptance_warning(_level(8, accept=3.4)) is None and acceptance_warning(_level(8)) is None
    # Where the level has no figure of its own, the server's running one warns too.
    lifetime = _level(8).model_copy(update={"accept_length_lifetime": 1.0})
    assert "accept_length_lifetime" in acceptance_warning(lifetime, speculative=True)


def test_a_busy_client_warning_says_what_to_do_where_the_client_ran():
    host = level_warnings(BenchmarkArgs(levels=[64]), _level(64, limited=True), speculative=False)
    local = level_warnings(BenchmarkArgs(levels=[64], client="local"), _level(64, limited=True), speculative=False)
    assert any("client was busy" in w and "C=64 and up alone" in w and "bench_serving" in w for w in host)
    assert any("client was busy" in w and "client='host'" in w for w in local)


def test_failed_requests_on_a_live_server_warn_with_where_to_look():
    (note,) = level_warnings(BenchmarkArgs(levels=[8]), _level(8, failed=2), speculative=False)
    assert note.startswith("2 requests failed, e.g. HTTP 400: too long") and "server's log" in note


def test_a_level_that_stalled_warns_to_run_it_again():
    stalled = _level(32).model_copy(update={"output_tok_s_ci95": (20.0, 170.0), "unstable": True})
    (note,) = level_warnings(BenchmarkArgs(levels=[32]), stalled, speculative=False)
    assert note.startswith("the throughput stalled inside the level (95% interval 20-170 tok/s around 100)")
    assert "run the level again" in note
    noisy = _level(32).model_copy(update={"output_tok_s_ci95": (88.0, 112.0), "unstable": True})  # +-12%: noise
    assert level_warnings(BenchmarkArgs(levels=[32]), noisy, speculative=False) == []
