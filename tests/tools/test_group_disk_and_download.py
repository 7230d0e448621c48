"""check_disk and start_download over a host group (two simulated nodes of h100x16-2node, reached as sim hosts):
the check looks at every node and names the one without room (rank 0's alternatives kept only where every node
has room); a download fetches on every node, an absolute target given as rank 0 names it landing at the same
host path on the other node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from specops.sim.world.cluster import SimCluster
from specops.tools.disk import CheckDiskArgs, check_disk, disk_view
from specops.tools.download import start_download, wait_download
from specops.tools.download.models import DownloadState, StartDownloadArgs, WaitDownloadArgs

from .worlds import open_group

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"
FAST = 400.0


@pytest.fixture(scope="module")
def roomy() -> Iterator[SimCluster]:
    with SimCluster.start("h100x16-2node", time_scale=FAST, load_time_scale=FAST) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def node_b_full() -> Iterator[SimCluster]:
    faults = ["full_disk:node=1", "full_disk:node=1,mount_point=/data,free_gib=2"]
    with SimCluster.start("h100x16-2node", faults=faults, time_scale=FAST, load_time_scale=FAST) as cluster:
        yield cluster


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_check_names_the_node_without_room(node_b_full):
    with open_group(node_b_full) as ctx:
        result = check_disk(ctx, CheckDiskArgs(repo_id=DRAFTER, target="models/drafter"))
        b = ctx.peers[0].host.spec
    assert result.verdict == "does_not_fit" and result.shortfall_bytes > 0
    assert result.summary.startswith(f"on {b}: ") and f"{b} has no room for it" in result.summary
    assert result.target == ctx.resolve("models/drafter")  # as rank 0 names it, for start_download
    # Rank 0's /data has room, but the same directory on node 1's /data does not: no alternative is offered.
    assert result.alternatives == []
    assert [line.startswith(f"{name}: ") for line, name in zip(result.nodes, [ctx.host.spec, b], strict=True)] == [
        True,
        True,
    ]
    assert "fits" in result.nodes[0] and "does NOT fit" in result.nodes[1]
    assert disk_view(result)["nodes"] == result.nodes


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_check_fits_when_every_node_has_room(roomy):
    with open_group(roomy) as ctx:
        result = check_disk(ctx, CheckDiskArgs(repo_id=DRAFTER, target="models/drafter"))
    assert result.verdict == "fits" and len(result.nodes) == 2
    assert all("fits" in line and "NOT" not in line for line in result.nodes)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_download_lands_at_the_same_host_path_on_every_node(roomy):
    with open_group(roomy) as ctx:
        target = ctx.resolve("models/drafter-json")  # absolute, as rank 0 names it
        handle = start_download(ctx, StartDownloadArgs(repo_id=DRAFTER, target_dir=target, include=["*.json"]))
        status = wait_download(ctx, WaitDownloadArgs(download=handle.id, timeout_s=120, poll_s=0.2)).status
        (peer_handle,) = handle.peers
    assert status.state is DownloadState.FINISHED, status
    assert [p.state for p in status.peers] == [DownloadState.FINISHED]
    # One host path on both nodes (each node's files in its own tree on this machine).
    assert peer_handle.target_dir == target and target.startswith("/root/")
    for world in roomy.worlds:
        where = world.layout.host_path(target)
        assert sorted(p.name for p in Path(where).glob("*.json")) == [
            "config.json",
            "model.safetensors.index.json",
        ]
