"""Failure diagnosis against the messages each modelled SGLang release writes, as extracted from its wheel."""

from __future__ import annotations

import re

import pytest

from specops.sglang_releases.facts import load, modelled_versions
from specops.sim.serving.errors import LaunchError
from specops.sim.serving.server_args import parse_server_args
from specops.tools.sglang.diagnosis import SIGNATURES, diagnose


def _filled(template: str) -> str:
    """A message as SGLang would print it: each `{expression}` field given a value."""
    return re.sub(r"\{[^{}]*\}", "7", template)


@pytest.mark.parametrize("version", modelled_versions())
def test_every_released_message_is_read_as_its_cause(version):
    release = load(version)
    for rule in release.launch_rules:
        if not rule.message:  # a bare assert (eagle_partial_params): nothing to read, preflight refuses it first
            continue
        expected = "dflash_rule" if rule.algorithm == "DFLASH" else "speculative_rule"
        assert diagnose(f"ValueError: {_filled(rule.message)}").cause == expected, rule.id
    lines = release.log_lines
    oom = diagnose(f"RuntimeError: {lines.out_of_memory}")
    assert oom.cause == "out_of_memory" and oom.memory == "pool_too_small"
    assert diagnose(f"Exception: {_filled(lines.cuda_graph_capture_failed)}").cause == "cuda_graph_failure"
    assert lines.port_in_use is not None
    assert diagnose(f"[2026-12-03 10:00:00] {_filled(lines.port_in_use)}").cause == "port_in_use"


def test_argparse_refusals_of_the_releases_are_unsupported_flags():
    for argv, release in (
        (["--cuda-graph-max-bs", "64"], "0.5.23"),
        (["--speculative-algorithm", "DFLASH"], "0.5.10.post1"),
        (["--no-such-flag"], "0.5.11"),
    ):
        with pytest.raises(LaunchError) as refused:
            parse_server_args(["--model-path", "/m", *argv], load(release))
        assert diagnose(refused.value.text).cause == "unsupported_flag", (release, refused.value.text)


def test_no_signature_scans_a_line_from_every_position():
    # A leading `.*` (or a leading lazy field) retries from each start: quadratic on SGLang's server_args line,
    # tens of kilobytes on 0.5.23.
    for sig in SIGNATURES:
        for alternative in sig.pattern.pattern.split("|"):
            assert not alternative.startswith((".*", "[^\\n]*")), (sig.cause, alternative[:40])


def test_a_peer_that_went_away_is_told_from_a_watchdog_timeout_and_named():
    """torch's watchdog reports both; a remote exit is a lost node or link (not load), and the peer line names it."""
    from specops.sim.serving.multinode import remote_exit_lines

    lost = diagnose(remote_exit_lines(0, 1, range(8, 16), "10.0.0.2<41234>", "2026-12-05 11:00:00"))
    assert lost.cause == "crash" and "not load" in lost.remedy and "max_running_requests" not in lost.remedy
    assert "(the peer that went away: 10.0.0.2<41234> (node_rank 1, ranks 8-15))" in lost.remedy
    assert any("Connection closed by remote peer 10.0.0.2<41234>" in line for line in lost.lines)
    hung = diagnose(
        "[rank3]:[E1205 11:00:00.1 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1282411, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n"
    )
    assert "max_running_requests" in hung.remedy and "peer" not in hung.remedy
