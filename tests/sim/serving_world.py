"""A minimal sim world for the serving simulator's tests: world.json, a target and a drafter.

The real host-tree builder lives in sim/host/; these tests build only what the
serving simulator reads, so they stand on their own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from specops.sim.faults import Fault
from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import Profile
from specops.sim.world.layout import WorldLayout
from specops.sim.world.state import WorldState

TARGET_CONFIG = {
    "architectures": ["KimiK25ForConditionalGeneration"],
    "model_type": "kimi_k25",
    "num_hidden_layers": 61,
    "hidden_size": 7168,
    "vocab_size": 163840,
    "text_config": {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "kimi_k2",
        "num_hidden_layers": 61,
        "hidden_size": 7168,
        "vocab_size": 163840,
        "max_position_embeddings": 262144,
    },
}
DRAFTER_CONFIG = {
    "architectures": ["DFlashDraftModel"],
    "model_type": "qwen3",
    "block_size": 8,
    "num_hidden_layers": 6,
    "hidden_size": 7168,
    "vocab_size": 163840,
    "dflash_config": {"mask_token_id": 163838, "target_layer_ids": [1, 12, 24, 35, 47, 58]},
}
TARGET_DIR = "models/Kimi-K2.6"
DRAFTER_DIR = "models/Kimi-K2.6-DFlash"


def write_model(directory: Path, config: dict, shards: int, stored_bytes_per_shard: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    for i in range(1, shards + 1):
        with open(directory / f"model-{i:05d}-of-{shards:05d}.safetensors", "wb") as f:
            f.truncate(stored_bytes_per_shard)  # sparse: the size is what counts


def build_world(
    root: Path,
    profile: Profile | None = None,
    faults: list[Fault] | None = None,
    time_scale: float = 100.0,
    load_seconds: float | None = 20.0,
    sglang: str | None = None,
    drafter_config: dict | None = None,
) -> WorldLayout:
    """Lay out a world whose target weighs what the profile says (553.8 GiB for Kimi K2.6)."""
    profile = profile or load_profile("seed-ct200")
    target = profile.serving.target
    updates_target = {"load_seconds": load_seconds} if load_seconds is not None else {}
    profile = profile.model_copy(
        update={
            "sim": profile.sim.model_copy(update={"time_scale": time_scale}),
            "software": profile.software.model_copy(update={"sglang": sglang}) if sglang else profile.software,
            "serving": profile.serving.model_copy(update={"target": target.model_copy(update=updates_target)}),
        }
    )
    layout = WorldLayout(root)
    byte_scale = profile.sim.byte_scale
    shards = 64
    write_model(
        layout.home / TARGET_DIR, TARGET_CONFIG, shards, int(target.weights_gib * 1024**3 / byte_scale / shards)
    )
    write_model(layout.home / DRAFTER_DIR, drafter_config or DRAFTER_CONFIG, 1, int(3.2 * 1024**3 / byte_scale))
    for d in (layout.ports_dir, layout.gpu_dir, layout.counters_dir):
        d.mkdir(parents=True, exist_ok=True)
    WorldState(
        root=str(root),
        profile=profile,
        faults=faults or [],
        hub_url="http://127.0.0.1:9",
        python=sys.executable,
        real_hf="hf",
        created_at=datetime.now(UTC),
        mounts=[],
        env={},
    ).save()
    return layout


def launch_args(layout: WorldLayout, *extra: str, dflash: bool = False) -> list[str]:
    args = ["--model-path", str(layout.home / TARGET_DIR), "--tp", "8", "--trust-remote-code", *extra]
    if dflash:
        args += ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(layout.home / DRAFTER_DIR)]
    return args


def start_server(layout: WorldLayout, args: list[str], log_path: Path) -> subprocess.Popen:
    """`python -m sglang.launch_server` as the host's stub runs it: main() in a real process."""
    code = "import sys; from pathlib import Path; from specops.sim.serving.launch import main; raise SystemExit(main(sys.argv[2:], Path(sys.argv[1])))"
    log = open(log_path, "w")
    return subprocess.Popen(
        [sys.executable, "-c", code, str(layout.root), *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def run_launch(layout: WorldLayout, args: list[str], timeout: float = 20) -> subprocess.CompletedProcess:
    code = "import sys; from pathlib import Path; from specops.sim.serving.launch import main; raise SystemExit(main(sys.argv[2:], Path(sys.argv[1])))"
    return subprocess.run(
        [sys.executable, "-c", code, str(layout.root), *args], capture_output=True, text=True, timeout=timeout
    )


def wait_ready(proc: subprocess.Popen, log_path: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "The server is fired up and ready to roll!" in log_path.read_text():
            return
        if proc.poll() is not None:
            raise AssertionError(f"server exited {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.05)
    raise AssertionError(f"server not ready in {timeout}s:\n{log_path.read_text()[-3000:]}")


def stop_server(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        proc.terminate()
        try:
            return proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
    return proc.returncode


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
