"""What the simulator says about a DFLASH launch and its requests, in each release's own words.

The warnings are the release's (sglang_releases: launch_warnings, read from the wheel's `_handle_dflash` or its
server_args.py DFLASH branch), formatted as SGLang's logger formats them and in the order it logs them; the
request refusals are 0.5.11's scheduler's (0.5.23 serves logprobs and grammar under DFLASH).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from specops.sglang_releases.facts import load
from specops.sim.serving.checkpoint import Checkpoint
from specops.sim.serving.server_args import parse_server_args
from specops.sim.serving.speculative import check_dflash_args

from .test_serving_releases import _serve, _state

DRAFTER = Checkpoint(
    path=Path("/models/dflash"),
    config={"architectures": ["DFlashDraftModel"], "num_hidden_layers": 6},  # no block_size: SGLang's default
    shard_count=1,
    weight_bytes=1,
)


def _warnings(version: str, *flags: str, drafter: Checkpoint | None = DRAFTER) -> list[str]:
    argv = ["--model-path", "/models/Kimi-K2.6", "--tp", "8", "--speculative-algorithm", "DFLASH"]
    argv += ["--speculative-draft-model-path", "/models/dflash", *flags]
    release = load(version)
    return check_dflash_args(parse_server_args(argv, release), drafter, release).warnings


MAX_RUNNING = (
    "Max running requests is reset to 48 for speculative decoding. You can override this by explicitly setting "
    "--max-running-requests."
)


def test_0_5_23_warnings_are_its_handle_dflash_lines_in_its_order():
    said = _warnings(
        "0.5.23", "--speculative-num-steps", "3", "--speculative-eagle-topk", "2", "--attention-backend", "flashmla"
    )
    assert said == [
        "DFLASH only supports speculative_num_steps == 1; overriding speculative_num_steps=3 to 1.",
        "DFLASH only supports speculative_eagle_topk == 1; overriding speculative_eagle_topk=2 to 1.",
        "speculative_num_draft_tokens is not set; defaulting to 16 for DFLASH.",
        # The draft takes the target's backend when none is named for it, and falls back where it cannot.
        "DFLASH draft worker does not support attention_backend 'flashmla' on CudaSRTPlatform. "
        "Falling back to 'flashinfer'.",
        MAX_RUNNING,
    ]
    # 0.5.23 runs DFLASH on spec v2: no overlap-scheduler warning; a set cap, no cap warning.
    assert _warnings("0.5.23", "--speculative-num-draft-tokens", "8", "--max-running-requests", "64") == []


def test_0_5_23_trtllm_mha_draft_backend_needs_a_sliding_or_causal_draft():
    said = _warnings("0.5.23", "--speculative-draft-attention-backend", "trtllm_mha", "--max-running-requests", "8")
    assert said == [
        "speculative_num_draft_tokens is not set; defaulting to 16 for DFLASH.",
        "DFLASH only enables 'trtllm_mha' when all layers use sliding attention or the draft is explicitly causal; "
        "got layer_types=None, is_causal=None. Falling back to 'flashinfer'.",
    ]
    sliding = Checkpoint(
        path=DRAFTER.path,
        config={**DRAFTER.config, "block_size": 8, "layer_types": ["sliding_attention"] * 6},
        shard_count=1,
        weight_bytes=1,
    )
    flags = ("--speculative-draft-attention-backend", "trtllm_mha", "--max-running-requests", "8")
    assert _warnings("0.5.23", *flags, drafter=sliding) == []


def test_0_5_11_warnings_are_its_server_args_lines_and_its_workers():
    said = _warnings(
        "0.5.11",
        "--speculative-num-steps",
        "3",
        "--enable-mixed-chunk",
        "--speculative-draft-attention-backend",
        "ascend",
    )
    assert said == [
        "DFLASH only supports speculative_num_steps == 1; overriding speculative_num_steps=3 to 1.",
        "speculative_num_draft_tokens is not set; defaulting to 16 for DFLASH.",
        # 0.5.11's DFlash worker takes four backends (speculative/dflash_worker.py).
        "DFLASH draft worker only supports attention_backend in ('flashinfer', 'fa3', 'fa4', 'triton') for now, "
        "but got 'ascend'. Falling back to 'flashinfer'.",
        MAX_RUNNING,
        "Overlap scheduler is disabled when using DFLASH speculative decoding (spec v2 is not supported yet).",
        "Mixed chunked prefill is disabled because of using dflash speculative decoding.",
    ]


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_logprob_and_grammar_requests_are_refused_only_where_the_release_refuses_them(version):
    async def body(client: TestClient) -> list[tuple[int, str]]:
        answers = []
        for extra in ({"return_logprob": True}, {"sampling_params": {"max_new_tokens": 4, "regex": "[a-z]+"}}):
            request = {"text": "hi", "sampling_params": {"max_new_tokens": 4}, **extra}
            async with client.post("/generate", json=request) as response:
                answers.append((response.status, await response.text()))
        return answers

    answers = _serve(_state(version), body)
    if version == "0.5.23":
        assert [status for status, _ in answers] == [200, 200]
    else:
        assert [status for status, _ in answers] == [400, 400]
        assert "DFLASH speculative decoding does not support return_logprob yet." in answers[0][1]
        assert "DFLASH speculative decoding does not support grammar-constrained decoding yet." in answers[1][1]
