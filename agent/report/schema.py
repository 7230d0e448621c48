"""The run's report, version 1: what `report.json` holds, field by field.

Every number here was read from a recorded tool result (evidence.py); the
policy's final answer adds only words (`*_text`, `policy_*`), and claims in
those words that the evidence contradicts are listed in `flags`.
agent/report/report-v1.schema.json is generated from these models
(`python -m specops.agent.report.json_schema`); scripts may rely on it.
Within version 1, fields are only ever added, as optional ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

REPORT_SCHEMA_VERSION: Final = "1"

# Closed for writing (a misspelt field is an error), values once made.
_CONFIG = ConfigDict(extra="forbid", frozen=True)

Interval = tuple[float, float]


class DeletedItem(BaseModel):
    model_config = _CONFIG

    id: str = Field(description="list_freeable's id: cache:REPO@REVISION or dir:PATH")
    path: str
    size_alone_bytes: int = Field(description="What deleting it alone frees (a cache revision shares blobs)")
    created_by: str = Field(description="created by this run / specops' own earlier download / not specops'")
    approved_by: str | None = Field(description="The user's approval it was deleted on; None: specops' own")


class Deletion(BaseModel):
    """One free_space call that deleted (dry runs are not listed)."""

    model_config = _CONFIG

    items: list[DeletedItem]
    freed_bytes: int = Field(description="What df measured freed, all mounts together")
    freed: str
    mounts: list[str] = Field(description="Per mount: free before -> after")
    approved_by: list[str] = Field(description="The user's approvals these deletions used")


class RunSection(BaseModel):
    model_config = _CONFIG

    id: str
    goal: str | None
    status: str = Field(description="How the run ended, as the harness says (completed, failed, budget_exceeded, ...)")
    policy: str | None = Field(description="The policy that drove the run (playbook, openai-chat:NAME, ...)")
    policy_status: str | None = Field(
        description="The final answer's own status (completed, partial, failed, cannot_do)"
    )
    summary_text: str | None = Field(description="The final answer's summary, in the policy's words")
    started_at: datetime | None
    ended_at: datetime | None
    duration_s: float | None
    deletions: list[Deletion] = Field(
        default_factory=list, description="What the run deleted on the host, on whose approval, and what it freed"
    )


class Versions(BaseModel):
    model_config = _CONFIG

    sglang: str | None
    python: str | None
    huggingface_hub: str | None
    driver: str | None
    cuda: str | None = Field(description="Highest CUDA the driver supports")


class HostSection(BaseModel):
    model_config = _CONFIG

    spec: str | None = Field(description="How the host was reached: sim:NAME, ssh://..., local")
    hostname: str | None
    os: str | None
    gpu_count: int | None
    gpu_model: str | None
    gpu_memory_total_bytes: int | None = Field(description="All GPUs together")
    interconnect: str | None = Field(description="nvlink, pcie, mixed or single (nvidia-smi topo -m)")
    interconnect_summary: str | None
    cpu: str | None
    cpu_cores: int | None
    memory_total: str | None
    versions: Versions
    source: Literal["host_facts", "run_start", "none"] = Field(description="Where these facts were read")


class CardFigures(BaseModel):
    """The acceptance lengths a drafter's model card states, per dataset, as read from its tables."""

    model_config = _CONFIG

    figures: dict[str, float] = Field(description="Acceptance length per dataset (gsm8k, math500, ...) as stated")
    label: str = Field(description="What the card calls the figures (the row or column they came from)")


class DrafterSection(BaseModel):
    model_config = _CONFIG

    identity: str | None = Field(
        default=None,
        description="What the report calls this drafter elsewhere (acceptance_runs' and configs' drafter, "
        "head_to_head): its repo id (a folder it was downloaded to reads as the repo), else the path it was read "
        "from; 'MTP heads of TARGET' (NEXTN) or 'n-gram' (NGRAM) where there is no draft model",
    )
    repo_id: str | None
    revision: str | None
    sha: str | None = Field(description="The commit the download was pinned to")
    path: str | None = Field(description="Where it lies on the host (the download's target)")
    is_dflash: bool | None
    algorithm: str | None = Field(default=None, description="The --speculative-algorithm that serves the drafter")
    sglang_defaults: str | None = Field(
        default=None, description="Steps, top-k and draft tokens SGLang uses when the launch passes none"
    )
    block_size: int | None = Field(description="From the drafter's config (or SGLang's default when it has none)")
    block_size_from: str | None
    served_block_size: int | None = Field(description="speculative_num_draft_tokens of the launched server")
    draft_layers: int | None
    target_layer_ids: list[int] | None
    target: str | None
    target_compatible: bool | None = Field(description="None: not checked against a target")
    checks: list[str] = Field(description="What was checked against the target and held")
    problems: list[str] = Field(description="What did not fit, when the drafter was refused")
    summary: str | None
    configs: list[str] = Field(
        default_factory=list, description="The benchmarked configurations that served this drafter (see configs)"
    )
    card: CardFigures | None = Field(
        default=None, description="The acceptance lengths this drafter's own model card states; None: none found"
    )


class ConfigTried(BaseModel):
    model_config = _CONFIG

    name: str = Field(description="Derived from the server configuration: tp8-ep4, tp8-ep4+dflash, +no-graphs")
    speculative: bool
    algorithm: str | None
    tp: int
    ep: int
    dp: int
    pp: int
    replicas: int = Field(default=1, description="Copies of the server behind SGLang's Model Gateway")
    nodes: int | None = Field(default=None, description="Nodes it ran on (one server across nodes, or replicas)")
    dp_attention: bool
    cuda_graphs: bool
    drafter_path: str | None
    drafter: str | None = Field(
        default=None, description="The drafter it serves (a drafters identity); None: autoregressive"
    )
    block_size: int | None
    model_path: str | None = Field(default=None, description="The target model the server loaded")
    num_steps: int | None = Field(default=None, description="--speculative-num-steps as launched; None: not set")
    eagle_topk: int | None = Field(default=None, description="--speculative-eagle-topk as launched; None: not set")
    sglang_defaults: bool | None = Field(
        default=None,
        description="Speculative at SGLang's default settings: no steps, top-k or draft tokens set (DFLASH: the "
        "drafter's block size); None: not speculative",
    )
    port: int
    launched: bool
    failure_cause: str | None = Field(
        description="launch_failed's cause (cuda_graph_failure, out_of_memory, ...) or the error kind"
    )
    failure: str | None = Field(description="What the tool said happened")
    ready_after_s: float | None
    seq: int = Field(description="Transcript seq of the launch's result")

    @property
    def gpus(self) -> int:
        """GPUs the deployment holds: tp x pp, times dp unless DP attention splits the TP ranks, times its replicas
        (as ServerConfig.total_gpus)."""
        return self.tp * self.pp * (1 if self.dp_attention else self.dp) * self.replicas


class AcceptanceStat(BaseModel):
    model_config = _CONFIG

    category: str = Field(description="math, code, chat, or overall")
    thinking: str | None = Field(
        None, description="on / off: prompts rendered with the chat template so; None: raw text"
    )
    prompt_set: str
    prompts: int = Field(description="Requests that counted")
    request_mean: float = Field(description="Mean of per-request completion_tokens / spec_verify_ct")
    request_mean_ci95: Interval | None
    token_weighted: float = Field(description="sum(completion_tokens) / sum(spec_verify_ct)")
    token_weighted_ci95: Interval | None
    histogram: list[int] | None = Field(
        None, description="Verify steps that accepted k drafts, at index k (where the server reports it)"
    )
    position_accept_rate: list[float] | None = Field(
        None, description="Per draft position 1, 2, ...: the share of verify steps that accepted at least that many"
    )
    card: float | None = Field(None, description="The drafter's model card's figure for this dataset, as stated")


class AcceptanceSection(BaseModel):
    model_config = _CONFIG

    config: str = Field(description="The configuration measured (see configs)")
    drafter: str | None = Field(
        default=None,
        description="The drafter that configuration serves (a drafters identity); its card's figures are the ones "
        "set beside these",
    )
    overall: AcceptanceStat = Field(description="Every request pooled; thinking on when both modes were measured")
    categories: list[AcceptanceStat] = Field(description="Per category, and per thinking mode when measured")
    overall_by_thinking: list[AcceptanceStat] = Field(
        default_factory=list, description="The overall figure of each thinking mode (empty: raw text only)"
    )
    prompt_counts: dict[str, int]
    card_label: str | None = Field(
        None, description="What the drafter's model card calls the figures set beside the measured ones (card)"
    )
    method: str = Field(description="Prompt sets, decoding, formula and intervals, in words")
    block_size: int | None
    server_avg_accept_length: float | None
    warning: str | None = Field(description="Set when the acceptance is too low for the drafter to pay off")
    failed_requests: int
    seq: int


class BenchmarkRow(BaseModel):
    """One configuration at one concurrency; several sweeps of the same pair are averaged (`samples`)."""

    model_config = _CONFIG

    config: str
    speculative: bool
    concurrency: int = Field(description="Requested: requests kept in flight")
    achieved_concurrency: float
    output_tok_s: float = Field(description="Aggregate output tokens per second")
    output_tok_s_ci95: Interval | None = Field(
        description="Known when the level reported one or was measured twice or more"
    )
    samples: int = Field(description="Sweeps that measured this configuration at this level")
    requests: int = Field(description="Requests measured: completed, plus those cut when a timed level ended")
    requests_failed: int
    ttft_ms_p50: float | None
    ttft_ms_p90: float | None
    ttft_ms_p99: float | None
    itl_ms_p50: float | None = Field(description="Per token: each chunk gap split over the tokens it carried")
    itl_ms_p90: float | None
    itl_ms_p99: float | None
    tpot_ms_p50: float | None = Field(description="Per request (e2e - ttft) / (tokens - 1)")
    tpot_per_chunk_ms_p50: float | None = Field(
        None, description="Per request (e2e - ttft) / (chunks - 1): a verify step under speculative decoding"
    )
    inter_chunk_gap_ms_p50: float | None = Field(description="Per chunk, as the network sees it")
    e2e_ms_p50: float | None
    tokens_per_chunk: float | None
    accept_length: float | None = Field(
        description="The level's own acceptance length, from counter differences over its requests (not the server's lifetime average)"
    )
    client_limited: bool | None = Field(description="The benchmark client was busy enough to distort the level")
    unstable: bool | None = Field(
        None, description="The level's throughput interval was wider than +-10%: the figure moved while measured"
    )
    seqs: list[int] = Field(description="Transcript seq of each benchmark result that contributed")
    goodput_tok_s: float | None = Field(
        None,
        description="Output tok/s of requests that met the report's goodput_targets (mean over the sweeps judged "
        "against them); the level's steady window as output_tok_s is, requests cut at a timed level's end taken at "
        "the completed ones' good share. None: not measured (no per-request timings) or judged against other targets",
    )
    good_fraction: float | None = Field(
        None, description="Good requests / (completed + failed), pooled over those sweeps; cut requests not judged"
    )
    requests_judged: int | None = Field(
        None,
        description="The requests goodput was judged on (completed + failed, over those sweeps): a timed level that "
        "cuts most of its requests judges few",
    )
    server_running_mean: float | None = Field(
        None, description="Mean requests the server ran (its num_running_reqs gauge, sampled during the level)"
    )
    server_queued_mean: float | None = Field(None, description="Mean requests waiting in the server's queue")
    server_token_usage_max: float | None = Field(
        None, description="Highest share of the KV-cache token pool in use during the level (0-1)"
    )


class GoodputTargetsUsed(BaseModel):
    """The latency targets the benchmark rows' goodput was judged against."""

    model_config = _CONFIG

    ttft_ms: float = Field(description="A good request's time to first token is at most this (modelled time)")
    tpot_ms: float = Field(description="A good request's time per output token after the first is at most this")
    method: str = Field(description="What goodput and the good fraction are, in words")


RequestStatus = Literal["ok", "cut", "failed"]


class RequestRow(BaseModel):
    """One request of one benchmark level: a line of requests.jsonl (not in report.json). Seconds, modelled time."""

    model_config = _CONFIG

    config: str = Field(description="The configuration measured (see configs)")
    concurrency: int = Field(description="The level's requested concurrency")
    seq: int = Field(description="Transcript seq of the benchmark result")
    level_valid: bool = Field(description="False: the server died or hung during the level")
    index: int = Field(description="The request's place in the level, in the order the client issued them")
    start_s: float = Field(description="When it was sent, from the level's first dispatch")
    scheduled_s: float | None = Field(description="Open loop: when it was due; None: a closed-loop level")
    ttft_s: float | None
    e2e_s: float | None = Field(description="To the end of its stream (a cut one: to the cut; failed: to the failure)")
    tpot_s: float | None = Field(description="(e2e - ttft) / (tokens - 1) of a completed request of two tokens or more")
    output_tokens: int | None
    status: RequestStatus = Field(description="ok: the server finished it; cut: the client stopped it; failed")
    good: bool = Field(description="Completed within the goodput targets")
    spec_verify_ct: int | None


class LevelComparison(BaseModel):
    model_config = _CONFIG

    concurrency: int
    best_autoregressive: str | None
    autoregressive_tok_s: float | None
    best_speculative: str | None
    speculative_tok_s: float | None
    speedup: float | None = Field(description="speculative_tok_s / autoregressive_tok_s")
    speedup_ci95: Interval | None = Field(
        description="From the two throughput intervals, when both are known: [spec low / AR high, spec high / AR low]"
    )
    tpot_speedup: float | None = Field(description="Autoregressive TPOT p50 / speculative TPOT p50 (per-token latency)")
    winner: Literal["speculative", "autoregressive", "tie"] | None
    notes: list[str]


class DrafterAtLevel(BaseModel):
    """One side of a head-to-head level: a drafter's fastest configuration there, and how it does against the best
    autoregressive configuration at the same level (as comparison computes it)."""

    model_config = _CONFIG

    drafter: str = Field(description="The drafter (a drafters identity), or a configuration when compare names one")
    config: str = Field(description="Its fastest configuration at this level")
    output_tok_s: float
    output_tok_s_ci95: Interval | None
    vs_autoregressive: float | None = Field(
        description="output_tok_s / the best autoregressive configuration's at this level; None: none measured there"
    )
    vs_autoregressive_ci95: Interval | None
    vs_autoregressive_winner: Literal["speculative", "autoregressive", "tie"] | None = Field(
        description="Against the best autoregressive configuration, by comparison's tie rule"
    )


class HeadToHeadLevel(BaseModel):
    """Two drafters at one concurrency both were measured at, each at its fastest configuration there."""

    model_config = _CONFIG

    concurrency: int
    a: DrafterAtLevel = Field(description="The drafter read first")
    b: DrafterAtLevel = Field(description="The drafter read after it")
    ratio: float | None = Field(description="a.output_tok_s / b.output_tok_s")
    ratio_ci95: Interval | None = Field(
        description="From the two throughput intervals, when both are known: [a low / b high, a high / b low]"
    )
    tpot_ratio: float | None = Field(description="b's TPOT p50 / a's (per-token latency; above 1: a is faster)")
    winner: str | None = Field(
        description="a's or b's drafter, or 'tie' when the ratio's 95% interval includes 1 or cannot be bounded "
        "(comparison's tie rule); None: b measured no output"
    )
    best_autoregressive: str | None = Field(description="The fastest autoregressive configuration at this level")
    autoregressive_tok_s: float | None
    notes: list[str]


class Crossing(BaseModel):
    model_config = _CONFIG

    direction: Literal["stops_paying", "starts_paying"]
    concurrency: float = Field(description="Where the speedup crosses 1, interpolated in log2(concurrency)")
    between: tuple[int, int] = Field(description="The measured levels on either side")


class Crossover(BaseModel):
    model_config = _CONFIG

    kind: Literal["between_levels", "beyond_range", "never_wins", "starts_paying_only", "unknown"] = Field(
        description="between_levels: speculation stops paying between two measured levels; beyond_range: it wins at "
        "every level measured; never_wins: it loses at every level; starts_paying_only: it loses at low load and "
        "wins at high load; unknown: no level has both kinds measured"
    )
    concurrency: float | None = Field(description="Where speculation stops paying, interpolated (between_levels only)")
    between: tuple[int, int] | None
    crossings: list[Crossing] = Field(description="Every change of winner, in concurrency order")
    added_levels: list[int] = Field(
        default_factory=list,
        description="Levels measured only to bracket a change of winner within a factor of 2, on the fastest "
        "configuration of each kind",
    )
    statement: str
    method: str


class LoadBand(BaseModel):
    model_config = _CONFIG

    min_concurrency: int
    max_concurrency: int
    config: str = Field(description="The fastest configuration measured at every level of the band")
    speculative: bool
    output_tok_s: tuple[float, float] = Field(description="Its throughput at the band's lowest and highest level")
    runner_up: str | None = Field(description="The best configuration of the other kind at these levels")
    margin: tuple[float, float] | None = Field(
        description="Its throughput / the runner-up's, lowest and highest over the band"
    )


class Recommendation(BaseModel):
    model_config = _CONFIG

    bands: list[LoadBand]
    single_config: str | None = Field(
        description="If one server must cover every measured load: the configuration whose worst ratio to the "
        "per-level best is highest (among those measured at every level)"
    )
    single_config_worst_ratio: float | None
    text: str = Field(description="Derived from the comparison")
    policy_text: str | None = Field(description="The policy's own recommendation, in its words")


class Failure(BaseModel):
    model_config = _CONFIG

    seq: int
    tool: str
    kind: str = Field(description="The error kind, or a download's failure cause, or does_not_fit for a disk check")
    cause: str | None = Field(description="launch_failed's cause (cuda_graph_failure, out_of_memory, ...)")
    what: str
    remedy: str | None
    next_action: str | None = Field(description="The next tool call the run made, with its arguments in short")
    recovered_by: str | None = Field(description="The later call that succeeded where this failed, and what it changed")
    recovered_seq: int | None
    status: Literal["recovered", "unresolved"]


class TodoTime(BaseModel):
    model_config = _CONFIG

    id: str
    content: str
    final_status: str
    in_progress_s: float = Field(description="Seconds the item was in progress (all its spells together)")
    tool_calls: int = Field(description="Tool calls made while it was in progress")
    tool_s: float
    host_s: float | None = Field(
        default=None,
        description="Seconds on the host's own clock of the host calls made while it was in progress (0 when none "
        "reached the host); None: unknown (the transcript records no host times, or a call's could not be read)",
    )
    gpu_hours: float | None = Field(
        default=None, description="host_s x the GPUs the job held (Timing.host.gpu_count) / 3600; None: unknown"
    )


class ToolTime(BaseModel):
    model_config = _CONFIG

    tool: str
    calls: int
    failed: int
    total_s: float
    max_s: float
    host_s: float | None = Field(
        default=None,
        description="Its calls' seconds on the host's own clock; None: not a host tool (todowrite, compare), or "
        "not recorded",
    )


class HostTimeSection(BaseModel):
    """What the job cost on its host, on the host's own clock (the modelled host's seconds on a simulated host, wall
    time on a real one); agent/report/host_time.py says what counts."""

    model_config = _CONFIG

    host_s: float | None = Field(
        default=None,
        description="Seconds the job held the host: from its first host call's start to its last one's end, on the "
        "host's clock, summed over the run's sessions (a resumed run's time while it was down is not counted); "
        "None: unknown",
    )
    tool_s: float | None = Field(
        default=None, description="Of host_s, the seconds a host call was running; None: unknown"
    )
    gpu_count: int | None = Field(
        default=None, description="GPUs the job held: the host's, or every node's of a host group; None: not read"
    )
    gpu_hours: float | None = Field(
        default=None, description="host_s x gpu_count / 3600; None: host_s or gpu_count unknown"
    )
    timed_calls: int = Field(default=0, description="Host calls whose start and end were read on the host's clock")
    untimed_calls: int = Field(
        default=0,
        description="Host calls without both readings (the clock could not be read, or the transcript is from before "
        "they were recorded): left out of every figure here",
    )
    sessions: int = Field(default=0, description="Times the run opened its host (1, or more after a resume)")
    unknown_reason: str | None = Field(default=None, description="Why host_s is unknown; None when it is known")


class MeasuredBy(BaseModel):
    """A configuration's benchmark, and when in the job (on the host's clock) its last sweep ended."""

    model_config = _CONFIG

    config: str
    levels: list[int] = Field(description="The concurrency levels measured on it")
    host_s: float = Field(description="Host seconds from the job's first host call to the end of its last sweep")


class SmallerBudget(BaseModel):
    model_config = _CONFIG

    budget_s: float
    kept: list[str] = Field(description="Configurations whose measurement had ended by then")


class BudgetSection(BaseModel):
    """The job's host-time budget (--budget), what the job measured within it and what it left out; without a
    budget, what smaller budgets would have kept in this run's order."""

    model_config = _CONFIG

    budget_s: float | None = Field(default=None, description="--budget in host seconds; None: the job had none")
    used_s: float | None = Field(default=None, description="The job's host seconds (timing.host.host_s)")
    measured: list[MeasuredBy] = Field(
        default_factory=list, description="Each benchmarked configuration, in the order its measurement ended"
    )
    left_out: list[str] = Field(
        default_factory=list, description="What the policy left out for the budget, with each one's expected cost"
    )
    smaller: list[SmallerBudget] = Field(
        default_factory=list,
        description="Budgets below what the job used, and the configurations measured by then in this run's order",
    )


class Timing(BaseModel):
    model_config = _CONFIG

    todos: list[TodoTime]
    tools: list[ToolTime]
    tool_total_s: float
    model_total_s: float = Field(description="Time spent waiting on the policy's responses")
    host: HostTimeSection = Field(
        default_factory=HostTimeSection,
        description="The job's cost on the host's clock and in GPU-hours; tool_total_s and model_total_s are this "
        "machine's seconds",
    )
    budget: BudgetSection = Field(
        default_factory=BudgetSection, description="The host-time budget and what it kept and left out"
    )


class ProcessNote(BaseModel):
    model_config = _CONFIG

    role: str = Field(description="'rank 1' (a server across nodes) or 'replica 0' (behind a gateway)")
    host: str
    pid: int


class RunningServerNote(BaseModel):
    model_config = _CONFIG

    config: str
    port: int
    pid: int
    processes: list[ProcessNote] = Field(
        default_factory=list,
        description="Its other processes: each other rank's (a server across nodes), or each replica's (behind a "
        "gateway, which is `pid`)",
    )


class LeftRunning(BaseModel):
    model_config = _CONFIG

    servers: list[RunningServerNote] = Field(
        description="Servers this run launched and never stopped (from the evidence)"
    )
    downloads: list[str] = Field(description="Downloads last seen running")
    policy_text: list[str] = Field(description="What the policy says it left running, and why")


class Flag(BaseModel):
    model_config = _CONFIG

    source: Literal["summary", "recommendation", "left_running", "unresolved", "status"]
    claim: str = Field(description="The policy's words")
    evidence: str = Field(description="What the recorded results say instead")
    kind: Literal["contradicted", "unsupported"]


class CritiqueAnswers(BaseModel):
    """The seed's critique, answered: was the baseline the best one, is the method stated, is the advice per load."""

    model_config = _CONFIG

    baseline: str
    acceptance_method: str
    recommendation_per_load: str


class ShapeFigure(BaseModel):
    model_config = _CONFIG

    config: str
    output_tok_s: float
    gpus: int = Field(description="GPUs the deployment holds (every replica's)")
    tok_s_per_gpu: float


class ShapeComparison(BaseModel):
    """At one level: the fastest one-server configuration against the fastest replicas behind the gateway."""

    model_config = _CONFIG

    concurrency: int
    one_server: ShapeFigure = Field(description="One server (across the nodes, or on one)")
    replicas: ShapeFigure = Field(description="Replicas behind SGLang's Model Gateway")
    faster: Literal["one_server", "replicas"] = Field(description="In total output tok/s")
    faster_per_gpu: Literal["one_server", "replicas"]


class ParetoPoint(BaseModel):
    """One configuration at one level on the throughput/interactivity plane."""

    model_config = _CONFIG

    config: str
    concurrency: int
    speculative: bool
    gpus: int = Field(description="GPUs the server holds")
    tok_s_per_gpu: float = Field(description="Aggregate output tok/s over the server's GPUs")
    tok_s_per_user: float = Field(description="Aggregate output tok/s over the requests in flight")
    on_frontier: bool = Field(description="No point of its kind (speculative or not) is better on both axes")


class TuningLevel(BaseModel):
    model_config = _CONFIG

    concurrency: int
    defaults_config: str = Field(description="The fastest configuration at SGLang's default speculative settings")
    defaults_tok_s: float
    best_config: str = Field(description="The fastest speculative configuration of any setting")
    best_tok_s: float
    gain: float = Field(description="best_tok_s / defaults_tok_s - 1: what tuning gained at this level")


class TuningSection(BaseModel):
    """What measuring other speculative settings gained over SGLang's defaults, per concurrency."""

    model_config = _CONFIG

    algorithm: str
    tuned: list[str] = Field(description="Configurations measured at settings other than SGLang's defaults")
    levels: list[TuningLevel]


class Report(BaseModel):
    model_config = _CONFIG

    schema_version: Literal["1"] = REPORT_SCHEMA_VERSION
    run: RunSection
    host: HostSection
    drafter: DrafterSection | None = Field(
        description="The drafter whose config was read last (the only one, in most runs); drafters lists every one"
    )
    drafters: list[DrafterSection] = Field(
        default_factory=list,
        description="Every drafter this run read a config of (or had refused), one per drafter, in the order first read",
    )
    configs: list[ConfigTried]
    acceptance: AcceptanceSection | None = Field(
        description="The last acceptance eval; all of them are in acceptance_runs"
    )
    acceptance_runs: list[AcceptanceSection]
    benchmarks: list[BenchmarkRow]
    comparison: list[LevelComparison]
    head_to_head: list[HeadToHeadLevel] = Field(
        default_factory=list,
        description="Two or more drafters benchmarked: per pair (a read before b) and per level both were measured at, "
        "each one's fastest configuration against the other's; empty otherwise",
    )
    crossover: Crossover
    recommendation: Recommendation
    pareto: list[ParetoPoint] = Field(
        default_factory=list, description="Every measured level on the tok/s-per-GPU against tok/s-per-user plane"
    )
    shapes: list[ShapeComparison] = Field(
        default_factory=list,
        description="A host group: one server against replicas behind the gateway, per level where both ran",
    )
    tuning: TuningSection | None = Field(
        default=None, description="None: no setting other than SGLang's defaults was measured"
    )
    failures: list[Failure]
    timing: Timing
    left_running: LeftRunning
    unresolved_text: list[str] = Field(description="What the policy says it could not resolve")
    flags: list[Flag] = Field(description="The policy's claims that the evidence contradicts or does not support")
    critique: CritiqueAnswers
    notes: list[str] = Field(description="Evidence that could not be read, and other caveats")
    goodput_targets: GoodputTargetsUsed | None = Field(
        default=None, description="The targets the benchmark rows' goodput was judged against; None: none judged"
    )
    requests: list[RequestRow] = Field(
        default_factory=list,
        exclude=True,
        description="Every benchmarked request; written to requests.jsonl, left out of report.json",
    )
