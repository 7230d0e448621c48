"""host_facts on sim: and ssh:// (one seed-ct200 world), on this machine (no GPU), and `specops doctor`."""

import time

import pytest
import typer
from typer.testing import CliRunner

from specops.cli.doctor import doctor
from specops.sim.faults import BrokenCli, OldSglang, OutOfMemory
from specops.tools.context import ToolContext
from specops.tools.facts import HostFactsArgs, host_facts, redact_argv
from specops.tools.hosts import LocalHost

from .worlds import ctx, host, reach, start_world, world  # noqa: F401

MIB = 1024**2


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_facts_match_the_profile(ctx, world):  # noqa: F811
    facts = host_facts(ctx, HostFactsArgs())
    profile = world.state.profile
    assert facts.gpu_count == profile.gpus.count
    assert {g.model for g in facts.gpus} == {profile.gpus.model}
    assert facts.gpus[0].memory_total_bytes == profile.gpus.memory_mib * MIB
    assert facts.driver_version == profile.gpus.driver_version and facts.cuda_version == profile.gpus.cuda_version
    assert facts.interconnect is not None and facts.interconnect.interconnect == "pcie"
    assert facts.cpu.cores == profile.cpu.cores
    # The modelled machine's, not those of the machine running the simulation.
    assert (facts.os, facts.kernel, facts.cpu.model) == (
        profile.software.os,
        profile.software.kernel,
        profile.cpu.model,
    )
    assert facts.memory is not None and abs(facts.memory.total_bytes - profile.memory_gib * 1024**3) < 1024**3
    assert facts.python_version == profile.software.python
    assert facts.sglang_version == profile.software.sglang
    clis = {c.name: c for c in facts.clis}
    assert clis["hf"].works and clis["hf"].version
    # huggingface_hub 1.x: the old CLI is on PATH but only says it no longer works.
    assert clis["huggingface-cli"].path and not clis["huggingface-cli"].works
    root = next(m for m in facts.mounts if m.mount_point == "/")  # the host's /, as it names it
    assert root.use_percent == 98 and root.size_bytes == int(profile.mount("/").size_gib * 1024**3)
    assert facts.serving == []


def test_local_host_without_gpu_answers_with_a_note():
    with LocalHost() as local:
        facts = host_facts(ToolContext.for_host(local), HostFactsArgs())
    assert facts.gpus == [] and facts.gpu_count == 0 and facts.interconnect is None
    assert any("nvidia-smi" in n for n in facts.notes)
    assert facts.python_version and facts.mounts


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_running_server_and_foreign_gpu_process_are_listed():
    with (
        start_world(faults=[OutOfMemory(foreign_mib_per_gpu=2048, min_mem_fraction_static=None)], time_scale=400) as w,
        reach(w, "sim") as h,
    ):
        proc = h.start_detached(
            [
                "python3",
                "-m",
                "sglang.launch_server",
                "--model-path",
                "models/Kimi-K2.6",
                "--tp",
                "8",
                "--port",
                "30123",
                "--api-key",
                "sk-secret",
                "--trust-remote-code",
            ],
            log_path="logs/server.log",
        )
        try:
            deadline = time.monotonic() + 30
            while "ready to roll" not in h.tail("logs/server.log") and time.monotonic() < deadline:
                assert h.is_running(proc), h.tail("logs/server.log")
                time.sleep(0.2)
            facts = host_facts(ToolContext.for_host(h), HostFactsArgs())
        finally:
            h.stop(proc)
    [server] = facts.serving
    assert server.pid == proc.pid and server.port == 30123 and server.model_path == "models/Kimi-K2.6"
    assert server.tp_size == 8 and server.gpus_used == 8 and server.gpu_memory_bytes > 8 * 40 * 1024**3
    assert "sk-secret" not in " ".join(server.argv) and "***" in server.argv
    [foreign] = facts.other_gpu_processes
    assert foreign.gpu_memory_bytes == 8 * 2048 * MIB


def test_redaction_of_secret_flags():
    assert redact_argv(["x", "--api-key", "k", "--hf-token=t", "--port", "1"]) == [
        "x",
        "--api-key",
        "***",
        "--hf-token=***",
        "--port",
        "1",
    ]


def test_flags_that_only_mention_tokens_keep_their_values():
    """A running server's --speculative-num-draft-tokens was shown as ***: only flags naming a secret are masked."""
    argv = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--speculative-num-draft-tokens",
        "16",
        "--max-total-tokens=8192",
        "--mask-token",
        "<|MASK|>",
        "--token-file",
        "/run/secrets/hf",
        "--admin-api-key",
        "a",
        "--token",
        "t",
    ]
    assert redact_argv(argv) == [
        "python3",
        "-m",
        "sglang.launch_server",
        "--speculative-num-draft-tokens",
        "16",
        "--max-total-tokens=8192",
        "--mask-token",
        "<|MASK|>",
        "--token-file",
        "/run/secrets/hf",
        "--admin-api-key",
        "***",
        "--token",
        "***",
    ]


def _doctor_app() -> typer.Typer:
    app = typer.Typer()
    app.command()(doctor)
    return app


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_doctor_reports_facts_and_the_seed_hosts_problems(world):  # noqa: F811
    result = CliRunner().invoke(_doctor_app(), [world.host_spec])
    assert result.exit_code == 1, result.output
    assert "reached" in result.output and "RTX PRO 6000" in result.output and "PCIe only" in result.output
    assert "98% full" in result.output and "huggingface-cli is broken" in result.output
    assert "SGLang" not in result.output.split("problem(s):")[1]  # 0.5.10 runs DFlash


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_doctor_finds_old_sglang_and_a_cli_that_prints_help():
    with start_world(faults=[OldSglang(version="0.5.10.post1"), BrokenCli()]) as w:
        result = CliRunner().invoke(_doctor_app(), [w.host_spec])
    assert result.exit_code == 1, result.output
    assert "SGLang 0.5.10.post1 is too old for DFlash (needs 0.5.11 or newer)" in result.output
    assert "hf CLI does not work" in result.output and "help text" in result.output


def test_doctor_on_an_unreachable_host_exits_2():
    result = CliRunner().invoke(_doctor_app(), ["sim:/nonexistent/world"])
    assert result.exit_code == 2 and "cannot reach" in result.output
    result = CliRunner().invoke(_doctor_app(), ["ssh://root@bad;host"])
    assert result.exit_code == 2
