"""A benchmark level the server failed in, and what the playbook concludes from it.

A server that dies or hangs at one level may have met its limit under load, or met bad luck: a transient NCCL
fault, a node that went away. The two call for opposite answers (cap what is deployed below the level, or measure
the level again), so the playbook does not decide from one failure: it measures the level again on a fresh server
of the same configuration (playbook_pipeline.Pipeline._measure_again).

- it fails again at or below that level: it reproduces. Load: what is deployed is capped below it. A node: the
  comparison is incomplete, and the run stops saying what is missing and what to run;
- it does not fail again: a transient failure; the fresh server's figures stand and the summary says so;
- the fresh server does not come up: a node that went away is still away (the comparison is incomplete); for
  load, the level stays unmeasured and capped as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from specops.tools.benchmark.models import LevelResult
from specops.tools.sglang.node_fault import NodeFault


@dataclass(frozen=True)
class LevelFailure:
    """The lowest level of a sweep the server died or hung in."""

    level: int
    what: str  # "requests failed at C=32" or "no token came back at C=32"
    down: bool  # the server is gone (else it hung: alive, answering nothing)
    node: NodeFault | None  # a server over several nodes that lost one: not load

    @property
    def words(self) -> str:
        """What happened, for the summary."""
        if self.node is not None:
            return f"{self.what}; {self.node.words}"
        how = "died" if self.down else "hung (alive, answering nothing)"
        return f"{self.what}; the server {how} under load"


def level_failure(measured: list[LevelResult], failed: list[int], hung: list[int], down: bool) -> LevelFailure:
    """The failure at the lowest failed or hung level of a sweep (`failed`, `hung`: their concurrencies)."""
    level = min(failed + hung)
    what = f"requests failed at C={level}" if level in failed else f"no token came back at C={level}"
    result = next((lv for lv in measured if lv.concurrency == level), None)
    node = result.server_failure.node if result is not None and result.server_failure is not None else None
    return LevelFailure(level=level, what=what, down=down or node is not None, node=node)


def transient_line(name: str, first: LevelFailure) -> str:
    return (
        f"benchmark {name}: {first.words}; measured again from C={first.level} on a fresh server of the same "
        "configuration, which did not fail: a transient failure, the fresh server's figures stand"
    )


def reproduced_line(name: str, first: LevelFailure, again: LevelFailure) -> str:
    return (
        f"benchmark {name}: {first.words}; a fresh server of the same configuration failed again ({again.what}): "
        "it reproduces, so levels from there are not counted"
    )


def incomplete_why(name: str, failure: LevelFailure, measured: list[int], after: str) -> str:
    """Why the run stops when a node went away: what is missing, why, and what to run."""
    node = failure.node
    assert node is not None, "only a node that went away leaves the comparison incomplete"
    have = f"figures up to C={max(measured)}" if measured else "no figures"
    return (
        f"the comparison is incomplete: {name} has {have} and none from C={failure.level} up, because "
        f"{node.words} ({after}). Nothing capped by this failure was deployed: it is not load. To finish: "
        f"{node.remedy}, then run the job again"
    )
