"""The agent's tools: every registered tool (tools/registry.py) as a pydantic-ai Tool, plus todowrite.

Each tool shows the model its argument model's fields as its parameters (the
JSON Schema of the args model, not a wrapper around it). A call is:

1. validated into the args model; a ValidationError goes back as ModelRetry
   with the message, so the model corrects itself;
2. checked by the wall-clock budget and the loop guard (an identical failing
   call is refused after the bound), and, for deleting tools, by the approval
   policy;
3. carried out by the run's ToolRunner (`deps.tools`, tool_runner.py): live on
   the host by default, served from a transcript by replay;
4. answered `{"ok": true, "result": ...}`, or `{"ok": false, "error": {kind,
   what, remedy, details}}` for a ToolError: a failure is information for the
   model, not an exception. The model is sent the tool's compact view, capped
   in size; the full outcome travels as the return's metadata (tool_answer.py).

Calls in one answer run one after another, in the order given (each tool is
`sequential`): a later call sees what an earlier one did.

Every call is recorded as tool_call + tool_result (arguments, result or error,
duration, host, and the call's time on the host's own clock, which the runner read).
"""

from __future__ import annotations

import functools
import importlib
import json
import time
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_ai import ModelRetry, RunContext, Tool
from pydantic_ai.messages import ToolReturn

from specops.tools.errors import ErrorKind, ToolError, ToolErrorRecord
from specops.tools.model_view import View
from specops.tools.registry import REGISTRY, ToolSpec
from specops.transcripts import ErrorEvent, HostTime, RetryEvent, ToolCallEvent, ToolResultEvent, ToolSchema

from .answers import ASK_TOOL, Answers
from .budget import MEASURING_TOOLS
from .compare import COMPARE_DESCRIPTION, COMPARE_TOOL, CompareArgs, CompareResult, compare_run, compare_view
from .deps import AgentDeps
from .durations import duration_words
from .loop_tools import TODO_TOOL as TODO_TOOL  # the plan tool's name, read with the toolset (run.py, the evals)
from .todo import TodoRuleBroken, TodoWriteArgs, TodoWriteResult, todo_view
from .tool_answer import answer_error, answer_ok
from .tool_runner import ToolRequest
from .tool_schema import advanced_note, parameters_schema

# Importing a tool module registers its tools: this is the one list of them.
TOOL_MODULES = (
    "specops.tools.facts",
    "specops.tools.disk",
    "specops.tools.space",
    "specops.tools.hub_search",
    "specops.tools.drafters.tool",
    "specops.tools.download",
    "specops.tools.models_on_host",
    "specops.tools.sglang",
    "specops.tools.benchmark",
    "specops.tools.acceptance",
    "specops.tools.shell",
)
# The tools the loop answers itself (not on the host): their result types and views.
_AGENT_TOOL_RESULTS: dict[str, tuple[type[BaseModel], View | None]] = {
    TODO_TOOL: (TodoWriteResult, todo_view),
    COMPARE_TOOL: (CompareResult, compare_view),
    ASK_TOOL: (Answers, None),
}


@functools.cache
def _import_tool_modules() -> None:
    for module in TOOL_MODULES:
        importlib.import_module(module)


def registered_tools() -> dict[str, ToolSpec]:
    _import_tool_modules()
    return dict(REGISTRY)


def tool_schemas(specs: dict[str, ToolSpec]) -> dict[str, ToolSchema]:
    """Each tool as the model sees it, for the run_start event."""
    schemas = {
        name: ToolSchema.of(s.args, s.result, mutates=s.mutates, description=s.description) for name, s in specs.items()
    }
    schemas[TODO_TOOL] = ToolSchema.of(TodoWriteArgs, TodoWriteResult, mutates=False, description=_TODO_DESCRIPTION)
    schemas[COMPARE_TOOL] = ToolSchema.of(CompareArgs, CompareResult, mutates=False, description=COMPARE_DESCRIPTION)
    return schemas


def build_tools(specs: dict[str, ToolSpec]) -> list[Tool[AgentDeps]]:
    return [todo_tool(), compare_tool(), *(registry_tool(spec) for spec in specs.values())]


def _validation_message(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "(arguments)"
        lines.append(f"{where}: {error['msg']} (got {error.get('input')!r})")
    return "; ".join(lines)


def answered_retry(record: ToolErrorRecord) -> ModelRetry:
    """A retry the model is asked for, in the error shape of every failure ({"error": {kind, what, remedy}})."""
    return ModelRetry(json.dumps({"error": record.model_dump(mode="json", exclude_defaults=True)}))


def parse_args(
    deps: AgentDeps, ctx: RunContext[AgentDeps], name: str, model: type[BaseModel], raw: dict[str, Any]
) -> Any:
    """The arguments as `model`, or ModelRetry with what is wrong (recorded as a failed call and a retry)."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        message = _validation_message(exc)
        call_id = ctx.tool_call_id or name
        deps.recorder.record(ToolCallEvent, call_id=call_id, tool=name, args=raw)
        record = ToolErrorRecord(
            kind=ErrorKind.INVALID_ARGUMENTS, what=message, remedy="correct the arguments and call again"
        )
        deps.recorder.record(
            ToolResultEvent,
            call_id=call_id,
            tool=name,
            ok=False,
            error=record.model_dump(),
            duration_s=0.0,
            host=deps.host_spec,
        )
        deps.recorder.record(
            RetryEvent,
            what=f"tool {name}",
            attempt=ctx.retry + 1,
            reason=message,
            max_attempts=ctx.max_retries + 1 if ctx.max_retries is not None else None,
        )
        raise answered_retry(record) from None


def registry_tool(spec: ToolSpec) -> Tool[AgentDeps]:
    async def call(ctx: RunContext[AgentDeps], **raw: Any) -> ToolReturn:
        deps = ctx.deps
        deps.clock.check()
        args = parse_args(deps, ctx, spec.name, spec.args, raw)
        call_id = ctx.tool_call_id or spec.name
        normalized = args.model_dump(mode="json")
        deps.recorder.record(ToolCallEvent, call_id=call_id, tool=spec.name, args=raw)
        started = time.monotonic()

        refusal = deps.guard.before(spec.name, normalized) or _host_budget_refusal(deps, spec.name)
        if refusal is not None:  # (LoopDetected, raised by the guard, ends the run)
            return _answer_error(deps, call_id, spec.name, refusal, started)

        args = deps.approvals.review(spec.name, args, deps.tool_context)
        request = ToolRequest(call_id, spec, args, raw)
        try:
            done = await deps.tools.run(request, deps.tool_context)
        except ToolError as exc:
            deps.guard.failed(spec.name, normalized, exc.record())
            return _answer_error(deps, call_id, spec.name, exc.record(), started, request.host_time.value)
        except Exception as exc:  # a tool bug or a host-layer failure the tool did not type: the run goes on
            deps.recorder.record(ErrorEvent, where=f"tool {spec.name}", message=str(exc), kind=type(exc).__name__)
            record = ToolErrorRecord(
                kind=ErrorKind.UNEXPECTED_ERROR,
                what=f"{type(exc).__name__}: {exc}",
                remedy="the tool failed in a way it does not recognise; try another way or stop with this evidence",
            )
            deps.guard.failed(spec.name, normalized, record)
            return _answer_error(deps, call_id, spec.name, record, started, request.host_time.value)
        deps.guard.succeeded(spec.name, normalized)
        if done.created is not None:
            deps.approvals.created_paths.add(done.created)
        deps.approvals.deleted(spec.name, done.result)
        return _answer_ok(deps, call_id, spec.name, done.result, started, request.host_time.value)

    # sequential: calls in one answer run in the order given, each after the one before has finished.
    return Tool.from_schema(
        call,
        name=spec.name,
        description=spec.description + advanced_note(spec.args),
        json_schema=parameters_schema(spec.args),
        takes_ctx=True,
        sequential=True,
    )


def _host_budget_refusal(deps: AgentDeps, tool: str) -> ToolErrorRecord | None:
    """A measuring tool once the job's host-time budget is spent: refused, so the job ends within it."""
    if tool not in MEASURING_TOOLS or not deps.host_time.spent(deps.host_budget_s):
        return None
    return ToolErrorRecord(
        kind=ErrorKind.BUDGET_SPENT,
        what=f"the job's host-time budget is spent ({duration_words(deps.host_time.used_s)} used of "
        f"{duration_words(deps.host_budget_s or 0.0)}): nothing more is launched or measured",
        remedy="stop the servers this run started and give the final answer from what was measured, naming what "
        "the budget left out",
    )


def _result_and_view(tool: str) -> tuple[type[BaseModel], View | None] | None:
    """The one place that knows each tool's result type and view (None: no such tool)."""
    own = _AGENT_TOOL_RESULTS.get(tool)
    if own is not None:
        return own
    _import_tool_modules()  # looked up for every tool return the playbook reads back: no copy of the registry
    spec = REGISTRY.get(tool)
    return (spec.result, spec.view) if spec is not None else None


def result_type(tool: str) -> type[BaseModel] | None:
    """The type of `tool`'s result, for reading a recorded result back typed (None: no such tool)."""
    known = _result_and_view(tool)
    return known[0] if known is not None else None


def answer_recorded(tool: str, data: dict[str, Any], host_time: HostTime | None = None) -> ToolReturn:
    """The answer to a successful call of `tool` with result `data`: its view for the model, in full beside it
    (with the call's host clock readings).

    A live call and a rebuilt one (resume) both answer through it."""
    result, view = _result_and_view(tool) or (BaseModel, None)
    return answer_ok(data, result, view, host_time)


def _recorded(
    deps: AgentDeps, call_id: str, tool: str, started: float, host_time: HostTime | None, **outcome: Any
) -> None:
    """The call's tool_result event: `result=` when it succeeded, `ok=False, error=` when it failed; the host
    time tallied against the job's host-time budget."""
    if host_time is not None:
        deps.host_time.add(host_time.start, host_time.end)
    deps.recorder.record(
        ToolResultEvent,
        call_id=call_id,
        tool=tool,
        ok=outcome.pop("ok", True),
        duration_s=time.monotonic() - started,
        host=deps.host_spec,
        host_time=host_time,
        **outcome,
    )


def _answer_ok(
    deps: AgentDeps,
    call_id: str,
    tool: str,
    data: dict[str, Any],
    started: float,
    host_time: HostTime | None = None,
) -> ToolReturn:
    _recorded(deps, call_id, tool, started, host_time, result=data)
    return answer_recorded(tool, data, host_time)


def _answer_error(
    deps: AgentDeps,
    call_id: str,
    tool: str,
    record: ToolErrorRecord,
    started: float,
    host_time: HostTime | None = None,
) -> ToolReturn:
    error = record.model_dump(mode="json")
    _recorded(deps, call_id, tool, started, host_time, ok=False, error=error)
    return answer_error(error, host_time)


_TODO_DESCRIPTION = (
    "The plan. Write it whole first, before any other tool (`todos`; ids unique, at most one in_progress, a reason "
    "when cancelled); then, as steps start and end, send only `updates` [{id, status, reason}]."
)


def todo_tool() -> Tool[AgentDeps]:
    async def todowrite(ctx: RunContext[AgentDeps], **raw: Any) -> ToolReturn:
        deps = ctx.deps
        args = parse_args(deps, ctx, TODO_TOOL, TodoWriteArgs, raw)
        call_id = ctx.tool_call_id or TODO_TOOL
        deps.recorder.record(ToolCallEvent, call_id=call_id, tool=TODO_TOOL, args=raw)
        started = time.monotonic()
        try:
            result = deps.todos.apply(args)
        except TodoRuleBroken as exc:
            record = ToolErrorRecord(kind=ErrorKind.TODO_RULE, what=str(exc), remedy="fix the list and write it again")
            _answer_error(deps, call_id, TODO_TOOL, record, started)
            deps.recorder.record(
                RetryEvent,
                what=f"tool {TODO_TOOL}",
                attempt=ctx.retry + 1,
                reason=str(exc),
                max_attempts=ctx.max_retries + 1 if ctx.max_retries is not None else None,
            )
            raise answered_retry(record) from None
        return _answer_ok(deps, call_id, TODO_TOOL, result.model_dump(mode="json"), started)

    return Tool.from_schema(
        todowrite,
        name=TODO_TOOL,
        description=_TODO_DESCRIPTION,
        json_schema=parameters_schema(TodoWriteArgs),
        takes_ctx=True,
        sequential=True,
    )


def compare_tool() -> Tool[AgentDeps]:
    """compare.py's tool: it reads the run's own transcript, so it runs here, not on the host."""

    async def compare(ctx: RunContext[AgentDeps], **raw: Any) -> ToolReturn:
        deps = ctx.deps
        args = parse_args(deps, ctx, COMPARE_TOOL, CompareArgs, raw)
        call_id = ctx.tool_call_id or COMPARE_TOOL
        deps.recorder.record(ToolCallEvent, call_id=call_id, tool=COMPARE_TOOL, args=raw)
        started = time.monotonic()
        try:
            result = compare_run(deps.recorder.path, args)
        except ToolError as exc:  # a or b names nothing of this run: the names it knows go back
            return _answer_error(deps, call_id, COMPARE_TOOL, exc.record(), started)
        return _answer_ok(deps, call_id, COMPARE_TOOL, result.model_dump(mode="json"), started)

    return Tool.from_schema(
        compare,
        name=COMPARE_TOOL,
        description=COMPARE_DESCRIPTION,
        json_schema=parameters_schema(CompareArgs),
        takes_ctx=True,
        sequential=True,
    )
