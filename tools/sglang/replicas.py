"""Replicas: copies of one server, each on GPUs of its own, behind SGLang's Model Gateway (sglang-router).

`launch_server` with `config.replicas > 1` comes here. Each replica is a whole server on one node (a replica never
spans nodes: that is the one-server-across-nodes launch, multinode.py). They are placed in turn over the run's
nodes, rank 0 first, and on a node side by side on its GPUs (`--base-gpu-id`), each on a port of its own
(`port + 2 + i`: simulated nodes share this machine's loopback, and a real node does not mind). Once every replica
is ready, the gateway starts on rank 0 at `port` (its metrics at `port + 1`), with the replicas' URLs as rank 0 reaches them, and is ready when
it lists every one healthy. The deployment's handle is the gateway's process and port, with every replica in
`replicas`: a benchmark at `port` goes through the gateway, and stop_server stops the gateway and every replica.

A replica that does not come up is named (its index and node) with the cause its own launch found, and whatever
had started is stopped; so is a gateway that does not come up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..context import ToolContext
from ..errors import InvalidToolInput, ToolError
from ..gateway.launch import start_gateway
from ..gateway.models import GatewayArgs, GatewayWorker, StopGatewayArgs
from ..gateway.stop import stop_gateway
from .capabilities import SglangCapabilities, read_capabilities
from .config import ServerConfig
from .errors import LaunchFailed
from .handle import STOP_GRACE_S, RunningServer, forget_record
from .multinode import gpus_per_node, node_address
from .preflight import check_launch

if TYPE_CHECKING:
    from .launch import LaunchArgs

LOOPBACK = "127.0.0.1"
ALL_INTERFACES = "0.0.0.0"
REPLICA_PORT_OFFSET = 2  # the gateway takes `port` and `port + 1` (its metrics)
MAX_PORT = 65535
LaunchOne = Callable[[ToolContext, "LaunchArgs", SglangCapabilities, Sequence[str]], RunningServer]


@dataclass(frozen=True)
class Placement:
    """Where replica `replica` runs: node `node` (0 = rank 0), its GPUs from `base_gpu_id`, on `port`."""

    replica: int
    node: int
    base_gpu_id: int
    port: int


def place_replicas(config: ServerConfig, gpus_per_node: int, nodes: int) -> list[Placement]:
    """Every replica's place, in turn over the nodes; InvalidToolInput when one does not fit a node or the nodes
    together have too few GPUs."""
    per = config.gpus
    if gpus_per_node and per > gpus_per_node:
        raise InvalidToolInput(
            f"a replica needs {per} GPUs and a node has {gpus_per_node}: a replica never spans nodes",
            remedy="choose a layout that fits one node for replicas, or one server across the nodes (replicas 1)",
            details={"gpus": per, "gpus_per_node": gpus_per_node},
        )
    slots = gpus_per_node // per if gpus_per_node else 1
    if config.replicas > slots * nodes:
        raise InvalidToolInput(
            f"{config.replicas} replicas of {per} GPUs do not fit {nodes} node(s) of {gpus_per_node} GPUs "
            f"(room for {slots * nodes})",
            remedy=f"ask for at most {slots * nodes} replicas, or a smaller layout per replica",
            details={"replicas": config.replicas, "gpus": per, "gpus_per_node": gpus_per_node, "nodes": nodes},
        )
    last = config.port + REPLICA_PORT_OFFSET + config.replicas - 1
    if last > MAX_PORT:
        raise InvalidToolInput(
            f"replicas from port {config.port} would need ports up to {last}: the gateway takes {config.port} and "
            f"{config.port + 1}, replica i {config.port + REPLICA_PORT_OFFSET}+i, and no port is above {MAX_PORT}",
            remedy=f"choose a port at most {MAX_PORT - REPLICA_PORT_OFFSET - config.replicas + 1}",
            details={"port": config.port, "replicas": config.replicas},
        )
    used = [0] * nodes
    places = []
    for replica in range(config.replicas):
        node = replica % nodes if used[replica % nodes] < slots else used.index(min(used))
        places.append(Placement(replica, node, used[node] * per, config.port + REPLICA_PORT_OFFSET + replica))
        used[node] += 1
    return places


def launch_replicas(ctx: ToolContext, args: LaunchArgs, launch_one: LaunchOne) -> RunningServer:
    """Every replica started and ready, then the gateway in front of them on rank 0; the deployment's handle."""
    config = args.config
    nodes = ctx.nodes
    places = place_replicas(config, gpus_per_node(ctx), len(nodes))
    replicas: list[RunningServer] = []
    try:
        for place in places:
            node = nodes[place.node]
            replicas.append(_start_replica(node, args, place, launch_one))
        workers = [
            GatewayWorker(url=f"http://{_reached(ctx, node)}:{node.host.port_on_host(r.port)}", gpus=r.config.gpus)
            for r, node in ((r, _node_of(ctx, r.host)) for r in replicas)
        ]
        gateway = start_gateway(
            ctx, GatewayArgs(workers=workers, port=config.port, metrics_port=config.port + 1, python=args.python)
        )
    except BaseException:
        stop_replicas(ctx, replicas)
        raise
    return RunningServer(
        host=ctx.host.spec,
        pid=gateway.pid,
        pgid=gateway.pgid,
        started_at=gateway.started_at,
        argv=gateway.argv,
        log_path=gateway.log_path,
        port=config.port,
        base_url=f"http://127.0.0.1:{config.port}",
        config=config,
        info=replicas[0].info,
        ready_after_s=max(r.ready_after_s for r in replicas) + gateway.ready_after_s,
        warnings=list(dict.fromkeys(w for r in replicas for w in r.warnings)),
        replicas=replicas,
        gateway=gateway,
    )


def _start_replica(node: ToolContext, args: LaunchArgs, place: Placement, launch_one: LaunchOne) -> RunningServer:
    config = args.config
    one = config.model_copy(
        update={
            "replicas": 1,
            "port": place.port,
            # A replica on another machine must accept the gateway's connections from rank 0's.
            "host": ALL_INTERFACES if node_address(node) != LOOPBACK else config.host,
        }
    )
    caps = read_capabilities(node.host, python=args.python)
    check_launch(one, caps)
    extra = ["--base-gpu-id", str(place.base_gpu_id)] if place.base_gpu_id else []
    try:
        return launch_one(node, args.model_copy(update={"config": one}), caps, extra)
    except ToolError as exc:
        where = f"replica {place.replica} of {config.replicas} on {node.host.spec} (port {place.port})"
        if isinstance(exc, LaunchFailed):
            raise LaunchFailed(
                f"{where} did not come up: {exc.what}; the replicas already up were stopped",
                remedy=exc.remedy,
                details={**exc.details, "replica": place.replica, "node": node.host.spec},
            ) from exc
        exc.what = f"{where}: {exc.what}"
        raise


def stop_replicas(ctx: ToolContext, replicas: Sequence[RunningServer], *, grace_s: float = STOP_GRACE_S) -> None:
    """Stop every replica still running, each on its node, and drop its launch record."""
    for replica in replicas:
        node = _node_of(ctx, replica.host)
        if node.host.is_running(replica.process):
            node.host.stop(replica.process, grace_s=grace_s)
        forget_record(node, replica.pgid)


def stop_deployment(ctx: ToolContext, server: RunningServer, *, grace_s: float = STOP_GRACE_S) -> None:
    """The gateway first (no request reaches a replica that is going), then every replica."""
    if server.gateway is not None and server.gateway.id:
        stop_gateway(ctx, StopGatewayArgs(gateway=server.gateway.id, grace_s=min(grace_s, 600.0)))
    stop_replicas(ctx, server.replicas, grace_s=grace_s)


def _node_of(ctx: ToolContext, host: str) -> ToolContext:
    return next((node for node in ctx.nodes if node.host.spec == host), ctx)


def _reached(head: ToolContext, node: ToolContext) -> str:
    """A replica's address as the gateway on rank 0 reaches it: its own loopback on rank 0's host."""
    return LOOPBACK if node is head else node_address(node)
