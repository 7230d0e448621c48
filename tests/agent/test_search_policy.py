"""The search policies (`search:tpe`, `search:random`): the space from a host's facts, seeded proposals, a whole run."""

from __future__ import annotations

import json

import pytest
from pydantic_ai.models.function import FunctionModel

from specops.agent.policies import PolicyUnavailable, policy_settings, resolve_policy
from specops.agent.policies.playbook_configs import autoregressive_candidates
from specops.agent.policies.search import new_study, objective
from specops.agent.policies.search_settings import SearchSettings, parse_search_spec
from specops.agent.policies.search_space import search_space
from specops.agent.run import RunOptions, run_goal
from specops.tools.drafters import DrafterConfig
from specops.tools.facts import HostFacts
from specops.tools.hosts import HostRequest

from ..jobs import job_timeout
from .tool_results import sample

LEVELS = (1, 32, 64, 128, 256)


def _seed_host() -> tuple[HostFacts, DrafterConfig]:
    """The seed host's facts (8 GPUs over PCIe, SGLang 0.5.23) and the Kimi DFlash drafter's config (block 8)."""
    return HostFacts.model_validate(sample("host_facts")), DrafterConfig.model_validate(sample("read_drafter_config"))


def _seed_space():
    facts, config = _seed_host()
    link = facts.interconnect.interconnect if facts.interconnect else None
    layouts = autoregressive_candidates("/models/Kimi-K2.6", facts.gpu_count, moe=True, interconnect=link)
    return search_space(layouts, config, facts.speculative, LEVELS)


def test_space_from_the_seed_hosts_facts():
    space = _seed_space()
    # The playbook's layouts for a MoE target on 8 PCIe GPUs; DFLASH on all but PP (0.5.23 allows DP attention
    # with the DP LM head).
    assert space.layout_names == ["tp8", "tp8-ep8", "tp8-ep4", "tp8-ep8-dp8-dpattn", "pp8"]
    assert space.speculative_layouts == ["tp8", "tp8-ep8", "tp8-ep4", "tp8-ep8-dp8-dpattn"]
    assert space.draft_tokens == (2, 4, 8)  # the drafter's block, a half and a quarter of it
    assert space.draft_settings() == [{"block_size": 2}, {"block_size": 4}, {"block_size": 8}]
    assert space.max_running == (128, 256, 512)  # half the top level, the top level, twice it
    assert space.mem_fractions == (None, 0.8, 0.9)
    # Per layout: 2 graph settings x 3 memory pools x 3 running caps = 18, autoregressive and with each block.
    assert space.size == 5 * 18 + 4 * 18 * 3


def test_space_on_a_small_nvlink_host_with_an_eagle3_drafter():
    facts, config = _seed_host()
    eagle = config.model_copy(
        update={
            "algorithm": "EAGLE3",
            "block_size": None,
            "sglang_defaults": config.sglang_defaults.model_copy(
                update={"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}
            ),
        }
    )
    layouts = autoregressive_candidates("/models/Llama-3.1-8B", 2, moe=False, interconnect="nvlink")
    space = search_space(layouts, eagle, facts.speculative, (1, 64))
    assert space.layout_names == ["tp2"]  # dense, NVLink: no EP, no PP
    assert (space.steps, space.topk, space.draft_tokens) == ((3, 1, 5), (1, 4), (4, 8))
    settings = space.draft_settings()
    # A chain verifies steps + 1 tokens; a 4-branch tree between steps + 1 and 4 x steps + 1.
    assert {"speculative_num_steps": 3, "speculative_eagle_topk": 1, "block_size": 4} in settings
    assert {"speculative_num_steps": 1, "speculative_eagle_topk": 4, "block_size": 5} in settings
    assert len(settings) == 9
    assert space.max_running == (32, 64, 128)
    assert space.size == 18 * (1 + 9)


def _proposals(sampler: str, seed: int, trials: int = 10) -> list[dict]:
    """What a seeded study proposes against a fixed made-up objective (no host): the configs, in order."""
    space = _seed_space()
    study = new_study(space, SearchSettings(sampler=sampler, seed=seed))
    found = []
    for _ in range(trials):
        trial = study.ask()
        config = space.propose(trial).config
        speedup = 1.3 if config.get("speculative_algorithm") else 1.0
        sweep = {c: speedup * c * 10 / (1 + c / config["max_running_requests"]) for c in LEVELS}
        study.tell(trial, objective(sweep, list(LEVELS)))
        found.append(config)
    return found


@pytest.mark.parametrize("sampler", ["tpe", "random"])
def test_seeded_samplers_propose_the_same_configurations(sampler):
    first = _proposals(sampler, seed=0)
    assert _proposals(sampler, seed=0) == first
    assert _proposals(sampler, seed=1) != first
    # The defaults come first: the first layout autoregressive, then DFLASH on it with the drafter's block.
    assert first[0] == {
        "model_path": "/models/Kimi-K2.6",
        "trust_remote_code": True,
        "tp": 8,
        "cuda_graphs": True,
        "cuda_graph_max_bs": 256,
        "mem_fraction_static": None,
        "max_running_requests": 256,
    }
    assert first[1]["speculative_algorithm"] == "DFLASH" and first[1]["block_size"] == 8


def test_objective_is_the_geometric_mean_over_the_levels():
    assert objective({1: 100.0, 64: 10_000.0}, [1, 64]) == pytest.approx(1000.0)
    assert objective({1: 100.0}, [1, 64]) == pytest.approx(10.0)  # a level not measured counts 1 tok/s


def test_search_specs():
    assert parse_search_spec("search:tpe") == SearchSettings()
    settings = parse_search_spec("search:random:trials=12;seed=3;levels=1,64;defaults=false")
    assert (settings.sampler, settings.trials, settings.seed, settings.defaults) == ("random", 12, 3, False)
    assert settings.measurement.levels == (1, 64)
    assert settings.spec() == "search:random:trials=12;seed=3;defaults=False;levels=1,64"
    assert parse_search_spec(settings.spec()) == settings
    model = resolve_policy("search:tpe:trials=3")
    assert isinstance(model, FunctionModel) and model.model_name == "search:tpe:trials=3"
    assert policy_settings("search:tpe", base_url=None, api_key_env=None)["search"]["trials"] == 8
    for bad in ("search", "search:grid", "search:tpe:tune=false", "search:tpe:trials=0"):
        with pytest.raises(PolicyUnavailable):
            resolve_policy(bad)


@pytest.mark.slow
@job_timeout()
def test_search_runs_the_seed_job_to_a_recommendation_per_level(tmp_path):
    # The README's job (full disk, broken hf CLI, the approval to delete the other model's cache), searched with TPE:
    # four trials at two levels keep it short; what it proves is the job end to end with the same report.
    outcome = run_goal(
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
        host=HostRequest(spec="sim:seed-ct200", options={"faults": ("full_disk", "broken_cli")}),
        policy="search:tpe:trials=4;levels=1,64",
        options=RunOptions(
            runs_dir=tmp_path, fsync=False, allow_delete=("cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",)
        ),
    )
    assert outcome.status == "completed", outcome.reason
    final = outcome.final
    assert "search: TPE (Optuna, seed 0)" in final.summary
    report = json.loads((outcome.run_dir / "report.json").read_text())
    assert report["run"]["policy"] == "search:tpe:trials=4;levels=1,64"
    launches = {(b["speculative"], b["config"]) for b in report["benchmarks"]}
    assert any(spec for spec, _ in launches) and any(not spec for spec, _ in launches)
    assert len({config for _, config in launches}) == 4  # one configuration per trial
    assert report["acceptance"]["overall"]["request_mean"] > 1.0
    # A recommendation per level: each level compared, and the bands cover them all.
    assert [row["concurrency"] for row in report["comparison"]] == [1, 64]
    assert all(row["winner"] for row in report["comparison"])
    bands = report["recommendation"]["bands"]
    covered = {c for c in (1, 64) for b in bands if b["min_concurrency"] <= c <= b["max_concurrency"]}
    assert covered == {1, 64}
    assert final.recommendation and len(final.left_running) == 1
