"""`specops resume RUN`: a run that was killed (kill -9 included) carries on where its transcript stops.

- A run that ended (it has its run_end) is not resumed: RunAlreadyEnded says so,
  and nothing is changed (`specops resume` exits 0).
- The host is opened again first, before anything is written: a host that cannot
  be reached (a `sim:` world whose directory is gone, say) is ResumeRefused with
  the reason, and the run directory is left byte for byte as it was.
- The transcript is continued in place (Recorder.resume: a torn last line is
  cut off, seq goes on), so the run stays one run with one run_start and one
  run_end; a note says where it resumed.
- The host comes back: a `sim:PROFILE` world the run had started is reopened
  from its directory (its Hub restarted), any other host is opened again.
- The conversation is rebuilt from the transcript (history.py) and the agent
  continues it with live tools: work whose results were recorded is not done
  again (the playbook reads its progress from that history; a model sees it).
  Calls that were cut off mid-way are carried out again; those of the same turn
  that had finished get their recorded results.
- The plan, the loop guard's memory of failures, and the API key's redaction
  are restored; servers the run left up are health-checked, and downloads it
  started are looked at, before the agent goes on (notes in the transcript).
- Budgets start afresh for the resumed part (the wall clock included).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from specops.tools.context import ToolContext
from specops.tools.errors import ToolError
from specops.tools.hosts import HostRequest
from specops.transcripts import NoteEvent, ResumedEvent, TodoChangeEvent, configure_logging
from specops.transcripts.todos import TodoItem

from ..budget import WallClock
from ..deps import AgentDeps
from ..goal import Goal, GoalRefused, parse_goal
from ..host import HostNotAnswering, RunHost, is_provisioned, reopen_run_host
from ..policies import PolicyUnavailable, resolve_policy
from ..questions import AnswersInvalid, load_answers
from ..recording import Listener, ObservedRecorder
from ..run import RunOutcome, RunParts, RunSeams, add_key_secret, carry_out, request_of
from ..todo import Todo, TodoList
from ..tool_runner import LiveTools, ToolDone, ToolRequest
from ..toolset import TODO_TOOL, registered_tools
from .history import rebuild_history
from .recorded_run import RecordedRun, transcript_path
from .recorded_tools import serve_recorded, was_run
from .replay import recorded_settings


class ResumeRefused(ValueError):
    """The run cannot be resumed (it ended, its host cannot be reached, or its policy cannot be made again); the
    message says what to do. Nothing in the run directory was changed."""


class RunAlreadyEnded(ResumeRefused):
    """The run has ended (its run_end is recorded, with `status`): there is nothing to resume, nothing was changed."""

    def __init__(self, message: str, *, status: str) -> None:
        super().__init__(message)
        self.status = status


def resume(run: str | Path, **kwargs: Any) -> RunOutcome:
    return asyncio.run(resume_async(run, **kwargs))


async def resume_async(
    run: str | Path,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    listeners: Sequence[Listener] = (),
) -> RunOutcome:
    """Continue the killed run RUN (its directory or transcript); `model` replaces its policy spec if given, and
    `base_url`, `api_key_env` an `openai-chat:` policy's server and key variable (default: the recorded ones)."""
    path = transcript_path(run)
    if path.suffix == ".gz":
        raise ResumeRefused(
            f"{path} is a compressed (golden) transcript: resume continues a run directory's transcript.jsonl"
        )
    recorded = RecordedRun.load(path)
    if recorded.end is not None:
        raise RunAlreadyEnded(
            f"run {recorded.run_id} already ended ({recorded.end.status}): there is nothing to resume, and nothing "
            "was changed; replay it with `specops replay`, or fork it with `specops replay --from N`",
            status=recorded.end.status,
        )
    goal = _recorded_goal(recorded)
    spec = model or recorded.policy_spec
    options, budgets = recorded_settings(recorded, live=True)
    if options.ask_once and options.answers_file is not None:
        try:  # read again when the run asks its questions: a file gone or damaged since is refused before then
            load_answers(options.answers_file)
        except AnswersInvalid as exc:
            raise ResumeRefused(f"the run's --answers file cannot be used: {exc}") from None
    options = options.model_copy(
        update={"base_url": base_url or options.base_url, "api_key_env": api_key_env or options.api_key_env}
    )
    try:
        policy = resolve_policy(spec, base_url=options.base_url, api_key_env=options.api_key_env)
    except PolicyUnavailable as exc:
        raise ResumeRefused(f"the run's policy {spec!r} cannot be made again ({exc}): pass --model") from None
    history = rebuild_history(recorded)
    run_dir = path.parent
    clock = WallClock(budgets.max_wall_s)  # the resumed part's wall clock counts opening the host, as a run's does
    host_described = recorded.last_host or {"spec": recorded.start.host.get("spec", "")}
    with ExitStack() as host_open:  # the host, closed once the run has ended (a reopened sim world with it)
        try:  # before anything is written: a host that cannot be reached leaves the run as it was
            run_host = host_open.enter_context(reopen_run_host(host_described))
        except HostNotAnswering as exc:
            raise ResumeRefused(_unreachable(recorded.run_id, host_described, exc)) from None
        recorder = ObservedRecorder.resume(path, fsync=options.fsync)
        # Recorder.resume makes an instance of the class it is called on (typed as Recorder)
        assert isinstance(recorder, ObservedRecorder)
        recorder.listeners = list(listeners)
        logs = configure_logging(run_dir, redactor=recorder.redactor)
        try:
            add_key_secret(recorder, options)
            read = recorder.resumed_from
            recorder.record(
                ResumedEvent,
                after_seq=recorded.events[-1].seq,
                torn_tail_dropped=bool(read and read.torn_tail),
                policy=spec,
                base_url=base_url,
                pending_calls=len(history.pending),
            )
            todos = _restored_plan(recorded, recorder)

            def open_host(request: HostRequest) -> AbstractContextManager[RunHost]:  # noqa: ARG001
                return nullcontext(run_host)  # opened above, before the transcript was touched

            parts = RunParts(
                goal=goal,
                host=request_of(recorded.start.host),
                model=policy,
                budgets=budgets,
                run_dir=run_dir,
                options=options,
                recorder=recorder,
                clock=clock,
                seams=RunSeams(tools=_FinishedCalls(history.done), open_host=open_host),
                todos=todos,
                history=history.messages,
                prepare=lambda deps, run_host: _prepare(recorded, deps, run_host),
            )
            return await carry_out(parts)
        finally:
            logs.close()
            recorder.close()


def _unreachable(run_id: str, described: dict[str, Any], exc: HostNotAnswering) -> str:
    """One line: the run's host cannot be reached, why, and that nothing was changed."""
    spec = str(described.get("spec", ""))
    fork = "fork the run onto another host with `specops replay RUN --from N --host HOST`"
    # A host the run brought up for itself is its provider's to bring back (the reason says why it could not).
    remedy = fork if is_provisioned(spec) else f"bring the host back and resume again, or {fork}"
    return f"run {run_id} cannot be resumed: its host {spec} cannot be reached ({exc}); nothing was changed: {remedy}"


class _FinishedCalls(LiveTools):
    """Live tools, except that calls of the interrupted turn which had finished get their recorded result once."""

    def __init__(self, done: dict[str, Any]) -> None:
        self._done = dict(done)

    async def run(self, request: ToolRequest, context: ToolContext) -> ToolDone:
        result = self._done.pop(request.call_id, None)
        if result is None or result.tool != request.tool:
            return await super().run(request, context)
        request.host_time.value = result.host_time
        return serve_recorded(result)


class _RestoredTodoList(TodoList):
    def __init__(self, recorder: ObservedRecorder, items: list[Todo]) -> None:
        super().__init__(recorder)
        self._items = list(items)  # the plan as last recorded; the next write records its change from it


def _recorded_goal(recorded: RecordedRun) -> Goal:
    """The goal as the run parsed it when it started (its run_start config), else parsed again; ResumeRefused when
    the recorded text cannot be parsed (an edited transcript)."""
    parsed = recorded.start.config.get("goal")
    if isinstance(parsed, dict):
        try:
            return Goal.model_validate(parsed)
        except ValidationError:
            pass
    try:
        return parse_goal(recorded.start.goal)
    except GoalRefused as exc:
        raise ResumeRefused(f"the run's goal cannot be resumed: {exc}") from None


def _restored_plan(recorded: RecordedRun, recorder: ObservedRecorder) -> TodoList:
    last = next((e for e in reversed(recorded.events) if isinstance(e, TodoChangeEvent)), None)
    items: list[TodoItem] = list(last.todos) if last is not None else []
    return _RestoredTodoList(
        recorder, [Todo(id=t.id, content=t.content, status=t.status, priority=t.priority) for t in items]
    )


async def _prepare(recorded: RecordedRun, deps: AgentDeps, run_host: RunHost) -> None:
    """Before the agent goes on: the loop guard's memory, the host time used so far, and what is still running on
    the host."""
    from specops.agent.report.evidence import gather_evidence
    from specops.agent.report.host_time import host_time_section

    deps.host_time.earlier_s = host_time_section(gather_evidence(recorded.read.events)).host_s or 0.0
    specs = registered_tools()
    for pair in recorded.tools:
        spec = specs.get(pair.call.tool)
        if spec is None or pair.call.tool == TODO_TOOL or pair.result is None or not was_run(pair.result):
            continue
        try:
            normalized = spec.args.model_validate(pair.call.args).model_dump(mode="json")
        except Exception:
            continue
        if pair.result.ok:
            deps.guard.succeeded(spec.name, normalized)
        elif pair.result.error is not None:
            from specops.tools.errors import ToolErrorRecord

            deps.guard.failed(spec.name, normalized, ToolErrorRecord(**pair.result.error.model_dump(mode="json")))
    handles = run_host.context.handles
    handles.restore(_recorded_outcomes(recorded))
    for server in handles.running():
        status = await _look(deps, run_host, "server_status", {"server": server.id})
        up = isinstance(status, dict) and status.get("up")
        deps.recorder.record(
            NoteEvent,
            text=(
                f"resume: the server {server.id} on port {server.port} (pid {server.pid}) that this run launched "
                + ("is up (health check passed); it is reused" if up else f"is not up ({_said(status)})")
            ),
        )
    for handle in _downloads_started(recorded):
        waited = await _look(deps, run_host, "wait_download", {"download": handle["id"], "timeout_s": 0})
        status = waited.get("status", waited) if isinstance(waited, dict) else waited
        if isinstance(status, dict) and status.get("state"):
            said = f"{status['state']} ({status.get('progress_human', '')})"
        else:
            said = f"unknown ({_said(status)})"
        deps.recorder.record(
            NoteEvent,
            text=f"resume: the download of {handle.get('repo_id')} into {handle.get('target_dir')} is {said}",
        )


def _recorded_outcomes(recorded: RecordedRun) -> Iterator[tuple[str, bool, dict[str, Any]]]:
    """The (tool, ok, result or error record) of each recorded call that ended with a result dict or an error."""
    for p in recorded.tools:
        if p.result is None:
            continue
        if p.result.ok:
            if isinstance(p.result.result, dict):
                yield p.call.tool, True, p.result.result
        elif p.result.error is not None:
            yield p.call.tool, False, p.result.error.model_dump(mode="json")


async def _look(deps: AgentDeps, run_host: RunHost, tool: str, raw: dict[str, Any]) -> dict[str, Any] | str:
    """A read-only tool run by the harness itself (not the policy): its result, or why it failed."""
    spec = registered_tools()[tool]
    try:
        args = spec.args.model_validate(raw)
        done = await LiveTools().run(
            ToolRequest(call_id=f"resume-{tool}", spec=spec, args=args, raw_args=raw), run_host.context
        )
    except ToolError as exc:
        return f"{exc.record().kind}: {exc.what}"
    except Exception as exc:  # a check must never stop the resume
        return f"{type(exc).__name__}: {exc}"
    return done.result


def _said(status: dict[str, Any] | str) -> str:
    return status if isinstance(status, str) else json.dumps(status, default=str)[:200]


def _downloads_started(recorded: RecordedRun) -> list[dict[str, Any]]:
    """The last download the run started, when no result says it ended."""
    handle: dict[str, Any] | None = None
    for pair in recorded.tools:
        result = pair.result
        if result is None or not result.ok or not isinstance(result.result, dict):
            continue
        if pair.call.tool == "start_download":
            handle = result.result
        elif pair.call.tool in ("download_status", "wait_download"):
            status = result.result.get("status", result.result)
            if isinstance(status, dict) and status.get("state") not in (None, "running"):
                handle = None
    return [handle] if handle is not None else []
