"""The loop with scripted policies on a simulated host: unknown tools, bad arguments, loops, budgets."""

from __future__ import annotations

import json

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from specops.agent.budget import Budgets

from ..jobs import job_timeout
from .scripted import PLAN, call, drive, events, finish, last_request, scripted, turn, world_host  # noqa: F401

pytestmark = [job_timeout(), pytest.mark.slow]


async def test_the_model_is_sent_a_view_and_the_full_result_is_recorded(world_host, tmp_path):
    seen = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("todowrite", PLAN)
        if n == 1:
            return call("check_disk", {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long", "target": "~/models/dflash"})
        part = last_request(messages).parts[0]
        seen["disk"], seen["full"] = part.content, part.metadata
        return finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert outcome.status == "completed" and outcome.exit_code == 0
    assert "error" not in seen["disk"] and seen["disk"]["verdict"] == "fits" and seen["disk"]["needed"].endswith("G")
    results = {e.tool: e for e in events(outcome, "tool_result")}
    assert results["check_disk"].ok and results["check_disk"].host == world_host
    # The model is sent the compact view (no empty lists); the full result rides along, unsent, and is recorded.
    assert results["check_disk"].result == seen["full"]["result"] and seen["full"]["ok"] is True
    assert results["check_disk"].result["alternatives"] == [] and "alternatives" not in seen["disk"]
    assert seen["disk"]["needed"] == results["check_disk"].result["needed"] and "needed_bytes" not in seen["disk"]
    assert [e.type for e in events(outcome)][0] == "run_start" and events(outcome)[-1].type == "run_end"
    start = events(outcome, "run_start")[0]
    assert {"todowrite", "host_facts", "start_download", "free_space"} <= set(start.tools)
    assert set(start.prompts) == {"system", "tools"}
    assert json.loads((outcome.run_dir / "todos.json").read_text())[0]["id"] == "facts"


async def test_every_host_call_is_timed_on_the_hosts_clock_and_the_report_sums_it(world_host, tmp_path):
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("todowrite", PLAN)
        if n == 1:
            return call("host_facts")
        if n == 2:
            return call("check_disk", {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long", "target": "~/models/dflash"})
        return finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    results = {e.tool: e for e in events(outcome, "tool_result")}
    facts, disk = results["host_facts"].host_time, results["check_disk"].host_time
    assert results["todowrite"].host_time is None  # the loop's own tool never reaches the host
    assert facts is not None and disk is not None and facts.seconds is not None and disk.seconds is not None
    assert facts.start <= facts.end <= disk.start <= disk.end  # one clock, the host's, read around each call
    host = json.loads((outcome.run_dir / "report.json").read_text())["timing"]["host"]
    assert host["host_s"] == pytest.approx(disk.end - facts.start, abs=1e-3) and host["timed_calls"] == 2
    assert host["gpu_count"] == 8 and host["gpu_hours"] == pytest.approx(host["host_s"] * 8 / 3600, abs=1e-3)
    assert outcome.host_time is not None and outcome.host_time.startswith("this job used ")


async def test_unknown_tool_is_retried_and_the_run_goes_on(world_host, tmp_path):
    seen = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("launch_rocket", {"when": "now"})
        seen["reply"] = str(last_request(messages).parts[0].content)
        return finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert outcome.status == "completed"
    # Answered in the error shape of every other failure, and recorded as a failed call the report lists.
    error = json.loads(seen["reply"])["error"]
    assert error["kind"] == "unknown_tool" and "'launch_rocket'" in error["what"] and error["remedy"]
    assert "check_disk" in error["details"]["tools"]
    failed = [e for e in events(outcome, "tool_result") if not e.ok]
    assert [(e.tool, e.error.kind) for e in failed] == [("launch_rocket", "unknown_tool")]
    [call_event] = [e for e in events(outcome, "tool_call") if e.tool == "launch_rocket"]
    assert call_event.args == {"when": "now"}
    retries = events(outcome, "retry")
    assert [r.what for r in retries] == ["tool launch_rocket"]
    report = json.loads((outcome.run_dir / "report.json").read_text())
    assert [(f["tool"], f["kind"]) for f in report["failures"]] == [("launch_rocket", "unknown_tool")]


async def test_bad_arguments_come_back_with_the_validation_message(world_host, tmp_path):
    seen = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("check_disk", {"repo_id": "not a repo", "target": "~/models/x"})
        if n == 1:
            seen["retry"] = str(last_request(messages).parts[0].content)
            return call("check_disk", {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long", "target": "~/models/dflash"})
        seen["fixed"] = last_request(messages).parts[0].content
        return finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert outcome.status == "completed"
    assert "repo_id" in seen["retry"] and "not a repo" in seen["retry"]
    # In the one error shape every failure has.
    assert json.loads(seen["retry"])["error"]["kind"] == "invalid_arguments"
    assert "error" not in seen["fixed"]
    failed = [e for e in events(outcome, "tool_result") if not e.ok]
    assert [(e.tool, e.error.kind) for e in failed] == [("check_disk", "invalid_arguments")]
    assert events(outcome, "retry")[0].reason.startswith("repo_id")


async def test_a_typed_tool_error_is_returned_to_the_model_not_raised(world_host, tmp_path):
    seen = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if turn(messages) == 0:
            return call("check_disk", {"repo_id": "nobody/missing", "target": "~/models/x"})
        seen["error"] = last_request(messages).parts[0].content
        return finish("failed", "the repo does not exist")

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert list(seen["error"]) == ["error"]
    assert seen["error"]["error"]["kind"] == "repo_not_found" and seen["error"]["error"]["remedy"]
    assert outcome.status == "failed" and "failed" in outcome.reason and outcome.exit_code != 0


async def test_a_policy_that_finished_part_of_the_goal_ends_the_run_partial(world_host, tmp_path):
    """Useful measurements but not the whole answer: neither a success a script may take for one (exit 0) nor the
    failure to do anything (exit 1)."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return finish("partial", "the baselines are measured; the drafter's sweep is incomplete")

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert (outcome.status, outcome.exit_code, outcome.ok) == ("partial", 4, False)
    assert outcome.reason == "the policy finished with part of the goal"
    assert events(outcome, "run_end")[0].status == "partial"
    assert json.loads((outcome.run_dir / "report.json").read_text())["run"]["status"] == "partial"


async def test_a_looping_model_is_refused_then_stopped_with_evidence(world_host, tmp_path):
    replies = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if turn(messages) > 0:
            replies.append(last_request(messages).parts[0].content)
        return call("check_disk", {"repo_id": "nobody/missing", "target": "~/models/x"})

    outcome = await drive(FunctionModel(respond), world_host, tmp_path, max_repeats=2)
    assert outcome.status == "failed" and "loop" in outcome.reason
    kinds = [r["error"]["kind"] for r in replies]
    assert kinds[:2] == ["repo_not_found", "repo_not_found"]
    assert kinds[2:] == ["repeated_failure", "repeated_failure"]  # refused, not run; then the run ends
    assert "change approach" in replies[2]["error"]["remedy"]
    error = [e for e in events(outcome, "error") if e.kind == "loop_detected"][0]
    assert error.details["tool"] == "check_disk" and error.details["error_kind"] == "repo_not_found"
    assert events(outcome)[-1].type == "run_end" and events(outcome)[-1].status == "failed"


async def test_a_changed_call_is_not_refused(world_host, tmp_path):
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n < 4:  # the same missing repo, into a different directory each time
            return call("check_disk", {"repo_id": "nobody/missing", "target": f"~/models/x{n}"})
        return finish("failed", "no such repo")

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    kinds = [e.error.kind for e in events(outcome, "tool_result")]
    assert kinds == ["repo_not_found"] * 4


async def test_request_budget_ends_the_run_with_budget_exceeded(world_host, tmp_path):
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return call("todowrite", PLAN)  # a model that never finishes

    outcome = await drive(FunctionModel(respond), world_host, tmp_path, budgets=Budgets(max_requests=3))
    assert outcome.status == "budget_exceeded" and "request_limit of 3" in outcome.reason
    assert outcome.exit_code != 0
    end = events(outcome)[-1]
    assert end.type == "run_end" and end.status == "budget_exceeded" and end.usage.requests == 3
    assert (outcome.run_dir / "todos.json").exists()
    assert end.report is not None and (outcome.run_dir / "report.json").exists()


async def test_tool_call_budget_ends_the_run(world_host, tmp_path):
    check = {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long", "target": "~/models/dflash"}
    parallel = ModelResponse(parts=[ToolCallPart("todowrite", PLAN), ToolCallPart("check_disk", check)])
    outcome = await drive(scripted(parallel, parallel), world_host, tmp_path, budgets=Budgets(max_tool_calls=3))
    assert outcome.status == "budget_exceeded" and "tool_calls_limit" in outcome.reason
    assert len(events(outcome, "tool_call")) == 2


async def test_wall_time_budget_ends_the_run(world_host, tmp_path):
    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        import asyncio

        await asyncio.sleep(5)
        return finish()

    outcome = await drive(FunctionModel(slow), world_host, tmp_path, budgets=Budgets(max_wall_s=0.5))
    assert outcome.status == "budget_exceeded" and "wall-time" in outcome.reason
    assert outcome.duration_s < 4


def _priced(tokens: int, cost: str | None):
    """A model that never finishes and reports `tokens` input tokens (and `cost` USD) per response."""
    from decimal import Decimal

    from pydantic_ai.usage import RequestUsage

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=tokens, output_tokens=10, cost=Decimal(cost) if cost is not None else None)
        return ModelResponse(parts=[ToolCallPart("todowrite", PLAN)], usage=usage)

    return FunctionModel(respond)


async def test_token_budget_ends_the_run(world_host, tmp_path):
    outcome = await drive(_priced(4000, None), world_host, tmp_path, budgets=Budgets(max_tokens=10_000))
    assert outcome.status == "budget_exceeded" and "total_tokens_limit" in outcome.reason
    end = events(outcome)[-1]
    assert end.usage.requests == 3 and end.usage.input_tokens == 12_000  # the third response crossed it
    assert end.report is not None


async def test_cost_budget_ends_the_run_where_the_price_is_known(world_host, tmp_path):
    outcome = await drive(_priced(100, "0.40"), world_host, tmp_path, budgets=Budgets(max_cost_usd=1.0))
    assert outcome.status == "budget_exceeded" and "cost" in outcome.reason
    end = events(outcome)[-1]
    assert end.usage.requests == 3 and end.cost_usd == pytest.approx(1.2)


async def test_an_unknown_price_never_stops_a_run(world_host, tmp_path):
    outcome = await drive(_priced(100, None), world_host, tmp_path, budgets=Budgets(max_cost_usd=0.01, max_requests=4))
    assert outcome.status == "budget_exceeded" and "request_limit" in outcome.reason  # the request budget, not cost
    assert events(outcome)[-1].cost_usd is None


async def test_calls_in_one_answer_run_one_after_another_in_the_order_given(world_host, tmp_path):
    """free_space then check_disk in one answer must not give a stale verdict: each call starts after the one before."""
    both = ModelResponse(
        parts=[
            ToolCallPart("find_models", {}, tool_call_id="first"),
            ToolCallPart("host_facts", {}, tool_call_id="second"),
        ]
    )
    outcome = await drive(scripted(call("todowrite", PLAN), both, finish()), world_host, tmp_path)
    assert outcome.status == "completed"
    order = [
        (e.type, e.call_id)
        for e in events(outcome)
        if e.type in ("tool_call", "tool_result") and e.call_id in ("first", "second")
    ]
    assert order == [
        ("tool_call", "first"),
        ("tool_result", "first"),
        ("tool_call", "second"),
        ("tool_result", "second"),
    ]
