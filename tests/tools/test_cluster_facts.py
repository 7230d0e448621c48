"""cluster_facts (tools/cluster/facts.py) over simulated worlds started here: two hosts of one profile agree,
two profiles disagree on the GPU model (a finding naming both), models are looked for by host path and repo id
on every node, and a shared filesystem is told by a marker: shared for two contexts on one world, not for two
worlds; the markers are gone afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from specops.sim.world.world import SimWorld
from specops.tools.cluster.facts import MARKER_PREFIX, cluster_facts
from specops.tools.context import ToolContext
from specops.tools.errors import InvalidToolInput

from .worlds import reach, start_world

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

KIMI_DIR = "/root/models/Kimi-K2.6"  # seed-ct200's; h200x8-nvlink keeps it under /data/models
QWEN = "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"  # in seed-ct200's Hugging Face cache


@pytest.fixture(scope="module")
def seed_a() -> Iterator[SimWorld]:
    with start_world("seed-ct200") as world:
        yield world


@pytest.fixture(scope="module")
def seed_b() -> Iterator[SimWorld]:
    with start_world("seed-ct200") as world:
        yield world


@pytest.fixture(scope="module")
def h200() -> Iterator[SimWorld]:
    with start_world("h200x8-nvlink") as world:
        yield world


def _markers_left(*worlds: SimWorld) -> list[str]:
    return [str(p) for w in worlds for p in w.layout.root.rglob(f"{MARKER_PREFIX}*")]


@pytest.mark.timeout(180)
def test_two_hosts_of_one_profile_agree(seed_a, seed_b):
    with reach(seed_a, "sim") as a, reach(seed_b, "sim") as b:
        contexts = [ToolContext.for_host(a), ToolContext.for_host(b)]
        found = cluster_facts(contexts, models=[KIMI_DIR, QWEN])
    assert found.ok and found.problems == [], found.summary
    assert [n.name for n in found.nodes] == [a.spec, b.spec] and [n.rank for n in found.nodes] == [0, 1]
    checks = {(c.name, c.subject): c for c in found.checks}
    model = checks[("gpu_model", None)]
    assert model.values == {a.spec: "NVIDIA RTX PRO 6000 Blackwell Server Edition"} | {
        b.spec: "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    }
    assert checks[("gpu_count", None)].values == {a.spec: 8, b.spec: 8}
    assert checks[("sglang_version", None)].values == {a.spec: "0.5.23", b.spec: "0.5.23"}
    # One host path on both nodes (each world's own /root), and the repo in each one's cache.
    kimi = checks[("model_present", KIMI_DIR)]
    assert kimi.ok and all(str(v).startswith("present") for v in kimi.values.values())
    qwen = checks[("model_present", QWEN)]
    assert qwen.ok and all("/root/.cache/huggingface/hub/models--Qwen" in str(v) for v in qwen.values.values())
    # Two worlds share no filesystem: a download per node.
    assert [(s.root, s.all_nodes, s.not_shared_with) for s in found.shared] == [("/root", False, [b.spec])]
    assert found.shared_root is None and "a download per node" in found.summary
    assert _markers_left(seed_a, seed_b) == []


@pytest.mark.timeout(180)
def test_two_profiles_disagree_on_the_gpu_model_over_sim_and_ssh(seed_a, h200):
    with reach(seed_a, "sim") as a, reach(h200, "ssh") as b:
        contexts = [ToolContext.for_host(a), ToolContext.for_host(b)]
        found = cluster_facts(contexts, models=[KIMI_DIR, "moonshotai/Kimi-K2.6"], check_shared=False)
    assert not found.ok
    checks = {(c.name, c.subject): c for c in found.checks}
    model = checks[("gpu_model", None)]
    assert not model.ok and model.failing == [b.spec]
    assert model.values == {a.spec: "NVIDIA RTX PRO 6000 Blackwell Server Edition", b.spec: "NVIDIA H200"}
    for said in (a.spec, b.spec, "NVIDIA H200", "RTX PRO 6000"):
        assert said in model.summary
    assert model.summary in found.problems
    assert checks[("gpu_count", None)].ok and checks[("sglang_version", None)].ok  # 8 GPUs and 0.5.23 on both
    # The seed keeps Kimi in /root/models, the H200 host in /data/models: the path is missing there ...
    by_path = checks[("model_present", KIMI_DIR)]
    assert not by_path.ok and by_path.failing == [b.spec] and "no directory" in str(by_path.values[b.spec])
    # ... while the repo, as find_models sees it, is on both.
    by_repo = checks[("model_present", "moonshotai/Kimi-K2.6")]
    assert by_repo.ok and by_repo.values == {a.spec: KIMI_DIR, b.spec: "/data/models/Kimi-K2.6"}
    assert found.shared == [] and found.shared_root is None


@pytest.mark.timeout(120)
def test_two_contexts_on_one_world_share_its_filesystem(seed_a):
    with reach(seed_a, "sim") as a, reach(seed_a, "sim") as b:
        contexts = [ToolContext.for_host(a), ToolContext.for_host(b)]
        found = cluster_facts(contexts)
    assert [n.name for n in found.nodes] == [f"{a.spec}#0", f"{a.spec}#1"]
    assert found.ok and found.shared_root == "/root"
    (home,) = found.shared
    assert home.all_nodes and home.shared_with == [f"{a.spec}#1"] and home.marker is not None
    assert home.marker.startswith("/root" + "/" + MARKER_PREFIX)
    assert "/root is shared by every node" in found.summary
    assert _markers_left(seed_a) == []


def test_a_model_that_is_neither_path_nor_repo_is_refused_before_any_node_is_asked(seed_a):
    with reach(seed_a, "sim") as a:
        with pytest.raises(InvalidToolInput, match="neither a path nor a Hugging Face repo id"):
            cluster_facts([ToolContext(host=a, home="/root", allowed_roots=("/root",))], models=["not a model"])
    with pytest.raises(InvalidToolInput, match="no nodes"):
        cluster_facts([])
