"""The oracle (evals/oracle.py): every configuration of a run's space with the simulator's truth, and a run's regret.

The space and truths are built from the seed host's recorded tool results (tests/data/tool-results.json: its facts,
models and the Kimi DFlash drafter's config, block 8), on sim:seed-ct200; one slow test reads a whole playbook run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from specops.agent.goal import parse_goal
from specops.agent.policies.playbook_pipeline import Target
from specops.agent.policies.playbook_settings import PlaybookSettings
from specops.agent.policies.search import new_study
from specops.agent.policies.search_settings import SearchSettings
from specops.agent.report.schema import ConfigTried, Report
from specops.agent.run import RunOptions, run_goal
from specops.evals.graders.numbers_match_truth import Truth
from specops.evals.oracle import (
    ConfigTruth,
    Oracle,
    RunInputs,
    RunRecord,
    SimLaunches,
    config_key,
    open_oracle,
    read_run,
    replica_shares,
    space_of,
)
from specops.sim.serving.truth import closed_loop_tok_s
from specops.tools.drafters import DrafterConfig
from specops.tools.facts import HostFacts
from specops.tools.hosts import HostRequest
from specops.tools.models_on_host import ModelsOnHost
from specops.tools.sglang.config import ServerConfig

from ..agent.tool_results import sample
from ..jobs import job_timeout
from .evidence_builder import config_tried

GOAL = "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"
PROFILE = "seed-ct200"
DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"
DRAFTER_PATH = "/root/models/Kimi-K2.6-DFlash-tmp-long"
KIMI = "/root/models/Kimi-K2.6"
INPUT, OUTPUT = 128, 64  # the playbook's benchmark prompt and answer


def _inputs(levels: tuple[int, ...] = (1, 32, 64, 128, 256)) -> RunInputs:
    models = ModelsOnHost.model_validate(sample("find_models"))
    return RunInputs(
        goal=parse_goal(GOAL),
        settings=PlaybookSettings(levels=levels),
        facts=HostFacts.model_validate(sample("host_facts")),
        target=Target.found(next(m for m in models.models if m.path == KIMI)),
        drafter=DrafterConfig.model_validate(sample("read_drafter_config")),
        drafter_repo=DRAFTER,
        drafter_revision=None,
        drafter_path=DRAFTER_PATH,
    )


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle]:
    with open_oracle(RunRecord(_inputs(), launched={}, report=None), PROFILE, []) as built:
        yield built


def _config(**fields: object) -> ServerConfig:
    return ServerConfig.model_validate({"model_path": KIMI, "trust_remote_code": True, "tp": 8, **fields})


def _dflash(**fields: object) -> ServerConfig:
    return _config(speculative_algorithm="DFLASH", drafter_path=DRAFTER_PATH, block_size=8, **fields)


def _truth(launches: SimLaunches, config: ServerConfig, levels: tuple[int, ...]) -> ConfigTruth:
    return launches.truth(config, levels, input_len=INPUT, output_len=OUTPUT)


def _closed_loop(grader: Truth, config: ConfigTried, clients: int) -> float:
    """A closed loop of `clients` on one server of `config` as the grader models it (its own launch of the layout)."""
    model = grader.performance_model(config)
    return closed_loop_tok_s(model, clients, input_len=INPUT, output_len=OUTPUT)


def test_the_space_is_every_configuration_a_search_can_propose(oracle):
    # 5 layouts x 2 graph settings x 3 memory pools x 3 running caps, autoregressive, and DFLASH at 3 blocks on the
    # 4 layouts that allow it: what SearchSpace.size counts, each once.
    assert len(oracle.configs) == oracle.space.size == 5 * 18 + 4 * 18 * 3
    assert len({config_key(c.config) for c in oracle.configs}) == len(oracle.configs)
    known = {config_key(c.config) for c in oracle.configs}
    study = new_study(oracle.space, SearchSettings(sampler="random", seed=3))
    for _ in range(40):  # whatever a seeded random search draws is in the enumeration
        candidate = oracle.space.propose(study.ask())
        if candidate.config.get("speculative_algorithm"):
            candidate = candidate.with_(drafter_path=DRAFTER_PATH)
        assert config_key(ServerConfig.model_validate(candidate.config)) in known


def test_the_best_at_each_level_is_at_least_every_configuration(oracle):
    for level in oracle.levels:
        best = oracle.best(level)
        assert best is not None and best.launches
        for truth in oracle.configs:
            if truth.launches:
                assert best.tok_s[level] >= truth.tok_s[level]
    # Not one configuration everywhere: the space has a different best at low and at high load.
    assert oracle.best(1) != oracle.best(256)


def test_regret_is_zero_at_the_best_and_the_share_lost_elsewhere(oracle):
    level = 64
    best = oracle.best(level)
    assert best is not None
    assert oracle.regret(level, ("best", best.config)).regret == 0.0
    slower = min((c for c in oracle.configs if c.launches), key=lambda c: c.tok_s[level])
    regret = oracle.regret(level, ("slowest", slower.config))
    assert regret.regret == pytest.approx(1 - slower.tok_s[level] / best.tok_s[level])
    assert regret.regret > 0.5
    assert oracle.regret(level, None).regret == 1.0  # nothing recommended: all of it lost


def test_a_configuration_that_cannot_launch_has_no_truth_and_is_never_the_best(oracle):
    # The seed run's DP-attention layout at SGLang's default pool runs out of memory (the playbook's run retries it
    # at 0.9, which launches); the oracle finds the same from the simulator's memory plan.
    dp_attention = {"ep": 8, "dp": 8, "enable_dp_attention": True}
    default_pool = oracle.truth(_config(**dp_attention))
    assert not default_pool.launches and "Not enough memory" in (default_pool.failure or "")
    assert not default_pool.tok_s
    assert oracle.truth(_config(**dp_attention, mem_fraction_static=0.9)).launches
    failing = [c for c in oracle.configs if not c.launches]
    assert failing
    assert all(oracle.best(level) not in failing for level in oracle.levels)


def test_truth_at_a_level_above_the_running_cap_is_the_curve_at_the_cap(oracle):
    capped = oracle.truth(_config(cuda_graph_max_bs=128, max_running_requests=128))
    wide = oracle.truth(_config(cuda_graph_max_bs=512, max_running_requests=512))
    assert capped.max_running == 128
    # The engine runs at most 128 of the 256 requests: the curve at 128, what the wider cap serves at C=128.
    assert capped.tok_s[256] == pytest.approx(capped.tok_s[128]) == pytest.approx(wide.tok_s[128])
    assert wide.tok_s[256] != pytest.approx(wide.tok_s[128])
    # Below the cap, a closed loop of C clients on the grader's model of the same layout.
    grader = Truth.of(PROFILE, [])
    assert capped.tok_s[64] == pytest.approx(_closed_loop(grader, config_tried("tp8"), 64))
    # Without a cap SGLang's default is the simulator's (at least 2048 running requests): no level is capped.
    default = oracle.truth(_config())
    assert default.max_running is not None and default.max_running >= 2048
    assert default.tok_s[256] == pytest.approx(wide.tok_s[256])


def test_memory_pool_and_graph_cap_change_no_step_time(oracle):
    # The pool only sizes the KV cache; the graph cap only the capture. Same layout, same truth where nothing caps.
    base = oracle.truth(_dflash(cuda_graph_max_bs=256, max_running_requests=256))
    for other in (
        _dflash(cuda_graph_max_bs=256, max_running_requests=256, mem_fraction_static=0.9),
        _dflash(cuda_graph_max_bs=512, max_running_requests=256),
    ):
        truth = oracle.truth(other)
        assert truth.launches and not truth.kv_bound
        assert truth.tok_s == pytest.approx(base.tok_s)
    # CUDA graphs off is another figure of the profile, slower at low load.
    off = oracle.truth(_dflash(cuda_graphs=False, max_running_requests=256))
    assert off.tok_s[1] < base.tok_s[1]


def test_faults_act_as_the_simulator_does():
    levels = (1, 64)
    speculative = _dflash(cuda_graph_max_bs=64, max_running_requests=64)
    with SimLaunches(
        PROFILE, ["cuda_graph_drafter:mode=collapse"], drafter_repo=DRAFTER, drafter_path=DRAFTER_PATH
    ) as sim:
        collapsed = _truth(sim, speculative, levels)
        # The drafter's graphs collapse: one token per verify step, as the grader's model of them says.
        grader = Truth.of(PROFILE, ["cuda_graph_drafter:mode=collapse"])
        tried = config_tried("tp8+dflash-b8", speculative=True, block_size=8)
        assert collapsed.tok_s[1] == pytest.approx(_closed_loop(grader, tried, 1))
        # Graphs off keeps the drafter's acceptance: under load it serves far more (at C=1 graphs off is as slow
        # as the collapse, both about a third of graphs on).
        graphs_off = _truth(sim, speculative.model_copy(update={"cuda_graphs": False}), levels)
        assert graphs_off.tok_s[64] > 2 * collapsed.tok_s[64]
    with SimLaunches(
        PROFILE, ["cuda_graph_drafter:mode=crash"], drafter_repo=DRAFTER, drafter_path=DRAFTER_PATH
    ) as sim:
        assert not _truth(sim, speculative, levels).launches
        assert _truth(sim, speculative.model_copy(update={"cuda_graphs": False}), levels).launches
    with SimLaunches(
        PROFILE, ["crash_under_load:at_running=56"], drafter_repo=DRAFTER, drafter_path=DRAFTER_PATH
    ) as sim:
        dies = _truth(sim, speculative, levels)
        assert dies.crashes == {64} and dies.tok_s[64] == 0.0 and dies.tok_s[1] > 0
        # A cap under the fault's load keeps the server alive: 32 running, the rest queued.
        survives = _truth(sim, _dflash(cuda_graph_max_bs=32, max_running_requests=32), levels)
        assert not survives.crashes and survives.tok_s[64] == pytest.approx(_truth(sim, speculative, (32,)).tok_s[32])
        assert not _truth(sim, _config(max_running_requests=64), levels).crashes  # speculative servers only


def test_replicas_share_the_requests_as_whole_requests():
    assert replica_shares(1, 2) == [1, 0] and replica_shares(3, 2) == [2, 1] and replica_shares(32, 2) == [16, 16]
    qwen = {"model_path": "/data/models/Qwen3-32B", "tp": 8, "max_running_requests": 32}
    with SimLaunches("h100x16-2node", []) as sim:
        one = _truth(sim, ServerConfig.model_validate(qwen), (1, 16))
        two = _truth(sim, ServerConfig.model_validate({**qwen, "replicas": 2}), (1, 32))
        across = _truth(sim, ServerConfig.model_validate({**qwen, "tp": 16}), (1,))
    # One request runs on one replica, the other idles; 32 are 16 on each.
    assert two.tok_s[1] == pytest.approx(one.tok_s[1])
    assert two.tok_s[32] == pytest.approx(2 * one.tok_s[16])
    # One server across both nodes launches (rank 0's node flags) and pays the InfiniBand link on every step, as the
    # grader's model of a launch over two nodes does.
    tp16 = config_tried("tp16", tp=16).model_copy(update={"model_path": qwen["model_path"]})
    assert across.launches
    assert across.tok_s[1] == pytest.approx(_closed_loop(Truth.of("h100x16-2node", []), tp16, 1))


def test_the_space_follows_the_goal_levels():
    space = space_of(_inputs(levels=(1, 64)))
    assert space.max_running == (32, 64, 128)
    assert space.layout_names == ["tp8", "tp8-ep8", "tp8-ep4", "tp8-ep8-dp8-dpattn", "pp8"]


@pytest.mark.slow
@job_timeout()
def test_a_recorded_run_is_read_and_judged(tmp_path: Path):
    # The README's job, narrowed to one layout of each kind at two levels: what the oracle reads of a real run.
    outcome = run_goal(
        GOAL,
        host=HostRequest(spec=f"sim:{PROFILE}", options={"faults": ("full_disk",)}),
        policy="playbook:levels=1,64;ar_layouts=1;spec_layouts=1;tune=false;bracket=false;acceptance_prompts=2",
        run_dir=tmp_path / "run",
        options=RunOptions(fsync=False, allow_delete=("cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",)),
    )
    assert outcome.status == "completed"
    record = read_run(outcome.run_dir)
    assert record.inputs.settings.levels == (1, 64)
    assert record.inputs.target.path == KIMI and record.inputs.drafter_path
    report = Report.model_validate_json((outcome.run_dir / "report.json").read_text())
    with open_oracle(record, PROFILE, ["full_disk"]) as judged:
        assert len(judged.configs) == judged.space.size
        for regret in judged.regrets(record):
            assert regret.recommended is not None and regret.recommended.launches
            assert 0.0 <= regret.regret < 1.0
            # The recommended configuration's truth is what the run measured of it, within the grader's tolerance.
            measured = next(
                b.output_tok_s
                for b in report.benchmarks
                if b.config == regret.recommended_name and b.concurrency == regret.level
            )
            assert measured == pytest.approx(regret.recommended_tok_s, rel=0.05)
