"""A deployment to launch elsewhere: each node's command and an optional gateway in front, as a shell reads them.

    deployment = Deployment(run_id=..., config="tp8+dflash-b8", chosen_because=..., nodes=[NodeLaunch(...)])
    print(render_shell(deployment))        # a comment per node (host, rank), then its command
    print(deployment.model_dump_json())    # the same, for a scheduler's templates

One server on one host is one node (rank 0). A server across nodes is one NodeLaunch per node rank, each carrying
SGLang's --nnodes/--node-rank/--dist-init-addr in its argv; replicas behind SGLang's Model Gateway are one server
each (`replica`), with the gateway's own command beside them. The argv words are exactly what specops launched;
only the rendering here turns them into a shell line, every word quoted (shlex).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from specops.transcripts.redaction import is_secret_env_name

_CONFIG = ConfigDict(extra="forbid", frozen=True)


def _no_secret_names(env: dict[str, str]) -> dict[str, str]:
    # A token belongs in the scheduler's secrets, never in a command printed to a terminal.
    secret = sorted(name for name in env if is_secret_env_name(name))
    if secret:
        raise ValueError(f"{', '.join(secret)}: a secret is never part of an exported command")
    return env


PublicEnv = Annotated[dict[str, str], AfterValidator(_no_secret_names)]


class NodeLaunch(BaseModel):
    """One process of one SGLang server: where it runs, its node rank, its argv and environment."""

    model_config = _CONFIG

    host: str = Field(description="The host (or node) it ran on, as specops reached it: ssh://..., local, sim:...")
    replica: int = Field(default=0, ge=0, description="Which server behind the gateway (0 without a gateway)")
    node_rank: int = Field(default=0, ge=0, description="--node-rank; 0 on a single host")
    nnodes: int = Field(default=1, ge=1, description="Nodes the server spans (--nnodes)")
    argv: list[str] = Field(min_length=1, description="The launch command's words, unquoted")
    env: PublicEnv = Field(default_factory=dict, description="Variables set for the launch (never a secret)")

    @property
    def command(self) -> str:
        return shell_line(self.argv, self.env)


class GatewayLaunch(BaseModel):
    """SGLang's Model Gateway (sglang-router) in front of the replicas."""

    model_config = _CONFIG

    host: str
    argv: list[str] = Field(min_length=1)
    env: PublicEnv = Field(default_factory=dict)

    @property
    def command(self) -> str:
        return shell_line(self.argv, self.env)


class Deployment(BaseModel):
    """What `specops export` prints: the chosen configuration's launches, ready for another scheduler."""

    model_config = _CONFIG

    run_id: str
    config: str = Field(description="The configuration's name in the run's report (tp8+dflash-b8, ...)")
    chosen_because: str = Field(description="Why this one: the report's recommendation, --config or --concurrency")
    sglang_version: str | None = Field(description="The host's SGLang release the flags were chosen for")
    nodes: list[NodeLaunch] = Field(min_length=1, description="Every server process, replica and rank order")
    gateway: GatewayLaunch | None = Field(default=None, description="The router in front of the replicas, if any")
    notes: list[str] = Field(default_factory=list, description="What the user should know before launching")


def shell_line(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """argv as one POSIX shell line, every word quoted; variables through `env NAME=VALUE`, which stays an
    assignment however the words are quoted."""
    words = ["env", *(f"{name}={value}" for name, value in env.items()), *argv] if env else list(argv)
    return shlex.join(words)


def render_shell(deployment: Deployment) -> str:
    """The deployment for a person and a shell: comment lines say what each command is, then the command."""
    lines = [f"# {deployment.config} from run {deployment.run_id}: {deployment.chosen_because}"]
    if deployment.sglang_version:
        lines.append(f"# flags for SGLang {deployment.sglang_version}")
    lines += [f"# note: {note}" for note in deployment.notes]
    replicas = len({node.replica for node in deployment.nodes})
    for node in deployment.nodes:
        where = f"on {node.host}, node rank {node.node_rank} of {node.nnodes}"
        lines.append(f"# replica {node.replica} {where}" if replicas > 1 else f"# {where}")
        lines.append(node.command)
    if deployment.gateway is not None:
        behind = f"{replicas} replica{'s' if replicas != 1 else ''}"
        lines.append(f"# gateway (sglang-router) on {deployment.gateway.host}, in front of {behind}")
        lines.append(deployment.gateway.command)
    return "\n".join(lines)
