"""A simulated server's decode steps are the model's, however long its clients take over each token.

The world's clock stands at each step's end until the world is quiet (sim/world/quiescence.py,
sim/serving/pacing.py): a client that computes for a while over every chunk sees the same gaps between chunks as
one that does nothing, because its computing is this machine's time, not the host's. Assertions are on the host's
readings only, never on how fast this machine is.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from specops.sim.world.quiescence import Quiescence, register_program
from specops.tools.context import ToolContext
from specops.tools.sglang import LaunchArgs, ServerConfig, StopArgs, launch_server, stop_server

from ..tools.worlds import reach, start_world

# A host program: stream one answer from the server and print the gaps between its chunks, in the host's seconds,
# after computing for `burn` host CPU seconds over each chunk.
STREAM_AND_BURN = r"""
import http.client, json, sys, time
burn, port = float(sys.argv[1]), int(sys.argv[2])
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
body = {"text": "hello", "sampling_params": {"max_new_tokens": 16, "ignore_eos": True}, "stream": True}
conn.request("POST", "/generate", json.dumps(body), {"Content-Type": "application/json"})
stamps = []
for line in conn.getresponse():
    if line.startswith(b"data:") and b"[DONE]" not in line:
        stamps.append(time.monotonic())
        end = time.thread_time() + burn
        while time.thread_time() < end:
            pass
print(json.dumps([b - a for a, b in zip(stamps, stamps[1:])]))
"""


def test_a_client_computing_over_every_chunk_sees_the_steps_the_model_makes() -> None:
    with start_world(time_scale=8.0) as world, reach(world, "sim") as host:
        ctx = ToolContext.for_host(host)
        launched = launch_server(ctx, LaunchArgs(config=ServerConfig(model_path=f"{ctx.home}/models/Kimi-K2.6", tp=8)))
        try:
            port = str(host.port_on_host(30000))
            gaps = {}
            for burn in ("0", "0.2"):  # 0.2 host CPU seconds a chunk: 25 ms of this machine's at rate 8
                done = host.run(["python", "-c", STREAM_AND_BURN, burn, port], timeout=600)
                assert done.ok, done.stderr[-500:]
                gaps[burn] = json.loads(done.stdout)
        finally:
            stop_server(ctx, StopArgs(server=launched.id))
    assert len(gaps["0"]) == len(gaps["0.2"]) == 15
    step = gaps["0"][-1]
    assert step > 0
    for quick, slow in zip(gaps["0"], gaps["0.2"], strict=True):
        # Not 0.2 s late: the burn is not the host's time. A few microseconds: each reading of a standing clock moves
        # on by a float's least step (0.24 us at today's epoch seconds), and a busy machine reads it more often.
        assert slow == pytest.approx(quick, abs=1e-5)
        assert quick == pytest.approx(step, abs=1e-5)  # one decode step of one running request each


@pytest.fixture
def quiescence(tmp_path: Path) -> Quiescence:
    (tmp_path / "clock").mkdir()
    (tmp_path / "ports").mkdir()
    return Quiescence(tmp_path / "clock", tmp_path / "ports")


@pytest.fixture
def program(quiescence: Quiescence) -> Iterator[subprocess.Popen[bytes]]:
    """A registered program that sleeps until told to compute (a line on its stdin), then computes for ever."""
    code = "import sys\nsys.stdin.readline()\nwhile True:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    register_program(quiescence.programs.parent, proc.pid)
    yield proc
    proc.kill()
    proc.wait()


def test_a_program_asleep_is_quiet_and_one_computing_is_not(
    quiescence: Quiescence, program: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + 30
    while quiescence.busy_program() is not None and time.monotonic() < deadline:  # still starting
        time.sleep(0.01)
    assert quiescence.busy_program() is None
    assert program.stdin is not None
    program.stdin.write(b"go\n")
    program.stdin.flush()
    while quiescence.busy_program() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert quiescence.busy_program() == program.pid


def test_a_program_that_exited_is_forgotten(quiescence: Quiescence) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    register_program(quiescence.programs.parent, proc.pid)
    proc.wait()
    assert quiescence.busy_program() is None
    assert not (quiescence.programs / str(proc.pid)).exists()


def test_bytes_unread_on_a_world_port_are_on_their_way(quiescence: Quiescence) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        (quiescence.ports_dir / "30000.json").write_text(json.dumps({"pid": os.getpid(), "real_port": port}))
        assert quiescence.world_ports() == {port}
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = server.accept()
            with accepted:
                client.sendall(b"x" * 100)
                assert quiescence.bytes_on_their_way({port})
                assert accepted.recv(100) == b"x" * 100
                assert not quiescence.bytes_on_their_way({port})
                assert not quiescence.bytes_on_their_way({port + 1})  # another world's port: not this one's
