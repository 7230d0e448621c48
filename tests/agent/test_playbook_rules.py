"""The playbook on synthetic histories: each recovery rule picks the right next call, and goals it cannot do end at once.

A scripted world answers each tool call from a table (tool -> a function of the
arguments), so a test sets up exactly the failure it is about and reads the
calls the playbook made in answer. Every answer is a whole result of the tool's
own type (tool_results.sample), as the playbook reads them typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelRequest, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.tools import ToolDefinition

from specops.agent.policies.playbook import playbook_turn
from specops.agent.policies.playbook_configs import Candidate, autoregressive_candidates
from specops.agent.policies.playbook_goal import target_name_for, understand
from specops.agent.policies.playbook_history import Outcome
from specops.agent.policies.playbook_recovery import GiveUp, Retry, after_launch_failure
from specops.agent.policies.playbook_settings import PlaybookSettings
from specops.tools.errors import ToolErrorRecord

from .tool_results import sample

GOAL = "Goal: https://huggingface.co/SubSir/Kimi-K2.6-DFlash-tmp-long -- download, evaluate, deploy, benchmark"
INFO = AgentInfo(
    function_tools=[],
    allow_text_output=False,
    output_tools=[ToolDefinition(name="final_result")],
    model_settings=None,
    model_request_parameters=ModelRequestParameters(),
    instructions=None,
)
KIMI = "/root/models/Kimi-K2.6"
Answer = Callable[[dict[str, Any]], dict[str, Any]]


def ok(result: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "result": result}


def err(kind: str, **details: Any) -> dict[str, Any]:
    return {
        "ok": False,
        "error": {"kind": kind, "what": f"{kind} happened", "remedy": "do something", "details": details},
    }


def _launch(args: dict[str, Any]) -> dict[str, Any]:
    port = args["config"].get("port", 30000)
    return ok(sample("launch_server", id=f"s{port}", pid=100 + port, port=port, config=args["config"]))


def _bench(args: dict[str, Any]) -> dict[str, Any]:
    level = sample("benchmark")["levels"][0]
    return ok(
        sample(
            "benchmark",
            levels=[
                {
                    **level,
                    "concurrency": c,
                    "output_tok_s": 10.0 * c,
                    "output_tok_s_ci95": None,  # the recorded level's interval is of another figure
                    "requests_completed": c,
                    "requests_failed": 0,
                    "total_output_tokens": 64 * c,
                }
                for c in args["levels"]
            ],
        )
    )


def _model(**fields: Any) -> dict[str, Any]:
    """One model find_models found: the recorded Kimi-K2.6 with `fields` laid over it."""
    return {**sample("find_models")["models"][0], **fields}


def _item(**fields: Any) -> dict[str, Any]:
    """One freeable item, nobody's approval on it: a recorded cache revision with `fields` laid over it."""
    return {**sample("list_freeable")["items"][0], "approve_with": None, "approved_by": None, **fields}


def _wait(state: str, **failure: Any) -> dict[str, Any]:
    """wait_download's answer: the download in `state` (timed out while running), with its failure when it failed."""
    status: dict[str, Any] = {"state": state, "failure": ({"remedy": "r", **failure} if failure else None)}
    return ok(sample("wait_download", timed_out=state == "running", status=status))


HEALTHY: dict[str, Answer] = {
    "todowrite": lambda a: ok(sample("todowrite")),
    "host_facts": lambda a: ok(
        sample("host_facts", gpu_count=8, gpu_model="GPU", sglang_version="0.5.10", speculative=None)
    ),
    "find_models": lambda a: ok(
        sample(
            "find_models",
            models=[
                _model(
                    name="Kimi-K2.6",
                    path=KIMI,
                    source="directory",
                    architectures=["KimiK25ForConditionalGeneration"],
                    num_experts=384,
                )
            ],
        )
    ),
    "read_drafter_config": lambda a: ok(
        sample("read_drafter_config", block_size=8, summary="DFlash drafter, block_size 8")
    ),
    "check_disk": lambda a: ok(sample("check_disk", verdict="fits", summary="fits")),
    "start_download": lambda a: ok(
        sample("start_download", id="d1", method=a["method"], target_dir=a["target_dir"], expected_human="8 GB")
    ),
    "wait_download": lambda a: _wait("running") if a.get("timeout_s") == 0 else _wait("finished"),
    "launch_server": _launch,
    "benchmark": _bench,
    "stop_server": lambda a: ok(sample("stop_server")),
    "acceptance": lambda a: ok(sample("acceptance", overall={"request_mean": 3.7, "token_weighted": 3.8})),
}


def drive(
    answers: dict[str, Answer], *, goal: str = GOAL, max_steps: int = 120, settings: PlaybookSettings | None = None
) -> tuple[list[tuple[str, dict]], dict | None]:
    """Run the playbook against scripted answers; the calls it made (in order) and its final answer's args."""
    table = {**HEALTHY, **answers}
    messages: list = [ModelRequest(parts=[UserPromptPart(goal)])]
    calls: list[tuple[str, dict]] = []
    for _ in range(max_steps):
        response = playbook_turn(messages, INFO, settings)
        messages.append(response)
        parts = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if parts[0].tool_name == "final_result":
            return calls, parts[0].args
        returns = []
        for part in parts:
            calls.append((part.tool_name, part.args))
            returns.append(
                ToolReturnPart(part.tool_name, table[part.tool_name](part.args), tool_call_id=part.tool_call_id)
            )
        messages.append(ModelRequest(parts=returns))
    raise AssertionError("the playbook did not finish")


def tools_of(calls: list[tuple[str, dict]]) -> list[str]:
    return [name for name, _ in calls if name != "todowrite"]


def _final_plan(calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The plan after every todowrite: the whole list, then status updates by id."""
    plan: dict[str, dict[str, Any]] = {}
    for name, args in calls:
        if name == "todowrite" and "todos" in args:
            plan = {t["id"]: dict(t) for t in args["todos"]}
        elif name == "todowrite":
            for update in args["updates"]:
                plan[update["id"]].update(update)
    return list(plan.values())


def test_plan_first_then_the_whole_pipeline_with_every_todo_closed():
    calls, final = drive({})
    assert calls[0][0] == "todowrite" and tools_of(calls)[:4] == [
        "host_facts",
        "find_models",
        "read_drafter_config",
        "check_disk",
    ]
    names = tools_of(calls)
    # The baseline runs while the download is in flight: launches come between start and wait.
    assert names.index("start_download") < names.index("launch_server") < names.index("wait_download")
    last_plan = _final_plan(calls)
    assert [n for n, a in calls if n == "todowrite" and "todos" in a] == ["todowrite"]  # then updates only
    assert all(t["status"] in ("completed", "cancelled") for t in last_plan)
    assert all(t.get("reason") for t in last_plan if t["status"] == "cancelled")
    assert final["status"] == "completed" and len(final["left_running"]) == 1  # a deploy goal leaves one running
    launches = [a["config"] for n, a in calls if n == "launch_server"]
    assert not any(c.get("pp", 1) > 1 and c.get("speculative_algorithm") for c in launches)  # no DFlash on PP
    dflash = [c for c in launches if c.get("speculative_algorithm") == "DFLASH"]
    assert dflash and all(c["max_running_requests"] == 256 for c in dflash)
    # The drafter's block first, on each layout; then half of it, tuned for high load on the best of them.
    assert {c["block_size"] for c in dflash} == {8, 4} and dflash[0]["block_size"] == 8


def test_goal_it_cannot_do_ends_at_once():
    calls, final = drive({}, goal="Goal: fine-tune SubSir/Kimi-K2.6-DFlash-tmp-long on my chat logs")
    assert calls == [] and final["status"] == "cannot_do" and "Cannot do this goal" in final["summary"]
    assert "fine-tune" in final["unresolved"][0]  # why, said once


def test_not_a_drafter_stops_before_any_download():
    calls, final = drive({"read_drafter_config": lambda a: err("not_a_drafter")})
    assert "start_download" not in tools_of(calls) and "check_disk" not in tools_of(calls)
    assert final["status"] == "failed" and "not_a_drafter" in final["summary"] + " ".join(final["unresolved"])


def test_port_in_use_moves_to_the_next_port_and_keeps_it():
    def launch(args):
        return (
            err("launch_failed", cause="port_in_use") if args["config"].get("port", 30000) == 30000 else _launch(args)
        )

    calls, final = drive({"launch_server": launch})
    ports = [a["config"].get("port", 30000) for n, a in calls if n == "launch_server"]  # unset: the default
    assert ports[:2] == [30000, 30001] and set(ports[2:]) == {30001}
    assert final["status"] == "completed"


def test_out_of_memory_raises_the_static_pool_and_cuda_graph_failure_turns_graphs_off():
    def launch(args):
        c = args["config"]
        if (c.get("mem_fraction_static") or 0) < 0.9:
            return err("launch_failed", cause="out_of_memory", memory="pool_too_small")
        if c.get("speculative_algorithm") and c.get("cuda_graphs", True):
            return err("launch_failed", cause="cuda_graph_failure")
        return _launch(args)

    calls, _ = drive({"launch_server": launch})
    configs = [a["config"] for n, a in calls if n == "launch_server"]
    assert configs[0].get("mem_fraction_static") is None and configs[1]["mem_fraction_static"] == 0.9
    spec = [c for c in configs if c.get("speculative_algorithm")]
    assert (
        spec[0].get("cuda_graphs", True) and not spec[1]["cuda_graphs"] and spec[1]["tp"] == spec[0]["tp"]
    )  # unset: on
    # Never the same failing launch twice.
    failing = [str(sorted(c.items())) for c in configs if not launch({"config": c})["ok"]]
    assert failing and len(failing) == len(set(failing))


def test_broken_cli_download_switches_to_the_library_and_no_space_makes_room_first():
    waits = iter([_wait("failed", cause="cli_unusable", what="hf printed its help"), _wait("finished")])
    calls, final = drive({"wait_download": lambda a: _wait("running") if a.get("timeout_s") == 0 else next(waits)})
    methods = [a["method"] for n, a in calls if n == "start_download"]
    assert methods == ["hf", "library"] and final["status"] == "completed"


def test_disk_that_does_not_fit_frees_only_safe_items_dry_run_first():
    checks = iter(["does_not_fit", "fits"])
    listing = sample(
        "list_freeable",
        items=[
            _item(id="cache:a@1", safety="safe", size_bytes=50, path="/c/a", size="50", reason="cache"),
            _item(
                id="dir:/root/models/Kimi-K2.6",
                kind="directory",
                safety="needs_approval",
                size_bytes=500,
                path=KIMI,
                size="500",
                reason="someone's model",
            ),
        ],
        sets=[],
    )
    calls, final = drive(
        {
            "check_disk": lambda a: ok(_does_not_fit(verdict=next(checks), needed="n", free="f")),
            "list_freeable": lambda a: ok(listing),
            "free_space": lambda a: ok(sample("free_space", expected_freed_bytes=50, summary="freed 50", deleted=[])),
        }
    )
    frees = [a for n, a in calls if n == "free_space"]
    assert [f["dry_run"] for f in frees] == [True, False] and all(f["ids"] == ["cache:a@1"] for f in frees)
    assert tools_of(calls).index("free_space") < tools_of(calls).index("start_download")


def _does_not_fit(**fields: Any) -> dict[str, Any]:
    """check_disk's answer: 10 bytes short on /, no other mount allowed, `fields` laid over it."""
    base = {"verdict": "does_not_fit", "summary": "s", "shortfall_bytes": 10, "mount": {"mount_point": "/"}}
    return sample("check_disk", **{**base, "alternatives": [], **fields})


def test_only_approval_items_stops_and_says_what_it_would_free():
    calls, final = drive(
        {
            "check_disk": lambda a: ok(_does_not_fit(needed="9.6G", free="3G")),
            "list_freeable": lambda a: ok(
                sample(
                    "list_freeable",
                    items=[
                        _item(
                            id="dir:x",
                            kind="directory",
                            safety="needs_approval",
                            size_bytes=500,
                            path=KIMI,
                            size="550G",
                            reason="r",
                        )
                    ],
                    sets=[],
                )
            ),
        }
    )
    assert "free_space" not in tools_of(calls) and "start_download" not in tools_of(calls)
    assert final["status"] == "failed" and KIMI in " ".join(final["unresolved"])


def test_a_host_that_stopped_answering_stops_the_run_without_a_retry_on_top_of_the_host_layers():
    calls, final = drive({"host_facts": lambda a: err("host_unavailable")})
    assert tools_of(calls) == ["host_facts"] and final["status"] == "failed"
    assert "not answering after its retries" in final["summary"] + " ".join(final["unresolved"])


def test_recovery_rules_directly():
    base = Candidate({"model_path": KIMI, "tp": 8, "port": 30000})

    def failed(kind: str, **details: Any) -> Outcome:
        return Outcome(ok=False, error=ToolErrorRecord(kind=kind, what=f"{kind} happened", remedy="r", details=details))

    crash = failed("launch_failed", cause="crash")
    assert isinstance(after_launch_failure(base, crash, [base]), Retry)  # one relaunch after a bare crash
    assert isinstance(after_launch_failure(base, crash, [base, base]), GiveUp)
    weights = failed("launch_failed", cause="out_of_memory", memory="weights_do_not_fit")
    assert isinstance(after_launch_failure(base, weights, [base]), GiveUp)
    too_old = failed("sglang_too_old")
    assert isinstance(after_launch_failure(base, too_old, [base]), GiveUp)


def test_candidates_and_names():
    names = [c.name for c in autoregressive_candidates(KIMI, 8, moe=True, interconnect="pcie")]
    assert names == ["tp8", "tp8-ep8", "tp8-ep4", "tp8-ep8-dp8-dpattn", "pp8"]
    assert [c.name for c in autoregressive_candidates(KIMI, 8, moe=False, interconnect="nvlink")] == ["tp8"]
    assert target_name_for("SubSir/Kimi-K2.6-DFlash-tmp-long") == "Kimi-K2.6"
    assert target_name_for("SubSir/Kimi-K2.6-DFlash2-b8") == "Kimi-K2.6"  # a DFlash-family name
    assert target_name_for("org/plain-model") is None
    assert understand("Goal: quantize org/model to int4").cannot_do
    assert understand(GOAL).goal.repo_id == "SubSir/Kimi-K2.6-DFlash-tmp-long"


def _bench_by_layout(share_of: Callable[[dict[str, Any], int], float]) -> dict[str, Answer]:
    """Launch and benchmark answers where a layout streams share_of(config, concurrency) of the others' tok/s."""
    served: list[dict[str, Any]] = []

    def launch(args: dict[str, Any]) -> dict[str, Any]:
        served.append(args["config"])
        return _launch(args)

    def bench(args: dict[str, Any]) -> dict[str, Any]:
        out = _bench(args)
        for level in out["result"]["levels"]:
            level["output_tok_s"] *= share_of(served[-1], level["concurrency"])
        return out

    return {"launch_server": launch, "benchmark": bench}


def _levels_benchmarked(calls: list[tuple[str, dict]]) -> dict[str, list[int]]:
    """Every level each launched layout was benchmarked at, by the layout's name."""
    by_layout: dict[str, list[int]] = {}
    name = ""
    for tool, args in calls:
        if tool == "launch_server":
            name = Candidate(args["config"]).name
        elif tool == "benchmark":
            by_layout.setdefault(name, []).extend(args["levels"])
    return by_layout


def test_a_baseline_layout_far_behind_at_the_low_levels_is_not_measured_at_the_high_ones():
    calls, final = drive(_bench_by_layout(lambda config, _: 0.3 if config.get("pp", 1) > 1 else 1.0))
    levels = _levels_benchmarked(calls)
    assert levels["pp8"] == [1, 32, 64] and levels["tp8"] == levels["tp8-ep8"] == [1, 32, 64, 128, 256]
    assert (
        "pp8 not measured past C=64: under 50% of the best baseline at every level below and not catching up"
        in final["summary"]
    )
    assert final["status"] == "completed"


def _pp8_levels_at_shares(shares: dict[int, float], settings: PlaybookSettings | None = None) -> list[int]:
    """The levels pp8 is benchmarked at when it streams shares[c] of the other layouts' tok/s at level c."""
    calls, final = drive(
        _bench_by_layout(lambda config, c: shares.get(c, 1.0) if config.get("pp", 1) > 1 else 1.0), settings=settings
    )
    assert final["status"] == "completed"
    return _levels_benchmarked(calls)["pp8"]


def test_a_baseline_layout_within_reach_at_one_low_level_is_measured_at_every_level():
    assert _pp8_levels_at_shares({1: 0.3, 32: 0.4, 64: 0.6}) == [1, 32, 64, 128, 256]


def test_a_baseline_layout_catching_up_with_the_load_is_measured_at_every_level():
    # Under half of the best at every low level, but gaining (as DP attention does): its peak may still win.
    assert _pp8_levels_at_shares({1: 0.3, 32: 0.35, 64: 0.45}) == [1, 32, 64, 128, 256]
    assert _pp8_levels_at_shares({1: 0.3, 32: 0.3, 64: 0.35}) == [1, 32, 64]


def test_one_low_level_shows_no_trend_and_screen_below_0_turns_the_screen_off():
    two_levels = PlaybookSettings(levels=(1, 128))
    assert _pp8_levels_at_shares({1: 0.3}, two_levels) == [1, 128]
    assert _pp8_levels_at_shares({1: 0.1, 32: 0.1, 64: 0.1}, PlaybookSettings(screen_below=0)) == [1, 32, 64, 128, 256]


def test_the_loops_parsed_goal_is_taken_only_with_a_known_algorithm_and_something_to_work_on():
    named = understand(
        'Goal: x\n{"repo_id": null, "target": "Kimi-K2.6", "algorithm": "NGRAM", "intents": ["benchmark"]}'
    )
    assert named.goal is not None and named.goal.algorithm == "NGRAM" and named.goal.target == "Kimi-K2.6"
    unknown = understand('Goal: x\n{"repo_id": "org/drafter", "algorithm": "WHATEVER"}')
    assert unknown.goal is not None and unknown.goal.algorithm is None
    nothing = understand('Goal: x\n{"repo_id": null, "target": null}')
    assert nothing.goal is None and "names no drafter repo and no target model" in str(nothing.cannot_do)


def test_a_change_of_winner_between_levels_far_apart_is_bracketed_on_the_fastest_of_each_kind():
    # Speculation twice as fast at C=1 and half as fast from C=32: the change lies somewhere in 1..32.
    def share(config: dict[str, Any], c: int) -> float:
        if not config.get("speculative_algorithm"):
            return 1.0
        return 2.0 if c < 8 else 0.5

    calls, final = drive(_bench_by_layout(share))
    levels = _levels_benchmarked(calls)
    bracketed = {name: lv for name, lv in levels.items() if 2 in lv}
    assert len(bracketed) == 2 and all(lv[-4:] == [2, 4, 8, 16] for lv in bracketed.values())
    assert sum("+" in name for name in bracketed) == 1  # one speculative, one autoregressive configuration
    assert "the winner changed between C=1 and C=32, now bracketed within a factor of 2" in final["summary"]
    calls, _ = drive(_bench_by_layout(share), settings=PlaybookSettings(bracket=False))
    assert not any(2 in lv for lv in _levels_benchmarked(calls).values())


def test_a_target_missing_on_a_node_of_the_group_stops_before_anything_changes():
    def models(args):
        found = sample("find_models")
        found["models"][0]["missing_on"] = ["gpu-b"]  # Kimi-K2.6 is not at its path on the other node
        return ok(found)

    calls, final = drive({"find_models": models})
    assert not {"check_disk", "start_download", "launch_server"} & set(tools_of(calls))
    said = final["summary"] + " ".join(final["unresolved"])
    assert final["status"] == "failed" and "not on gpu-b" in said and "Nothing was downloaded or launched" in said


def test_a_node_that_never_joins_stops_the_run_after_one_launch():
    calls, final = drive({"launch_server": lambda a: err("launch_failed", cause="rank_not_joined")})
    assert tools_of(calls).count("launch_server") == 1
    said = final["summary"] + " ".join(final["unresolved"])
    assert final["status"] == "failed" and "No other configuration was launched" in said


def test_a_level_that_stalled_is_measured_again_before_anything_is_compared_on_it():
    stalls = [True]  # the first sweep's C=32 stalls once

    def bench(args: dict[str, Any]) -> dict[str, Any]:
        out = _bench(args)
        for level in out["result"]["levels"]:
            level["output_tok_s_ci95"] = [level["output_tok_s"] * 0.98, level["output_tok_s"] * 1.02]
            if level["concurrency"] == 32 and stalls and args["levels"] != [32]:
                stalls.pop()
                level.update(output_tok_s=150.0, output_tok_s_ci95=[30.0, 300.0], unstable=True)
        return out

    calls, final = drive({"benchmark": bench})
    assert final is not None and final["status"] == "completed"
    benchmarks = [args["levels"] for tool, args in calls if tool == "benchmark"]
    assert benchmarks[:2] == [[1, 32, 64, 128, 256], [32]]
    assert benchmarks.count([32]) == 1  # once: every later sweep held still
    assert "the throughput stalled inside C=32; measured again" in final["summary"]
