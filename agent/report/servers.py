"""Which server answered on a port when a measurement ran, and which servers the run left running.

A benchmark or acceptance result names only the port it drove. The server
behind it is the one this run launched on that port most recently before the
measurement was called, and not stopped since. A server that was already
running when the run began (found by host_facts) is named from its command line.
"""

from __future__ import annotations

from dataclasses import dataclass

from specops.tools.facts import ServingProcess
from specops.tools.sglang.config import ServerConfig
from specops.tools.sglang.handle import RunningServer

from .evidence import Evidence, Launch
from .naming import ConfigNames
from .schema import ProcessNote, RunningServerNote


@dataclass(frozen=True)
class ServedBy:
    config: str
    speculative: bool
    server_config: ServerConfig | None  # None: a server this run did not launch


@dataclass
class _Life:
    config: ServerConfig
    port: int
    pid: int
    up_seq: int
    down_seq: int | None = None
    others: tuple[ProcessNote, ...] = ()  # every other rank's process, or every replica's


def other_processes(server: RunningServer) -> tuple[ProcessNote, ...]:
    """A server's processes besides its own pid: every other rank of a server across nodes, every replica behind a
    gateway (the gateway is the handle's pid)."""
    ranks = (ProcessNote(role=f"rank {r.node_rank}", host=r.host, pid=r.pid) for r in server.ranks[1:])
    replicas = (ProcessNote(role=f"replica {i}", host=r.host, pid=r.pid) for i, r in enumerate(server.replicas))
    return (*ranks, *replicas)


class ServerTimeline:
    def __init__(self, evidence: Evidence, names: ConfigNames) -> None:
        self._names = names
        self._lives: list[_Life] = []
        # (seq, server launched or None, pid stopped or None): a restart does both, stop first.
        changes: list[tuple[int, Launch | None, int | None]] = [
            (launch.seq, launch, launch.stopped_pid)
            for launch in evidence.launches
            if launch.server is not None or launch.stopped_pid is not None  # a failed restart still stopped its server
        ]
        changes += [(stop.seq, None, stop.value.pid) for stop in evidence.stops]
        for seq, launch, stopped_pid in sorted(changes, key=lambda change: change[0]):
            if stopped_pid is not None:
                self._end(stopped_pid, seq)
            if launch is not None and launch.server is not None:
                server = launch.server
                self._lives.append(_Life(server.config, server.port, server.pid, seq, others=other_processes(server)))
        self._found: dict[int, ServingProcess] = {}
        for facts in evidence.host_facts:
            for process in facts.value.serving:
                self._found.setdefault(process.port, process)

    def _end(self, pid: int, seq: int) -> None:
        for life in self._lives:
            if life.pid == pid and life.down_seq is None:
                life.down_seq = seq

    def at(self, port: int, seq: int, speculative_algorithm: str | None) -> ServedBy:
        """The server on `port` when the call at `seq` was made."""
        live = [
            life
            for life in self._lives
            if life.port == port and life.up_seq < seq and (life.down_seq is None or life.down_seq > seq)
        ]
        if live:
            config = live[-1].config
            return ServedBy(self._names.name(config), config.speculative_algorithm is not None, config)
        found = self._found.get(port)
        speculative = speculative_algorithm is not None
        if found is not None:
            label = f"tp{found.tp_size or '?'}" + (
                f"+{found.speculative_algorithm.lower()}" if found.speculative_algorithm else ""
            )
            return ServedBy(
                f"{label} (found running, port {port})", bool(found.speculative_algorithm) or speculative, None
            )
        label = f"port {port} (not launched by this run)" + (
            "+" + speculative_algorithm.lower() if speculative_algorithm else ""
        )
        return ServedBy(label, speculative, None)

    def left_running(self) -> list[RunningServerNote]:
        """Every server launched and never stopped, each rank's process where it spans nodes."""
        return [
            RunningServerNote(
                config=self._names.name(life.config), port=life.port, pid=life.pid, processes=list(life.others)
            )
            for life in self._lives
            if life.down_seq is None
        ]
