"""The simulated host a scenario runs on: one sim world (over SSH when the scenario says so), or a cluster
profile's nodes, each a world over SSH, named to the run by their inventory group.

A cluster scenario names the cluster profile as its `profile` (`h100x16-2node`); its faults take `node=I` to land
on one node (sim/world/cluster.py). Graders read the same profile and faults here: a cluster's truth is its node
profile's, with the internode link for launches that span nodes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from specops.cli.simulated_hosts import offer_simulated_hosts
from specops.sim.faults import Fault, parse_fault
from specops.sim.profiles import Profile, load_profile
from specops.sim.profiles.cluster import is_cluster_profile, load_cluster_profile
from specops.sim.world.cluster import SimCluster, parse_node_fault
from specops.sim.world.world import SimWorld

from .host_state import HostSnapshot, LiveServer, live_servers
from .scenario import Scenario

SSH_HOST_NAME = "eval-sim-over-ssh"
offer_simulated_hosts()  # the runs this starts open `sim:` hosts


def host_profile(name: str) -> Profile:
    """A host profile by name; a cluster profile's name gives its node profile (every node is one)."""
    return load_profile(load_cluster_profile(name).node_profile if is_cluster_profile(name) else name)


def scenario_faults(profile: str, faults: Sequence[str]) -> list[Fault]:
    """The scenario's faults, parsed; on a cluster each node fault (`node=I`) once, whichever node it lands on."""
    if not is_cluster_profile(profile):
        return [parse_fault(spec) for spec in faults]
    nodes = len(load_cluster_profile(profile).nodes)
    return [parse_node_fault(spec, nodes)[1] for spec in faults]


def scenario_profile(scenario: Scenario) -> Profile:
    """The scenario's sim profile (a cluster's: its node profile), with its download bandwidth when it sets one."""
    assert scenario.host.profile is not None, "a reachable host has a sim profile (HostSetup checks it)"
    profile = host_profile(scenario.host.profile)
    if scenario.host.download_mb_s is not None:
        network = profile.network.model_copy(update={"download_mb_s": scenario.host.download_mb_s})
        profile = profile.model_copy(update={"network": network})
    return profile


def _start_world(scenario: Scenario) -> SimWorld:
    faults = [parse_fault(f) for f in scenario.host.faults]
    return SimWorld.start_fast(scenario_profile(scenario), faults=faults, **_scales(scenario))


def _scales(scenario: Scenario) -> dict[str, float]:
    return {
        k: v
        for k, v in {"time_scale": scenario.host.time_scale, "load_time_scale": scenario.host.load_time_scale}.items()
        if v is not None
    }


def _ssh_inventory(world: SimWorld, run_dir: Path) -> str:
    """Serve the world over SSH and name it in an inventory this process points SPECOPS_INVENTORY at."""
    ssh = world.start_ssh()
    options = ssh.options()
    inventory = run_dir / "inventory.yaml"
    inventory.write_text(
        yaml.safe_dump({SSH_HOST_NAME: {"url": ssh.url, **options, "key_filename": [options["key_filename"]]}})
    )
    os.environ["SPECOPS_INVENTORY"] = str(inventory)
    return SSH_HOST_NAME


@dataclass
class HostUnderTest:
    """The simulated host a scenario runs on: one world, or a cluster's worlds (every node over SSH)."""

    worlds: list[SimWorld]
    spec: str  # what the run's --host is
    close: Callable[[], None]

    @property
    def home(self) -> str:
        return str(self.worlds[0].layout.home)  # rank 0's: where the scenario's ~ globs point

    def snapshot(self) -> HostSnapshot:
        return HostSnapshot.take_all([world.layout for world in self.worlds])

    def live_servers(self) -> list[LiveServer]:
        return [server for world in self.worlds for server in live_servers(world.layout, os.getpid())]


def start_host(scenario: Scenario, run_dir: Path) -> HostUnderTest:
    """The scenario's host, started: a cluster profile's nodes each over SSH (their inventory group), else one
    world (over SSH when the scenario says so)."""
    assert scenario.host.profile is not None, "a reachable host has a sim profile (HostSetup checks it)"
    if is_cluster_profile(scenario.host.profile):
        cluster = SimCluster.start(
            scenario.host.profile,
            faults=scenario.host.faults,
            ssh=True,
            download_mb_s=scenario.host.download_mb_s,
            **_scales(scenario),
        )
        os.environ["SPECOPS_INVENTORY"] = str(cluster.inventory_path)
        return HostUnderTest(list(cluster.worlds), cluster.host_group, cluster.close)
    world = _start_world(scenario)
    spec = _ssh_inventory(world, run_dir) if scenario.host.over_ssh else world.host_spec
    return HostUnderTest([world], spec, world.close)
