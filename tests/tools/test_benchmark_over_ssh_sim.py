"""The benchmark client on the host, reached over real SSH, against the serving simulator.

The client runs on the host side of the SSH link; on a simulated host it must find
the server behind its virtual port (Host.port_on_host), as SshHost.forward does.
"""

from __future__ import annotations

import pytest

from specops.tools.benchmark import BenchmarkArgs, run_benchmark
from specops.tools.context import ToolContext

from .test_benchmark_sim import FAST_LOAD, TIME_SCALE, launch
from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def test_client_on_an_ssh_reached_sim_host_measures_the_server():
    with start_world(FAST_LOAD, time_scale=TIME_SCALE) as world, reach(world, "ssh") as host:
        server = launch(host, str(world.layout.home), "logs/sglang-ssh.log")
        try:
            assert host.port_on_host(30000) != 30000  # a virtual port, served elsewhere on this machine
            result = run_benchmark(
                ToolContext.for_host(host), BenchmarkArgs(levels=[1, 8], input_len=64, output_len=128, rounds=1)
            )
        finally:
            host.stop(server)
    assert result.client == "host"
    assert [level.requests_completed for level in result.levels] == [1, 8]
    assert all(level.requests_failed == 0 and level.output_tok_s > 0 for level in result.levels)
