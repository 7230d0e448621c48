"""Cluster profiles: several simulated hosts that together serve one model (sim/profiles/clusters/*.yaml).

A cluster names a node profile (a host profile beside this module) and its nodes, in rank order; each node is
that profile under its own hostname. The nodes' fabric to one another is the node profile's `internode` link.
"""

from __future__ import annotations

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from . import PROFILE_DIR, ProfileInvalid, UnknownProfileError, load_profile
from .schema import Profile

CLUSTER_DIR = PROFILE_DIR / "clusters"


class ClusterNode(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hostname: str


class ClusterProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    node_profile: str = Field(description="The host profile every node is (a built-in profile's name)")
    nodes: list[ClusterNode] = Field(min_length=2, description="In rank order: the first is rank 0")

    @model_validator(mode="after")
    def _distinct_hostnames(self) -> ClusterProfile:
        names = [n.hostname for n in self.nodes]
        if len(set(names)) != len(names):
            raise ValueError("node hostnames must be distinct")
        return self

    def node(self, index: int) -> Profile:
        """Node `index`'s host profile: the node profile under that node's hostname."""
        return load_profile(self.node_profile).model_copy(update={"hostname": self.nodes[index].hostname})


def builtin_clusters() -> list[str]:
    return sorted(p.stem for p in CLUSTER_DIR.glob("*.yaml"))


def is_cluster_profile(name: str) -> bool:
    return (CLUSTER_DIR / f"{name}.yaml").is_file()


def load_cluster_profile(name: str) -> ClusterProfile:
    path = CLUSTER_DIR / f"{name}.yaml"
    if not path.is_file():
        raise UnknownProfileError(f"no cluster profile {name!r}: built-in ones are {', '.join(builtin_clusters())}")
    try:
        cluster = ClusterProfile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        load_profile(cluster.node_profile)
    except (yaml.YAMLError, ValidationError) as exc:
        raise ProfileInvalid(f"cluster profile {path} cannot be used: {' '.join(str(exc).split())}") from None
    return cluster


__all__ = ["ClusterNode", "ClusterProfile", "builtin_clusters", "is_cluster_profile", "load_cluster_profile"]
