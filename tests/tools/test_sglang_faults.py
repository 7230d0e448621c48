"""launch_server failures from injected faults, diagnosed from SGLang's log, over sim: and ssh://.

Each fault gets its own seed-ct200 world (time scale 400); the cause, the
matching lines and the remedy come from the server's real log output.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from specops.sim.faults import (
    CudaGraphDrafter,
    LoadHang,
    OldSglang,
    OutOfMemory,
    PortInUse,
    ServerCrashAtStart,
    SlowLoad,
)
from specops.tools.context import ToolContext
from specops.tools.sglang import (
    LaunchArgs,
    LaunchFailed,
    ServerConfig,
    SglangTooOld,
    StopArgs,
    launch_server,
    read_capabilities,
    stop_server,
)

from .test_sglang_launch import SCALE, _drafter, _ep4, _gpu_pids
from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


@pytest.fixture(params=["sim", "ssh"])
def backend(request) -> str:
    return request.param


@pytest.fixture
def faulty(request, backend) -> Iterator[ToolContext]:
    with start_world(faults=request.param, time_scale=SCALE) as w, reach(w, backend) as h:
        yield ToolContext.for_host(h)


def _launch_in(ctx: ToolContext, config: ServerConfig):
    return launch_server(ctx, LaunchArgs(config=config))


@pytest.mark.parametrize("faulty", [[OutOfMemory(min_mem_fraction_static=0.92)]], indirect=True)
def test_out_of_memory_pool_names_mem_fraction_static(faulty):
    with pytest.raises(LaunchFailed) as failed:
        _launch_in(faulty, _ep4(faulty, mem_fraction_static=0.85))
    assert failed.value.cause == "out_of_memory" and failed.value.details["memory"] == "pool_too_small"
    assert "Not enough memory. Please try to increase --mem-fraction-static." in failed.value.details["lines"][-1]
    assert "raise mem_fraction_static" in failed.value.remedy and failed.value.details["stopped"] is False


@pytest.mark.parametrize("faulty", [[PortInUse(port=30000)]], indirect=True)
def test_port_in_use_costs_a_load_and_is_named(faulty):
    with pytest.raises(LaunchFailed) as failed:
        _launch_in(faulty, _ep4(faulty))
    assert failed.value.cause == "port_in_use" and "another port" in failed.value.remedy
    assert any("address already in use" in line for line in failed.value.details["lines"])
    # SGLang binds the HTTP port only when uvicorn starts, after the model has loaded: the load is spent.
    assert any("Load weight end" in line for line in failed.value.details["log_tail"].splitlines())
    # Seen when the process exits after its load (modelled seconds), not at the 7200 s wait.
    assert failed.value.details["elapsed_s"] < 1800


@pytest.mark.parametrize("faulty", [[CudaGraphDrafter(mode="crash")]], indirect=True)
def test_cuda_graph_capture_crash_with_the_drafter(faulty):
    with pytest.raises(LaunchFailed) as failed:
        _launch_in(faulty, _ep4(faulty, speculative_algorithm="DFLASH", drafter_path=_drafter(faulty)))
    assert failed.value.cause == "cuda_graph_failure" and "cuda_graphs off" in failed.value.remedy
    assert any("Capture cuda graph failed" in line for line in failed.value.details["lines"])
    assert not _gpu_pids(faulty.host)


@pytest.mark.parametrize("faulty", [[ServerCrashAtStart(after_fraction=0.3)]], indirect=True)
def test_a_crash_at_start_is_noticed_before_the_timeout(faulty):
    with pytest.raises(LaunchFailed) as failed:
        _launch_in(faulty, _ep4(faulty))
    d = failed.value.details
    assert failed.value.cause == "crash" and d["elapsed_s"] < 1800  # not the 7200 s wait: the exit is seen at once
    assert any("NCCL error" in line or "Traceback" in line for line in d["lines"])
    assert "Received sigquit" in d["log_tail"]


@pytest.mark.parametrize("faulty", [[OldSglang(version="0.5.10.post1")]], indirect=True)
def test_old_sglang_is_too_old_for_dflash_before_anything_starts(faulty):
    with pytest.raises(SglangTooOld, match=r"0\.5\.10\.post1 .*needs SGLang >= 0\.5\.11") as old:
        _launch_in(faulty, _ep4(faulty, speculative_algorithm="DFLASH", drafter_path=f"{faulty.home}/models/dflash"))
    assert "DFLASH" not in old.value.details["choices"]
    caps = read_capabilities(faulty.host)
    assert caps.version == "0.5.10.post1" and read_capabilities(faulty.host) is caps  # cached per host
    assert not faulty.host.exists(f"{faulty.home}/.specops/logs")


@pytest.mark.parametrize("faulty", [[SlowLoad(factor=6)]], indirect=True)
def test_a_slow_load_that_shows_progress_is_waited_for(faulty):
    # 6 x 420 s: longer than the 1800 s specops once waited, logging every tenth of the shards on the way.
    server = _launch_in(faulty, _ep4(faulty))
    try:
        assert server.ready_after_s > 1800  # modelled seconds, as the report shows them
        assert "past the usual 1800 s: waited on while its log showed progress" in server.warnings[0]
    finally:
        stop_server(faulty, StopArgs(server=server.id))


@pytest.mark.parametrize("faulty", [[LoadHang(at_fraction=0.3)]], indirect=True)
def test_a_start_up_that_goes_silent_is_stopped_as_stuck_long_before_the_wait(faulty):
    with pytest.raises(LaunchFailed) as failed:
        _launch_in(faulty, _ep4(faulty))
    d = failed.value.details
    assert failed.value.cause == "stalled" and d["stopped"] is True and "nothing new in its log" in str(failed.value)
    assert "Loading safetensors checkpoint shards" in d["lines"][-1]  # where it stopped moving
    assert not _gpu_pids(faulty.host)
