"""`specops replay RUN`: re-drive today's agent code from a recorded run and say where it first differs.

Three ways, one loop (agent/run.py) with different seams:

- offline (the default): no model and no host. Tool calls get the recorded
  results (recorded_tools.py); the policy is today's playbook when the run was
  the playbook's (it is code, so a change to it shows up here), else the
  recorded model responses (recorded_model.py). Every event is compared with
  the recording as it is written (comparator.py), masked (masking.py).
- live tools (`live_host`): the same policy, real tools on a fresh host; only
  what changes the course is compared (ok vs error, error kind, the calls).
- fork (`fork_at`, `fork_model`): live tools on a fresh host, the recorded
  policy up to event N, then the live policy M; a new run directory whose
  run_start says `forked_from`.

Offline, the replayed run writes into a temporary directory that is removed;
live and fork runs are real runs and stay under runs_dir.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic_ai.models import Model

from specops.tools.hosts import HostRequest

from ..budget import Budgets
from ..host import HostOpener, RunHost
from ..policies import resolve_policy
from ..policies.playbook_settings import PLAYBOOK
from ..run import RunOptions, RunOutcome, RunSeams, new_run_id, open_live_host, request_of, run_goal_async
from ..tool_runner import LiveTools
from .comparator import EventComparator
from .comparing_recorder import ComparingRecorder
from .divergence import Divergence, ReplayDiverged, ReplayReachedEnd
from .masking import Masker
from .offline_host import offline_opener, recorded_host
from .recorded_model import HandoverModel, recorded_model
from .recorded_run import RecordedRun
from .recorded_tools import RecordedTools

ReplayMode = Literal["offline", "live-tools", "fork"]


class ReplayResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    transcript: Path
    mode: ReplayMode
    policy: str  # how the policy was re-driven: "today's playbook" or "recorded responses"
    recorded_events: int
    replayed_events: int
    divergence: Divergence | None = None
    run_dir: Path | None = None  # the new run (live tools, fork)
    status: str | None = None  # the replayed run's ending
    cut_off: bool = False  # the recorded run has no run_end: replayed up to its last whole event
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.divergence is None

    def summary(self) -> str:
        where = f"; new run {self.run_dir}" if self.run_dir is not None else ""
        if self.divergence is None:
            cut = " (the recorded run was cut off there; `specops resume` continues it)" if self.cut_off else ""
            return (
                f"replay {self.mode} of {self.transcript}: no divergence in {self.recorded_events} events{cut} "
                f"({self.policy}, {self.duration_s:.2f} s){where}"
            )
        return f"replay {self.mode} of {self.transcript}: DIVERGED ({self.policy}){where}\n{self.divergence.describe()}"


class ReplayRefused(ValueError):
    """The replay cannot run as asked (a bad --from, a fork without --host); the message says what to pass."""


def replay(run: str | Path, **kwargs: Any) -> ReplayResult:
    return asyncio.run(replay_async(run, **kwargs))


async def replay_async(
    run: str | Path,
    *,
    live_host: str | None = None,
    fork_at: int | None = None,
    fork_model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    runs_dir: Path = Path("runs"),
) -> ReplayResult:
    """`base_url`, `api_key_env`: a fork's `openai-chat:` policy's server and key variable (default: the recorded
    run's, else $OPENAI_BASE_URL and OPENAI_API_KEY)."""
    started = time.monotonic()
    recorded = RecordedRun.load(run)
    mode: ReplayMode = "fork" if fork_at is not None else ("live-tools" if live_host else "offline")
    if fork_at is not None:  # mode "fork"
        if live_host is None:
            raise ReplayRefused("a fork continues with live tools: pass --host H (e.g. sim:seed-ct200)")
        if not 0 < fork_at < len(recorded.events):
            raise ReplayRefused(f"--from {fork_at}: the recorded run has events 0..{len(recorded.events) - 1}")
    live = mode != "offline"
    run_id = new_run_id() if live else recorded.run_id
    masker = Masker(live=live, run_ids=(recorded.run_id, run_id))
    # A run that was cut off (no run_end) replays up to its last whole event, and stops there.
    cut_off = recorded.end is None and mode != "fork"
    until = fork_at if mode == "fork" else (len(recorded.events) if cut_off else None)
    comparator = EventComparator(recorded.events, masker, until=until)
    recorders: list[ComparingRecorder] = []
    make = ComparingRecorder.factory(comparator, end_at=len(recorded.events) if cut_off else None)

    def make_recorder(path: Path, rid: str, fsync: bool) -> ComparingRecorder:
        recorders.append(make(path, rid, fsync))
        return recorders[-1]

    opened: list[RunHost] = []
    policy, policy_label = _policy(recorded)
    config: dict[str, Any] = {"replay_of": {"run_id": recorded.run_id, "transcript": str(recorded.read.path)}}
    policy_name = recorded.policy
    options, budgets = recorded_settings(recorded, live)
    if fork_at is not None:  # mode "fork"
        options = options.model_copy(
            update={"base_url": base_url or options.base_url, "api_key_env": api_key_env or options.api_key_env}
        )
        live_model = resolve_policy(fork_model or PLAYBOOK, base_url=options.base_url, api_key_env=options.api_key_env)
        policy = HandoverModel(policy, live_model, recorded, fork_at)
        policy_label += f" up to event {fork_at}, then {fork_model or PLAYBOOK}"
        config = {"forked_from": {"run_id": recorded.run_id, "transcript": str(recorded.read.path), "seq": fork_at}}
        policy_name = fork_model or PLAYBOOK
    seams = RunSeams(
        tools=LiveTools() if live else RecordedTools(recorded, masker),
        open_host=_capturing(open_live_host if live else offline_opener(recorded_host(recorded)), opened),
        make_recorder=make_recorder,
        config=config,
        policy_name=policy_name,
        report=live,
    )
    with _run_dir(live, runs_dir, run_id) as run_dir:
        outcome: RunOutcome | None = None
        try:
            outcome = await run_goal_async(
                recorded.start.goal,
                host=HostRequest(spec=live_host) if live_host else _recorded_request(recorded),
                policy=policy,
                budgets=budgets,
                run_dir=run_dir,
                options=options,
                seams=seams,
            )
        except (ReplayDiverged, ReplayReachedEnd):
            pass  # recorded in the recorder; the run stopped there
        recorder = recorders[0] if recorders else None
        divergence = recorder.finish() if recorder is not None else None
        replayed = recorder.next_seq if recorder is not None else 0
        if recorder is not None and recorder.reached_end:
            replayed = len(recorded.events)
    return ReplayResult(
        transcript=recorded.read.path,
        mode=mode,
        policy=policy_label,
        recorded_events=len(recorded.events),
        replayed_events=replayed,
        divergence=divergence,
        run_dir=run_dir if live else None,
        status=outcome.status if outcome is not None else None,
        duration_s=time.monotonic() - started,
        cut_off=cut_off,
    )


def _policy(recorded: RecordedRun) -> tuple[Model, str]:
    if recorded.is_playbook:
        return resolve_policy(recorded.policy_spec), "today's playbook"
    return recorded_model(recorded), f"recorded {recorded.policy} responses"


def recorded_settings(recorded: RecordedRun, live: bool) -> tuple[RunOptions, Budgets]:
    """The recorded run's options and budgets (fields this version no longer has are dropped)."""
    raw = dict(recorded.config.get("options") or {})
    known = {k: v for k, v in raw.items() if k in RunOptions.model_fields}
    known.update(fsync=live, ask_once=False, answers_file=None)
    options = RunOptions.model_validate(known)
    raw_budgets = dict(recorded.config.get("budgets") or {})
    budgets = Budgets.model_validate({k: v for k, v in raw_budgets.items() if k in Budgets.model_fields})
    return options, budgets


def _recorded_request(recorded: RecordedRun) -> HostRequest:
    """The host the run asked for, as it asked (with its provider options)."""
    request = request_of(recorded.start.host)
    return request if request.spec else HostRequest(spec="local")


def _capturing(opener: HostOpener, opened: list[RunHost]) -> HostOpener:
    """The opener, keeping the RunHost it opened (recorded responses are moved to a new world's directory)."""

    @contextmanager
    def open_(request: HostRequest) -> Iterator[RunHost]:
        with opener(request) as run_host:
            opened.append(run_host)
            yield run_host

    return open_


@contextmanager
def _run_dir(live: bool, runs_dir: Path, run_id: str) -> Iterator[Path]:
    if live:
        yield runs_dir / run_id
        return
    with tempfile.TemporaryDirectory(prefix="specops-replay-") as tmp:
        yield Path(tmp) / run_id
