"""The whole world at once, as the agent will drive it: a sim host, its Hub, a DFlash server.

Everything goes through the host's own executables (hf, python -m
sglang.launch_server, nvidia-smi, df) via the Host layer, as on a real GPU box.
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from specops.sim.world.world import SimWorld
from specops.tools.hosts import open_host

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def _df_used(host, path: str) -> int:
    return int(host.run(["df", "-B1", "--output=used", path], timeout=30).check().stdout.split()[-1])


def _gpu_mib_used(host) -> list[int]:
    out = host.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"], timeout=30).check()
    return [int(v) for v in out.stdout.split()]


def test_download_launch_dflash_query_and_stop():
    # Loading is scaled apart from serving: 420 s of modelled loading take about 0.2 s here.
    with SimWorld.start("seed-ct200", time_scale=20, load_time_scale=2000) as world, open_host(world.host_spec) as host:
        used_before = _df_used(host, "models")
        download = host.run(
            ["hf", "download", "SubSir/Kimi-K2.6-DFlash-tmp-long", "--local-dir", "models/dflash"], timeout=60
        ).check()
        assert "models/dflash" in download.stdout
        # df counts the drafter at its modelled size: about 8.2 GB, not the 8 MB stored.
        grown = _df_used(host, "models") - used_before
        assert 8.0e9 < grown < 8.5e9
        config = json.loads(host.read_file(str(world.layout.home / "models/dflash/config.json")))
        assert config["architectures"] == ["DFlashDraftModel"]

        server = host.start_detached(
            [
                "python3",
                "-m",
                "sglang.launch_server",
                "--model-path",
                "models/Kimi-K2.6",
                "--tp",
                "8",
                "--ep",
                "4",
                "--trust-remote-code",
                "--speculative-algorithm",
                "DFLASH",
                "--speculative-draft-model-path",
                "models/dflash",
                "--port",
                "30000",
            ],
            log_path="logs/sglang.log",
        )
        deadline = time.monotonic() + 15  # at time_scale 20 alone, loading would take 21 s
        while "The server is fired up and ready to roll!" not in host.tail("logs/sglang.log", lines=200):
            assert host.is_running(server), host.tail("logs/sglang.log", lines=60)
            assert time.monotonic() < deadline, host.tail("logs/sglang.log", lines=60)
            time.sleep(0.1)

        assert all(mib > 60_000 for mib in _gpu_mib_used(host)), "the server holds memory on all 8 GPUs"
        with host.forward(30000) as (address, port):
            info = json.load(urllib.request.urlopen(f"http://{address}:{port}/get_server_info", timeout=10))
            assert info["speculative_algorithm"] == "DFLASH"
            assert info["speculative_num_draft_tokens"] == 8  # block size read from the drafter's config
            assert info["max_running_requests"] == 48  # SGLang's DFlash default
            request = urllib.request.Request(
                f"http://{address}:{port}/generate",
                data=json.dumps(
                    {"text": "What is 17 * 23?", "sampling_params": {"max_new_tokens": 64, "temperature": 0}}
                ).encode(),
                headers={"Content-Type": "application/json"},
            )
            meta = json.load(urllib.request.urlopen(request, timeout=30))["meta_info"]
            assert meta["completion_tokens"] == 64
            assert meta["spec_accept_length"] > 1.5

        host.stop(server, grace_s=10)
        assert not host.is_running(server)
        assert _gpu_mib_used(host) == [0] * 8
    assert not world.root.exists()
