"""What a cluster's nodes are called in findings: each node's host spec, made unique by its rank where two
contexts reach the same host (two contexts on one simulated world, say)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from specops.tools.context import ToolContext


def node_names(contexts: Sequence[ToolContext]) -> list[str]:
    """One name per context, in rank order: its host's spec, `SPEC#RANK` where specs repeat."""
    specs = [ctx.host.spec for ctx in contexts]
    repeated = {spec for spec, n in Counter(specs).items() if n > 1}
    return [f"{spec}#{rank}" if spec in repeated else spec for rank, spec in enumerate(specs)]
