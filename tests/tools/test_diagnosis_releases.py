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
