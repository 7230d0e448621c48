"""Host time, accounted: the job's seconds on the host's own clock and its GPU-hours, per todo, per tool and in all.

Transcripts with known host-clock readings give known figures; a transcript from before host times were recorded
still builds a report, which says they are unknown.
"""

from __future__ import annotations

import pytest

from specops.agent.durations import duration_words
from specops.agent.report import build_report
from specops.agent.report.host_time import NO_HOST_TIMES, host_time_sentence
from specops.agent.report.markdown import render_markdown
from specops.agent.report.schema import HostTimeSection
from specops.agent.tool_runner import LiveTools, ToolRequest
from specops.tools.context import ToolContext
from specops.tools.errors import ToolError, ToolErrorRecord
from specops.tools.facts import GroupFacts
from specops.tools.registry import ToolSpec
from specops.transcripts import HostOpenedEvent, HostTime, OpenedHost

from .test_report_scenario import HONEST_ANSWER, HOST, Transcript, host_facts, seed_run, server_config, sweep

T = 1_800_000_000.0  # the host's clock (epoch seconds), far from this machine's: nothing may mix the two


def _opened(t: Transcript) -> None:
    t.add(HostOpenedEvent, host=OpenedHost(spec=HOST, opened=HOST, home="/root", allowed_roots=["/root"]))


def _timed_run() -> Transcript:
    """Two todo items on an 8-GPU host: 10 s of host facts, then a 70 s benchmark and a 30 s failed launch, with
    20 s of the policy deciding between the calls (on the host's clock)."""
    t = Transcript()
    t.start("deploy and benchmark X")
    _opened(t)
    t.todo("a", "pending", "facts")
    t.todo("b", "pending", "bench")
    t.todo("a", "in_progress")
    t.think()
    t.tool("host_facts", {}, host_facts(), 0.5, HostTime(start=T, end=T + 10))
    t.todo("a", "completed")
    t.todo("b", "in_progress")
    t.think()
    t.tool("benchmark", {"server": "s1"}, sweep([100.0] * 6), 0.5, HostTime(start=T + 30, end=T + 100))
    failed = ToolErrorRecord(kind="launch_failed", what="exited", remedy="look at the log")
    t.tool(
        "launch_server",
        {"config": server_config("tp8").model_dump()},
        failed,
        0.5,
        HostTime(start=T + 100, end=T + 130),
    )
    t.todo("b", "completed")
    t.end()
    return t


@pytest.fixture(scope="module")
def timed():
    return build_report(_timed_run().events, None, status="completed")


def test_the_job_holds_the_host_from_its_first_host_call_to_its_last(timed):
    host = timed.timing.host
    assert host.host_s == 130.0 and host.tool_s == 110.0  # 20 s between calls: held, no call running
    assert host.gpu_count == 8 and host.gpu_hours == pytest.approx(130 * 8 / 3600, abs=1e-3)
    assert (host.timed_calls, host.untimed_calls, host.sessions, host.unknown_reason) == (3, 0, 1, None)


def test_each_todo_and_tool_has_its_calls_host_seconds_and_gpu_hours(timed):
    todos = {t.id: t for t in timed.timing.todos}
    assert todos["a"].host_s == 10.0 and todos["a"].gpu_hours == pytest.approx(10 * 8 / 3600, abs=1e-3)
    assert todos["b"].host_s == 100.0 and todos["b"].gpu_hours == pytest.approx(100 * 8 / 3600, abs=1e-3)
    # This machine's seconds stay what they were: the host's clock replaces none of them.
    assert todos["b"].tool_s == 1.0
    tools = {t.tool: t for t in timed.timing.tools}
    assert tools["benchmark"].host_s == 70.0 and tools["launch_server"].host_s == 30.0  # a failure took host time too
    assert tools["host_facts"].host_s == 10.0


def test_report_and_markdown_say_it(timed):
    data = timed.model_dump(mode="json")
    assert data["timing"]["host"]["host_s"] == 130.0 and data["timing"]["todos"][1]["host_s"] == 100.0
    text = render_markdown(timed)
    assert "**Host time:** this job used 2 min 10 s of the host, 0.29 GPU-hours (8 GPUs)." in text
    assert "host calls ran 1 min 50 s of it" in text
    assert "| a. facts | completed |" in text and "| 10.0 | 0.022 |" in text


def test_a_group_counts_every_nodes_gpus():
    t = Transcript()
    t.start("deploy and benchmark X")
    group = GroupFacts(
        nodes=["a", "b"], hostnames=["a", "b"], gpu_count=16, ok=True, problems=[], shared_root=None, summary="2 nodes"
    )
    t.tool("host_facts", {}, host_facts().model_copy(update={"group": group}), 0.5, HostTime(start=T, end=T + 3600))
    host = build_report(t.events, None, status="completed").timing.host
    assert host.gpu_count == 16 and host.gpu_hours == 16.0


def test_a_resumed_run_does_not_count_the_time_it_lay_dead():
    t = Transcript()
    t.start("deploy and benchmark X")
    _opened(t)
    t.tool("host_facts", {}, host_facts(), 0.5, HostTime(start=T, end=T + 60))
    _opened(t)  # resumed a day later
    t.tool("benchmark", {"server": "s1"}, sweep([100.0] * 6), 0.5, HostTime(start=T + 86_400, end=T + 86_400 + 120))
    host = build_report(t.events, None, status="completed").timing.host
    assert (host.host_s, host.sessions) == (180.0, 2)


def test_a_call_whose_clock_could_not_be_read_is_left_out_and_its_todo_is_unknown():
    t = Transcript()
    t.start("deploy and benchmark X")
    t.todo("a", "in_progress", "facts")
    t.think()
    t.tool("host_facts", {}, host_facts(), 0.5, HostTime(start=T, end=T + 10))
    t.todo("a", "completed")
    t.todo("b", "in_progress", "bench")
    t.think()
    t.tool("benchmark", {"server": "s1"}, sweep([100.0] * 6), 0.5, HostTime(start=T + 10, end=None))
    report = build_report(t.events, None, status="completed")
    host = report.timing.host
    assert (host.host_s, host.timed_calls, host.untimed_calls) == (10.0, 1, 1)
    assert {x.id: x.host_s for x in report.timing.todos} == {"a": 10.0, "b": None}
    assert "1 host call(s) whose clock could not be read are not counted" in host_time_sentence(host)


def test_an_old_transcript_builds_a_report_that_says_host_time_is_unknown():
    t = seed_run()
    report = build_report(t.events, HONEST_ANSWER, status="completed")
    host = report.timing.host
    assert host.host_s is None and host.gpu_hours is None and host.unknown_reason == NO_HOST_TIMES
    host_calls = sum(1 for e in t.events if e.type == "tool_result")  # the seed's run records only host calls
    assert (host.timed_calls, host.untimed_calls) == (0, host_calls) and host_calls > 20
    assert host.gpu_count == 8  # what is known is still said
    assert all(t.host_s is None and t.gpu_hours is None for t in report.timing.todos)
    assert all(t.host_s is None for t in report.timing.tools)
    text = render_markdown(report)
    assert f"**Host time:** this job's time on the host is unknown: {NO_HOST_TIMES}." in text
    assert "| unknown | unknown |" in text and "GPU-hours (" not in text


def test_a_job_that_made_no_host_call_used_none_of_the_host():
    t = Transcript()
    t.start("fine-tune X")
    t.tool("todowrite", {"todos": []}, host_facts(), 0.01)  # the loop's own tool: not a host call
    refused = ToolErrorRecord(kind="invalid_arguments", what="bad", remedy="fix them")
    t.tool("check_disk", {}, refused, 0.0)  # refused before it ran: not a host call either
    report = build_report(t.events, None, status="failed")
    host = report.timing.host
    assert (host.host_s, host.tool_s, host.gpu_hours, host.untimed_calls) == (0.0, 0.0, None, 0)
    assert host_time_sentence(host) == "this job made no call on the host"
    assert {x.tool: x.host_s for x in report.timing.tools} == {"todowrite": None, "check_disk": 0.0}


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (9660, "2 h 41 min"),
        (3599.6, "1 h"),
        (725, "12 min 5 s"),
        (59.6, "1 min"),
        (45, "45 s"),
        (0.42, "0.4 s"),
    ],
)
def test_durations_in_words(seconds, words):
    assert duration_words(seconds) == words


def test_the_sentence_of_the_issue():
    section = HostTimeSection(host_s=9660.0, tool_s=9000.0, gpu_count=8, gpu_hours=9660 * 8 / 3600, timed_calls=40)
    assert host_time_sentence(section) == "this job used 2 h 41 min of the host, 21.5 GPU-hours (8 GPUs)"
    no_gpus = section.model_copy(update={"gpu_count": None, "gpu_hours": None})
    assert host_time_sentence(no_gpus).endswith("GPU-hours unknown (the host's GPU count was not read)")


# -- the runner reads the host's clock around every call -----------------------------------------------------------


class _ClockHost:
    """A host whose clock reads the given values in turn (None: it cannot be read)."""

    spec = "fake"

    def __init__(self, *readings: float | None) -> None:
        self.readings = list(readings)

    def clock(self) -> float:
        value = self.readings.pop(0)
        if value is None:
            raise OSError("connection dropped")
        return value


def _request(fn) -> ToolRequest:
    from pydantic import BaseModel

    class Args(BaseModel):
        pass

    class Result(BaseModel):
        ok: bool = True

    spec = ToolSpec(name="probe", fn=fn, args=Args, result=Result, mutates=False, description="")
    return ToolRequest(call_id="c1", spec=spec, args=Args(), raw_args={})


def _context(host: _ClockHost) -> ToolContext:
    return ToolContext(host=host, home="/root", allowed_roots=("/root",))  # a host that only tells the time


async def test_a_live_call_is_timed_on_the_hosts_clock():
    request = _request(lambda ctx, args: request.spec.result())
    done = await LiveTools().run(request, _context(_ClockHost(T, T + 42.5)))
    assert done.result == {"ok": True} and request.host_time.value == HostTime(start=T, end=T + 42.5)
    assert request.host_time.value.seconds == 42.5


async def test_a_failed_call_is_timed_too_and_an_unreadable_clock_fails_nothing():
    def fails(ctx, args):
        raise ToolError("no", remedy="none")

    request = _request(fails)
    with pytest.raises(ToolError):
        await LiveTools().run(request, _context(_ClockHost(T, T + 5)))
    assert request.host_time.value == HostTime(start=T, end=T + 5)
    request = _request(lambda ctx, args: request.spec.result())
    done = await LiveTools().run(request, _context(_ClockHost(None, T + 5)))
    assert done.result == {"ok": True} and request.host_time.value == HostTime(start=None, end=T + 5)
    assert request.host_time.value.seconds is None
