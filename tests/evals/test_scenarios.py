"""The scenario files: every one loads, has a reason to exist, and the set covers what issue 6 asks for."""

from __future__ import annotations

import pytest

from specops.evals.graders import all_graders
from specops.evals.scenario import ScenarioError, as_dataset, load_scenario, load_scenarios
from specops.evals.sim_host import host_profile, scenario_faults

REQUIRED = {
    "seed-full-disk-broken-cli",
    "second-mount-with-room",
    "nothing-safe-to-free",
    "gated-repo-no-token",
    "missing-repo",
    "hub-throttling",
    "download-cut",
    "incompatible-drafter",
    "not-a-drafter",
    "server-oom-at-launch",
    "port-in-use",
    "cuda-graphs-fail-with-drafter",
    "crash-under-load",
    "ssh-connection-dropped",
    "cannot-do-goal",
    "host-not-answering",
    "sglang-too-old",
    "cluster-node-never-joins",
    "cluster-node-other-sglang",
    "cluster-node-disk-full",
}


@pytest.mark.slow
def test_every_scenario_loads_with_a_reason_and_real_faults_and_profiles():
    scenarios = load_scenarios()
    assert len(scenarios) >= 15
    assert REQUIRED <= {s.name for s in scenarios}
    for s in scenarios:
        assert len(s.why) > 40, s.name
        if s.host.profile:
            host_profile(s.host.profile)  # a host profile, or a cluster's node profile
            scenario_faults(s.host.profile, s.host.faults)  # raises on a fault the simulator does not know
    dataset = as_dataset(scenarios, all_graders())
    assert [c.name for c in dataset.cases] == [s.name for s in scenarios]


def test_a_bad_scenario_file_names_the_file_and_field(tmp_path):
    bad = tmp_path / "bad-one.yaml"
    bad.write_text("name: bad-one\nwhy: a scenario with a typo in it somewhere\ngoal: x\nexpect: {stauts: [failed]}\n")
    with pytest.raises(ScenarioError, match=r"bad-one.yaml: expect.stauts"):
        load_scenario(bad)
    misnamed = tmp_path / "other.yaml"
    misnamed.write_text("name: bad-one\nwhy: a scenario whose name is not its file name\ngoal: x\n")
    with pytest.raises(ScenarioError, match="must match the file name"):
        load_scenario(misnamed)


def test_globs_select_scenarios_and_an_unknown_one_says_what_exists():
    assert [s.name for s in load_scenarios("cannot-do-*,host-not-*")] == ["cannot-do-goal", "host-not-answering"]
    with pytest.raises(ScenarioError, match="seed-full-disk-broken-cli"):
        load_scenarios("no-such-scenario")
