"""launch_server, server_status, stop_server and restart_server on seed-ct200, over sim: and ssh://.

The target is at <home>/models/Kimi-K2.6; the DFlash drafter is downloaded on the
host with the real `hf download`. The world runs at time scale 400, so Kimi's
420 s load takes about a second.

Over ssh:// the sim's virtual ports are reached through the SSH port forward
too (the SSH host maps them with the sim host's port registry). Faults:
test_sglang_faults.py.
"""

from __future__ import annotations

import pytest

from specops.sim.profiles import load_profile
from specops.tools.context import ToolContext
from specops.tools.hosts import Host
from specops.tools.sglang import (
    LaunchArgs,
    LaunchFailed,
    RestartArgs,
    ServerConfig,
    ServerNotOurs,
    SglangNotInstalled,
    SglangRuleViolation,
    StatusArgs,
    StopArgs,
    launch_server,
    read_capabilities,
    restart_server,
    server_status,
    stop_server,
)

from .worlds import ctx, host, reach, sim_host, start_world  # noqa: F401

SCALE = 400.0
DRAFTER_REPO = "SubSir/Kimi-K2.6-DFlash-tmp-long"

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


@pytest.fixture(scope="module")
def world():
    with start_world(time_scale=SCALE) as w:
        yield w


def _target(ctx: ToolContext) -> str:
    return f"{ctx.home}/models/Kimi-K2.6"


def _drafter(ctx: ToolContext) -> str:
    path = f"{ctx.home}/models/dflash"
    if not ctx.host.exists(f"{path}/config.json"):
        ctx.host.run(["hf", "download", DRAFTER_REPO, "--local-dir", path], timeout=120).check()
    return path


def _ep4(ctx: ToolContext, **more) -> ServerConfig:
    return ServerConfig(model_path=_target(ctx), tp=8, ep=4, trust_remote_code=True, **more)


def _gpu_pids(host: Host) -> set[int]:
    out = host.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"], timeout=30).check().stdout
    return {int(p) for p in out.split()}


def _launch(world, ctx, config: ServerConfig) -> object:
    return launch_server(ctx, LaunchArgs(config=config))


# -- success --------------------------------------------------------------------------------------


def test_autoregressive_ep4_is_ready_reports_its_settings_and_stops_clean(world, sim_host):
    ctx = ToolContext.for_host(sim_host)
    server = _launch(world, ctx, _ep4(ctx))
    try:
        assert server.info.version == "0.5.23" and (server.info.tp, server.info.ep) == (8, 4)
        assert server.info.speculative_algorithm is None and server.info.cuda_graphs is True
        assert server.info.max_running_requests and server.info.max_total_num_tokens
        assert "The server is fired up and ready to roll!" in ctx.host.tail(server.log_path, 5)
        assert server.pid in _gpu_pids(ctx.host)
        status = server_status(ctx, StatusArgs(server=server.id))
        assert status.up and status.process_running and status.running_requests == 0 and status.accept_length is None
    finally:
        stopped = stop_server(ctx, StopArgs(server=server.id))
    assert stopped.was_running and stopped.port_free and stopped.gpu_released and stopped.gpu_mib_released > 8 * 60_000
    assert server.pid not in _gpu_pids(ctx.host)
    assert not server_status(ctx, StatusArgs(port=server.port)).up


def test_dflash_on_ep4_takes_block_size_8_from_the_drafter_then_restarts_without_graphs(world, sim_host):
    ctx = ToolContext.for_host(sim_host)
    config = _ep4(ctx, speculative_algorithm="DFLASH", drafter_path=_drafter(ctx))
    server = _launch(world, ctx, config)
    try:
        assert server.info.speculative_algorithm == "DFLASH" and server.info.block_size == 8
        assert server.info.drafter_path.endswith("models/dflash")
        assert server.info.max_running_requests == 48  # SGLang's DFLASH default, flagged as a warning
        assert any("Max running requests is reset to 48 for speculative decoding" in w for w in server.warnings)
        status = server_status(ctx, StatusArgs(server=server.id))
        # Fresh from its warm-up the server has logged no decode interval, so it reports no average yet (as SGLang).
        assert status.up and status.info.block_size == 8 and status.accept_length is None
        restarted = restart_server(
            ctx,
            RestartArgs(
                server=server.id,
                changes={"cuda_graphs": False, "max_running_requests": 128},
            ),
        )
        assert restarted.stopped.gpu_released and restarted.server.pid != server.pid
        server = restarted.server
        assert (
            server.info.cuda_graphs is False and server.info.max_running_requests == 128 and server.info.block_size == 8
        )
    finally:
        stop_server(ctx, StopArgs(server=server.id))


@pytest.mark.parametrize("backend", ["ssh", "sim"])
def test_launch_status_restart_and_stop_over_ssh_and_locally(world, backend):
    with reach(world, backend) as host:
        ctx = ToolContext.for_host(host)
        server = launch_server(ctx, LaunchArgs(config=_ep4(ctx)))
        try:
            assert server.port == 30000 and server.host == host.spec
            assert host.port_on_host(30000) != 30000  # the world's virtual port, served elsewhere on this machine
            status = server_status(ctx, StatusArgs(server=server.id))
            assert status.up and status.process_running and status.info.max_running_requests != 96
            restarted = restart_server(ctx, RestartArgs(server=server.id, changes={"max_running_requests": 96}))
            assert restarted.stopped.gpu_released and restarted.server.pid != server.pid
            server = restarted.server
            assert server_status(ctx, StatusArgs(server=server.id)).info.max_running_requests == 96
        finally:
            stopped = stop_server(ctx, StopArgs(server=server.id))
        assert stopped.was_running and stopped.port_free and stopped.gpu_released
        assert not _gpu_pids(ctx.host) and not server_status(ctx, StatusArgs(port=30000)).up


def test_an_interpreter_without_sglang_is_named(ctx):
    with pytest.raises(SglangNotInstalled, match="not importable"):
        read_capabilities(ctx.host, python="/opt/no-such/python3")


# -- refused before launch ------------------------------------------------------------------------


def _logs(ctx: ToolContext) -> list[str]:
    out = ctx.host.run(["ls", f"{ctx.home}/.specops/logs"], timeout=30)
    return out.stdout.split() if out.ok else []


def test_dflash_with_pp2_is_refused_before_anything_starts(ctx):
    before = _logs(ctx)
    config = ServerConfig(
        model_path=_target(ctx), pp=2, tp=4, speculative_algorithm="DFLASH", drafter_path=f"{ctx.home}/models/dflash"
    )
    with pytest.raises(SglangRuleViolation, match="pp_size == 1"):
        launch_server(ctx, LaunchArgs(config=config, ready_timeout_s=5))
    assert _logs(ctx) == before and not _gpu_pids(ctx.host)


def test_a_restart_with_a_refused_change_keeps_nothing_stopped(ctx):
    fake = {"dp": 8, "enable_dp_attention": True, "speculative_algorithm": "DFLASH", "drafter_path": "/x"}
    # The handle's record does not exist, but the rules are checked before any stop is tried.
    from specops.tools.sglang import RunningServer, ServerInfoSummary

    handle = ctx.handles.add_server(
        RunningServer(
            host=ctx.host.spec,
            pid=1,
            pgid=1,
            started_at="2026-01-01T00:00:00Z",
            argv=["x"],
            log_path="/x.log",
            port=30000,
            base_url="http://127.0.0.1:30000",
            config=_ep4(ctx),
            ready_after_s=1.0,
            info=ServerInfoSummary.from_server_info({}),
        )
    )
    with pytest.raises(SglangRuleViolation, match="dp attention"):
        restart_server(ctx, RestartArgs(server=handle.id, changes=fake))
    with pytest.raises(ServerNotOurs, match="did not start it"):
        stop_server(ctx, StopArgs(server=handle.id))
    with pytest.raises(ServerNotOurs):
        stop_server(ctx, StopArgs(pid=4242))


# -- failures diagnosed from the log --------------------------------------------------------------


def test_tp4_does_not_fit_the_weights_and_says_so(world, ctx):
    with pytest.raises(LaunchFailed) as failed:
        _launch(world, ctx, ServerConfig(model_path=_target(ctx), tp=4, trust_remote_code=True))
    d = failed.value.details
    assert failed.value.cause == "out_of_memory" and d["memory"] == "weights_do_not_fit"
    assert any("CUDA out of memory" in line for line in d["lines"]) and "tp" in failed.value.remedy
    assert "Load weight begin" in d["log_tail"] and not _gpu_pids(ctx.host)


@pytest.mark.parametrize("backend", ["sim", "ssh"])
def test_a_launch_that_outlasts_its_timeout_is_stopped_and_says_timeout(backend):
    # A load of a minute of real time against a 0.3 s timeout: however slow a readiness poll
    # is on a busy machine, the server cannot be ready before the deadline.
    seed = load_profile("seed-ct200")
    slow = seed.model_copy(
        update={
            "serving": seed.serving.model_copy(
                update={"target": seed.serving.target.model_copy(update={"load_seconds": 60 * SCALE})}
            )
        }
    )
    with start_world(slow, time_scale=SCALE) as slow_world, reach(slow_world, backend) as slow_host:
        ctx = ToolContext.for_host(slow_host)
        with pytest.raises(LaunchFailed) as failed:
            launch_server(ctx, LaunchArgs(config=_ep4(ctx), ready_timeout_s=0.3))
        d = failed.value.details
        assert failed.value.cause == "timeout" and d["stopped"] is True and "--launch-wait" in failed.value.remedy
        assert not _gpu_pids(ctx.host)
