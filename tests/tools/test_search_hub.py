"""search_hub: the Hub's model listing through the real huggingface_hub client, against the Hub emulator."""

import pytest
from pydantic import ValidationError

from specops.sim.faults import HubThrottle, MissingRepo
from specops.sim.hub.fixtures import load_fixtures
from specops.sim.hub.runner import HubEmulatorThread
from specops.tools.hub import HubUnavailable
from specops.tools.hub_search import SearchHubArgs, search_models, search_view


@pytest.fixture(scope="module")
def hub():
    with HubEmulatorThread(load_fixtures()) as running:
        yield running


def search(hub, **args):
    return search_models(SearchHubArgs(**args), endpoint=hub.url, token=None)


def test_a_search_by_the_targets_name_lists_drafters_and_decoys_with_their_evidence(hub):
    found = search(hub, search="Qwen3-8B", limit=20)
    by_id = {m.repo_id: m for m in found.models}
    assert not found.more
    assert [m.downloads for m in found.models] == sorted((m.downloads for m in found.models), reverse=True)
    drafter = by_id["z-lab/Qwen3-8B-DFlash-b16"]
    assert drafter.algorithm_words == ["DFLASH"] and "Qwen/Qwen3-8B" in drafter.base_models[0]
    assert by_id["Qwen/Qwen3-8B-AWQ"].algorithm_words == [] and by_id["Qwen/Qwen3-8B-AWQ"].base_models == [
        "Qwen/Qwen3-8B (quantized)"
    ]
    assert by_id["someuser/Qwen3-8B-dflash-experimental"].gated
    assert "z-lab/Qwen3-4B-DFlash-b16" not in by_id
    assert not any(t.startswith(("region:", "license:")) for m in found.models for t in m.tags)


def test_tags_narrow_and_the_limit_says_there_is_more(hub):
    eagles = search(hub, tags=["base_model:Qwen/Qwen3-8B", "eagle3"])
    assert [m.repo_id for m in eagles.models] == ["AngelSlim/Qwen3-8B_eagle3", "Tengyunw/qwen3_8b_eagle3"]
    first = search(hub, search="dflash", limit=1)
    assert len(first.models) == 1 and first.more


def test_the_model_sees_one_short_entry_per_repo(hub):
    view = search_view(search(hub, search="dflash", author="z-lab"))
    assert [m["repo_id"] for m in view["models"]] == ["z-lab/Qwen3-8B-DFlash-b16", "z-lab/Qwen3-4B-DFlash-b16"]
    assert set(view["models"][0]) <= {
        "repo_id",
        "downloads",
        "updated",
        "gated",
        "base_models",
        "algorithm_words",
        "library",
    }


@pytest.mark.slow
def test_a_missing_repo_is_not_listed_and_a_throttled_hub_is_retried_then_reported():
    fixtures = load_fixtures()
    with HubEmulatorThread(fixtures, faults=[MissingRepo(repo_id="z-lab/Qwen3-8B-DFlash-b16")]) as hub:
        assert "z-lab/Qwen3-8B-DFlash-b16" not in {m.repo_id for m in search(hub, search="dflash").models}
    with HubEmulatorThread(fixtures, faults=[HubThrottle(requests=50, retry_after_s=0)]) as hub:
        with pytest.raises(HubUnavailable, match="after 2 tries"):
            search_models(SearchHubArgs(search="dflash"), endpoint=hub.url, token=None, attempts=2)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"search": "qwen; rm -rf ~"}, "has ';'"),
        ({"search": "x", "limit": 500}, "less than or equal to 50"),
        ({"tags": ["a\nb"]}, "one word of printable text"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(args, words):
    with pytest.raises(ValidationError, match=words):
        SearchHubArgs(**args)


def test_a_search_for_nothing_is_refused_before_the_host_is_asked():
    from specops.tools.errors import InvalidToolInput
    from specops.tools.hub_search import search_hub

    with pytest.raises(InvalidToolInput, match="at least one of search, author or tags"):
        search_hub(None, SearchHubArgs())  # type: ignore[arg-type]  # no host: refused before one is needed
