"""Test support: scripted policies (FunctionModel) and a shared simulated world for agent-loop tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from specops.agent.budget import Budgets
from specops.agent.recording import ObservedRecorder
from specops.agent.run import RunOptions, RunOutcome, run_goal_async
from specops.transcripts import read_transcript

from ..tools.worlds import start_world

GOAL = "https://huggingface.co/SubSir/Kimi-K2.6-DFlash-tmp-long -- download, evaluate accept lens, deploy, benchmark"
PLAN = {"todos": [{"id": "facts", "content": "Read the host's facts", "status": "in_progress", "priority": "high"}]}

Step = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def call(tool: str, args: dict | None = None) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool, args or {})])


def finish(status: str = "completed", summary: str = "done") -> ModelResponse:
    return call("final_result", {"status": status, "summary": summary})


def turn(messages: list[ModelMessage]) -> int:
    """How many responses the model has given so far (0 on the first request)."""
    return sum(1 for m in messages if m.kind == "response")


def last_request(messages: list[ModelMessage]) -> ModelRequest:
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return request


def scripted(*responses: ModelResponse) -> FunctionModel:
    """A model that answers with `responses` in order, then finishes."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        return responses[n] if n < len(responses) else finish()

    return FunctionModel(respond)


@pytest.fixture(scope="module")
def world_host() -> Iterator[str]:
    """A seed-ct200 world for the module; runs attach to it as sim:/root."""
    with start_world(time_scale=100) as world:
        yield world.host_spec


async def drive(
    model: FunctionModel, host: str, tmp_path: Path, *, budgets: Budgets | None = None, goal: str = GOAL, **options
) -> RunOutcome:
    return await run_goal_async(
        goal,
        host=host,
        policy=model,
        budgets=budgets or Budgets(),
        run_dir=tmp_path / "run",
        options=RunOptions(fsync=False, **options),
    )


def events(outcome: RunOutcome, type_: str | None = None) -> list:
    read = read_transcript(outcome.run_dir / "transcript.jsonl")
    return [e for e in read.events if type_ is None or e.type == type_]


def dump(value: object) -> str:
    return json.dumps(value, default=str)


def spy_on_recorded_events(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every event a run writes from now on (a replay's transcript lives in a temporary directory that is removed)."""
    written = []
    original = ObservedRecorder.record

    def record(self, event_type, /, **fields):  # type: ignore[no-untyped-def]
        event = original(self, event_type, **fields)
        written.append(event)
        return event

    monkeypatch.setattr(ObservedRecorder, "record", record)
    return written


def invoke_run(runs_dir: Path, *arguments: str):  # noqa: ANN201 - typer's Result
    """`specops run` through its CLI (no host is reached when the arguments are refused), runs under runs_dir."""
    import typer
    from typer.testing import CliRunner

    from specops.cli.run import run as run_command

    app = typer.Typer()
    app.command()(run_command)
    return CliRunner().invoke(app, [*arguments, "--runs-dir", str(runs_dir)])
