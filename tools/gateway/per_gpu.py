"""Throughput per GPU: how replicas behind a gateway compare with one server, whatever their sizes.

Two TP4 replicas and one TP8 server hold the same eight GPUs; the total says
which serves more, the figure per GPU says which uses its GPUs better (and
compares against a single server of any size).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class HoldsGpus(Protocol):
    @property
    def gpus(self) -> int: ...


def per_gpu(total_tok_s: float, workers: Sequence[HoldsGpus]) -> float:
    """`total_tok_s` (measured through the gateway, all workers together) over the GPUs its workers hold."""
    gpus = sum(w.gpus for w in workers)
    if gpus <= 0:
        raise ValueError("no GPUs behind the gateway: give at least one worker holding a GPU")
    return total_tok_s / gpus
