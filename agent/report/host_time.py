"""What the job cost on its host: seconds on the host's own clock and GPU-hours, per todo item, per tool and in all.

Every host call's tool_result carries its start and end on the host's clock (`host_time`, read by the runner:
agent/tool_runner.py), so the figures are the modelled host's seconds on a simulated host and wall time on a real
one, never this machine's. What counts:

- The job holds the whole host, every GPU of it, from its first host call's start to its last host call's end:
  while tools run and while the policy decides between calls (a host kept for a job is not lent out between its
  commands). That span is `host_s`; a run resumed after it died adds one span per session (each time it opened its
  host), so the time it lay dead is not counted. `tool_s` is the part of it a host call was running.
- GPU-hours = host seconds x the GPUs the job held / 3600: the host's GPU count, or every node's for a host group
  (host_facts), else the GPU count run_start recorded.
- A todo item's (and a tool's) host seconds are its host calls' own (as timing.py counts calls to items), so they
  do not add up to `host_s`: the time between calls belongs to no item, and overlapping items share calls.
- A host call is any call but the loop's own tools' (todowrite, compare, ask_user) and those the loop refused
  before they ran. One without both readings is untimed: left out of every figure and counted (`untimed_calls`);
  an item or tool holding one has unknown host seconds. A transcript written before host times were recorded has
  only untimed calls: its figures are unknown (None), said as such, never made up from this machine's clock.
"""

from __future__ import annotations

from collections.abc import Sequence

from specops.agent.durations import duration_words
from specops.agent.loop_tools import LOOP_TOOLS
from specops.tools.errors import ErrorKind

from .evidence import Evidence, ToolExchange
from .schema import HostTimeSection

NO_HOST_TIMES = "the transcript records no host clock readings (it was written before they were)"
# Outcomes the loop gave without running the tool: such a call never reached the host.
_REFUSED = frozenset(
    {ErrorKind.REPEATED_FAILURE, ErrorKind.INVALID_ARGUMENTS, ErrorKind.UNKNOWN_TOOL, ErrorKind.BUDGET_SPENT}
)


def on_host(call: ToolExchange) -> bool:
    """Whether the call ran on the host (not one of the loop's own tools, not refused before it ran)."""
    return call.tool not in LOOP_TOOLS and (call.error is None or call.error.kind not in _REFUSED)


def _seconds(call: ToolExchange) -> float | None:
    return call.host_time.seconds if call.host_time is not None else None


def calls_host_s(calls: Sequence[ToolExchange]) -> float | None:
    """The host seconds of `calls` (those not on the host count none); None when one host call's are unknown."""
    total = 0.0
    for call in calls:
        if not on_host(call):
            continue
        seconds = _seconds(call)
        if seconds is None:
            return None
        total += seconds
    return round(total, 3)


def gpu_hours(host_s: float | None, gpus: int | None) -> float | None:
    if host_s is None or gpus is None:
        return None
    return round(host_s * gpus / 3600, 3)


def gpus_held(evidence: Evidence) -> int | None:
    """The GPUs the job held: the host's, or every node's of a group (the last host_facts), else run_start's."""
    if evidence.host_facts:
        facts = evidence.host_facts[-1].value
        return facts.group.gpu_count if facts.group is not None else facts.gpu_count
    described = evidence.run_start.host.get("gpus") if evidence.run_start else None
    return described if isinstance(described, int) and not isinstance(described, bool) else None


def host_time_section(evidence: Evidence) -> HostTimeSection:
    sessions = [[call for call in calls if on_host(call)] for calls in sessions_of(evidence)]
    gpus = gpus_held(evidence)
    spans: list[tuple[float, float]] = []
    busy = 0.0
    timed = untimed = 0
    for calls in sessions:
        intervals = []
        for call in calls:
            ht = call.host_time
            if ht is None or ht.start is None or ht.end is None:
                untimed += 1
                continue
            timed += 1
            intervals.append((ht.start, max(ht.start, ht.end)))
        if intervals:
            spans.append((min(s for s, _ in intervals), max(e for _, e in intervals)))
            busy += _union_s(intervals)
    counted = HostTimeSection(gpu_count=gpus, timed_calls=timed, untimed_calls=untimed, sessions=len(sessions))
    if untimed and not timed:
        recorded = any(x.host_time is not None for calls in sessions for x in calls)
        reason = "the host's clock could not be read for any host call" if recorded else NO_HOST_TIMES
        return counted.model_copy(update={"unknown_reason": reason})
    host_s = round(sum(end - start for start, end in spans), 3)  # 0 when the job made no host call
    return counted.model_copy(update={"host_s": host_s, "tool_s": round(busy, 3), "gpu_hours": gpu_hours(host_s, gpus)})


def sessions_of(evidence: Evidence) -> list[list[ToolExchange]]:
    """The calls of each session of the run: from one host_opened to the next (one session unless resumed)."""
    starts = sorted(evidence.host_opened_seqs) or [0]
    sessions: list[list[ToolExchange]] = [[] for _ in starts]
    for call in evidence.exchanges:
        index = sum(1 for seq in starts[1:] if seq < call.call_seq)
        sessions[index].append(call)
    return sessions


def _union_s(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by the intervals together (calls run one after another; were two ever to overlap, the
    host was busy once)."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


def gpu_hours_words(value: float) -> str:
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def host_time_sentence(section: HostTimeSection) -> str:
    """The job's cost in one line: "this job used 2 h 41 min of the host, 21.5 GPU-hours (8 GPUs)"."""
    if section.host_s is None:
        return f"this job's time on the host is unknown: {section.unknown_reason or 'not recorded'}"
    if not section.timed_calls and not section.untimed_calls:
        return "this job made no call on the host"
    used = f"this job used {duration_words(section.host_s)} of the host"
    if section.gpu_hours is None:
        used += ", GPU-hours unknown (the host's GPU count was not read)"
    else:
        plural = "" if section.gpu_count == 1 else "s"
        used += f", {gpu_hours_words(section.gpu_hours)} GPU-hours ({section.gpu_count} GPU{plural})"
    if section.untimed_calls:
        used += f"; {section.untimed_calls} host call(s) whose clock could not be read are not counted"
    return used
