"""Reading which node a server over several nodes lost, from the lines NCCL, torch and the kernel print."""

from __future__ import annotations

from specops.tools.benchmark.sweep import _cause_words
from specops.tools.sglang.diagnosis import diagnose
from specops.tools.sglang.node_fault import _gpu_xid, named_peer, peer_lost

SOCKET_LOST = (
    "[rank0]:[E1205 11:00:00.000001 ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group "
    "watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, "
    "NCCL version 2.27.3\n"
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
    "Last error:\n"
    "socketProgress: Connection closed by remote peer 10.0.0.2<41234> (node_rank 1, ranks 8-15)\n"
)
IB_LOST = SOCKET_LOST.replace(
    "socketProgress: Connection closed by remote peer 10.0.0.2<41234> (node_rank 1, ranks 8-15)",
    "NET/IB : Got completion from peer 10.0.0.2<41234> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
    "localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0 (node_rank 1, ranks 8-15)",
)
WATCHDOG = (
    "[rank3]:[E1205 11:00:00.1 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1282411, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n"
)


def test_the_peer_is_read_from_the_socket_and_the_infiniband_wording():
    assert named_peer(SOCKET_LOST) == 1 and named_peer(IB_LOST) == 1
    assert peer_lost(SOCKET_LOST) and peer_lost(IB_LOST)
    assert named_peer(WATCHDOG) is None and not peer_lost(WATCHDOG)


def test_the_infiniband_error_is_a_lost_peer_whose_node_the_remedy_names():
    found = diagnose(IB_LOST)
    assert "not load" in found.remedy and "max_running_requests" not in found.remedy
    assert found.remedy.endswith("(the peer that went away: 10.0.0.2<41234> (node_rank 1, ranks 8-15))")


def test_a_lost_peer_is_not_called_a_watchdog_timeout():
    """torch's watchdog thread raises NCCL's remote error: the words must say a peer went, not a hung collective."""
    lines = diagnose(SOCKET_LOST).lines
    assert _cause_words("crash", lines).startswith("a peer went away")
    assert _cause_words("crash", diagnose(WATCHDOG).lines).startswith("NCCL watchdog timeout")


def test_only_an_xid_that_takes_a_gpu_out_counts():
    kernel = (
        "[  812.1] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python3, Graphics Exception\n"
        "[  901.5] NVRM: Xid (PCI:0000:5d:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n"
        "[  901.5] NVRM: GPU 0000:5d:00.0: GPU has fallen off the bus.\n"
    )
    line, code = _gpu_xid(kernel) or ("", "")
    assert code == "79" and "PCI:0000:5d:00" in line
    assert _gpu_xid("[  812.1] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=x, Graphics Exception\n") is None
