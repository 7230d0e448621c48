"""Launching the serving simulator as a real process: SGLang's checks, messages and lifecycle."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from specops.sim.faults import OldSglang, OutOfMemory
from specops.sim.world.ports import PortEntry, PortNotListening, resolve_port, write_entry

from .serving_world import DRAFTER_CONFIG, build_world, launch_args, run_launch, start_server, stop_server, wait_ready

pytestmark = [pytest.mark.timeout(30), pytest.mark.slow]


@pytest.fixture
def layout(tmp_path: Path):
    return build_world(tmp_path / "host")


def test_dflash_refuses_pipeline_parallelism(layout) -> None:
    done = run_launch(layout, launch_args(layout, "--pp-size", "2", dflash=True))
    assert done.returncode == 1
    assert "ValueError: Currently DFLASH speculative decoding only supports pp_size == 1." in done.stderr


def test_dflash_with_dp_attention_needs_the_dp_lm_head_on_0_5_23(layout) -> None:
    done = run_launch(layout, launch_args(layout, "--dp", "8", "--enable-dp-attention", dflash=True))
    assert done.returncode == 1
    assert "ValueError: DFLASH with dp attention requires --enable-dp-lm-head." in done.stderr
    assert "'--enable-dp-attention' is deprecated" in done.stderr  # 0.5.23 warns, and rewrites it to --attn-dp-size


def test_dflash_refuses_dp_attention_on_0_5_11(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "host", faults=[OldSglang(version="0.5.11")])
    done = run_launch(
        layout, launch_args(layout, "--dp", "8", "--enable-dp-attention", "--enable-dp-lm-head", dflash=True)
    )
    assert done.returncode == 1
    assert "ValueError: Currently DFLASH speculative decoding does not support dp attention." in done.stderr


def test_dflash_needs_a_draft_model(layout) -> None:
    done = run_launch(layout, launch_args(layout, "--speculative-algorithm", "DFLASH"))
    assert done.returncode == 1
    assert "ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path." in done.stderr


def test_unknown_flag_is_an_argparse_error(layout) -> None:
    done = run_launch(layout, launch_args(layout, "--no-such-flag"))
    assert done.returncode == 2
    assert "sglang serve: error: unrecognized arguments: --no-such-flag" in done.stderr


def test_a_parser_name_sglang_lacks_is_an_argparse_error(layout) -> None:
    done = run_launch(layout, launch_args(layout, "--reasoning-parser", "deepseek_r1"))
    assert done.returncode == 2
    assert (
        "sglang serve: error: argument --reasoning-parser: invalid choice: 'deepseek_r1' "
        "(choose from 'auto', 'apertus2509', 'beam', 'deepseek-r1', " in done.stderr
    )


def test_old_sglang_has_no_dflash(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "host", faults=[OldSglang(version="0.5.10.post1")])
    done = run_launch(layout, launch_args(layout, dflash=True))
    assert done.returncode == 2
    assert "argument --speculative-algorithm: invalid choice: 'DFLASH' (choose from" in done.stderr
    assert "'EAGLE3'" in done.stderr and "'DFLASH'," not in done.stderr


def test_non_dflash_drafter_fails_at_load(tmp_path: Path) -> None:
    layout = build_world(
        tmp_path / "host", drafter_config={**DRAFTER_CONFIG, "architectures": ["LlamaForCausalLMEagle3"]}
    )
    done = run_launch(layout, launch_args(layout, "--ep", "4", dflash=True))
    assert done.returncode == 1
    assert "Traceback (most recent call last):" in done.stderr and "DFlashDraftModel" in done.stderr
    assert "Load weight end. type=KimiK25ForConditionalGeneration" in done.stderr  # the target had loaded


def test_target_layer_ids_beyond_the_target(tmp_path: Path) -> None:
    bad = {**DRAFTER_CONFIG, "dflash_config": {"mask_token_id": 163838, "target_layer_ids": [1, 12, 70]}}
    layout = build_world(tmp_path / "host", drafter_config=bad)
    done = run_launch(layout, launch_args(layout, "--ep", "4", dflash=True))
    assert done.returncode == 1
    assert "target_layer_ids must be non-empty integers in [0, 61)" in done.stderr


def test_out_of_memory(tmp_path: Path) -> None:
    layout = build_world(
        tmp_path / "host", faults=[OutOfMemory(foreign_mib_per_gpu=20000, min_mem_fraction_static=None)]
    )
    done = run_launch(layout, launch_args(layout, "--ep", "4"))
    assert done.returncode == 1
    assert "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static." in done.stderr
    assert not any(layout.gpu_dir.glob("*.json")) and not any(layout.ports_dir.glob("*.json"))


def test_weights_larger_than_the_gpus(layout) -> None:
    done = run_launch(layout, launch_args(layout, "--tp", "4"))
    assert done.returncode == 1
    assert "torch.OutOfMemoryError: CUDA out of memory." in done.stderr


def test_port_in_use(layout) -> None:
    write_entry(layout, 30000, PortEntry(pid=os.getpid(), real_port=None, owner="squatter", command="nc -l 30000"))
    done = run_launch(layout, launch_args(layout, "--ep", "4"))
    assert done.returncode == 1
    # No modelled release binds the HTTP port before loading: the whole load is spent, then uvicorn fails to bind.
    assert "error while attempting to bind on address ('127.0.0.1', 30000): address already in use" in done.stderr
    assert done.stderr.index("Load weight end") < done.stderr.index("address already in use")


def test_becomes_healthy_and_cleans_up(layout, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    proc = start_server(layout, launch_args(layout, "--ep", "4", "--enable-metrics", dflash=True), log)
    try:
        wait_ready(proc, log)
        base = f"http://127.0.0.1:{resolve_port(layout, 30000)}"
        assert urllib.request.urlopen(f"{base}/health").status == 200
        info = json.loads(urllib.request.urlopen(f"{base}/get_server_info").read())
        assert info["version"] == "0.5.23" and info["speculative_algorithm"] == "DFLASH"
        assert info["max_running_requests"] == 48 and info["speculative_num_draft_tokens"] == 8
        # As SGLang: no average until a decode interval was logged (the 8-token warm-up logs none).
        assert "avg_spec_accept_length" not in info["internal_states"][0]
        holding = json.loads((layout.gpu_dir / f"{proc.pid}.json").read_text())
        assert sorted(holding["gpu_mib"]) == [str(i) for i in range(8)]
        text = log.read_text()
        assert "Uvicorn running on http://127.0.0.1:30000" in text
        assert text.index("Uvicorn running on") < text.index("The server is fired up and ready to roll!")
        body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}).encode()
        req = urllib.request.Request(
            f"{base}/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        out = json.loads(urllib.request.urlopen(req).read())
        assert out["usage"]["completion_tokens"] <= 5 and out["choices"][0]["message"]["content"]
        metrics = urllib.request.urlopen(f"{base}/metrics").read().decode()
        assert "sglang:num_running_reqs{" in metrics and "sglang:spec_accept_length{" in metrics
        # 0.5.23's DFlash worker serves logprobs (0.5.11 refused them: tests/sim/test_serving_releases.py).
        logprobs = json.dumps({"text": "hi", "sampling_params": {"max_new_tokens": 4}, "return_logprob": True}).encode()
        served = urllib.request.urlopen(
            urllib.request.Request(f"{base}/generate", data=logprobs, headers={"Content-Type": "application/json"})
        )
        assert served.status == 200
    finally:
        assert stop_server(proc) == 0
    assert not (layout.gpu_dir / f"{proc.pid}.json").exists()
    with pytest.raises(PortNotListening):
        resolve_port(layout, 30000)
