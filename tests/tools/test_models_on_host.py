"""find_models: model directories and HF cache snapshots on the seed host (reached as sim: and ssh://),
with layers, experts and df-sized sizes."""

import pytest

from specops.tools.models_on_host import FindModelsArgs, find_models

from .worlds import ctx, host, world  # noqa: F401

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)


def test_seed_host_models(ctx, world):  # noqa: F811
    found = find_models(ctx, FindModelsArgs())
    by_name = {(m.name, m.source): m for m in found.models}
    kimi = by_name[("Kimi-K2.6", "directory")]
    assert kimi.path == "/root/models/Kimi-K2.6"  # the host's path, as the seed host shows it
    # Kimi-K2.6 is multimodal: layers and experts sit in text_config.
    assert kimi.num_hidden_layers == 61 and kimi.num_experts == 384
    assert kimi.size_bytes > 500 * 1024**3 and kimi.served_by == []
    qwen = [m for m in found.models if m.source == "hf_cache"]
    assert {m.repo_id for m in qwen} == {"Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"} and len(qwen) == 2
    assert all("/snapshots/" in m.path and m.weight_files > 0 for m in qwen)

    only = find_models(ctx, FindModelsArgs(name="kimi"))
    assert [m.name for m in only.models] == ["Kimi-K2.6"]
    assert find_models(ctx, FindModelsArgs(name="no-such-model")).models == []
