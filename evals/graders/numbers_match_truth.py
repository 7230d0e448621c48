"""Reported acceptance and throughput match the profile's truth, and the policy invented no figure.

The simulator knows the truth: the profile's curve for the configuration a server
was launched with (chosen as the serving simulator chooses it), and its accept
lengths. Each report row (a configuration at a concurrency, from the tools'
results) is compared with it; a level where requests failed or no token came
back is left out (the server died or hung under load). The median error over the
levels must be within the tolerance and the worst level within twice it, except a
level measured under the truth where the benchmark tool flagged its own client as
busy (a shared machine): a busy client measures less, never more. Acceptance is
compared with the profile's accept lengths of the eval's categories' prompt kinds,
token-weighted and lowered for answers that end at EOS (see eos_truncated; the
mean over kinds where a category's kind is unknown), and each speculative benchmark level's own acceptance with what
that level should measure (sim/serving/truth.py level_accept_length) within 0.05,
or four standard errors where a short level's few requests are noisier. The report's flags are the policy's own figures that
the evidence contradicts or does not support: any flag on a figure fails too.

A speculative level's throughput truth is the step rate the profile gives at its
concurrency times the tokens per verify step that level's own requests got. Each
request accepts per its own tau (spread 0.35 around chat's 3.55: 10%), so a level
of one request at a time, or of 32, gains several per cent off the mean, which is
what the simulator serves and what the benchmark must measure. The simulator
seeds each greedy request's draws from its seed and prompt, so the grader replays
them (truth.replayed_verify_steps) for the prompts the benchmark client sent
(random ids: its own rule, from the call's seed and the level's place in the
sweep) up to the tokens each request streamed: the level's decode tokens over
those steps. The replay checks itself against the verify steps the server
reported for the level's finished requests; where it cannot be made (text
prompts, sampling, no per-request record, a mismatch: another server seed) the
truth is the kind's mean acceptance. Only the acceptance comes from the level:
the step rate is the profile's, so a throughput measured off it still fails.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

from pydantic import ValidationError

from specops.agent.report.schema import BenchmarkRow, ConfigTried, Report
from specops.sim.faults import CudaGraphDrafter
from specops.sim.profiles.schema import Profile, PromptKind, ServingSpec
from specops.sim.serving.performance import (
    Launch,
    PerformanceModel,
    build_performance_model,
    default_random_seed,
    ids_prompt_text,
)
from specops.sim.serving.truth import level_accept_length, modelled_tok_s, replayed_verify_steps
from specops.tools.acceptance import AcceptanceResult, CategoryAcceptance
from specops.tools.benchmark import stream_client
from specops.tools.benchmark.models import BenchmarkArgs, BenchmarkResult, LevelResult
from specops.tools.benchmark.sweep import prompt_config
from specops.tools.sglang.config import EAGLE_FAMILY
from specops.transcripts.pairs import ToolPair

from ..evidence import RunEvidence
from ..sim_host import host_profile, scenario_faults
from ._base import Grader, Verdict

# One outlier level may stray twice as far as the tolerance (a busy shared machine); the median may not.
OUTLIER_FACTOR = 2.0
# A benchmark level's own acceptance (counter differences over its requests) against the truth of that level.
LEVEL_ACCEPTANCE_TOLERANCE = 0.05
# The prompt kind (sim/serving/prompt_kind.py) of each acceptance category's prompts: the simulator classifies
# each prompt by its words, and a dataset's prompts are its kind (the word problems of gsm8k read as math).
CATEGORY_KIND: dict[str, PromptKind] = {
    "gsm8k": "math",
    "math500": "math",
    "math": "math",
    "humaneval": "code",
    "mbpp": "code",
    "code": "code",
    "mt-bench": "chat",
    "chat": "chat",
}


def eos_truncated(mean_accept: float, completion_tokens: int | None, answers: int | None) -> float:
    """The token-weighted acceptance a server of true mean `mean_accept` shows on answers that end at a natural EOS.

    An answer's last verify step is cut short by the EOS (it delivers, on average, half a step's tokens), so each
    answer costs about half a verify step more than its tokens / mean_accept: measured = T / (T / a + N / 2) for
    T completion tokens over N answers. With the playbook's short answers (about 165 tokens, a = 3.8) that is
    ~0.05 below the profile's mean, a real effect of how acceptance is measured, not an error of the tool; the
    rest of the gap to the mean is the prompt mix and sampling, which the tolerance covers.
    """
    if not completion_tokens or not answers or mean_accept <= 0:
        return mean_accept
    return completion_tokens / (completion_tokens / mean_accept + answers / 2)


@dataclass(frozen=True)
class BenchmarkSweep:
    """One benchmark call: what it asked and what it measured."""

    args: BenchmarkArgs
    result: BenchmarkResult

    def level(self, concurrency: int) -> tuple[int, LevelResult] | None:
        """The level at `concurrency` and its place in the sweep (what the client's prompts are drawn from)."""
        if self.args.rates:
            return None
        for level in self.result.levels:
            if level.concurrency == concurrency and concurrency in self.args.levels:
                return self.args.levels.index(concurrency), level
        return None

    def prompt_ids(self, level_index: int, index: int) -> list[int] | None:
        """The token ids the benchmark client sent as the level's `index`-th request (its own rule); None: text."""
        prompts, _ = prompt_config(self.args)
        if prompts.get("kind") != "random_ids":
            return None
        client = cast(Any, SimpleNamespace(config={"prompts": prompts}))
        ids = stream_client.Client.prompt(client, level_index, index)
        return ids if isinstance(ids, list) else None


def benchmark_sweeps(steps: Iterable[ToolPair]) -> dict[int, BenchmarkSweep]:
    """Each benchmark call that gave a result, by its result's transcript seq (what report rows cite)."""
    sweeps: dict[int, BenchmarkSweep] = {}
    for step in steps:
        if step.tool != "benchmark" or step.result is None:
            continue
        result = step.result_as(BenchmarkResult)
        try:
            args = BenchmarkArgs.model_validate(step.call.args)
        except ValidationError:
            continue
        if result is not None:
            sweeps[step.result.seq] = BenchmarkSweep(args, result)
    return sweeps


@dataclass(frozen=True)
class Truth:
    """What the simulated host should measure: its profile (read once) and whether a drafter's graphs collapse."""

    profile: Profile
    graphs_collapse: bool  # a CudaGraphDrafter fault in collapse mode

    @classmethod
    def of(cls, profile_name: str, faults: list[str]) -> Truth:
        """A host profile's truth, or a cluster profile's (its node profile, its faults on any node)."""
        graph_fault = next((f for f in scenario_faults(profile_name, faults) if isinstance(f, CudaGraphDrafter)), None)
        return cls(host_profile(profile_name), graph_fault is not None and graph_fault.mode == "collapse")

    @property
    def serving(self) -> ServingSpec:
        """The primary target's spec."""
        return self.profile.serving

    def serving_of(self, config: ConfigTried) -> ServingSpec:
        """The spec of the target `config` loaded: the profile's model laid down where its path ends (a sim host's
        paths lie under the world's root), else the primary target (as the simulator picks it)."""
        path = (config.model_path or "").rstrip("/")
        for model in self.profile.models:
            if path.endswith("/" + model.path.strip("/")):
                return self.profile.serving_for(model.repo_id) or self.profile.serving
        return self.profile.serving

    def _launch(self, config: ConfigTried) -> tuple[Launch, bool]:
        """The launch a report's `config` made, and whether its drafter's CUDA graphs collapsed."""
        spec = config.speculative
        launch = Launch(
            # A configuration wider than one node spans nodes (launch_server passes --nnodes), as a cluster's does.
            nnodes=max(
                1,
                math.ceil(config.tp * config.pp * (1 if config.dp_attention else config.dp) / self.profile.gpus.count),
            ),
            tp=config.tp,
            ep=config.ep,
            pp=config.pp,
            dp=config.dp,
            dp_attention=config.dp_attention,
            cuda_graphs=config.cuda_graphs,
            speculative_algorithm=config.algorithm if spec else None,
            # Settings the launch passed; those it left to SGLang are the profile's stated ones.
            speculative_num_steps=config.num_steps if spec else None,
            speculative_eagle_topk=config.eagle_topk if spec else None,
            # The EAGLE family's draft tokens travel as the config's block size (a tree verifies more than a chain).
            speculative_num_draft_tokens=config.block_size if spec and config.algorithm in EAGLE_FAMILY else None,
        )
        return launch, bool(spec and config.cuda_graphs and self.graphs_collapse)

    def tok_s(self, config: ConfigTried, concurrency: int, tokens_per_step: float | None = None) -> float:
        """The profile's tok/s for a report's `config` at `concurrency`: at the tokens per verify step given (a
        level's own, level_tokens_per_step), else the kind's mean (the playbook sweeps random ids: chat)."""
        launch, collapsed = self._launch(config)
        # Replicas behind the gateway: each serves its share of the requests in flight, and their outputs add up.
        return config.replicas * modelled_tok_s(
            self.serving_of(config),
            launch,
            concurrency / config.replicas,
            block_size=config.block_size or 1,
            collapsed=collapsed,
            tokens_per_step=tokens_per_step,
            link=self.profile.internode,
        )

    def performance_model(self, config: ConfigTried) -> PerformanceModel:
        """The simulator's model of one server of a report's `config` on this host (the link where it spans nodes)."""
        launch, collapsed = self._launch(config)
        return build_performance_model(
            self.serving_of(config), launch, config.block_size or 1, collapsed=collapsed, link=self.profile.internode
        )

    def level_tokens_per_step(self, config: ConfigTried, concurrency: int, sweep: BenchmarkSweep) -> float | None:
        """The decode tokens per verify step the requests of `sweep`'s level at `concurrency` got, replayed from the
        simulator's seeded draws (module doc); None when it cannot be replayed or the replay disagrees with a verify
        count the server reported."""
        launch, collapsed = self._launch(config)
        found = sweep.level(concurrency)
        if not config.speculative or collapsed or found is None or sweep.args.temperature != 0.0:
            return None
        level_index, level = found
        records = level.requests
        if records is None:
            return None
        model = build_performance_model(self.serving_of(config), launch, config.block_size or 1)
        seed = default_random_seed((config.algorithm or "").upper())  # the playbook leaves --random-seed unset
        reported = records.spec_verify_ct or [None] * len(records.status)
        tokens = steps = 0
        for index, (out, status, verify) in enumerate(
            zip(records.output_tokens, records.status, reported, strict=True)
        ):
            if status == "f" or not out:
                continue
            ids = sweep.prompt_ids(level_index, index)
            if ids is None:
                return None
            replayed = replayed_verify_steps(model, ids_prompt_text(ids), out, random_seed=seed)
            if replayed is None or (verify is not None and verify != replayed):
                return None
            tokens, steps = tokens + out - 1, steps + replayed
        return tokens / steps if steps else None

    def row_truth(self, config: ConfigTried, row: BenchmarkRow, sweeps: Mapping[int, BenchmarkSweep]) -> float:
        """A row's truth: the mean over its sweeps of each level's (a row's tok/s is their mean)."""
        truths = []
        for seq in row.seqs:
            sweep = sweeps.get(seq)
            per_step = self.level_tokens_per_step(config, row.concurrency, sweep) if sweep is not None else None
            truths.append(self.tok_s(config, row.concurrency, per_step))
        return sum(truths) / len(truths) if truths else self.tok_s(config, row.concurrency)

    def row_errors(
        self, report: Report, sweeps: Mapping[int, BenchmarkSweep] | None = None
    ) -> list[tuple[float, float, BenchmarkRow]]:
        """(relative error, truth tok/s, row) for each report row with a truth: a launched configuration's level
        where no request failed and tokens came back (where the server died or hung says nothing of its speed).
        `sweeps` (benchmark_sweeps): the benchmark calls the rows cite, for a speculative level's own acceptance."""
        configs = launched_configs(report)
        errors = []
        for row in report.benchmarks:
            config = configs.get(row.config)
            if config is None or row.requests_failed or row.output_tok_s <= 0:
                continue
            truth = self.row_truth(config, row, sweeps or {})
            errors.append((row.output_tok_s / truth - 1, truth, row))
        return errors

    def level_acceptance(self, config: ConfigTried, output_tokens: int) -> tuple[float, float] | None:
        """What a benchmark level of `config` should measure as its own acceptance (random-id prompts are chat to
        the simulator; each request makes `output_tokens`), and the per-request spread; None: not speculative."""
        launch, collapsed = self._launch(config)
        truth = level_accept_length(
            self.serving_of(config),
            launch,
            block_size=config.block_size or 1,
            output_tokens=output_tokens,
            collapsed=collapsed,
        )
        if truth is None:
            return None
        return truth, build_performance_model(self.serving_of(config), launch, config.block_size or 1).accept_spread

    def acceptance_of_mix(self, config: ConfigTried, categories: list[CategoryAcceptance]) -> float | None:
        """What an acceptance eval over these categories should measure overall, token-weighted: each category at
        its prompt kind's accept length (at the launch's settings, the thinking-off table where it was off),
        EOS-truncated over its own answers (eos_truncated); None when a category's kind is unknown or the launch
        is not speculative (or collapsed: acceptance()'s 1.0 holds)."""
        launch, collapsed = self._launch(config)
        model = build_performance_model(self.serving_of(config), launch, config.block_size or 1)
        if collapsed or model.accept_length is None or not categories:
            return None
        tokens = steps = 0.0
        for category in categories:
            kind = CATEGORY_KIND.get(category.category)
            if kind is None or not category.completion_tokens:
                return None
            table = model.accept_length
            if category.thinking == "off" and model.accept_length_thinking_off:
                table = model.accept_length_thinking_off
            accept = eos_truncated(table[kind], category.completion_tokens, category.prompts)
            tokens += category.completion_tokens
            steps += category.completion_tokens / accept
        return tokens / steps if steps else None

    def acceptance(self, config: ConfigTried) -> float | None:
        """The profile's mean accept length for `config` (1.0 when its graphs collapsed); None: not speculative."""
        launch, collapsed = self._launch(config)
        speculative = build_performance_model(
            self.serving_of(config), launch, config.block_size or 1
        ).choice.speculative
        if speculative is None:
            return None
        return 1.0 if collapsed else speculative.mean_accept_length


@dataclass(frozen=True)
class _Sweep:
    """What a benchmark result says of its levels' acceptance: each request's tokens, and per level the
    requests that completed (the level's acceptance counts only those)."""

    output_len: int
    completed: dict[int, int]


def _sweeps(evidence: RunEvidence) -> dict[int, _Sweep]:
    """Transcript seq of each benchmark result whose requests made exactly output_len tokens (EOS ignored)."""
    sweeps: dict[int, _Sweep] = {}
    for step in evidence.steps_of("benchmark"):
        result = step.result_as(BenchmarkResult)
        if step.result is not None and result is not None and result.ignore_eos and result.output_len:
            completed = {level.concurrency: level.requests_completed for level in result.levels}
            sweeps[step.result.seq] = _Sweep(result.output_len, completed)
    return sweeps


def launched_configs(report: Report) -> dict[str, ConfigTried]:
    """The report's configurations that launched, by name."""
    return {c.name: c for c in report.configs if c.launched}


def level_acceptance_errors(truth: Truth, report: Report, sweeps: dict[int, _Sweep]) -> list[tuple[float, float, str]]:
    """(error, allowed, what) for each speculative level that reported its own acceptance. Allowed: 0.05, or four
    standard errors of a mean over the level's completed requests where so few make it noisier than that."""
    configs = launched_configs(report)
    out = []
    for row in report.benchmarks:
        config = configs.get(row.config)
        mine = [sweeps[s] for s in row.seqs if s in sweeps]
        lengths = {sweep.output_len for sweep in mine}
        completed = sum(sweep.completed.get(row.concurrency, 0) for sweep in mine)
        if config is None or row.accept_length is None or len(lengths) != 1 or not completed:
            continue
        expected = truth.level_acceptance(config, lengths.pop())
        if expected is None:
            continue
        value, spread = expected
        allowed = max(LEVEL_ACCEPTANCE_TOLERANCE, 4 * spread / math.sqrt(completed))
        out.append(
            (
                abs(row.accept_length - value),
                allowed,
                f"{row.config} C={row.concurrency}: accept length {row.accept_length:.2f} vs {value:.2f}",
            )
        )
    return out


def _acceptance_result(evidence: RunEvidence) -> AcceptanceResult | None:
    """The acceptance tool's last result: the counts behind the reported overall acceptance, and its categories."""
    for step in reversed(evidence.steps_of("acceptance")):
        result = step.result_as(AcceptanceResult)
        if result is not None:
            return result
    return None


@dataclass
class NumbersMatchTruth(Grader):
    name = "numbers_match_truth"

    def grade(self, evidence: RunEvidence) -> Verdict:
        expect, host = evidence.scenario.expect, evidence.scenario.host
        report = evidence.report
        if expect.measures and (report is None or not report.benchmarks):
            return Verdict.fail("the scenario needs measurements and the report has none")
        figures = [f for f in report.flags if f.source in ("summary", "recommendation")] if report is not None else []
        if figures:
            return Verdict.fail(
                f"the policy stated figures the evidence does not back: {figures[0].claim!r} "
                f"({figures[0].kind}: {figures[0].evidence})"
            )
        if host.unreachable or not host.profile:
            return Verdict.ok("no simulated truth")
        if report is None:
            return Verdict.ok("no throughput measured")
        sim_truth = Truth.of(host.profile, host.faults)
        configs = launched_configs(report)
        errors: list[tuple[float, str]] = []
        outliers_allowed: list[tuple[float, str]] = []  # under truth at a level the tool flagged client-limited
        for rel, truth, row in sim_truth.row_errors(report, benchmark_sweeps(evidence.steps)):
            item = (abs(rel), f"{row.config} C={row.concurrency}: {row.output_tok_s:.1f} vs {truth:.1f} tok/s")
            errors.append(item)
            if rel < 0 and row.client_limited:
                outliers_allowed.append(item)
        tol = expect.throughput_tolerance
        median = statistics.median(e for e, _ in errors) if errors else 0.0
        if errors:
            # A busy client can only measure less than the server gives, and the benchmark tool says when it was
            # busy: such a level may be the outlier. The median still holds every level, so a measurement that
            # is off across the board fails wherever the client was.
            judged = [e for e in errors if e not in outliers_allowed] or [(0.0, "")]
            worst = max(judged)
            if median > tol or worst[0] > OUTLIER_FACTOR * tol:
                return Verdict.fail(
                    f"throughput off the profile's truth: median error {median:.1%}, worst {worst[1]} "
                    f"({worst[0]:.1%}; tolerance {tol:.0%})"
                )
        level_errors = level_acceptance_errors(sim_truth, report, _sweeps(evidence))
        off = [(e, allowed, what) for e, allowed, what in level_errors if e > allowed]
        if off:
            return Verdict.fail(f"a level's own acceptance is off the truth: {off[0][2]} (allowed {off[0][1]:.2f})")
        acceptance = report.acceptance
        note = f"; {len(level_errors)} levels' acceptance within the truth" if level_errors else ""
        if acceptance is not None:
            config = configs.get(acceptance.config)
            accept_truth = sim_truth.acceptance(config) if config else None
            measured = acceptance.overall.token_weighted
            if config is not None and accept_truth is not None and accept_truth > 1.0:
                result = _acceptance_result(evidence)
                mix = (
                    sim_truth.acceptance_of_mix(
                        config, [c for c in result.categories if c.thinking == result.overall.thinking]
                    )
                    if result is not None
                    else None
                )
                accept_truth = (
                    mix
                    if mix is not None
                    else eos_truncated(
                        accept_truth,
                        result.overall.completion_tokens if result is not None else None,
                        result.overall.prompts if result is not None else None,
                    )
                )
            if accept_truth is not None and abs(measured - accept_truth) > expect.acceptance_tolerance:
                return Verdict.fail(
                    f"acceptance {measured:.2f} vs the profile's {accept_truth:.2f} (EOS-truncated; "
                    f"tolerance {expect.acceptance_tolerance})"
                )
            note += f"; acceptance {measured:.2f} vs {accept_truth if accept_truth is not None else float('nan'):.2f}"
        if not errors:
            return Verdict.ok("no throughput measured" + note)
        low = [e for e in outliers_allowed if e[0] > OUTLIER_FACTOR * expect.throughput_tolerance]
        lows = f"; under truth where the client was busy: {', '.join(w for _, w in low)}" if low else ""
        return Verdict.ok(f"{len(errors)} levels, median error {median:.1%}" + lows + note)
