"""report.md: the report for a person, every section of report.json as text and tables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from specops.agent.durations import duration_words
from specops.agent.loop_tools import LOOP_TOOLS

from .budget import budget_markdown, budget_sentence
from .deletions import describe as describe_deletion
from .goodput import goodput_markdown
from .host_time import gpu_hours_words, host_time_sentence
from .naming import acceptance_rows, stat_label
from .schema import AcceptanceSection, AcceptanceStat, DrafterAtLevel, DrafterSection, Interval, Report


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _interval(interval: Interval | None, digits: int = 2) -> str:
    return "-" if interval is None else f"{interval[0]:.{digits}f}-{interval[1]:.{digits}f}"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines + [""]


def _run(report: Report) -> list[str]:
    r = report.run
    lines = [f"# specops run {r.id}", ""]
    if r.goal:
        lines += [f"> {r.goal}", ""]
    lines += _table(
        ["status", "policy", "policy's status", "started", "ended", "duration (s)"],
        [[r.status, r.policy, r.policy_status, r.started_at, r.ended_at, r.duration_s]],
    )
    lines += [f"**Host time:** {host_time_sentence(report.timing.host)}.", ""]
    budget = budget_sentence(report.timing.budget)
    lines += [f"**Budget:** {budget}.", ""] if budget else []
    if r.summary_text:
        lines += ["**Summary (the policy's words):** " + r.summary_text, ""]
    if report.flags:
        lines += [f"**{len(report.flags)} claim(s) in the policy's answer do not match the evidence** (see Flags).", ""]
    if r.deletions:
        lines += ["**Deleted on the host:**", ""] + [f"- {describe_deletion(d)}" for d in r.deletions] + [""]
    return lines


def _critique(report: Report) -> list[str]:
    c = report.critique
    return [
        "## Answers to the seed's critique",
        "",
        f"- **Baseline.** {c.baseline}",
        f"- **Acceptance method.** {c.acceptance_method}",
        f"- **Recommendation per load.** {c.recommendation_per_load}",
        f"- **Crossover.** {report.crossover.statement}.",
        "",
    ]


def _host(report: Report) -> list[str]:
    h, v = report.host, report.host.versions
    gpus = f"{h.gpu_count} x {h.gpu_model}" if h.gpu_count else "none found"
    memory = f"{h.gpu_memory_total_bytes / 1024**3:.0f} GiB GPU memory in all" if h.gpu_memory_total_bytes else None
    lines = ["## Host", ""]
    lines += _table(
        ["", ""],
        [
            ["spec", h.spec],
            ["hostname", h.hostname],
            ["OS", h.os],
            ["GPUs", gpus],
            ["GPU memory", memory],
            ["interconnect", f"{h.interconnect}: {h.interconnect_summary}" if h.interconnect else None],
            ["CPU", f"{h.cpu} ({h.cpu_cores} cores)" if h.cpu else None],
            ["memory", h.memory_total],
            ["SGLang", v.sglang],
            ["Python", v.python],
            ["huggingface_hub", v.huggingface_hub],
            ["driver", f"{v.driver} (CUDA {v.cuda})" if v.driver else None],
            ["read from", h.source],
        ],
    )
    return lines


def _drafter(report: Report) -> list[str]:
    if len(report.drafters) > 1:
        return _drafters(report)
    d = report.drafter
    if d is None:
        return ["## Drafter", "", "No drafter config was read in this run.", ""]
    return ["## Drafter", "", *_drafter_facts(d)]


def _drafter_facts(d: DrafterSection) -> list[str]:
    compatible = {True: "yes", False: "NO", None: "not checked"}[d.target_compatible]
    lines = _table(
        ["", ""],
        [
            ["repo", d.repo_id],
            ["revision", f"{d.revision} ({d.sha})" if d.sha else d.revision],
            ["on the host", d.path],
            ["algorithm", d.algorithm or ("DFLASH" if d.is_dflash else None)],
            ["SGLang defaults", d.sglang_defaults],
            ["block size", f"{d.block_size} (from {d.block_size_from})" if d.block_size else None],
            ["served draft tokens", d.served_block_size],
            ["draft layers", d.draft_layers],
            ["target layer ids", d.target_layer_ids],
            ["target", d.target],
            ["fits the target", compatible],
        ],
    )
    lines += [f"- checked: {c}" for c in d.checks] + [f"- problem: {p}" for p in d.problems]
    return lines + ([""] if d.checks or d.problems else [])


def _drafters(report: Report) -> list[str]:
    """Several drafters: each one's facts, its card beside what was measured on it, the configurations serving it."""
    lines = ["## Drafters", "", f"{len(report.drafters)} drafters were read, in this order.", ""]
    for d in report.drafters:
        lines += [f"### {d.identity}", "", *_drafter_facts(d)]
        served = ", ".join(d.configs) if d.configs else "none benchmarked"
        lines += [f"Configurations that served it: {served}.", ""]
        lines += _card_beside_measured(d, [a for a in report.acceptance_runs if a.drafter == d.identity])
    return lines


def _card_beside_measured(d: DrafterSection, measured: list[AcceptanceSection]) -> list[str]:
    """What was measured on the drafter, and its own card's figures beside it dataset by dataset."""
    lines = [
        f"Acceptance measured on it: {'; '.join(_overall(a) for a in measured) if measured else 'none'}.",
        "",
    ]
    card = d.card
    if card is None:
        return lines + ["Its model card states no acceptance figure.", ""]
    rows: list[list[object]] = [
        [stat_label(s), card.figures[s.category], s.token_weighted, _interval(s.token_weighted_ci95), a.config]
        for a in measured
        for s in a.categories
        if s.category in card.figures
    ]
    seen = {s.category for a in measured for s in a.categories}
    rows += [[dataset, figure, None, None, None] for dataset, figure in card.figures.items() if dataset not in seen]
    lines += [f"Its model card states {card.label!r}; beside it, what was measured on it (token weighted):", ""]
    return lines + _table(["dataset", "model card", "measured", "95%", "on"], rows)


def _overall(a: AcceptanceSection) -> str:
    return f"{a.overall.token_weighted:.2f} overall on {a.config} (token weighted, {a.overall.prompts} prompts)"


def _configs(report: Report) -> list[str]:
    lines = ["## Configurations tried", ""]
    if not report.configs:
        return lines + ["No server was launched.", ""]
    return lines + _table(
        ["config", "speculative", "launched", "failure cause", "ready after (s)", "what happened"],
        [[c.name, c.speculative, c.launched, c.failure_cause, c.ready_after_s, c.failure] for c in report.configs],
    )


def _throughput(report: Report) -> list[str]:
    rows = report.benchmarks
    lines = ["## Throughput (output tok/s) per concurrency", ""]
    if not rows:
        return lines + ["Nothing was benchmarked.", ""]
    levels = sorted({r.concurrency for r in rows})
    configs = list(dict.fromkeys(r.config for r in rows))
    table = {(r.config, r.concurrency): r.output_tok_s for r in rows}
    lines += _table(
        ["config"] + [f"C={c}" for c in levels],
        [
            [c + (" (spec)" if any(r.speculative for r in rows if r.config == c) else "")]
            + [table.get((c, level)) for level in levels]
            for c in configs
        ],
    )
    lines += ["![throughput](throughput.png)", "", "### Every level", ""]
    lines += _table(
        [
            "config",
            "C",
            "achieved C",
            "tok/s",
            "tok/s 95%",
            "TTFT p50 ms",
            "TTFT p99 ms",
            "ITL/token p50 ms",
            "TPOT p50 ms",
            "TPOT/chunk p50 ms",
            "chunk gap p50 ms",
            "tokens/chunk",
            "accept len",
            "requests",
            "failed",
            "client-bound",
            "unstable",
        ],
        [
            [
                r.config,
                r.concurrency,
                r.achieved_concurrency,
                r.output_tok_s,
                _interval(r.output_tok_s_ci95, 1),
                r.ttft_ms_p50,
                r.ttft_ms_p99,
                r.itl_ms_p50,
                r.tpot_ms_p50,
                r.tpot_per_chunk_ms_p50,
                r.inter_chunk_gap_ms_p50,
                r.tokens_per_chunk,
                r.accept_length,
                r.requests,
                r.requests_failed,
                r.client_limited,
                r.unstable,
            ]
            for r in rows
        ],
    )
    return lines


def _comparison(report: Report) -> list[str]:
    lines = ["## Speculative vs the best autoregressive configuration, per concurrency", ""]
    if not report.comparison:
        return lines + ["Nothing to compare.", ""]
    lines += _table(
        [
            "C",
            "best autoregressive",
            "tok/s",
            "best speculative",
            "tok/s",
            "speedup",
            "speedup 95%",
            "TPOT ratio",
            "winner",
            "notes",
        ],
        [
            [
                c.concurrency,
                c.best_autoregressive,
                c.autoregressive_tok_s,
                c.best_speculative,
                c.speculative_tok_s,
                f"{c.speedup:.2f}x" if c.speedup is not None else None,
                _interval(c.speedup_ci95),
                f"{c.tpot_speedup:.2f}x" if c.tpot_speedup is not None else None,
                c.winner,
                "; ".join(c.notes),
            ]
            for c in report.comparison
        ],
    )
    return lines + [f"**Crossover:** {report.crossover.statement}.", "", f"_{report.crossover.method}_", ""]


def _head_to_head(report: Report) -> list[str]:
    if not report.head_to_head:
        return []
    lines = [
        "## Head to head",
        "",
        "Each drafter at its fastest configuration per level; a level is a tie when the ratio's 95% interval "
        "includes 1 (or cannot be bounded). Each one's speedup is over the best autoregressive configuration there.",
        "",
    ]
    pairs = list(dict.fromkeys((h.a.drafter, h.b.drafter) for h in report.head_to_head))
    for a, b in pairs:
        lines += [f"### {a} against {b}", ""]
        lines += _table(
            ["C", "A's best", "tok/s", "B's best", "tok/s", "A/B", "A/B 95%", "winner", "A vs AR", "B vs AR", "notes"],
            [
                [
                    h.concurrency,
                    h.a.config,
                    h.a.output_tok_s,
                    h.b.config,
                    h.b.output_tok_s,
                    f"{h.ratio:.2f}x" if h.ratio is not None else None,
                    _interval(h.ratio_ci95),
                    h.winner,
                    _against(h.a),
                    _against(h.b),
                    "; ".join(h.notes),
                ]
                for h in report.head_to_head
                if (h.a.drafter, h.b.drafter) == (a, b)
            ],
        )
        lines += [f"A: {a}; B: {b}; AR: the best autoregressive configuration at the level.", ""]
    return lines


def _against(side: DrafterAtLevel) -> str | None:
    if side.vs_autoregressive is None:
        return None
    spread = f" ({_interval(side.vs_autoregressive_ci95)})" if side.vs_autoregressive_ci95 else ""
    return f"{side.vs_autoregressive:.2f}x{spread}"


def _recommendation(report: Report) -> list[str]:
    rec = report.recommendation
    lines = ["## Recommendation", "", rec.text, ""]
    if rec.bands:
        lines += _table(
            ["load", "serve", "speculative", "tok/s", "runner-up (other kind)", "margin"],
            [
                [
                    f"C={b.min_concurrency}..{b.max_concurrency}",
                    b.config,
                    b.speculative,
                    f"{b.output_tok_s[0]:.0f}-{b.output_tok_s[1]:.0f}",
                    b.runner_up,
                    f"{b.margin[0]:.2f}-{b.margin[1]:.2f}x" if b.margin else None,
                ]
                for b in rec.bands
            ],
        )
    if rec.policy_text:
        lines += [f"The policy's recommendation, in its words: {rec.policy_text}", ""]
    return lines


def _tuning(report: Report) -> list[str]:
    tuning = report.tuning
    if tuning is None:
        return []
    lines = [
        "## Tuning against SGLang's default settings",
        "",
        f"{tuning.algorithm} at settings other than SGLang's defaults: {', '.join(tuning.tuned)}.",
        "",
    ]
    lines += _table(
        ["concurrency", "at SGLang's defaults", "tok/s", "fastest of any setting", "tok/s", "gain"],
        [
            [f"C={t.concurrency}", t.defaults_config, t.defaults_tok_s, t.best_config, t.best_tok_s, f"{t.gain:+.0%}"]
            for t in tuning.levels
        ],
    )
    return lines


def _stat_row(s: AcceptanceStat) -> list[object]:
    return [
        stat_label(s),
        s.prompt_set,
        s.prompts,
        s.request_mean,
        _interval(s.request_mean_ci95),
        s.token_weighted,
        _interval(s.token_weighted_ci95),
    ]


def _positions(stats: list[AcceptanceStat]) -> list[str]:
    """Per draft position, the share of verify steps accepting at least that many drafts, for each overall figure."""
    lines = [
        f"- {stat_label(s)}: " + ", ".join(f"{k}: {rate:.0%}" for k, rate in enumerate(s.position_accept_rate, 1))
        for s in stats
        if s.position_accept_rate
    ]
    if not lines:
        return []
    return ["Per draft position, the share of verify steps that accepted at least that many drafts:", "", *lines, ""]


def _acceptance(report: Report) -> list[str]:
    lines = ["## Acceptance length", ""]
    if not report.acceptance_runs:
        return lines + ["No acceptance eval was run.", ""]
    several = len(report.drafters) > 1
    for a in report.acceptance_runs:
        block = f"block size {a.block_size if a.block_size is not None else 'unknown'}"
        lines += [f"### On {a.config} ({f'{a.drafter}, ' if several and a.drafter else ''}{block})", ""]
        stats = acceptance_rows(a)
        carded = a.card_label is not None
        lines += _table(
            ["dataset", "prompt set", "prompts", "request mean", "95%", "token weighted", "95%"]
            + (["model card"] if carded else []),
            [_stat_row(s) + ([s.card] if carded else []) for s in stats],
        )
        if carded:
            lines += [f"Model card: the drafter's card states {a.card_label!r} per dataset (its own settings).", ""]
        lines += _positions([s for s in stats if s.category == "overall"])
        lines += [f"Method: {a.method}", ""]
        if a.server_avg_accept_length is not None:
            lines += [f"The server's own running average: {a.server_avg_accept_length:.2f}.", ""]
        if a.failed_requests:
            lines += [f"{a.failed_requests} eval requests failed and are not counted.", ""]
        if a.warning:
            lines += [f"**Warning:** {a.warning}", ""]
    if report.acceptance is not None:
        lines += ["![acceptance](acceptance.png)", ""]
    return lines


def _failures(report: Report) -> list[str]:
    lines = ["## Failures and how they were handled", ""]
    if not report.failures:
        return lines + ["No tool call failed.", ""]
    return lines + _table(
        ["seq", "tool", "kind", "cause", "what", "next action", "recovered by", "status"],
        [[f.seq, f.tool, f.kind, f.cause, f.what, f.next_action, f.recovered_by, f.status] for f in report.failures],
    )


def _timing(report: Report) -> list[str]:
    t = report.timing
    lines = ["## Time spent", "", _host_time(report), "", *budget_markdown(report.timing.budget)]
    lines += [
        f"This machine's seconds: tools {t.tool_total_s:.1f} s in all; waiting on the policy {t.model_total_s:.1f} s.",
        "",
    ]

    def host(value: float | None, *, reached_host: bool = True) -> object:  # "-": the loop's own tool
        return value if value is not None else "unknown" if reached_host else None

    def gpu_h(value: float | None) -> object:  # small figures keep their digits (0.002, not 0.00)
        return gpu_hours_words(value) if value is not None else "unknown"

    if t.todos:
        lines += _table(
            ["todo", "status", "in progress (s)", "tool calls", "tool time (s)", "host (s)", "GPU-hours"],
            [
                [
                    f"{i.id}. {i.content}",
                    i.final_status,
                    i.in_progress_s,
                    i.tool_calls,
                    i.tool_s,
                    host(i.host_s),
                    gpu_h(i.gpu_hours),
                ]
                for i in t.todos
            ],
        )
    if t.tools:
        lines += _table(
            ["tool", "calls", "failed", "total (s)", "longest (s)", "host (s)"],
            [
                [x.tool, x.calls, x.failed, x.total_s, x.max_s, host(x.host_s, reached_host=x.tool not in LOOP_TOOLS)]
                for x in t.tools
            ],
        )
    return lines


def _host_time(report: Report) -> str:
    """The job's cost on the host's clock, and what counts in it."""
    h = report.timing.host
    said = host_time_sentence(h)
    said = said[0].upper() + said[1:]
    if h.host_s is None or h.tool_s is None:
        return f"{said}."
    return (
        f"{said}. On the host's own clock (on a simulated host, the modelled host's seconds), the whole host is "
        "counted as held from the first host call's start to the last one's end; host calls ran "
        f"{duration_words(h.tool_s)} of it, the rest is the policy deciding between calls. GPU-hours are that time x "
        "every GPU the job held. A todo's host seconds are its own calls' (time between calls belongs to none)."
    )


def _left(report: Report) -> list[str]:
    left = report.left_running
    lines = ["## Left running", ""]
    if not left.servers and not left.downloads:
        lines += ["Nothing this run started is still running.", ""]
    lines += [
        f"- server {s.config} on port {s.port} (pid {s.pid}"
        + "".join(f"; {p.role} on {p.host}: pid {p.pid}" for p in s.processes)
        + ")"
        for s in left.servers
    ]
    lines += [f"- download {d}" for d in left.downloads]
    lines += [f"- the policy says: {t}" for t in left.policy_text]
    if report.unresolved_text:
        lines += ["", "### Unresolved (the policy's words)", ""] + [f"- {u}" for u in report.unresolved_text]
    return lines + [""]


def _flags_and_notes(report: Report) -> list[str]:
    lines = []
    if report.flags:
        lines += ["## Flags: claims the evidence does not bear out", ""]
        lines += _table(
            ["from", "claim", "kind", "evidence"], [[f.source, f.claim, f.kind, f.evidence] for f in report.flags]
        )
    if report.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in report.notes] + [""]
    return lines


def _pareto(report: Report) -> list[str]:
    if not report.pareto:
        return []
    lines = [
        "## Throughput per GPU against speed per user",
        "",
        "Each kind's frontier: no other measured level of that kind is faster per GPU and per user at once.",
        "",
    ]
    edge = sorted((p for p in report.pareto if p.on_frontier), key=lambda p: (p.speculative, -p.tok_s_per_user))
    lines += _table(
        ["configuration", "C", "speculative", "GPUs", "tok/s per user", "tok/s per GPU"],
        [
            [p.config, p.concurrency, p.speculative, p.gpus, f"{p.tok_s_per_user:.1f}", f"{p.tok_s_per_gpu:.1f}"]
            for p in edge
        ],
    )
    return lines


def _shapes(report: Report) -> list[str]:
    if not report.shapes:
        return []
    words = {"one_server": "one server", "replicas": "replicas"}
    lines = [
        "## One server or replicas behind the gateway",
        "",
        "The fastest configuration of each shape at each level where both ran, in total and per GPU.",
        "",
    ]
    lines += _table(
        ["C", "one server", "tok/s", "per GPU", "replicas", "tok/s", "per GPU", "faster", "faster per GPU"],
        [
            [
                s.concurrency,
                s.one_server.config,
                f"{s.one_server.output_tok_s:.1f}",
                f"{s.one_server.tok_s_per_gpu:.1f}",
                s.replicas.config,
                f"{s.replicas.output_tok_s:.1f}",
                f"{s.replicas.tok_s_per_gpu:.1f}",
                words[s.faster],
                words[s.faster_per_gpu],
            ]
            for s in report.shapes
        ],
    )
    return lines


def render_markdown(report: Report, *, latency_plot: bool = False, pareto_plot: bool = False) -> str:
    lines: list[str] = []
    for part in (
        _run,
        _critique,
        _host,
        _drafter,
        _configs,
        _throughput,
        goodput_markdown,
        _comparison,
        _head_to_head,
        _recommendation,
        _pareto,
        _shapes,
        _tuning,
        _acceptance,
        _failures,
        _timing,
        _left,
        _flags_and_notes,
    ):
        lines += part(report)
        if part is _throughput and latency_plot:
            lines += ["![latency](latency.png)", ""]
        if part is _pareto and pareto_plot:
            lines += ["![pareto](pareto.png)", ""]
    return "\n".join(lines).rstrip() + "\n"
