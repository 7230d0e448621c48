"""run_goal: from a one-line goal to a finished, recorded and reported run.

Order matters: the goal is parsed before anything else (a goal without a usable
repo id is refused before a file is written or a host opened); then the run's
directory and its one recorder start (run_start first), logging goes beside the
transcript, the host is opened (one that does not answer ends the run, nothing
on it changed), and the agent is driven with agent.iter() until it gives its
final answer, runs out of budget, or loops. Whatever the ending, the report is
built from the recorded evidence, the final plan is written to todos.json, and
run_end closes the transcript.

Replay, resume and fork (agent/replay/) drive this same loop; `RunSeams` holds
what they change (how tool calls are carried out, how the host is opened, which
recorder writes) and `carry_out` is the part they share after run_start.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent
from pydantic_ai.exceptions import (
    AgentRunError,
    ModelConnectionError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model

from specops.prompts.loader import Prompt, agent_prompts
from specops.tools.hosts import HostRequest
from specops.tools.hub import HubTokenUnreadable, local_hub_token
from specops.tools.registry import ToolSpec
from specops.transcripts import (
    ErrorEvent,
    HostOpenedEvent,
    PolicyInfo,
    PromptVersion,
    RunEndEvent,
    RunStartEvent,
    RunStatus,
    Usage,
    configure_logging,
    read_transcript,
)

from .approval import ApprovalPolicy, AskYesNo
from .budget import BudgetExceeded, Budgets, WallClock, host_budget_line
from .compare import COMPARE_TOOL
from .deps import AgentDeps
from .final import FinalAnswer
from .goal import Goal, GoalRefused, parse_goal
from .guard import LoopDetected, RepeatGuard
from .host import DEFAULT_HOST, HostNotAnswering, HostOpener, RunHost, open_run_host
from .plan_reminder import plan_reminder
from .policies import default_policy_spec, is_scripted_spec, policy_settings, resolve_policy
from .policies.playbook_goal import nothing_to_go_on
from .questions import ASK_TOOL, QuestionRound, ask_tool, load_answers
from .recording import Listener, ObservedRecorder, recording_hooks
from .todo import TodoList
from .tool_runner import LiveTools, ToolRunner
from .toolset import TODO_TOOL, build_tools, registered_tools, tool_schemas

TRANSCRIPT = "transcript.jsonl"
TODOS = "todos.json"
_PACKAGES = ("specops", "pydantic-ai-slim", "pydantic", "openai", "huggingface_hub", "aiohttp", "httpx", "structlog")


class RunOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    runs_dir: Path = Path("runs")
    ask_once: bool = False
    answers_file: Path | None = None
    allow_delete: tuple[str, ...] = ()
    allow_roots: tuple[str, ...] = ()  # more places the run may write in, beside the home and the data mounts
    launch_wait_s: float = Field(
        default=7200.0, gt=0, le=86400, description="The most a server start-up showing progress is waited for"
    )
    stall_wait_s: float = Field(
        default=600.0, gt=0, le=3600, description="How long a start-up's log may stay silent before it is stuck"
    )
    base_url: str | None = None
    api_key_env: str | None = None
    max_repeats: int = Field(default=2, ge=1, description="Identical failures of one call before it is refused")
    tool_retries: int = Field(default=3, ge=0, description="Retries of a tool call with bad arguments")
    fsync: bool = True


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    status: RunStatus
    reason: str | None
    final: FinalAnswer | None
    report_paths: dict[str, Path] = field(default_factory=dict)
    duration_s: float = 0.0
    host_time: str | None = None  # the report's one line on what the job cost on its host (None: no report)

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    @property
    def exit_code(self) -> int:
        # partial: the run finished with part of the goal (useful measurements, not the whole answer): not a success
        # a script may take for one, nor the failure to do anything.
        return {"completed": 0, "failed": 1, "budget_exceeded": 3, "partial": 4, "cancelled": 130}[self.status]


def open_live_host(request: HostRequest) -> AbstractContextManager[RunHost]:
    """The HostOpener of a live run (and of a replay against a live host): the host the request names, opened."""
    return open_run_host(request)


def recorded_request(request: HostRequest) -> dict[str, Any]:
    """The host request as run_start records it (replay and resume ask for the same host again from it)."""
    return {"spec": request.spec, **request.options}


def request_of(recorded_host: dict[str, Any]) -> HostRequest:
    """The host request a run recorded (recorded_request's inverse)."""
    options = {name: value for name, value in recorded_host.items() if name != "spec"}
    return HostRequest(spec=str(recorded_host.get("spec", "")), options=options)


# Makes the run's recorder: (transcript path, run id, fsync) -> recorder.
RecorderFactory = Callable[[Path, str, bool], ObservedRecorder]


def _new_recorder(path: Path, run_id: str, fsync: bool) -> ObservedRecorder:
    return ObservedRecorder(path, run_id, fsync=fsync)


@dataclass
class RunSeams:
    """What replay, resume and fork change about a run; the defaults make a live run."""

    tools: ToolRunner = field(default_factory=LiveTools)
    open_host: HostOpener = open_live_host
    make_recorder: RecorderFactory = _new_recorder
    config: dict[str, Any] = field(default_factory=dict)  # added to run_start's config (replay_of, forked_from)
    policy_name: str | None = None  # recorded in run_start instead of the model's own (replay: the recorded one)
    report: bool = True  # False: no report at all (an offline replay compares behaviour, and writes into a temp dir)


# Called once the host is open and deps are made, before the agent runs (resume restores state here).
Prepare = Callable[[AgentDeps, RunHost], Awaitable[None]]


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def run_goal(goal: str, **kwargs: Any) -> RunOutcome:
    """The synchronous entry point (the CLI's); see run_goal_async."""
    return asyncio.run(run_goal_async(goal, **kwargs))


async def run_goal_async(
    goal: str,
    *,
    host: HostRequest | str = DEFAULT_HOST,
    policy: str | Model | None = None,
    budgets: Budgets = Budgets(),  # noqa: B008 (frozen: one shared default is safe)
    run_dir: Path | None = None,
    options: RunOptions = RunOptions(),  # noqa: B008 (frozen)
    ask: Callable[[str], str] | None = None,
    ask_yes_no: AskYesNo | None = None,
    listeners: tuple[Listener, ...] = (),
    seams: RunSeams | None = None,
) -> RunOutcome:
    """Carry out `goal` on `host` (a HostRequest, or a bare spec) with `policy` (a spec, a Model, or None:
    $SPECOPS_MODEL else the playbook).

    Raises GoalRefused (nothing written) and PolicyUnavailable (nothing written);
    every later failure ends the run with a recorded status instead. `ask`
    answers --ask-once questions on a terminal; `ask_yes_no` makes approvals
    interactive. `run_dir` defaults to options.runs_dir/<run-id>. `seams` (replay, fork) change how tools
    run, how the host is opened and which recorder writes.
    """
    seams = seams or RunSeams()
    host = host if isinstance(host, HostRequest) else HostRequest(spec=host)
    parsed = parse_goal(goal)
    if isinstance(policy, Model):
        model, policy_name = policy, f"model:{policy.model_name}"
    else:
        policy_name = policy or default_policy_spec()
        model = resolve_policy(policy_name, base_url=options.base_url, api_key_env=options.api_key_env)
        refused = nothing_to_go_on(parsed) if is_scripted_spec(policy_name) else None
        if refused is not None:  # a model is given any goal; the playbook (and a search) needs a drafter or a target
            raise GoalRefused(refused)
    policy_name = seams.policy_name or policy_name
    run_id = run_dir.name if run_dir is not None else new_run_id()
    run_dir = run_dir if run_dir is not None else options.runs_dir / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    from .report.plots import preload_in_background

    preload_in_background()  # the report's plots
    clock = WallClock(budgets.max_wall_s)
    recorder = seams.make_recorder(run_dir / TRANSCRIPT, run_id, options.fsync)
    recorder.listeners = list(listeners)
    logs = configure_logging(run_dir, redactor=recorder.redactor)
    try:
        add_key_secret(recorder, options)
        prompts, specs = agent_prompts(), registered_tools()
        _record_start(parsed, host, model, policy_name, budgets, options, recorder, ask_yes_no, seams, prompts, specs)
        parts = RunParts(
            goal=parsed,
            host=host,
            model=model,
            budgets=budgets,
            run_dir=run_dir,
            options=options,
            recorder=recorder,
            clock=clock,
            ask=ask,
            ask_yes_no=ask_yes_no,
            seams=seams,
            prompts=prompts,
            specs=specs,
        )
        return await carry_out(parts)
    finally:
        logs.close()
        recorder.close()


def run_secrets(options: RunOptions) -> dict[str, str]:
    """The secrets a run holds beyond those the environment names, by value: the policy's API key (whatever the
    variable --api-key-env names is called) and this machine's Hub token (HF_TOKEN, else the token file)."""
    found: dict[str, str] = {}
    api_key_env = options.api_key_env or "OPENAI_API_KEY"
    if os.environ.get(api_key_env):
        found[os.environ[api_key_env]] = api_key_env
    try:
        token = local_hub_token()
    except HubTokenUnreadable:  # no token to hide; opening the host says what is wrong
        token = None
    if token is not None and token.get_secret_value():
        found.setdefault(token.get_secret_value(), "HF_TOKEN")
    return found


def add_key_secret(recorder: ObservedRecorder, options: RunOptions) -> None:
    """The policy's API key and the Hub token (run_secrets) are redacted wherever the run writes."""
    for value, name in run_secrets(options).items():
        recorder.add_secret(value, name)


def _record_start(
    goal: Goal,
    host: HostRequest,
    model: Model,
    policy_name: str,
    budgets: Budgets,
    options: RunOptions,
    recorder: ObservedRecorder,
    ask_yes_no: AskYesNo | None,
    seams: RunSeams,
    prompts: dict[str, Prompt],
    specs: dict[str, ToolSpec],
) -> None:
    recorder.record(
        RunStartEvent,
        goal=goal.text,
        policy=PolicyInfo(
            name=policy_name,
            settings={
                **policy_settings(policy_name, base_url=options.base_url, api_key_env=options.api_key_env),
                "model_name": model.model_name,
                "tool_retries": options.tool_retries,
            },
        ),
        prompts={name: PromptVersion(version=p.version, sha256=p.sha256) for name, p in prompts.items()},
        tools=tool_schemas(specs),
        packages=_package_versions(),
        host=recorded_request(host),
        config={
            "goal": goal.model_dump(mode="json"),
            "budgets": budgets.model_dump(mode="json"),
            "options": options.model_dump(mode="json"),
            "interactive": ask_yes_no is not None,
            **seams.config,
        },
    )


@dataclass
class RunParts:
    """A run after its run_start: everything carry_out needs."""

    goal: Goal
    host: HostRequest
    model: Model
    budgets: Budgets
    run_dir: Path
    options: RunOptions
    recorder: ObservedRecorder
    clock: WallClock
    ask: Callable[[str], str] | None = None
    ask_yes_no: AskYesNo | None = None
    seams: RunSeams = field(default_factory=RunSeams)
    todos: TodoList | None = None  # the plan so far (resume); a new, empty one by default
    history: list[ModelMessage] | None = None  # continue this conversation instead of sending the goal
    prepare: Prepare | None = None
    # The prompts and tools run_start recorded, used as recorded; None: loaded here (resume records no run_start).
    prompts: dict[str, Prompt] | None = None
    specs: dict[str, ToolSpec] | None = None


async def carry_out(parts: RunParts) -> RunOutcome:
    """Open the host, drive the agent to its end, report, and record run_end; every ending is a RunOutcome."""
    recorder, options, clock = parts.recorder, parts.options, parts.clock
    prompts = parts.prompts if parts.prompts is not None else agent_prompts()
    specs = parts.specs if parts.specs is not None else registered_tools()
    todos = parts.todos if parts.todos is not None else TodoList(recorder)
    final: FinalAnswer | None = None
    status: RunStatus = "failed"
    reason: str | None = None
    usage = Usage()
    cost: float | None = None
    try:
        with parts.seams.open_host(parts.host) as run_host:
            run_host.context.allow(options.allow_roots)
            run_host.context.launch_wait_s = options.launch_wait_s
            run_host.context.stall_wait_s = options.stall_wait_s
            recorder.record(HostOpenedEvent, host=run_host.opened())
            deps = AgentDeps(
                tool_context=run_host.context,
                recorder=recorder,
                todos=todos,
                clock=clock,
                approvals=ApprovalPolicy(recorder, allow_delete=options.allow_delete, ask=parts.ask_yes_no),
                guard=RepeatGuard(max_repeats=options.max_repeats),
                tools=parts.seams.tools,
                host_budget_s=parts.budgets.max_host_s,
            )
            if parts.prepare is not None:
                await parts.prepare(deps, run_host)
            agent = _build_agent(parts.model, prompts, specs, options, parts.ask)
            status, reason, final, usage, cost = await _drive(
                agent, parts.goal, run_host, deps, parts.budgets, clock, parts.history
            )
    except HostNotAnswering as exc:
        reason = str(exc)
        recorder.record(ErrorEvent, where="host", message=reason, kind="host_not_answering")
    except (KeyboardInterrupt, asyncio.CancelledError):
        status, reason = "cancelled", "interrupted"
    run_dir = parts.run_dir
    # The reason may quote an exception that quotes a server's answer (a 401 echoing the API key): it is printed,
    # recorded and reported, so it is redacted here, where it is made, as events are.
    reason = recorder.redactor.redact_text(reason) if reason else reason
    # The final answer and the plan are the model's own words: they go through the same redaction as events.
    final = _redacted_final(recorder, final)
    report_paths, report_data, host_time = (
        _report(recorder, run_dir, final, status) if parts.seams.report else ({}, None, None)
    )
    plan = recorder.redactor.redact(todos.as_json())
    (run_dir / TODOS).write_text(json.dumps(plan, indent=2) + "\n", encoding="utf-8")
    recorder.record(
        RunEndEvent,
        status=status,
        reason=reason,
        report=report_data,
        usage=usage,
        cost_usd=cost,
        duration_s=clock.elapsed_s,
    )
    return RunOutcome(
        run_id=recorder.run_id,
        run_dir=run_dir,
        status=status,
        reason=reason,
        final=final,
        report_paths=report_paths,
        duration_s=clock.elapsed_s,
        host_time=host_time,
    )


def _build_agent(
    model: Model,
    prompts: dict[str, Prompt],
    specs: dict[str, ToolSpec],
    options: RunOptions,
    ask: Callable[[str], str] | None,
) -> Agent[AgentDeps, FinalAnswer]:
    tools = build_tools(specs)
    own = {TODO_TOOL, COMPARE_TOOL, *specs}
    if options.ask_once:
        answers = load_answers(options.answers_file) if options.answers_file is not None else None
        tools.append(ask_tool(QuestionRound(ask=ask, answers=answers)))
        own.add(ASK_TOOL)

    # The instructions never change within a run; the plan travels at the end of each request (plan_reminder.py).
    return Agent(
        model,
        output_type=FinalAnswer,
        instructions=[prompts["system"].text, prompts["tools"].text],
        deps_type=AgentDeps,
        tools=tools,
        retries={"tools": options.tool_retries, "output": 2},
        capabilities=[plan_reminder(), recording_hooks(own)],
    )


def _user_prompt(goal: Goal, run_host: RunHost, host_budget_s: float | None = None) -> str:
    others = [a for a in goal.mentioned if a != goal.algorithm]
    named = [
        ("Repo", goal.repo_id or "none named (search the Hub for one, if the goal needs a drafter)")
        if not goal.compares_drafters
        else ("Drafters to compare", ", ".join(goal.drafters)),
        ("Target", goal.target),
        ("Organisation", goal.author),
        ("Algorithm", goal.algorithm),
        # A word about an algorithm is no request: the drafter's config settles its algorithm.
        ("Algorithms the goal mentions", ", ".join(others) if others else None),
    ]
    return (
        f"Goal: {goal.text}\n\n"
        + "".join(f"{what}: {value}\n" for what, value in named if value)
        + f"Asked for: {', '.join(goal.intents)}\n"
        f"Host: {run_host.spec} (home {run_host.context.home}; this run may write under "
        f"{', '.join(run_host.context.allowed_roots)})"
        + (f"\n{host_budget_line(host_budget_s)}" if host_budget_s is not None else "")
    )


async def _drive(
    agent: Agent[AgentDeps, FinalAnswer],
    goal: Goal,
    run_host: RunHost,
    deps: AgentDeps,
    budgets: Budgets,
    clock: WallClock,
    history: list[ModelMessage] | None = None,
) -> Ended:
    """Step the agent to its end; every way it can end becomes (status, reason, final, usage, cost).

    With `history` the conversation continues from it (resume) instead of starting from the goal:
    pending tool calls at its end are carried out first, as pydantic-ai does for an interrupted run.
    """
    recorder = deps.recorder
    final: FinalAnswer | None = None
    run = None
    prompt = _user_prompt(goal, run_host, budgets.max_host_s) if history is None else None
    try:
        with anyio.fail_after(clock.remaining_s()):
            async with agent.iter(
                prompt, deps=deps, usage_limits=budgets.usage_limits(), message_history=history
            ) as run:
                async for _node in run:
                    clock.check()
                final = run.result.output if run.result is not None else None
    except TimeoutError:
        return _ended(run, "budget_exceeded", f"the wall-time budget of {budgets.max_wall_s:g} s is spent", None)
    except (UsageLimitExceeded, BudgetExceeded) as exc:
        return _ended(run, "budget_exceeded", str(exc), None)
    except LoopDetected as exc:
        recorder.record(ErrorEvent, where="loop guard", message=str(exc), kind="loop_detected", details=exc.evidence)
        return _ended(run, "failed", f"stopped a loop: {exc}", None)
    except UnexpectedModelBehavior as exc:
        recorder.record(ErrorEvent, where="model", message=str(exc), kind="unexpected_model_behavior")
        return _ended(run, "failed", f"the model misbehaved: {exc}", None)
    except ModelConnectionError as exc:
        said = f"the model endpoint {_endpoint(exc)} did not answer ({exc.message})"
        recorder.record(ErrorEvent, where="model", message=said, kind=type(exc).__name__)
        return _ended(run, "failed", f"{said}: check --base-url and that the server is up", None)
    except AgentRunError as exc:
        recorder.record(ErrorEvent, where="agent", message=str(exc), kind=type(exc).__name__)
        return _ended(run, "failed", str(exc), None)
    except Exception as exc:  # the model's transport (connection refused, 5xx) and other harness failures
        recorder.record(ErrorEvent, where="agent", message=f"{type(exc).__name__}: {exc}", kind=type(exc).__name__)
        return _ended(run, "failed", f"{type(exc).__name__}: {exc}", None)
    if final is None:
        return _ended(run, "failed", "the policy ended without a final answer", None)
    if final.status == "completed":
        return _ended(run, "completed", None, final)
    if final.status == "partial":
        return _ended(run, "partial", "the policy finished with part of the goal", final)  # its summary says which
    return _ended(run, "failed", f"the policy ended with status {final.status}", final)  # its summary says why


def _endpoint(error: BaseException) -> str:
    """The URL a model request that could not connect went to, without credentials or query; "?" when unknown."""
    request = getattr(error.__cause__, "request", None)
    url = getattr(request, "url", None)
    if url is None:
        return "?"
    return str(url.copy_with(username=None, password=None, query=None, fragment=None))


# How a run ended: (status, reason, final answer, usage, cost).
Ended = tuple[RunStatus, str | None, FinalAnswer | None, Usage, float | None]


def _ended(run: Any, status: RunStatus, reason: str | None, final: FinalAnswer | None) -> Ended:
    usage = run.usage if run is not None else None
    cost = float(usage.cost) if usage is not None and usage.cost is not None else None
    return status, reason, final, Usage.of(usage) if usage is not None else Usage(), cost


def _redacted_final(recorder: ObservedRecorder, final: FinalAnswer | None) -> FinalAnswer | None:
    if final is None:
        return None
    return FinalAnswer.model_validate(recorder.redactor.redact(final.model_dump(mode="json")))


def _report(
    recorder: ObservedRecorder, run_dir: Path, final: FinalAnswer | None, status: str
) -> tuple[dict[str, Path], dict[str, Any] | None, str | None]:
    """The report from the evidence so far, and its line on the job's host time; a failure to build it is recorded,
    never fatal."""
    try:
        from .report import build_report, write_report
        from .report.budget import budget_sentence
        from .report.host_time import host_time_sentence

        events = read_transcript(recorder.path).events
        report = build_report(events, final, status=status)
        paths = write_report(run_dir, report, redactor=recorder.redactor)
        data = report.model_dump(mode="json") if isinstance(report, BaseModel) else dict(report)
        budget = budget_sentence(report.timing.budget)
        return paths, data, host_time_sentence(report.timing.host) + (f"; {budget}" if budget else "")
    except Exception as exc:
        recorder.record(ErrorEvent, where="report", message=f"{type(exc).__name__}: {exc}", kind="report_failed")
        return {}, None, None


def _package_versions() -> dict[str, str]:
    versions = {}
    for dist in _PACKAGES:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return versions
