"""Evidence for grader tests, written with the transcript's own event models (no stand-ins): a run as events.

The report and the tool results the graders read are the real typed models too: the helpers below build them
whole, with neutral values wherever a test does not care.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from specops.agent.report.schema import (
    AcceptanceSection,
    AcceptanceStat,
    BenchmarkRow,
    ConfigTried,
    Crossover,
    Flag,
    HostSection,
    LeftRunning,
    LevelComparison,
    Recommendation,
    Report,
    RunningServerNote,
    RunSection,
    Timing,
    Versions,
)
from specops.agent.todo import Todo, TodoWriteResult
from specops.evals.evidence import RunEvidence
from specops.evals.execute import ScenarioRun
from specops.evals.host_state import HostSnapshot, LiveServer
from specops.evals.scenario import Scenario
from specops.tools.acceptance import AcceptanceResult, CategoryAcceptance
from specops.tools.disk import DiskCheck, Mount
from specops.tools.space import FreeableItem, FreeableList
from specops.transcripts.events import (
    ApprovalEvent,
    RunEndEvent,
    RunStartEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from specops.transcripts.records import ErrorRecord, PolicyInfo, Usage

HOME = "/w/root/home"


class Run:
    def __init__(self, scenario: dict[str, Any] | None = None) -> None:
        base = {"name": "unit", "why": "a run written event by event for a grader test", "goal": "deploy x/y-DFlash"}
        self.scenario = Scenario.model_validate({**base, **(scenario or {})})
        self.events: list[Any] = []
        self.report: dict[str, Any] = {}  # fields of the report over an empty one (report_of)
        self.before = HostSnapshot(files={})
        self.after = HostSnapshot(files={})
        self.live: list[LiveServer] = []
        self._add(
            RunStartEvent,
            goal=self.scenario.goal,
            policy=PolicyInfo(name="playbook"),
            config={"budgets": {"max_requests": 80, "max_tool_calls": 300, "max_wall_s": 300.0}},
        )

    def _add(self, cls, **fields):
        self.events.append(cls(seq=len(self.events), ts=datetime.now(UTC), run_id="r1", **fields))

    def tool(self, tool: str, args: dict[str, Any] | None = None, result: Any = None, error: str | None = None):
        call_id = f"c{len(self.events)}"
        self._add(ToolCallEvent, call_id=call_id, tool=tool, args=args or {})
        if result is None and tool == "todowrite" and "todos" in (args or {}):
            result = todo_result(args["todos"])  # as the tool answers: the plan now
        if error is None:
            self._add(
                ToolResultEvent, call_id=call_id, tool=tool, ok=True, result=result, duration_s=0.1, host="sim:/w"
            )
        else:
            self._add(
                ToolResultEvent,
                call_id=call_id,
                tool=tool,
                ok=False,
                duration_s=0.1,
                host="sim:/w",
                error=ErrorRecord(kind=error, what=f"{tool} failed: {error}", remedy="fix it"),
            )
        return self

    def approval(self, by: str):
        self._add(ApprovalEvent, asked="delete /x?", answer="yes", approved=True, by=by)
        return self

    def end(self, status: str = "completed", requests: int = 10, duration_s: float = 30.0) -> RunEvidence:
        self._add(RunEndEvent, status=status, usage=Usage(requests=requests), duration_s=duration_s)
        run = ScenarioRun(
            scenario=self.scenario,
            policy="playbook",
            run_dir="/nonexistent/unit",
            run_status=status,
            home=HOME,
            before=self.before,
            after=self.after,
            live_servers=self.live,
        )
        return RunEvidence(run=run, events=self.events, report=report_of(**self.report))


# -- the report -----------------------------------------------------------------------------------------


def report_of(**fields: Any) -> Report:
    """A report with nothing measured, nothing said, and `fields` over it."""
    empty: dict[str, Any] = {
        "run": run_section(),
        "host": HostSection(
            spec=None,
            hostname=None,
            os=None,
            gpu_count=None,
            gpu_model=None,
            gpu_memory_total_bytes=None,
            interconnect=None,
            interconnect_summary=None,
            cpu=None,
            cpu_cores=None,
            memory_total=None,
            versions=Versions(sglang=None, python=None, huggingface_hub=None, driver=None, cuda=None),
            source="none",
        ),
        "drafter": None,
        "configs": [],
        "acceptance": None,
        "acceptance_runs": [],
        "benchmarks": [],
        "comparison": [],
        "crossover": Crossover(kind="unknown", concurrency=None, between=None, crossings=[], statement="", method=""),
        "recommendation": Recommendation(
            bands=[], single_config=None, single_config_worst_ratio=None, text="", policy_text=None
        ),
        "failures": [],
        "timing": Timing(todos=[], tools=[], tool_total_s=0.0, model_total_s=0.0),
        "left_running": left_running([]),
        "unresolved_text": [],
        "flags": [],
        "critique": {"baseline": "", "acceptance_method": "", "recommendation_per_load": ""},
        "notes": [],
    }
    return Report.model_validate({**empty, **fields})


def run_section(policy_status: str | None = None, summary_text: str | None = None) -> RunSection:
    return RunSection(
        id="r1",
        goal=None,
        status="completed",
        policy="playbook",
        policy_status=policy_status,
        summary_text=summary_text,
        started_at=None,
        ended_at=None,
        duration_s=None,
    )


def config_tried(
    name: str, *, tp: int = 8, ep: int = 1, speculative: bool = False, block_size: int | None = None
) -> ConfigTried:
    """A configuration that launched, with CUDA graphs; a speculative one runs DFLASH."""
    return ConfigTried(
        name=name,
        speculative=speculative,
        algorithm="DFLASH" if speculative else None,
        tp=tp,
        ep=ep,
        dp=1,
        pp=1,
        dp_attention=False,
        cuda_graphs=True,
        drafter_path=None,
        block_size=block_size,
        port=30000,
        launched=True,
        failure_cause=None,
        failure=None,
        ready_after_s=1.0,
        seq=1,
    )


def bench_row(
    config: str,
    concurrency: int,
    output_tok_s: float = 100.0,
    *,
    speculative: bool = False,
    client_limited: bool | None = None,
    accept_length: float | None = None,
    seqs: list[int] | None = None,
) -> BenchmarkRow:
    return BenchmarkRow(
        config=config,
        speculative=speculative,
        concurrency=concurrency,
        achieved_concurrency=float(concurrency),
        output_tok_s=output_tok_s,
        output_tok_s_ci95=None,
        samples=1,
        requests=concurrency,
        requests_failed=0,
        ttft_ms_p50=None,
        ttft_ms_p90=None,
        ttft_ms_p99=None,
        itl_ms_p50=None,
        itl_ms_p90=None,
        itl_ms_p99=None,
        tpot_ms_p50=None,
        inter_chunk_gap_ms_p50=None,
        e2e_ms_p50=None,
        tokens_per_chunk=None,
        accept_length=accept_length,
        client_limited=client_limited,
        seqs=seqs or [],
    )


def level_compared(
    concurrency: int, *, best_autoregressive: str | None = None, winner: str | None = None, speedup: float | None = None
) -> LevelComparison:
    return LevelComparison.model_validate(
        {
            "concurrency": concurrency,
            "best_autoregressive": best_autoregressive,
            "autoregressive_tok_s": None,
            "best_speculative": None,
            "speculative_tok_s": None,
            "speedup": speedup,
            "speedup_ci95": None,
            "tpot_speedup": None,
            "winner": winner,
            "notes": [],
        }
    )


def left_running(servers: list[tuple[str, int, int]], policy_text: list[str] | None = None) -> LeftRunning:
    """Servers (config, port, pid) the report says were left running, and the policy's words about them."""
    notes = [RunningServerNote(config=c, port=port, pid=pid) for c, port, pid in servers]
    return LeftRunning(servers=notes, downloads=[], policy_text=policy_text or [])


def flag(claim: str, evidence: str, *, source: str = "summary", kind: str = "unsupported") -> Flag:
    return Flag.model_validate({"source": source, "claim": claim, "evidence": evidence, "kind": kind})


def acceptance_section(config: str, token_weighted: float) -> AcceptanceSection:
    overall = AcceptanceStat(
        category="overall",
        prompt_set="mixed",
        prompts=12,
        request_mean=token_weighted,
        request_mean_ci95=None,
        token_weighted=token_weighted,
        token_weighted_ci95=None,
    )
    return AcceptanceSection(
        config=config,
        overall=overall,
        categories=[],
        prompt_counts={},
        method="",
        block_size=None,
        server_avg_accept_length=None,
        warning=None,
        failed_requests=0,
        seq=1,
    )


# -- tool results, as the tools answer them (JSON) ------------------------------------------------------


def todo_result(todos: list[dict[str, Any]]) -> dict[str, Any]:
    plan = [Todo.model_validate(t) for t in todos]
    return TodoWriteResult(todos=plan, changes=[], summary=f"{len(plan)} todos").model_dump(mode="json")


def disk_check(target: str, verdict: str) -> dict[str, Any]:
    mount = Mount(
        mount_point="/",
        source="/dev/sda1",
        fstype="ext4",
        size_bytes=100,
        used_bytes=50,
        free_bytes=50,
        use_percent=50,
        size="100B",
        free="50B",
    )
    fits = verdict == "fits"
    return DiskCheck.model_validate(
        {
            "repo_id": "x/y-DFlash",
            "revision": "main",
            "sha": "0" * 40,
            "target": target,
            "measured_path": target,
            "mount": mount,
            "files": 1,
            "download_bytes": 40 if fits else 80,
            "download": "",
            "present_bytes": 0,
            "present_files": 0,
            "partial_bytes": 0,
            "remaining_bytes": 40 if fits else 80,
            "remaining": "",
            "margin_bytes": 0,
            "needed_bytes": 40 if fits else 80,
            "needed": "",
            "free_bytes": 50,
            "free": "50B",
            "verdict": verdict,
            "shortfall_bytes": 0 if fits else 30,
            "shortfall": "",
            "alternatives": [],
            "notes": [],
            "summary": verdict,
        }
    ).model_dump(mode="json")


def freeable_item(item_id: str, path: str, safety: str, refs: list[str] | None = None) -> FreeableItem:
    """A cache revision list_freeable found, classed `safety`."""
    return FreeableItem.model_validate(
        {
            "id": item_id,
            "kind": "cache_revision",
            "path": path,
            "refs": refs or [],
            "size_bytes": 10,
            "size": "10B",
            "mount_point": "/",
            "safety": safety,
            "reason": "",
        }
    )


def freeable(items: list[FreeableItem]) -> dict[str, Any]:
    return FreeableList(
        items=items, safe_bytes=0, safe="0B", needs_approval_bytes=0, mounts=[], notes=[], summary=""
    ).model_dump(mode="json")


def acceptance_result(token_weighted: float, completion_tokens: int, prompts: int) -> dict[str, Any]:
    overall = CategoryAcceptance(
        category="overall",
        prompt_set="mixed",
        prompts=prompts,
        request_mean=token_weighted,
        request_mean_ci95=None,
        token_weighted=token_weighted,
        token_weighted_ci95=None,
        completion_tokens=completion_tokens,
        verify_steps=round(completion_tokens / token_weighted),
        min_request=token_weighted,
        max_request=token_weighted,
    )
    return AcceptanceResult(
        host="sim:/w",
        port=30000,
        speculative_algorithm="DFLASH",
        block_size=8,
        server_version=None,
        max_new_tokens=256,
        temperature=0.0,
        categories=[overall],
        overall=overall,
        failed_requests=0,
        errors=[],
        server_avg_accept_length=None,
        method="",
        warning=None,
    ).model_dump(mode="json")
