"""One SGLang server over several nodes: where each node's ranks sit, and torch.distributed's rendezvous.

What SGLang 0.5.23 does (read from its wheel):
- Every node runs the same command with its own --node-rank (arg_groups/fields/parallel.py: --nnodes, --node-rank,
  --dist-init-addr, --dist-timeout). check_server_args (arg_groups/validation_hook.py) asserts "tp_size must be
  divisible by number of nodes" and "base_gpu_id must be non-negative".
- The world is tp x pp ranks; each node runs world / nnodes of them on GPUs base_gpu_id + i * gpu_id_step
  (entrypoints/engine.py `_calculate_rank_ranges` and the scheduler loop around it). A GPU past the node's last one
  fails where distributed/bootstrap.py selects the device (`set_device(gpu_id)`): torch's "invalid device ordinal".
- distributed/bootstrap.py `_resolve_dist_init_method`: --dist-init-addr HOST:PORT becomes tcp://HOST:PORT, and
  torch.distributed.init_process_group's TCPStore on rank 0 waits there for every rank, for --dist-timeout seconds
  (None: torch's default, 600 s with NCCL). torch's messages (c10d TCPStore.cpp, socket.cpp): rank 0 gives up with
  "DistStoreError: Timed out after 601 seconds waiting for clients. 8/16 clients joined." (clients are GPU ranks,
  rank 0's own included; the elapsed whole seconds have passed the timeout, hence 601); a client that cannot reach
  rank 0 with "DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (HOST,
  PORT)."; a joined client whose store goes away with "DistNetworkError: Failed to recv, got 0 bytes. Connection was
  likely closed. Did the remote server shutdown or crash?".
- Rank 0 alone runs the tokenizer and the HTTP API. A node of node_rank >= 1 waits for its schedulers, then serves
  `launch_dummy_health_check_server` (utils/common.py: 200 on /health, /health_generate and /ping, uvicorn at
  log level warning, "Dummy health check server started in background thread at HOST:PORT") and blocks until its
  schedulers exit; SIGTERM there only logs "SIGTERM received on node_rank N; waiting for the rank-0 ShutdownReq
  broadcast to stop the schedulers." (entrypoints/engine.py, entrypoints/http_server.py). Rank 0's shutdown
  broadcasts ShutdownReq; each scheduler then exits and the node logs "Scheduler or DataParallelController PID
  terminated with 0" for it (engine.py `block_until_scheduler_exits`).
- A rank that dies after joining breaks the collectives: NCCL reports ncclRemoteError ("remote process exited or
  there was a network error") and the surviving scheduler's watchdog takes its process down (the SIGQUIT handler
  kills the tree, as for any scheduler failure).

In the simulator the rendezvous is a real TCP connection on 127.0.0.1 (sim hosts of one machine share loopback),
at the dist-init address's port: rank 0 listens (RankZeroStore), each other node connects (RankLink), says who it
is in one JSON line (node rank, GPU ranks, SGLang version), and keeps the connection open as its liveness link.
A connection that closes is a node that died; rank 0 sending {"shutdown": true} is its ShutdownReq broadcast.
Timeouts are modelled seconds, divided by the world's load time scale as the load's waits are.

SGLang logs nothing at INFO when a rank joins; the simulator adds two scheduler lines so a log shows where the
rendezvous stands (JOINED_LINE on a node of rank >= 1, ALL_JOINED_LINE on rank 0 once every node has joined).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from aiohttp import web

from ..fault_names import FaultName
from ..world.clock import this_machine_monotonic, wall_sleep
from .errors import SGLANG_SRC, LaunchError, scheduler_traceback, server_args_traceback

DEFAULT_DIST_TIMEOUT_S = 600  # torch's default process-group timeout with NCCL
JOIN_POLL_S = 0.01  # how often rank 0 looks for nodes that joined (this machine's seconds)
# The least wall time a rendezvous waits here, however fast loading is scaled: the nodes' processes start one after
# another over SSH on a busy machine, seconds apart, which no real rendezvous would notice.
MIN_WAIT_WALL_S = 20.0
CONNECT_RETRY_S = 0.05  # wall seconds between a client's attempts to reach rank 0
NCCL_VERSION = "2.27.3"  # as the simulator's other NCCL lines say

# The simulator's own lines (SGLang prints none at INFO here): what the tool side can look for.
JOINED_LINE = "Joined the torch.distributed rendezvous at {address} as node_rank {node_rank} (ranks {ranks})."
ALL_JOINED_LINE = "All {nnodes} nodes joined the torch.distributed rendezvous at {address} ({world} ranks)."
RANK_JOINED_LINE = "node_rank {node_rank} joined the rendezvous (ranks {ranks}, SGLang {version})."
VERSION_REFUSED = (
    "RuntimeError: SGLang version mismatch across nodes: node_rank {node_rank} runs {theirs}, node_rank 0 runs "
    "{ours}. Every node must run the same SGLang release."
)


# ---------------------------------------------------------------------------------------------- placement
@dataclass(frozen=True)
class NodePlacement:
    """Which of the server's GPU ranks run on this node, and on which of its GPUs."""

    nnodes: int
    node_rank: int
    tp: int
    pp: int
    base_gpu_id: int
    gpu_id_step: int

    @property
    def world_size(self) -> int:
        return self.tp * self.pp  # DP attention lives inside TP

    @property
    def ranks_per_node(self) -> int:
        return self.world_size // self.nnodes

    @property
    def gpu_ids(self) -> list[int]:
        return [self.base_gpu_id + i * self.gpu_id_step for i in range(self.ranks_per_node)]

    @property
    def ranks(self) -> range:
        """This node's global ranks (torch's rank = its place in the world)."""
        return range(self.node_rank * self.ranks_per_node, (self.node_rank + 1) * self.ranks_per_node)

    @property
    def leader(self) -> bool:
        return self.node_rank == 0

    def first_scheduler(self) -> tuple[int, int]:
        """(pp_rank, tp_rank) of this node's first scheduler, as engine.py's _calculate_rank_ranges places it."""
        pp_per_node = max(self.pp // self.nnodes, 1)
        nnodes_per_pp_rank = max(self.nnodes // self.pp, 1)
        tp_per_node = self.tp // nnodes_per_pp_rank
        return pp_per_node * (self.node_rank // nnodes_per_pp_rank), tp_per_node * (self.node_rank % nnodes_per_pp_rank)


def ranks_text(ranks: range) -> str:
    return f"{ranks.start}-{ranks.stop - 1}" if len(ranks) > 1 else str(ranks.start)


def node_placement(args: object) -> NodePlacement:
    """The placement the parsed server args ask for (the flags are the release's own; every release has them)."""
    return NodePlacement(
        nnodes=int(getattr(args, "nnodes", 1) or 1),
        node_rank=int(getattr(args, "node_rank", 0) or 0),
        tp=int(getattr(args, "tp_size", 1)),
        pp=int(getattr(args, "pp_size", 1)),
        base_gpu_id=int(getattr(args, "base_gpu_id", 0) or 0),
        gpu_id_step=int(getattr(args, "gpu_id_step", 1) or 1),
    )


def check_placement_args(placement: NodePlacement) -> None:
    """check_server_args' assertions on the placement (raised before anything loads)."""
    if placement.world_size % placement.nnodes:
        raise LaunchError(
            server_args_traceback("AssertionError: tp_size must be divisible by number of nodes", "check_server_args")
        )
    if placement.base_gpu_id < 0:
        raise LaunchError(
            server_args_traceback("AssertionError: base_gpu_id must be non-negative", "check_server_args")
        )


def check_devices(placement: NodePlacement, gpu_count: int, lost: Sequence[int] = ()) -> None:
    """Selecting a GPU this node lacks, or one that fell off the bus (`lost`, hardware.py), fails in the scheduler
    as torch reports it."""
    missing = [g for g in placement.gpu_ids if g >= gpu_count]
    if missing:
        _device_error("CUDA error: invalid device ordinal\nGPU device may be out of range, do you have enough GPUs?\n")
    if set(placement.gpu_ids) & set(lost):
        _device_error("CUDA error: unspecified launch failure\n")


def _device_error(error: str) -> NoReturn:
    raise LaunchError(
        scheduler_traceback(
            [
                (
                    f"{SGLANG_SRC}/srt/model_executor/model_runner.py",
                    1270,
                    "init_torch_distributed",
                    "init_parallel_runtime(",
                ),
                (
                    f"{SGLANG_SRC}/srt/distributed/bootstrap.py",
                    131,
                    "init_parallel_runtime",
                    "torch.get_device_module(device).set_device(get_device().gpu_id)",
                ),
                (
                    "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py",
                    567,
                    "set_device",
                    "torch._C._cuda_setDevice(device)",
                ),
            ],
            f"torch.AcceleratorError: {error}"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
        )
    )


# ---------------------------------------------------------------------------------------------- errors
def _init_frames() -> list[tuple[str, int, str, str]]:
    """Where a rank waits for the rendezvous: init_process_group under SGLang's parallel bootstrap."""
    torch_dist = "/usr/local/lib/python3.12/dist-packages/torch/distributed"
    return [
        (f"{SGLANG_SRC}/srt/model_executor/model_runner.py", 1270, "init_torch_distributed", "init_parallel_runtime("),
        (f"{SGLANG_SRC}/srt/distributed/bootstrap.py", 152, "init_parallel_runtime", "_init_parallel_groups("),
        (f"{SGLANG_SRC}/srt/distributed/bootstrap.py", 318, "_init_parallel_groups", "init_distributed_environment("),
        (
            f"{SGLANG_SRC}/srt/distributed/parallel_state.py",
            2516,
            "init_distributed_environment",
            "torch.distributed.init_process_group(",
        ),
        (
            f"{torch_dist}/distributed_c10d.py",
            1710,
            "init_process_group",
            "store, rank, world_size = next(rendezvous_iterator)",
        ),
        (f"{torch_dist}/rendezvous.py", 235, "_tcp_rendezvous_handler", "store = _create_c10d_store("),
        (f"{torch_dist}/rendezvous.py", 185, "_create_c10d_store", "return TCPStore("),
    ]


def store_timeout_error(waited_s: int, joined: int, world: int) -> LaunchError:
    """Rank 0's TCPStore, when not every rank came."""
    return LaunchError(
        scheduler_traceback(
            _init_frames(),
            f"torch.distributed.DistStoreError: Timed out after {waited_s + 1} seconds waiting for clients. "
            f"{joined}/{world} clients joined.",
        )
    )


def client_timeout_error(host: str, port: int, timeout_s: int, stamp: str) -> LaunchError:
    """A client's TCPStore that never reached rank 0 (socket.cpp's line, then the traceback)."""
    ms = timeout_s * 1000
    what = f"The client socket has timed out after {ms}ms while trying to connect to ({host}, {port})."
    return LaunchError(
        f"[E{_c10d_stamp(stamp)} socket.cpp:1019] [c10d] {what}\n"
        + scheduler_traceback(_init_frames(), f"torch.distributed.DistNetworkError: {what}")
    )


def client_lost_store_error() -> LaunchError:
    """A joined client whose store (rank 0) went away before every rank came."""
    return LaunchError(
        scheduler_traceback(
            _init_frames(),
            "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. "
            "Did the remote server shutdown or crash?",
        )
    )


def address_in_use_error(port: int) -> LaunchError:
    """Rank 0's TCPStore server when the dist-init port is taken."""
    return LaunchError(
        scheduler_traceback(
            _init_frames(),
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
            f"address. port: {port}, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
        )
    )


def version_refused_error(node_rank: int, theirs: str, ours: str) -> LaunchError:
    return LaunchError(
        scheduler_traceback(_init_frames(), VERSION_REFUSED.format(node_rank=node_rank, theirs=theirs, ours=ours))
    )


def socket_closed_line(peer: str, node_rank: int, ranks: range) -> str:
    """NCCL's socket warning for a peer whose process went away (with the node and ranks, which the simulator adds
    so a reader can name the node without an address book)."""
    return f"socketProgress: Connection closed by remote peer {peer} (node_rank {node_rank}, ranks {ranks_text(ranks)})"


def ib_completion_line(peer: str, local_address: str, node_rank: int, ranks: range) -> str:
    """NCCL's InfiniBand completion error when the link to `peer` fails (net_ib.cc: status 12 is
    IBV_WC_RETRY_EXC_ERR, the transport retry counter exceeded), with the peer's node and ranks."""
    remote = peer.split("<")[0]
    return (
        f"NET/IB : Got completion from peer {peer} with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
        f"::ffff:{local_address} remoteGids::ffff:{remote} hca mlx5_0 (node_rank {node_rank}, ranks {ranks_text(ranks)})"
    )


def remote_exit_lines(
    own_rank: int, lost_node: int, lost_ranks: range, peer: str, stamp: str, last_error: str | None = None
) -> str:
    """What a surviving scheduler prints when an NCCL call to another node fails: ncclRemoteError through torch's
    watchdog (torch's ProcessGroupNCCL wording). `last_error` is NCCL's own line (default: the socket closed by a
    peer whose process exited)."""
    head = f"[rank{own_rank}]:[E{_c10d_stamp(stamp)} ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank {own_rank}]"
    error = f"NCCL error: remote process exited or there was a network error, NCCL version {NCCL_VERSION}"
    detail = (
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
        "Last error:\n" + (last_error or socket_closed_line(peer, lost_node, lost_ranks))
    )
    return (
        f"{head} Process group watchdog thread terminated with exception: {error}\n{detail}\n"
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        f"  what():  {head[len(f'[rank{own_rank}]:') :]} Process group watchdog thread terminated with exception: "
        f"{error}\n{detail}"
    )


def _c10d_stamp(stamp: str) -> str:
    """torch's glog-style stamp (MMDD HH:MM:SS.micro) from the log's 'YYYY-mm-dd HH:MM:SS'."""
    return f"{stamp[5:7]}{stamp[8:10]} {stamp[11:]}.{int(time.time() * 1e6) % 1_000_000:06d}"


# ---------------------------------------------------------------------------------------------- the rendezvous
@dataclass(frozen=True)
class DistAddress:
    """--dist-init-addr as given (HOST:PORT); the simulator always reaches it on 127.0.0.1 at PORT."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def dist_address(args: object) -> DistAddress:
    """Rank 0's rendezvous address: --dist-init-addr, else (as SGLang does) --host at --nccl-port, where a node
    without --nccl-port picks a free port of its own that no other node can know."""
    given = getattr(args, "dist_init_addr", None)
    if given:
        text = str(given).removeprefix("tcp://")
        host, _, port = text.rpartition(":")
        if not port.isdigit():  # SGLang's NetworkAddress.parse refuses it before anything starts
            raise LaunchError(scheduler_traceback(_init_frames(), f"ValueError: invalid address {given!r}: no port"))
        return DistAddress(host.strip("[]") or "127.0.0.1", int(port))
    nccl_port = getattr(args, "nccl_port", None)
    if nccl_port:
        return DistAddress(str(getattr(args, "host", "127.0.0.1")), int(nccl_port))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return DistAddress(str(getattr(args, "host", "127.0.0.1")), probe.getsockname()[1])


@dataclass
class _Peer:
    node_rank: int
    ranks: range
    peer: str  # its address as rank 0 sees it
    writer: asyncio.StreamWriter
    loaded: bool = False
    fault: str | None = None  # a node fault it carries (serving/node_faults.py), told when to strike
    at_running: int | None = None
    struck: bool = False


async def _send(writer: asyncio.StreamWriter, message: dict[str, object]) -> None:
    writer.write((json.dumps(message) + "\n").encode())
    with contextlib.suppress(ConnectionError):
        await writer.drain()


@dataclass
class RankZeroStore:
    """Rank 0's side: listens at the dist-init port, admits every other node once, then watches each link.

    `on_rank_lost(node_rank, ranks, peer, fault)` runs when a joined node's link closes (that node died; `fault`:
    the node fault it was told to strike, if any). A node that carries a fault says so when it joins, and rank 0
    tells it to strike once its engine runs that many requests (`load_changed`)."""

    placement: NodePlacement
    address: DistAddress
    version: str
    timeout_s: int  # modelled
    time_scale: float
    log: Callable[[str], None]  # the scheduler's log
    warn: Callable[[str], None]
    on_rank_lost: Callable[[int, range, str, str | None], None]
    peers: dict[int, _Peer] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _server: asyncio.Server | None = None
    _closing: bool = False

    async def open(self) -> None:
        try:
            self._server = await asyncio.start_server(self._admit, "127.0.0.1", self.address.port, reuse_address=True)
        except OSError as exc:
            raise address_in_use_error(self.address.port) from exc

    async def wait_joined(self) -> None:
        """Until every node has joined; after the dist timeout, torch's DistStoreError."""
        deadline = this_machine_monotonic() + max(self.timeout_s / self.time_scale, MIN_WAIT_WALL_S)
        while len(self.peers) < self.placement.nnodes - 1:
            left = deadline - this_machine_monotonic()
            if left <= 0:
                joined = (len(self.peers) + 1) * self.placement.ranks_per_node
                raise store_timeout_error(self.timeout_s, joined, self.placement.world_size)
            # This machine's seconds: the world's clock may stand meanwhile (this server's own start-up holds it).
            await wall_sleep(min(left, JOIN_POLL_S))
        self.log(
            ALL_JOINED_LINE.format(nnodes=self.placement.nnodes, address=self.address, world=self.placement.world_size)
        )
        for peer in self.peers.values():  # the other nodes' first collective completes now
            await _send(peer.writer, {"all_joined": True})

    async def wait_loaded(self) -> None:
        """Until every node's schedulers are ready (rank 0's own first collective waits for them in SGLang)."""
        while not all(p.loaded for p in self.peers.values()):
            self._changed.clear()
            await self._changed.wait()

    async def shutdown(self) -> None:
        """The ShutdownReq broadcast: every node's schedulers stop."""
        self._closing = True
        for peer in list(self.peers.values()):
            await _send(peer.writer, {"shutdown": True})
            peer.writer.close()
        if self._server is not None:
            self._server.close()

    async def _admit(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, port = writer.get_extra_info("peername")[:2]
        peer = f"{host}<{port}>"
        try:
            hello = json.loads(await reader.readline() or b"{}")
            node_rank = int(hello["node_rank"])
        except (ValueError, KeyError, TypeError, ConnectionError):
            writer.close()
            return
        ranks = range(int(hello.get("first_rank", 0)), int(hello.get("first_rank", 0)) + int(hello.get("gpus", 0)))
        refusal = self._refusal(node_rank, str(hello.get("version", "")))
        if refusal is not None:
            self.warn(refusal)
            await _send(writer, {"refused": refusal})
            writer.close()
            return
        fault, at_running = hello.get("fault"), hello.get("at_running")
        self.peers[node_rank] = _Peer(
            node_rank,
            ranks,
            peer,
            writer,
            fault=str(fault) if fault else None,
            at_running=int(at_running) if at_running else None,
        )
        await _send(writer, {"welcome": True})
        self.log(RANK_JOINED_LINE.format(node_rank=node_rank, ranks=ranks_text(ranks), version=hello.get("version")))
        self._changed.set()
        while True:
            try:
                line = await reader.readline()
            except ConnectionError:
                line = b""
            if not line:
                break
            if json.loads(line).get("loaded"):
                self.peers[node_rank].loaded = True
                self._changed.set()
        if not self._closing:
            struck = self.peers[node_rank]
            self.on_rank_lost(node_rank, ranks, peer, struck.fault if struck.struck else None)

    def load_changed(self, running: int) -> None:
        """Rank 0's engine runs `running` requests: a node whose fault strikes at that load is told to now."""
        for peer in self.peers.values():
            if peer.fault and not peer.struck and peer.at_running is not None and running >= peer.at_running:
                peer.struck = True
                asyncio.get_running_loop().create_task(_send(peer.writer, {"strike": peer.fault}))

    def partition_all(self) -> None:
        """Rank 0's own node is cut off: every other node is told to strike a partition now (each reports the link
        to rank 0 failed), and rank 0 reports the same of each when its link closes."""
        for peer in self.peers.values():
            if not peer.struck:
                peer.fault, peer.struck = FaultName.NETWORK_PARTITION.value, True
                asyncio.get_running_loop().create_task(_send(peer.writer, {"strike": peer.fault}))

    def _refusal(self, node_rank: int, version: str) -> str | None:
        """Why a node may not join, or None.

        A node of another SGLang release is refused at once: the simulator's choice. Real mixed releases fail later
        and less clearly (pickled scheduler messages or NCCL group layouts that differ); refusing here, with the
        versions named in both logs, is the plainest failure that still costs the launch, and rank 0 keeps waiting
        (a node relaunched with the right release may still join before the timeout)."""
        if version != self.version:
            return VERSION_REFUSED.format(node_rank=node_rank, theirs=version, ours=self.version)
        if node_rank in self.peers or not 0 < node_rank < self.placement.nnodes:
            return f"RuntimeError: node_rank {node_rank} has joined already or is not one of 1..{self.placement.nnodes - 1}."
        return None


@dataclass
class RankLink:
    """A node of rank >= 1: joins rank 0's store, then keeps the link open as its liveness link."""

    placement: NodePlacement
    address: DistAddress
    version: str
    timeout_s: int  # modelled
    time_scale: float
    stamp: Callable[[], str]
    log: Callable[[str], None]  # the scheduler's log
    fault: tuple[str, int] | None = None  # a node fault this node carries: (its name, the load it strikes at)
    _reader: asyncio.StreamReader | None = None
    _writer: asyncio.StreamWriter | None = None

    async def join(self) -> None:
        """Connect (retrying until the dist timeout), introduce this node, and wait for every node to have joined:
        torch's client errors when rank 0 cannot be reached or gives up first."""
        deadline = this_machine_monotonic() + max(self.timeout_s / self.time_scale, MIN_WAIT_WALL_S)
        while True:
            try:
                self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.address.port)
                break
            except OSError:
                if this_machine_monotonic() >= deadline:
                    raise client_timeout_error(
                        self.address.host, self.address.port, self.timeout_s, self.stamp()
                    ) from None
                await wall_sleep(CONNECT_RETRY_S)
        p = self.placement
        await _send(
            self._writer,
            {
                "node_rank": p.node_rank,
                "first_rank": p.ranks.start,
                "gpus": p.ranks_per_node,
                "version": self.version,
                **({"fault": self.fault[0], "at_running": self.fault[1]} if self.fault else {}),
            },
        )
        answer = await self._read()
        if answer.get("refused"):
            raise LaunchError(scheduler_traceback(_init_frames(), str(answer["refused"])))
        self.log(JOINED_LINE.format(address=self.address, node_rank=p.node_rank, ranks=ranks_text(p.ranks)))
        await self._read()  # {"all_joined": true}: every node is in

    async def _read(self) -> dict[str, object]:
        """rank 0's next message; its store closing before every node joined is torch's client error."""
        assert self._reader is not None
        try:
            line = await self._reader.readline()
        except ConnectionError:
            line = b""
        if not line:
            raise client_lost_store_error()
        message: dict[str, object] = json.loads(line)
        return message

    async def report_loaded(self) -> None:
        assert self._writer is not None, "join() first"
        await _send(self._writer, {"loaded": True})

    async def wait_for_rank_zero(self) -> str:
        """Block until rank 0 ends this node or tells it to strike, once every node joined: "shutdown" for its
        ShutdownReq broadcast, "lost" when the link was lost (rank 0 died), or the name of the fault to strike."""
        assert self._reader is not None, "join() first"
        while True:
            try:
                line = await self._reader.readline()
            except ConnectionError:
                return "lost"
            if not line:
                return "lost"
            message = json.loads(line)
            if message.get("shutdown"):
                return "shutdown"
            if message.get("strike"):
                return str(message["strike"])

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


# ---------------------------------------------------------------------------------------------- rank >= 1's HTTP
async def _ok(request: web.Request) -> web.Response:
    return web.Response(status=200)


def dummy_health_check_app() -> web.Application:
    """utils/common.py launch_dummy_health_check_server: 200 on /health, /health_generate and /ping, nothing else."""
    app = web.Application()
    for path in ("/health", "/health_generate", "/ping"):
        app.router.add_get(path, _ok)
    return app
