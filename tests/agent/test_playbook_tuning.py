"""Which settings the playbook tunes (playbook_tuning.py) and on which layouts it tries speculation: the rules that
took its regret against the simulator's truth under 2% on the EAGLE-3 and MTP goals (benchmarks/regret.py)."""

from __future__ import annotations

from typing import Any

from specops.agent.budget import host_budget_line
from specops.agent.policies.playbook_configs import Candidate, autoregressive_candidates, speculative_candidates
from specops.agent.policies.playbook_settings import PlaybookSettings
from specops.agent.policies.playbook_tuning import settings_to_try
from specops.tools.drafters import DraftSettings
from specops.tools.facts import HostFacts
from specops.tools.sglang.config import SpeculativeAlgorithm
from specops.tools.speculative_support import speculative_support

from .test_playbook_rules import GOAL, HEALTHY, Answer, _bench_by_layout, drive, ok
from .tool_results import sample

KIMI = "/models/Kimi-K2.6"
EAGLE_DEFAULTS = DraftSettings(num_steps=3, eagle_topk=1, num_draft_tokens=4)


def test_an_eagle_chain_gets_a_tree_for_low_load_whatever_its_acceptance():
    for accept in (1.5, 2.4, 3.9, None):  # rejected early, middling, mostly accepted, not measured
        tried = settings_to_try(SpeculativeAlgorithm.EAGLE3, EAGLE_DEFAULTS, accept)
        tree = tried[0]
        assert tree.changes == {"speculative_num_steps": 3, "speculative_eagle_topk": 4, "block_size": 8}
        assert not tree.high_load
        assert tried[-1].changes == {"speculative_num_steps": 1, "speculative_eagle_topk": 1, "block_size": 2}
        assert tried[-1].high_load
    longer = [
        t
        for t in settings_to_try(SpeculativeAlgorithm.NEXTN, EAGLE_DEFAULTS, 3.9)
        if t.changes.get("speculative_num_steps") == 5
    ]
    assert longer and longer[0].changes["block_size"] == 6  # mostly accepted: a 5-step chain too
    assert not any(
        t.changes.get("speculative_num_steps") == 5
        for t in settings_to_try(SpeculativeAlgorithm.NEXTN, EAGLE_DEFAULTS, 1.5)
    )


def test_a_tree_by_default_gets_no_second_tree():
    tree_defaults = DraftSettings(num_steps=3, eagle_topk=4, num_draft_tokens=8)
    tried = settings_to_try(SpeculativeAlgorithm.EAGLE3, tree_defaults, 3.0)
    assert all(t.changes.get("speculative_eagle_topk") == 1 for t in tried)


def test_dflash_halves_its_block_for_high_load_and_follows_with_a_quarter():
    tried = settings_to_try(
        SpeculativeAlgorithm.DFLASH, DraftSettings(num_steps=1, eagle_topk=1, num_draft_tokens=8), 3.8
    )
    assert len(tried) == 1
    half = tried[0]
    assert half.changes == {"block_size": 4} and half.high_load
    assert half.further is not None and half.further.changes == {"block_size": 2} and half.further.high_load
    # A block of 4 halves to 2 with nothing further below it.
    small = settings_to_try(
        SpeculativeAlgorithm.DFLASH, DraftSettings(num_steps=1, eagle_topk=1, num_draft_tokens=4), 3.0
    )
    assert small == []


def test_dp_attention_is_among_the_speculative_layouts_even_when_its_baseline_ranks_it_last():
    layouts = autoregressive_candidates(KIMI, 8, moe=True, interconnect="nvlink")
    ranked = [c for c in layouts if not c.config.get("enable_dp_attention")] + [
        c for c in layouts if c.config.get("enable_dp_attention")
    ]
    support = HostFacts.model_validate(sample("host_facts")).speculative  # the seed host's SGLang 0.5.23
    assert support is not None and "NEXTN" not in support.no_dp_attention
    names = [
        c.name for c in speculative_candidates(ranked, SpeculativeAlgorithm.NEXTN, None, 64, layouts=3, support=support)
    ]
    assert names[:2] == [f"{ranked[0].name}+nextn", f"{ranked[1].name}+nextn"]
    assert names[2] == "tp8-ep8-dp8-dpattn+nextn" and len(names) == 3
    # Where the host's SGLang refuses the algorithm with DP attention, the ranking stands.
    refusing = support.model_copy(update={"no_dp_attention": [*support.no_dp_attention, "NEXTN"]})
    kept = speculative_candidates(ranked, SpeculativeAlgorithm.NEXTN, None, 64, layouts=3, support=refusing)
    assert not any("dpattn" in c.name for c in kept)
    # One layout asked for: the best ranked, not DP attention in its place.
    assert [
        c.name for c in speculative_candidates(ranked, SpeculativeAlgorithm.NEXTN, None, 64, layouts=1, support=support)
    ] == [f"{ranked[0].name}+nextn"]


def _speculative_launches(calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [
        Candidate(args["config"]).name
        for tool, args in calls
        if tool == "launch_server" and args["config"].get("speculative_algorithm")
    ]


def test_a_cheaper_verify_is_tried_on_every_speculative_layout_and_followed_where_it_wins_the_top_level():
    # Block 4 streams 30% more than the drafter's 8 wherever it runs, block 2 20% more: each speculative layout gets
    # block 4, and the one fastest at the top level block 2 as well (block 4 beat the defaults there).
    def share(config: dict[str, Any], _level: int) -> float:
        return {4: 1.3, 2: 1.2}.get(config.get("block_size"), 1.0) if config.get("speculative_algorithm") else 1.0

    calls, final = drive(_bench_by_layout(share))
    assert final is not None and final["status"] == "completed"
    launched = _speculative_launches(calls)[:-1]  # the last: the deploy's relaunch of the recommended one
    at_defaults = [n for n in launched if n.endswith("+dflash-b8")]
    assert len(at_defaults) == 3
    assert sorted(n for n in launched if n.endswith("+dflash-b4")) == sorted(
        n.replace("-b8", "-b4") for n in at_defaults
    )
    assert [n for n in launched if n.endswith("+dflash-b2")] == [at_defaults[0].replace("-b8", "-b2")]


def test_no_quarter_block_where_the_half_block_does_not_win_the_top_level():
    def share(config: dict[str, Any], level: int) -> float:
        wins_low_only = 1.3 if level < 256 else 0.9
        return wins_low_only if config.get("speculative_algorithm") and config.get("block_size") == 4 else 1.0

    calls, _ = drive(_bench_by_layout(share))
    assert not any(n.endswith("+dflash-b2") for n in _speculative_launches(calls))


def _on_a_host_clock(answers: dict[str, Answer], seconds: dict[str, float]) -> dict[str, Answer]:
    """`answers` with each call's start and end on a host clock that moves `seconds[tool]` (1 s by default)."""
    clock = [1_000.0]

    def timed(tool: str, answer: Answer) -> Answer:
        def answer_on_clock(args: dict[str, Any]) -> dict[str, Any]:
            start = clock[0]
            clock[0] += seconds.get(tool, 1.0) * (len(args.get("levels") or [1]) if tool == "benchmark" else 1)
            return {**answer(args), "host_time": {"start": start, "end": clock[0]}}

        return answer_on_clock

    return {tool: timed(tool, answer) for tool, answer in answers.items()}


def test_under_a_host_budget_the_playbook_keeps_room_for_what_is_worth_more_and_says_what_it_left_out():
    # A launch takes 400 s of the host, a benchmark level 10 s. In 25 minutes: the first baseline layout, DFlash at
    # its defaults with the acceptance eval, and the deploy's relaunch; the baseline's layout for high load (DP
    # attention, asked for before the others since the whole pipeline does not fit) would have left no room for
    # DFlash.
    answers = _on_a_host_clock({**HEALTHY}, {"launch_server": 400.0, "benchmark": 10.0})
    calls, final = drive(answers, goal=f"{GOAL}\n{host_budget_line(1500)}")
    assert final is not None and final["status"] == "completed"
    launches = [Candidate(args["config"]).name for tool, args in calls if tool == "launch_server"]
    assert launches == ["tp8", "tp8+dflash-b8", launches[-1]] and launches[-1].startswith("tp8")
    assert final["left_out"] and final["left_out"][0].startswith("tp8-ep8-dp8-dpattn (about 7 min 31 s;")
    assert len(final["left_out"]) == len(set(final["left_out"]))  # each said once, however often it was weighed
    assert "kept for the first DFlash measurement and the deploy's relaunch" in final["left_out"][0]
    assert "host-time budget 25 min:" in final["summary"]
    assert "acceptance" in [tool for tool, _ in calls]


def _budget_run(levels: tuple[int, ...], budget_s: float) -> tuple[list[str], dict[str, Any]]:
    """The playbook under `budget_s` of host time on an SGLang that serves DFlash on DP attention, 400 s launches:
    its launches and acceptance eval in order, and its final answer. Speculation at the defaults gains 20% at C=1
    and 2% from C=32 (the verify step's cost has caught up there)."""

    def facts(args: dict[str, Any]) -> dict[str, Any]:
        support = speculative_support("0.5.23").model_dump()
        return ok(sample("host_facts", gpu_count=8, gpu_model="GPU", sglang_version="0.5.23", speculative=support))

    def share(config: dict[str, Any], level: int) -> float:
        return (1.2 if level == 1 else 1.02) if config.get("speculative_algorithm") else 1.0

    scripted = {**HEALTHY, "host_facts": facts, **_bench_by_layout(share)}
    answers = _on_a_host_clock(scripted, {"launch_server": 400.0, "benchmark": 10.0})
    calls, final = drive(
        answers, goal=f"{GOAL}\n{host_budget_line(budget_s)}", settings=PlaybookSettings(levels=levels)
    )
    assert final is not None and final["status"] == "completed"
    steps = [
        Candidate(args["config"]).name if tool == "launch_server" else tool
        for tool, args in calls
        if tool in ("launch_server", "acceptance")
    ]
    return steps, final


def test_a_budget_the_whole_pipeline_overruns_measures_the_most_telling_experiments_first():
    # In an hour: the first layout and DP attention (the layout for high load), DFlash at its defaults with
    # acceptance; DP attention's ranks see C=256 / 8 = 32 each, where the defaults kept little of their gain on TP8:
    # its half block straight away, then TP8's (its top level is high load too); what is left goes to the defaults
    # on DP attention and the next baseline layout; the rest is left out, each said once.
    steps, final = _budget_run((1, 32, 64, 128, 256), 3600)
    assert steps == [
        "tp8",
        "tp8-ep8-dp8-dpattn",
        "tp8+dflash-b8",
        "acceptance",
        "tp8-ep8-dp8-dpattn+dflash-b4",
        "tp8+dflash-b4",
        "tp8-ep8-dp8-dpattn+dflash-b8",
        "tp8-ep8",
        "tp8+dflash-b8",  # the deploy: the recommendation (the scripted host gives every block size the same figures)
    ]
    assert [said.split(" (")[0] for said in final["left_out"]] == ["tp8-ep4", "pp8"]
    assert "the most telling experiments first (tp8 and tp8-ep8-dp8-dpattn" in final["summary"]


def test_under_a_budget_dp_attention_at_a_low_load_per_rank_keeps_the_defaults():
    # At C=1 and 64, DP attention's ranks see 8 requests each: low load, where the defaults kept their gain on TP8
    # (at C=1, the level measured at or under 8): DP attention at the defaults; TP8's top level is high load, so its
    # half block next.
    steps, final = _budget_run((1, 64), 3000)
    assert steps == [
        "tp8",
        "tp8-ep8-dp8-dpattn",
        "tp8+dflash-b8",
        "acceptance",
        "tp8-ep8-dp8-dpattn+dflash-b8",
        "tp8+dflash-b4",
        "tp8-ep8-dp8-dpattn+dflash-b4",  # the rest of the tuning, with what is left
        "tp8+dflash-b8",  # the deploy
    ]
    assert [said.split(" (")[0] for said in final["left_out"]] == ["tp8-ep8", "tp8-ep4", "pp8"]


def test_a_budget_that_holds_the_first_speculative_measurement_only_without_its_acceptance_eval_leaves_out_the_eval():
    # 400 s launches, 10 s levels: after TP8, 14 min 27 s are left; DFlash with the acceptance eval and the deploy's
    # relaunch need 15 min 1 s, without the eval 14 min 11 s. The benchmark's own acceptance per level stands.
    answers = _on_a_host_clock({**HEALTHY}, {"launch_server": 400.0, "benchmark": 10.0})
    calls, final = drive(answers, goal=f"{GOAL}\n{host_budget_line(1330)}")
    assert final is not None and final["status"] == "completed"
    steps = [
        Candidate(a["config"]).name if t == "launch_server" else t
        for t, a in calls
        if t in ("launch_server", "acceptance")
    ]
    assert steps == ["tp8", "tp8+dflash-b8", "tp8"]
    assert any(said.startswith("the acceptance eval on tp8+dflash-b8 (about 50 s;") for said in final["left_out"])


def test_no_room_is_kept_for_a_speculative_measurement_the_budget_cannot_hold():
    # 1,300 s: after TP8 neither DFlash (14 min 11 s with the deploy's relaunch, even without its eval) nor DP
    # attention (also 14 min 11 s) fits the 13 min 57 s left; DP attention is not held back for DFlash's sake.
    answers = _on_a_host_clock({**HEALTHY}, {"launch_server": 400.0, "benchmark": 10.0})
    _, final = drive(answers, goal=f"{GOAL}\n{host_budget_line(1300)}")
    assert final is not None
    dp_attention = next(said for said in final["left_out"] if said.startswith("tp8-ep8-dp8-dpattn"))
    assert (
        "kept for the first DFlash measurement" not in dp_attention and "kept for the deploy's relaunch" in dp_attention
    )
