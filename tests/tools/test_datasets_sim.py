"""load_standard_prompts on a simulated host: `hf download --repo-type dataset` and the reader run there, against
the Hub emulator's dataset fixtures; failures are typed, per dataset, and leave the others loaded."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from specops.sim.faults import BrokenCli, GatedRepo, MissingRepo
from specops.sim.hub import dataset_fixtures
from specops.tools.context import ToolContext
from specops.tools.datasets import (
    DATASET_NAMES,
    STANDARD_DATASETS,
    DatasetGated,
    DatasetHubUnreachable,
    DatasetNotFound,
    DatasetsIncomplete,
    load_standard_dataset,
    load_standard_prompts,
)
from specops.tools.errors import InvalidToolInput, PathOutsideAllowedRoots
from specops.tools.hosts import LocalHost

from .worlds import BACKENDS, reach, sim_host, start_world, world  # noqa: F401  (pytest fixtures)

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]
TIMEOUT_S = 120.0


def _rows(name: str) -> list[dict]:
    repo_id = STANDARD_DATASETS[name].repo_id
    return next(d for d in dataset_fixtures.datasets() if d.repo_id == repo_id).rows


def _expected_prompts(name: str, n: int | None = None) -> list[str]:
    dataset = STANDARD_DATASETS[name]
    return [dataset.format(row) for row in _rows(name)[:n]]


def _sha(name: str) -> str:
    repo_id = STANDARD_DATASETS[name].repo_id
    return next(d for d in dataset_fixtures.datasets() if d.repo_id == repo_id).sha


@pytest.fixture(scope="module")
def ctx(sim_host) -> ToolContext:
    return ToolContext.for_host(sim_host)


def test_the_five_datasets_load_on_the_host_formatted(ctx, world):
    loaded = load_standard_prompts(ctx, list(DATASET_NAMES), None, TIMEOUT_S)
    assert loaded.complete and loaded.failures == []
    assert [d.name for d in loaded] == list(DATASET_NAMES)
    home = "/root"
    for d in loaded:
        dataset = STANDARD_DATASETS[d.name]
        # Fewer rows than the usual count: the whole file, in file order, formatted as DFlash does.
        assert d.prompts == _expected_prompts(d.name) and d.rows_in_file == len(_rows(d.name))
        assert (d.repo_id, d.config, d.split, d.path) == (dataset.repo_id, dataset.config, dataset.split, dataset.path)
        assert d.commit == _sha(d.name) and d.revision == "main" and d.category == dataset.category
        assert d.local_path == f"{home}/.cache/specops/datasets/{dataset.repo_id}/{dataset.path}"
        assert d.source.startswith(dataset.describe()) and d.commit[:12] in d.source
    by_name = loaded.by_name()
    assert by_name["gsm8k"].prompts[0] == (
        "Mira bakes 4 trays of muffins with 12 muffins on each tray. She sells 30 muffins at the market. "
        "How many muffins does she have left?\n"
        "Please reason step by step, and put your final answer within \\boxed{}."
    )
    assert (
        by_name["humaneval"]
        .prompts[0]
        .startswith(
            "Write a solution to the following problem and make sure that it passes the tests:\n```python\n"
            "def count_vowels(text: str) -> int:\n"
        )
    )
    assert by_name["humaneval"].prompts[0].endswith("\n```")
    assert by_name["mbpp"].prompts[0] == "Write a python function to count the uppercase letters in a given string."
    assert by_name["mt-bench"].prompts[0] == (
        "Write a warm welcome message for new members of a neighborhood gardening club."
    )
    assert "first turn" in by_name["mt-bench"].source
    # The downloads went through the Hub's dataset routes, one file each.
    for dataset in STANDARD_DATASETS.values():
        hits = world.hub.emulator.requests_to(f"/datasets/{dataset.repo_id}/resolve/main/{dataset.path}")
        assert {(r.method, r.status) for r in hits} >= {("GET", 200)}


def test_per_dataset_takes_the_first_rows(ctx):
    loaded = load_standard_prompts(ctx, ["mbpp", "math500", "mbpp"], 5, TIMEOUT_S)
    assert [d.name for d in loaded] == ["mbpp", "math500"]  # each once, in the order asked
    assert [d.prompts for d in loaded] == [_expected_prompts("mbpp", 5), _expected_prompts("math500", 5)]
    assert "the first 5 of 16 rows" in loaded[0].source
    one = load_standard_dataset(ctx, "gsm8k", 3, TIMEOUT_S)
    assert one.prompts == _expected_prompts("gsm8k", 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_loads_a_parquet_and_the_jsonl_dataset(world, backend):
    with reach(world, backend) as host:
        loaded = load_standard_prompts(ToolContext.for_host(host), ["humaneval", "math500"], 4, TIMEOUT_S)
    assert loaded.complete
    assert [d.prompts for d in loaded] == [_expected_prompts("humaneval", 4), _expected_prompts("math500", 4)]


def test_an_offline_host_keeps_what_it_has_and_names_what_it_lacks(ctx, world):
    own = "~/.cache/specops/offline-datasets"  # a directory of this test's own: only gsm8k is there
    load_standard_prompts(ctx, ["gsm8k"], 2, TIMEOUT_S, datasets_dir=own)
    env = {**world.state.env, "HF_HUB_OFFLINE": "1"}
    with LocalHost(env=env, cwd=world.layout.home) as offline:
        offline_ctx = ToolContext.for_host(offline)
        loaded = load_standard_prompts(offline_ctx, ["gsm8k", "mt-bench"], 2, TIMEOUT_S, datasets_dir=own)
        with pytest.raises(DatasetHubUnreachable):
            load_standard_dataset(offline_ctx, "math500", 2, TIMEOUT_S, datasets_dir=own)
    assert [d.name for d in loaded] == ["gsm8k"] and loaded[0].prompts == _expected_prompts("gsm8k", 2)
    assert loaded[0].commit == _sha("gsm8k")
    (failure,) = loaded.failures
    assert failure.name == "mt-bench" and failure.repo_id == "HuggingFaceH4/mt_bench_prompts"
    assert failure.error.kind == "hub_unavailable" and "offline mode" in failure.error.what
    assert "shipped prompt sets" in failure.error.remedy
    assert "\n" not in failure.error.what


def test_bad_arguments_are_refused_before_anything_runs(ctx, world):
    before = len(world.hub.emulator.requests)
    for names, per in ((["poetry"], None), ([], None), (["gsm8k"], 0)):
        with pytest.raises(InvalidToolInput):
            load_standard_prompts(ctx, names, per, TIMEOUT_S)
    with pytest.raises(InvalidToolInput):
        load_standard_prompts(ctx, ["gsm8k"], None, 0)
    with pytest.raises(InvalidToolInput):
        load_standard_prompts(ctx, ["gsm8k"], None, TIMEOUT_S, revisions={"mbpp": "main"})
    with pytest.raises(PathOutsideAllowedRoots):
        load_standard_prompts(ctx, ["gsm8k"], None, TIMEOUT_S, datasets_dir="/etc/specops")
    assert len(world.hub.emulator.requests) == before


def test_a_missing_and_a_gated_repo_fail_typed_and_the_others_load():
    faults = [MissingRepo(repo_id="openai/gsm8k"), GatedRepo(repo_id="openai/openai_humaneval")]
    with start_world(faults=faults) as w, reach(w, "sim") as host:
        ctx = ToolContext.for_host(host)
        loaded = load_standard_prompts(ctx, list(DATASET_NAMES), 3, TIMEOUT_S)
        assert [d.name for d in loaded] == ["math500", "mbpp", "mt-bench"]
        assert all(d.prompts == _expected_prompts(d.name, 3) for d in loaded)
        failures = {f.name: f.error for f in loaded.failures}
        assert {n: e.kind for n, e in failures.items()} == {"gsm8k": "repo_not_found", "humaneval": "repo_gated"}
        assert "openai/gsm8k" in failures["gsm8k"].what and "not found" in failures["gsm8k"].what
        assert "gated" in failures["humaneval"].what and "token" in failures["humaneval"].remedy
        with pytest.raises(DatasetsIncomplete) as incomplete:
            loaded.raise_for_failures()
        assert incomplete.value.details["loaded"] == ["math500", "mbpp", "mt-bench"]
        assert [f["name"] for f in incomplete.value.details["failures"]] == ["gsm8k", "humaneval"]
        with pytest.raises(DatasetNotFound):
            load_standard_dataset(ctx, "gsm8k", 3, TIMEOUT_S)
        with pytest.raises(DatasetGated):
            load_standard_dataset(ctx, "humaneval", 3, TIMEOUT_S)
        # A token granted access reaches the gated dataset; it travels in the environment only.
        granted = ToolContext.for_host(host, hub_token=SecretStr("hf_granted_datasets"))
        assert load_standard_dataset(granted, "humaneval", 2, TIMEOUT_S).prompts == _expected_prompts("humaneval", 2)


def test_without_a_working_hf_cli_the_library_downloads():
    with start_world(faults=[BrokenCli()]) as w, reach(w, "sim") as host:
        loaded = load_standard_prompts(ToolContext.for_host(host), ["mt-bench"], 3, TIMEOUT_S)
    assert loaded.complete and loaded[0].prompts == _expected_prompts("mt-bench", 3)
    assert loaded[0].commit == _sha("mt-bench")


def test_a_hub_that_stops_answering_fails_the_datasets_not_on_disk():
    with start_world() as w, reach(w, "sim") as host:
        ctx = ToolContext.for_host(host)
        assert load_standard_prompts(ctx, ["mbpp"], 2, TIMEOUT_S).complete
        w.hub.stop()
        loaded = load_standard_prompts(ctx, ["mbpp", "gsm8k"], 2, TIMEOUT_S)
        assert [d.name for d in loaded] == ["mbpp"] and loaded[0].prompts == _expected_prompts("mbpp", 2)
        (failure,) = loaded.failures
        assert failure.name == "gsm8k" and failure.error.kind == "hub_unavailable"
        assert "Connection refused" in failure.error.what
