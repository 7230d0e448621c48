"""The link between nodes: what a layout spanning several nodes pays on every step (modelled).

A profile states the curve of a layout over several nodes (ParallelConfig.nnodes > 1) as if its GPUs shared one
NVLink domain; the host's InternodeLink (its fabric to the other nodes) then adds, to every forward pass, the time
its collectives spend between the nodes. Within a node collectives ride NVLink and are in the curve already.

- Tensor (and expert) parallelism across nodes: two collectives per layer (after attention, after the MLP or the
  MoE's combine). Done hierarchically, as NCCL does on NVLink + InfiniBand: each GPU reduces within its node, then
  sends 2 (nnodes - 1) / nnodes of its 1/gpus_per_node share of the activation over its own NIC. A collective
  costs the link's latency plus those bytes over the GPU's bandwidth.
- Pipeline parallelism across nodes (pp a multiple of nnodes, tp within a node): one activation handed over at
  each of the nnodes - 1 node boundaries per step.
The activation is tokens x hidden_size x 2 bytes (bf16), tokens being what the forward pass carries: the running
requests, times the draft tokens a speculative verify pass scores per request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..profiles.schema import InternodeLink, TargetModel

ACTIVATION_BYTES = 2  # bf16
COLLECTIVES_PER_LAYER = 2


class StepTime(Protocol):
    tokens_per_step: float

    def __call__(self, n: float) -> float: ...


@dataclass(frozen=True)
class LinkCost:
    """Seconds the link adds to one forward pass of `tokens` tokens, for one layout over several nodes."""

    link: InternodeLink
    hidden_size: int
    num_layers: int
    nnodes: int
    gpus_per_node: int
    pipeline_across_nodes: bool

    def seconds(self, tokens: float) -> float:
        activation = tokens * self.hidden_size * ACTIVATION_BYTES
        latency = self.link.latency_us * 1e-6
        bandwidth = self.link.gb_s_per_gpu * 1e9
        if self.pipeline_across_nodes:
            return (self.nnodes - 1) * (latency + activation / bandwidth)
        per_gpu = 2 * (self.nnodes - 1) / self.nnodes * activation / self.gpus_per_node
        return self.num_layers * COLLECTIVES_PER_LAYER * (latency + per_gpu / bandwidth)


def link_cost(link: InternodeLink | None, target: TargetModel, *, nnodes: int, tp: int, pp: int) -> LinkCost | None:
    """The layout's link cost; None on one node, without a link, or for a target whose shape is not stated."""
    if nnodes <= 1 or link is None or target.hidden_size is None or target.num_layers is None:
        return None
    return LinkCost(
        link=link,
        hidden_size=target.hidden_size,
        num_layers=target.num_layers,
        nnodes=nnodes,
        gpus_per_node=max(tp * pp // nnodes, 1),
        pipeline_across_nodes=pp % nnodes == 0 and pp > 1,
    )


class LinkedStepTime:
    """A step time with the link's cost added: `forward_tokens_per_request` tokens per running request cross it
    (1 decoding; the draft tokens a verify pass scores)."""

    def __init__(self, inner: StepTime, cost: LinkCost, forward_tokens_per_request: int) -> None:
        self.inner = inner
        self.cost = cost
        self.forward_tokens_per_request = forward_tokens_per_request
        self.tokens_per_step = inner.tokens_per_step

    def __call__(self, n: float) -> float:
        return self.inner(n) + self.cost.seconds(n * self.forward_tokens_per_request)

    def throughput(self, n: float) -> float:
        """Aggregate tok/s at n running requests, the link included."""
        return n * self.tokens_per_step / self(n)
