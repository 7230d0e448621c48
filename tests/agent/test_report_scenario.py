"""The seed's run on seed-ct200 as a transcript, built from the tools' real result models; and its sanity.

`SeedRun` writes the events a run would record: call + result for each tool,
todo changes, model responses. Results are the tools' own models (HostFacts,
DiskCheck, DownloadHandle/Status, DrafterConfig, RunningServer, BenchmarkResult,
AcceptanceResult) dumped to JSON as the recorder stores them, with the figures of
sim/profiles/seed-ct200.yaml. The report tests build on it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from specops.agent.final import FinalAnswer
from specops.tools.acceptance import AcceptanceResult, CategoryAcceptance
from specops.tools.acceptance_intervals import request_mean_interval, token_weighted_interval
from specops.tools.benchmark.models import BenchmarkResult, ClientLoad, LatencySummary, LevelResult
from specops.tools.disk import DiskCheck, Mount
from specops.tools.download.models import (
    DownloadCause,
    DownloadFailure,
    DownloadHandle,
    DownloadMethod,
    DownloadState,
    DownloadStatus,
    ExpectedFile,
    WaitDownloadResult,
)
from specops.tools.drafters import DrafterConfig, ModelConfigFacts
from specops.tools.errors import ToolErrorRecord
from specops.tools.facts import CliFacts, CpuFacts, GpuFacts, HostFacts, MemoryFacts
from specops.tools.hosts import DetachedProcess
from specops.tools.parsers.nvidia_topo import GpuTopology
from specops.tools.sglang.config import ServerConfig, SpeculativeAlgorithm
from specops.tools.sglang.handle import RunningServer
from specops.tools.sglang.server_http import ServerInfoSummary
from specops.tools.sglang.stop import StopResult
from specops.tools.space import FreeableItem, FreeableList, FreeSpaceResult, MountChange
from specops.transcripts import (
    EVENT_ADAPTER,
    HostTime,
    ModelResponseEvent,
    PolicyInfo,
    RunEndEvent,
    RunStartEvent,
    TodoChangeEvent,
    TodoItem,
    ToolCallEvent,
    ToolResultEvent,
    diff_todos,
)

HOST = "sim:seed-ct200"
GIB = 1024**3
LEVELS = [1, 32, 64, 128, 256]
OUTPUT_LEN = 256
TARGET = "~/models/Kimi-K2.6"
DRAFTER_REPO = "SubSir/Kimi-K2.6-DFlash-tmp-long"
DRAFTER_DIR = "/root/models/Kimi-K2.6-DFlash-tmp-long"
# sim/profiles/seed-ct200.yaml, at LEVELS.
TOK_S = {
    "tp8": [97.9, 683.9, 951.4, 1291.0, 1263.0],
    "tp8-ep4": [69.0, 658.5, 974.8, 1449.2, 1530.5],
    "tp8-ep4+dflash+no-graphs": [41.0, 610.0, 905.0, 1120.0, 1230.0],
    "tp8+dflash": [124.0, 760.0, 880.0, 930.0, 950.0],
}
ACCEPT = {"math": 4.05, "code": 3.85, "chat": 3.55}
T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def ms(values: list[float]) -> LatencySummary:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return LatencySummary(
        samples=len(values), mean_ms=sum(values) / len(values), p50_ms=pick(0.5), p90_ms=pick(0.9), p99_ms=pick(0.99)
    )


def level(concurrency: int, tok_s: float, *, accept: float | None = None, requests: int | None = None) -> LevelResult:
    """A closed-loop level at `tok_s` aggregate: each request streams OUTPUT_LEN tokens at tok_s / concurrency."""
    n = requests or 3 * concurrency
    per_request_s = OUTPUT_LEN * concurrency / tok_s
    ttft = 40.0 + 4.0 * concurrency
    tpot = (per_request_s * 1000 - ttft) / (OUTPUT_LEN - 1)
    per_chunk = accept or 1.0
    spread = [0.9, 0.95, 1.0, 1.0, 1.05, 1.2]
    duration = n * per_request_s / concurrency
    return LevelResult(
        concurrency=concurrency,
        achieved_concurrency=concurrency * 0.98,
        requests_completed=n,
        requests_failed=0,
        errors=[],
        duration_s=duration,
        total_input_tokens=512 * n,
        total_output_tokens=OUTPUT_LEN * n,
        output_tok_s=tok_s,
        request_rate_per_s=n / duration,
        ttft=ms([ttft * f for f in spread]),
        tpot=ms([tpot * f for f in spread]),
        itl_per_token=ms([tpot * f for f in spread]),
        inter_chunk_gap=ms([tpot * per_chunk * f for f in spread]),
        e2e=ms([per_request_s * 1000 * f for f in spread]),
        tokens_per_chunk=per_chunk,
        accept_length=accept,
        cache_flushed=True,
        client=ClientLoad(cpu_fraction=0.12, loop_lag_p99_ms=1.5, limited=False),
    )


def sweep(tok_s: list[float], *, port: int = 30000, accept: float | None = None, levels=LEVELS) -> BenchmarkResult:
    rows = [level(c, t, accept=accept) for c, t in zip(levels, tok_s, strict=False)]
    best = max(rows, key=lambda r: r.output_tok_s)
    return BenchmarkResult(
        host=HOST,
        port=port,
        client="host",
        api="sglang",
        model=None,
        server_version="0.5.10",
        speculative_algorithm="DFLASH" if accept else None,
        prompts="random",
        input_len=512,
        output_len=OUTPUT_LEN,
        ignore_eos=True,
        warmup_requests=1,
        levels=rows,
        best_output_tok_s=best.output_tok_s,
        best_at_concurrency=best.concurrency,
        method="closed loop, server token counts, warm-up excluded",
        warnings=[],
    )


def host_facts() -> HostFacts:
    gpus = [
        GpuFacts(
            index=i,
            model="NVIDIA RTX PRO 6000 Blackwell Server Edition",
            uuid=f"GPU-{i:08x}",
            memory_total_bytes=97887 * 1024**2,
            memory_used_bytes=0,
            memory_total="96G",
            memory_used="0B",
            driver_version="580.159.04",
            pcie_gen=5,
        )
        for i in range(8)
    ]
    labels = [f"GPU{i}" for i in range(8)]
    topology = GpuTopology(
        gpus=labels,
        links={a: {b: "X" if a == b else "NODE" for b in labels} for a in labels},
        interconnect="pcie",
        link_counts={"NODE": 28},
        summary="8 GPUs, PCIe only (no NVLink)",
    )
    root = Mount(
        mount_point="/",
        source="/dev/mapper/pve-vm--200--disk--0",
        fstype="ext4",
        size_bytes=1000 * GIB,
        used_bytes=971 * GIB,
        free_bytes=29 * GIB,
        use_percent=98,
        size="1000G",
        free="29G",
    )
    return HostFacts(
        host=HOST,
        hostname="ct200",
        os="Ubuntu 24.04.3 LTS",
        kernel="6.8.12-15-pve",
        gpus=gpus,
        gpu_count=8,
        gpu_model=gpus[0].model,
        gpu_memory_total_bytes=8 * 97887 * 1024**2,
        driver_version="580.159.04",
        cuda_version="13.0",
        interconnect=topology,
        cpu=CpuFacts(model="AMD EPYC 9575F 64-Core Processor", cores=128),
        memory=MemoryFacts(total_bytes=1007 * GIB, available_bytes=990 * GIB, total="1007G", available="990G"),
        python_version="3.12.3",
        sglang_version="0.5.10",
        huggingface_hub_version="1.3.4",
        clis=[CliFacts(name="hf", path="/usr/local/bin/hf", works=True, version="1.3.4", detail="`hf version`: 1.3.4")],
        serving=[],
        other_gpu_processes=[],
        mounts=[root],
        notes=[],
    )


def disk_check(*, free_gib: int) -> DiskCheck:
    mount = Mount(
        mount_point="/",
        source="/dev/mapper/pve",
        fstype="ext4",
        size_bytes=1000 * GIB,
        used_bytes=(1000 - free_gib) * GIB,
        free_bytes=free_gib * GIB,
        use_percent=100 - free_gib // 10,
        size="1000G",
        free=f"{free_gib}G",
    )
    needed = 38 * GIB
    fits = needed <= mount.free_bytes
    return DiskCheck(
        repo_id=DRAFTER_REPO,
        revision="main",
        sha="a" * 40,
        target=DRAFTER_DIR,
        measured_path="/root/models",
        mount=mount,
        files=5,
        download_bytes=36 * GIB,
        download="36G",
        present_bytes=0,
        present_files=0,
        partial_bytes=0,
        remaining_bytes=36 * GIB,
        remaining="36G",
        margin_bytes=2 * GIB,
        needed_bytes=needed,
        needed="38G",
        free_bytes=mount.free_bytes,
        free=mount.free,
        verdict="fits" if fits else "does_not_fit",
        shortfall_bytes=0 if fits else needed - mount.free_bytes,
        shortfall="0B" if fits else f"{38 - free_gib}G",
        alternatives=[],
        notes=[],
        summary=f"{DRAFTER_REPO} needs 38G on / and {free_gib}G is free: {'fits' if fits else 'does not fit'}",
    )


def freeable_cache() -> FreeableItem:
    return FreeableItem(
        id="cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8@" + "b" * 40,
        kind="cache_revision",
        path="/root/.cache/huggingface/hub/models--Qwen--Qwen3-235B-A22B-Instruct-2507-FP8/snapshots/" + "b" * 40,
        repo_id="Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
        revision="b" * 40,
        refs=["main"],
        size_bytes=231 * GIB,
        size="231G",
        mount_point="/",
        safety="safe",
        reason="no process uses this revision",
        used_by=[],
    )


def download_handle(method: DownloadMethod, pid: int) -> DownloadHandle:
    return DownloadHandle(
        repo_id=DRAFTER_REPO,
        revision="main",
        sha="a" * 40,
        method=method,
        target_dir=DRAFTER_DIR,
        log_path=f"/root/.specops/downloads/{pid}.log",
        process=DetachedProcess(
            pid=pid, pgid=pid, log_path=f"/root/.specops/downloads/{pid}.log", argv=["hf"], started_at=T0, host=HOST
        ),
        command=["hf", "download", DRAFTER_REPO],
        max_attempts=3,
        files=[ExpectedFile(path="model.safetensors", listed_bytes=36 * GIB, stored_bytes=36 * GIB // 1024)],
        sizes_source="head",
        expected_bytes=36 * GIB,
        expected_human="36G",
        already_present_files=0,
        already_present_bytes=0,
        already_present_human="0B",
    )


def download_status(state: DownloadState, pid: int, failure: DownloadFailure | None = None) -> DownloadStatus:
    done = 36 * GIB if state is DownloadState.FINISHED else 0
    return DownloadStatus(
        repo_id=DRAFTER_REPO,
        target_dir=DRAFTER_DIR,
        state=state,
        attempts_started=1,
        max_attempts=3,
        files_total=1,
        files_complete=1 if done else 0,
        expected_bytes=36 * GIB,
        done_bytes=done,
        fraction=done / (36 * GIB),
        progress_human=f"{done // GIB}G of 36G",
        stored_expected_bytes=36 * GIB // 1024,
        stored_present_bytes=done // 1024,
        missing_files=[] if done else ["model.safetensors"],
        config_json_ok=True if done else None,
        failure=failure,
        log_tail="",
        checked_at=T0,
    )


CLI_FAILURE = DownloadFailure(
    cause=DownloadCause.CLI_UNUSABLE,
    what=f"downloading {DRAFTER_REPO} to {DRAFTER_DIR} failed (cli_unusable): it exited 0 without downloading: Usage: hf",
    remedy="use method=library (snapshot_download) or fix the CLI",
    details={"log_path": "/root/.specops/downloads/501.log"},
)


def drafter_config() -> DrafterConfig:
    drafter = ModelConfigFacts(
        source=DRAFTER_DIR,
        architectures=["DFlashDraftModel"],
        model_type="dflash",
        num_hidden_layers=3,
        hidden_size=7168,
        vocab_size=163840,
        dtype="bfloat16",
        weight_bytes=36 * GIB,
        weight_size="36G",
    )
    target = ModelConfigFacts(
        source=TARGET,
        architectures=["KimiK25ForConditionalGeneration"],
        model_type="kimi_k25",
        num_hidden_layers=61,
        hidden_size=7168,
        vocab_size=163840,
        dtype="bfloat16",
        weight_bytes=554 * GIB,
        weight_size="554G",
    )
    return DrafterConfig(
        drafter=drafter,
        target=target,
        is_dflash=True,
        block_size=8,
        block_size_from="dflash_config",
        target_layer_ids=[1, 30, 59],
        target_layer_ids_from="dflash_config",
        mask_token="<|MASK|>",
        mask_token_id=163838,
        draft_layers=3,
        checks=[
            "target_layer_ids [1, 30, 59] lie within the target's 61 layers",
            "hidden_size 7168 matches the target",
            "vocab_size 163840 matches the target",
        ],
        notes=[],
        summary=f"{DRAFTER_DIR}: DFlash drafter, 3 draft layers, block_size 8",
    )


def server_config(name: str, *, port: int = 30000) -> ServerConfig:
    parallel = {"tp8": dict(tp=8), "tp8-ep4": dict(tp=8, ep=4)}[name.split("+")[0]]
    speculative = {}
    if "+dflash" in name:
        speculative = dict(speculative_algorithm=SpeculativeAlgorithm.DFLASH, drafter_path=DRAFTER_DIR)
    return ServerConfig(
        model_path=TARGET,
        port=port,
        cuda_graphs="+no-graphs" not in name,
        trust_remote_code=True,
        **parallel,
        **speculative,
    )


def running(config: ServerConfig, pid: int) -> RunningServer:
    info = ServerInfoSummary(
        version="0.5.10",
        model_path=config.model_path,
        served_model_name=None,
        tp=config.tp,
        ep=config.ep,
        dp=1,
        pp=1,
        enable_dp_attention=False,
        cuda_graphs=config.cuda_graphs,
        cuda_graph_max_bs=None,
        mem_fraction_static=0.85,
        max_running_requests=None,
        max_total_num_tokens=400000,
        context_length=262144,
        speculative_algorithm=config.speculative_algorithm.value if config.speculative_algorithm else None,
        drafter_path=config.drafter_path,
        block_size=8 if config.speculative_algorithm else None,
        speculative_num_steps=None,
        speculative_eagle_topk=None,
        avg_spec_accept_length=[],
    )
    return RunningServer(
        host=HOST,
        pid=pid,
        pgid=pid,
        started_at=T0,
        argv=["python3", "-m", "sglang.launch_server"],
        log_path=f"/root/.specops/logs/sglang-{pid}.log",
        port=config.port,
        base_url=f"http://127.0.0.1:{config.port}",
        config=config,
        info=info,
        ready_after_s=8.4,
    )


def acceptance(port: int = 30000, per_category: int = 12) -> AcceptanceResult:
    def stat(category: str, rows: list[tuple[int, int]]) -> CategoryAcceptance:
        mean, mean_ci = request_mean_interval([c / v for c, v in rows])
        weighted, weighted_ci = token_weighted_interval([c for c, _ in rows], [v for _, v in rows])
        return CategoryAcceptance(
            category=category,
            prompt_set=f"{category}-v1" if category != "overall" else "math-v1 + code-v1 + chat-v1",
            prompts=len(rows),
            request_mean=mean,
            request_mean_ci95=mean_ci,
            token_weighted=weighted,
            token_weighted_ci95=weighted_ci,
            completion_tokens=sum(c for c, _ in rows),
            verify_steps=sum(v for _, v in rows),
            min_request=min(c / v for c, v in rows),
            max_request=max(c / v for c, v in rows),
        )

    rows = {}
    for category, tau in ACCEPT.items():
        # Requests of different lengths around tau, so the two weightings differ a little.
        rows[category] = [(400 + 37 * i, round((400 + 37 * i) / (tau * (0.9 + 0.02 * i)))) for i in range(per_category)]
    categories = [stat(c, r) for c, r in rows.items()]
    return AcceptanceResult(
        host=HOST,
        port=port,
        speculative_algorithm="DFLASH",
        block_size=8,
        server_version="0.5.10",
        max_new_tokens=1024,
        temperature=0.0,
        categories=categories,
        overall=stat("overall", [row for r in rows.values() for row in r]),
        failed_requests=0,
        errors=[],
        server_avg_accept_length=3.8,
        method="Prompt sets math-v1, code-v1, chat-v1 at temperature 0; tau = completion_tokens / spec_verify_ct; "
        "request mean (Student-t 95%) and token weighted (bootstrap 95%)",
        warning=None,
    )


class Transcript:
    """Events of one run, with seq and a clock that the caller advances."""

    def __init__(self, run_id: str = "run-seed") -> None:
        self.run_id = run_id
        self.events: list = []
        self.now = T0
        self._calls = 0
        self.plan: list[TodoItem] = []

    def add(self, cls, **fields):
        event = cls(seq=len(self.events), ts=self.now, run_id=self.run_id, **fields)
        # Through the adapter, as the reader gives them back.
        self.events.append(EVENT_ADAPTER.validate_python(event.model_dump(mode="json")))
        return event

    def wait(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def start(self, goal: str) -> None:
        self.add(RunStartEvent, goal=goal, policy=PolicyInfo(name="playbook"), host={"spec": HOST})

    def think(self, seconds: float = 0.05) -> None:
        self.add(ModelResponseEvent, response={"parts": [], "kind": "response"}, duration_s=seconds)
        self.wait(seconds)

    def todo(self, item_id: str, status: str, content: str | None = None) -> None:
        before = list(self.plan)
        current = {t.id: t for t in self.plan}
        old = current.get(item_id)
        current[item_id] = TodoItem(
            id=item_id, content=content or (old.content if old else item_id), status=status, priority="high"
        )
        self.plan = list(current.values())
        self.add(TodoChangeEvent, todos=self.plan, changes=diff_todos(before, self.plan))

    def call(self, tool: str, args: dict[str, Any]) -> str:
        self._calls += 1
        call_id = f"c{self._calls}"
        self.add(ToolCallEvent, call_id=call_id, tool=tool, args=args)
        return call_id

    def result(
        self,
        call_id: str,
        tool: str,
        outcome: BaseModel | ToolErrorRecord,
        seconds: float,
        host_time: HostTime | None = None,
    ) -> int:
        self.wait(seconds)
        if isinstance(outcome, ToolErrorRecord):
            event = self.add(
                ToolResultEvent,
                call_id=call_id,
                tool=tool,
                ok=False,
                error=outcome.model_dump(),
                duration_s=seconds,
                host=HOST,
                host_time=host_time,
            )
        else:
            event = self.add(
                ToolResultEvent,
                call_id=call_id,
                tool=tool,
                ok=True,
                result=outcome.model_dump(mode="json"),
                duration_s=seconds,
                host=HOST,
                host_time=host_time,
            )
        return event.seq

    def tool(
        self,
        tool: str,
        args: dict[str, Any],
        outcome: BaseModel | ToolErrorRecord,
        seconds: float = 0.5,
        host_time: HostTime | None = None,
    ) -> int:
        """`host_time`: the call on the host's clock, as today's runner records it (None: as older transcripts)."""
        return self.result(self.call(tool, args), tool, outcome, seconds, host_time)

    def end(self, status: str = "completed") -> None:
        self.add(RunEndEvent, status=status, duration_s=(self.now - T0).total_seconds())


GOAL = f"https://huggingface.co/{DRAFTER_REPO}: download, evaluate accept lens, deploy, benchmark"


def seed_run(*, leave_running: bool = True) -> Transcript:
    """The seed's job done right: full disk and broken CLI recovered, baselines measured, DFlash on two bases."""
    t = Transcript()
    t.start(GOAL)
    for item, text in [
        ("1", "Check host and disk"),
        ("2", "Download the drafter"),
        ("3", "Benchmark baselines"),
        ("4", "Deploy DFlash and measure acceptance"),
        ("5", "Benchmark DFlash and compare"),
    ]:
        t.todo(item, "pending", text)
    t.todo("1", "in_progress")
    t.think()
    t.tool("host_facts", {}, host_facts(), 1.2)
    t.tool("check_disk", {"repo_id": DRAFTER_REPO, "target": DRAFTER_DIR}, disk_check(free_gib=29), 0.4)
    # A stale id first (the policy guessed it), then the listing's own.
    t.tool(
        "free_space",
        {"ids": ["cache:Qwen/Qwen3-235B@main"], "dry_run": False},
        ToolErrorRecord(
            kind="invalid_input",
            what="no such candidates now: ['cache:Qwen/Qwen3-235B@main']",
            remedy="call list_freeable and use the ids it returns",
        ),
        0.2,
    )
    unused = freeable_cache()
    t.tool(
        "list_freeable",
        {},
        FreeableList(
            items=[unused],
            safe_bytes=unused.size_bytes,
            safe="231G",
            needs_approval_bytes=0,
            mounts=[],
            notes=[],
            summary="1 candidate",
        ),
        0.8,
    )
    t.tool(
        "free_space",
        {"ids": [unused.id], "dry_run": False},
        FreeSpaceResult(
            dry_run=False,
            deleted=[unused],
            refused=[],
            expected_freed_bytes=unused.size_bytes,
            expected_freed="231G",
            mounts=[
                MountChange(
                    mount_point="/",
                    free_before_bytes=29 * GIB,
                    free_after_bytes=260 * GIB,
                    freed_bytes=231 * GIB,
                    free_before="29G",
                    free_after="260G",
                    measured=True,
                )
            ],
            notes=[],
            summary="freed 231G in 1 item(s); refused 0; /: 29G -> 260G free",
        ),
        2.0,
    )
    t.tool("check_disk", {"repo_id": DRAFTER_REPO, "target": DRAFTER_DIR}, disk_check(free_gib=260), 0.4)
    t.todo("1", "completed")
    t.todo("2", "in_progress")
    t.tool(
        "start_download",
        {"repo_id": DRAFTER_REPO, "target_dir": DRAFTER_DIR, "method": "hf"},
        download_handle(DownloadMethod.HF, 501),
        0.6,
    )
    t.tool(
        "wait_download",
        {"handle": {"repo_id": DRAFTER_REPO}},
        WaitDownloadResult(
            status=download_status(DownloadState.FAILED, 501, CLI_FAILURE), timed_out=False, waited_s=2.0
        ),
        2.0,
    )
    t.tool(
        "start_download",
        {"repo_id": DRAFTER_REPO, "target_dir": DRAFTER_DIR, "method": "library"},
        download_handle(DownloadMethod.LIBRARY, 502),
        0.6,
    )
    t.tool("download_status", {"handle": {"repo_id": DRAFTER_REPO}}, download_status(DownloadState.RUNNING, 502), 0.3)
    # The baselines are measured while the drafter downloads.
    t.todo("3", "in_progress")
    pid = 1000
    for name in ("tp8", "tp8-ep4"):
        pid += 1
        config = server_config(name)
        t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, pid), 8.4)
        t.tool("benchmark", {"port": 30000, "levels": LEVELS}, sweep(TOK_S[name]), 6.0)
        t.tool(
            "stop_server",
            {"server": {"pid": pid, "port": 30000}},
            StopResult(
                host=HOST,
                pid=pid,
                was_running=True,
                port=30000,
                port_free=True,
                gpu_mib_released=700000,
                gpu_released=True,
                seconds=1.0,
            ),
            1.0,
        )
    t.todo("3", "completed")
    t.tool(
        "wait_download",
        {"handle": {"repo_id": DRAFTER_REPO}},
        WaitDownloadResult(status=download_status(DownloadState.FINISHED, 502), timed_out=False, waited_s=4.0),
        4.0,
    )
    t.todo("2", "completed")
    t.todo("4", "in_progress")
    t.tool("read_drafter_config", {"drafter": {"path": DRAFTER_DIR}, "target": {"path": TARGET}}, drafter_config(), 0.3)
    graphs = server_config("tp8-ep4+dflash")
    t.tool(
        "launch_server",
        {"config": graphs.model_dump(mode="json")},
        ToolErrorRecord(
            kind="launch_failed",
            what="the SGLang server exited before it was ready (cuda_graph_failure): Capture cuda graph failed",
            remedy="relaunch with cuda_graphs off",
            details={"cause": "cuda_graph_failure", "config": graphs.model_dump(mode="json")},
        ),
        3.0,
    )
    no_graphs = server_config("tp8-ep4+dflash+no-graphs")
    t.tool("launch_server", {"config": no_graphs.model_dump(mode="json")}, running(no_graphs, 1003), 8.4)
    t.tool("acceptance", {"port": 30000}, acceptance(), 5.0)
    t.todo("4", "completed")
    t.todo("5", "in_progress")
    t.tool("benchmark", {"port": 30000, "levels": LEVELS}, sweep(TOK_S["tp8-ep4+dflash+no-graphs"], accept=3.8), 6.0)
    t.tool(
        "stop_server",
        {"server": {"pid": 1003, "port": 30000}},
        StopResult(
            host=HOST,
            pid=1003,
            was_running=True,
            port=30000,
            port_free=True,
            gpu_mib_released=720000,
            gpu_released=True,
            seconds=1.0,
        ),
        1.0,
    )
    tp8_dflash = server_config("tp8+dflash")
    t.tool("launch_server", {"config": tp8_dflash.model_dump(mode="json")}, running(tp8_dflash, 1004), 8.4)
    t.tool("benchmark", {"port": 30000, "levels": LEVELS}, sweep(TOK_S["tp8+dflash"], accept=3.8), 6.0)
    if not leave_running:
        t.tool(
            "stop_server",
            {"server": {"pid": 1004, "port": 30000}},
            StopResult(
                host=HOST,
                pid=1004,
                was_running=True,
                port=30000,
                port_free=True,
                gpu_mib_released=720000,
                gpu_released=True,
                seconds=1.0,
            ),
            1.0,
        )
    t.todo("5", "completed")
    t.think()
    t.end()
    return t


HONEST_ANSWER = FinalAnswer(
    status="completed",
    summary="Downloaded the drafter after freeing space and switching from the broken hf CLI to the library. "
    "Acceptance length 3.8 (token weighted). DFlash on TP8 wins at C=1 with 124 tok/s, 1.27x the best "
    "autoregressive config, and loses at C=256. The crossover is near C=49.",
    recommendation="Serve tp8+dflash up to C=32 and tp8-ep4 from C=64.",
    left_running=["tp8+dflash on port 30000, for low-load serving"],
)


def test_scenario_events_are_valid_transcript_events_with_paired_calls():
    events = seed_run().events
    assert [e.seq for e in events] == list(range(len(events)))
    calls = {e.call_id for e in events if e.type == "tool_call"}
    results = {e.call_id for e in events if e.type == "tool_result"}
    assert calls == results and len(calls) > 15


def test_scenario_results_read_back_as_the_tools_models():
    events = seed_run().events
    benchmarks = [
        BenchmarkResult.model_validate(e.result) for e in events if e.type == "tool_result" and e.tool == "benchmark"
    ]
    assert [b.best_output_tok_s for b in benchmarks] == [1291.0, 1530.5, 1230.0, 950.0]
    measured = [
        AcceptanceResult.model_validate(e.result) for e in events if e.type == "tool_result" and e.tool == "acceptance"
    ]
    assert 3.5 < measured[0].overall.token_weighted < 4.1
