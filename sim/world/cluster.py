"""A simulated cluster: one simulated host per node of a cluster profile, side by side on this machine.

Each node is a SimWorld of its own (its own tree, GPUs, ports, Hub emulator, and an sshd when asked), built
from the cluster's node profile under the node's hostname; rank 0 is the first. The nodes reach one another
over this machine's loopback: a multi-node SGLang launch's dist-init address is 127.0.0.1 and a real port.

Faults are injected per node: `NAME[:k=v,...]` applies to every node, `NAME:node=I,k=v` to node I only
(0 = rank 0). The cluster faults are node faults: a node whose disk is full (`full_disk:node=1`), a node with
another SGLang release (`old_sglang:node=1,version=0.5.11`), a node that never joins a multi-node launch
(`load_hang:node=1,at_fraction=0.01`: its server hangs before the distributed rendezvous).

`host_group` is what `--host` takes for the nodes (tools/cluster/group.py): `sim:/root-a,sim:/root-b`, or with
SSH, the inventory group `cluster` of the inventory file the cluster writes (`inventory_path`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ..faults import Fault, parse_fault
from ..profiles.cluster import ClusterProfile, load_cluster_profile
from .clock import share_clock
from .world import SimWorld

NODE_PARAMETER = "node"
INVENTORY_GROUP = "cluster"


def parse_node_fault(spec: str, nodes: int) -> tuple[list[int], Fault]:
    """(the node indexes it applies to, the fault) of `NAME[:node=I,k=v,...]`. Raises ValueError."""
    name, _, rest = spec.partition(":")
    params, chosen = [], None
    for pair in filter(None, (p.strip() for p in rest.split(","))):
        key, _, value = pair.partition("=")
        if key.strip() != NODE_PARAMETER:
            params.append(pair)
            continue
        try:
            chosen = int(value)
        except ValueError:
            raise ValueError(f"fault {spec!r}: node must be a node's index, 0 to {nodes - 1}") from None
        if not 0 <= chosen < nodes:
            raise ValueError(f"fault {spec!r}: node {chosen} is not in the cluster (nodes 0 to {nodes - 1})")
    fault = parse_fault(name + (":" + ",".join(params) if params else ""))
    return ([chosen] if chosen is not None else list(range(nodes))), fault


class SimCluster:
    def __init__(self, profile: ClusterProfile, worlds: list[SimWorld], root: Path) -> None:
        self.profile = profile
        self.worlds = worlds
        self.root = root
        self._closed = False

    @classmethod
    def start(
        cls,
        profile: ClusterProfile | str,
        *,
        faults: Sequence[str] = (),
        time_scale: float | None = None,
        load_time_scale: float | None = None,
        ssh: bool = False,
        download_mb_s: float | None = None,
    ) -> SimCluster:
        """Start every node. Without `time_scale` every node runs at the first node profile's quick-run scales (its
        fast_time_scale, loading at its fast_load_time_scale, as SimWorld.start_fast does); they keep one clock.
        `download_mb_s` replaces the node profile's Hub bandwidth on every node."""
        if isinstance(profile, str):
            profile = load_cluster_profile(profile)
        count = len(profile.nodes)
        per_node: list[list[Fault]] = [[] for _ in range(count)]
        for spec in faults:
            indexes, fault = parse_node_fault(spec, count)
            for i in indexes:
                per_node[i].append(fault)
        nodes = [profile.node(i) for i in range(count)]
        if download_mb_s is not None:
            nodes = [
                node.model_copy(update={"network": node.network.model_copy(update={"download_mb_s": download_mb_s})})
                for node in nodes
            ]
        first = nodes[0]
        if time_scale is None:
            time_scale = first.sim.fast_time_scale
            load_time_scale = load_time_scale or first.sim.fast_load_time_scale
        root = Path(tempfile.mkdtemp(prefix=f"specops-sim-{profile.name}-"))
        worlds: list[SimWorld] = []
        try:
            for i, node in enumerate(profile.nodes):
                world = SimWorld.start(
                    nodes[i],
                    faults=per_node[i],
                    root=root / node.hostname,
                    time_scale=time_scale,
                    load_time_scale=load_time_scale,
                )
                if worlds:  # one cluster, one time: every node keeps the first node's clock
                    share_clock(world.layout.sim_dir, worlds[0].layout.sim_dir)
                worlds.append(world)
                if ssh:
                    world.start_ssh()
        except BaseException:
            for world in worlds:
                world.close()
            shutil.rmtree(root, ignore_errors=True)
            raise
        cluster = cls(profile, worlds, root)
        if ssh:
            cluster._write_inventory()
        return cluster

    @property
    def host_group(self) -> str:
        """What --host takes for every node, rank 0 first."""
        if all(w.ssh is not None for w in self.worlds):
            return f"group:{INVENTORY_GROUP}"
        return ",".join(w.host_spec for w in self.worlds)

    @property
    def inventory_path(self) -> Path:
        return self.root / "inventory.yaml"

    def _write_inventory(self) -> None:
        """Each node by its hostname (its sshd, key and known hosts) and the group of all of them."""
        inventory: dict[str, Any] = {}
        for node, world in zip(self.profile.nodes, self.worlds, strict=True):
            assert world.ssh is not None
            inventory[node.hostname] = {
                "url": world.ssh.url,
                "key_filename": str(world.ssh.client_key),
                "known_hosts": str(world.ssh.known_hosts),
                "allow_agent": False,
                "look_for_keys": False,
            }
        inventory[INVENTORY_GROUP] = [n.hostname for n in self.profile.nodes]
        self.inventory_path.write_text(yaml.safe_dump(inventory, sort_keys=False))

    def summary(self) -> dict[str, object]:
        return {
            "cluster": self.profile.name,
            "host": self.host_group,
            **({"inventory": str(self.inventory_path)} if self.inventory_path.is_file() else {}),
            "nodes": [w.summary() for w in self.worlds],
        }

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for world in self.worlds:
            world.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> SimCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
