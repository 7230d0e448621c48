"""Model search (GET /api/models) on the Hub emulator, through the real huggingface_hub client, over loopback.

The fixtures around Qwen/Qwen3-8B are a small, realistic listing: two DFlash drafters (one gated), two
EAGLE-3 drafters (one spelled qwen3_8b), a DFlash drafter of another target, and quantized and fine-tuned
copies of the target that outrank every drafter by downloads, as on the real Hub.
"""

import json
import math
import urllib.error
import urllib.request
from datetime import UTC, datetime

import pytest
import yaml
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError
from huggingface_hub.utils import paginate

from specops.sim.faults import GatedRepo, HubThrottle, MissingRepo
from specops.sim.hub.fixtures import RepoListing, load_dataset_fixtures, load_fixtures
from specops.sim.hub.runner import HubEmulatorThread

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

TARGET = "Qwen/Qwen3-8B"
DFLASH = "z-lab/Qwen3-8B-DFlash-b16"
DFLASH_4B = "z-lab/Qwen3-4B-DFlash-b16"
DFLASH_GATED = "someuser/Qwen3-8B-dflash-experimental"
EAGLE = "AngelSlim/Qwen3-8B_eagle3"
EAGLE_2 = "Tengyunw/qwen3_8b_eagle3"
AWQ = "Qwen/Qwen3-8B-AWQ"
GGUF = "Qwen/Qwen3-8B-GGUF"
DISTILL = "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B"
DRAFTERS_8B = {DFLASH, DFLASH_GATED, EAGLE, EAGLE_2}
DECOYS_8B = {AWQ, GGUF, DISTILL}
BASE_8B = "base_model:Qwen/Qwen3-8B"


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures()


@pytest.fixture(scope="module")
def hub(fixtures):
    with HubEmulatorThread(fixtures, time_scale=10_000) as running:
        yield running


@pytest.fixture
def api(hub):
    return HfApi(endpoint=hub.url, token=False)


def _ids(models):
    return [m.id for m in models]


def _searches(hub):
    return [r for r in hub.emulator.requests if r.path == "/api/models"]


def _config(repo):
    return json.loads(repo.revision().file("config.json").content)


def _card(repo):
    text = repo.revision().file("README.md").content.decode()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


# ---------------------------------------------------------------------- search, author, filter


def test_search_is_a_case_insensitive_substring_of_the_id(api):
    found = set(_ids(api.list_models(search="Qwen3-8B")))
    assert found == {TARGET, DFLASH, DFLASH_GATED, EAGLE} | DECOYS_8B
    # The 4B drafter is for another target; qwen3_8b is another spelling, which a substring search misses.
    assert DFLASH_4B not in found and EAGLE_2 not in found
    assert set(_ids(api.list_models(search="qwen3-8b"))) == found
    assert set(_ids(api.list_models(search="qwen3_8b"))) == {EAGLE_2}


def test_search_dflash_finds_every_dflash_repo(api, fixtures):
    found = set(_ids(api.list_models(search="dflash")))
    assert {DFLASH, DFLASH_4B, DFLASH_GATED} <= found
    assert found == {repo_id for repo_id in fixtures if "dflash" in repo_id.lower()}
    assert "SubSir/Kimi-K2.6-DFlash-tmp-long" in found


def test_author_is_the_exact_org(api, fixtures):
    assert set(_ids(api.list_models(author="z-lab"))) == {DFLASH, DFLASH_4B}
    assert set(_ids(api.list_models(author="Z-LAB"))) == {DFLASH, DFLASH_4B}
    assert set(_ids(api.list_models(author="z"))) == set()
    qwen = {repo_id for repo_id in fixtures if repo_id.startswith("Qwen/")}
    assert set(_ids(api.list_models(author="Qwen"))) == qwen and {AWQ, GGUF, TARGET} <= qwen
    assert _ids(api.list_models(author="z-lab", search="8B")) == [DFLASH]


def test_filters_are_all_required_tags(api):
    assert set(_ids(api.list_models(filter=BASE_8B))) == DRAFTERS_8B | DECOYS_8B
    assert set(_ids(api.list_models(filter=[BASE_8B, "eagle3"]))) == {EAGLE, EAGLE_2}
    assert set(_ids(api.list_models(filter=[BASE_8B, "dflash"]))) == {DFLASH, DFLASH_GATED}
    assert set(_ids(api.list_models(filter=["base_model:quantized:Qwen/Qwen3-8B"]))) == {AWQ, GGUF}
    assert _ids(api.list_models(filter=[BASE_8B, "eagle3", "dflash"])) == []
    assert _ids(api.list_models(filter="gguf")) == [GGUF]


def test_pipeline_tag_and_gated(api):
    assert set(_ids(api.list_models(search="Qwen3-8B", pipeline_tag="feature-extraction"))) == {DFLASH, DFLASH_GATED}
    assert _ids(api.list_models(search="Qwen3-8B", gated=True)) == [DFLASH_GATED]
    open_ones = set(_ids(api.list_models(search="Qwen3-8B", gated=False)))
    assert DFLASH_GATED not in open_ones and DFLASH in open_ones
    assert "meta-llama/Llama-3.1-8B-Instruct" in set(_ids(api.list_models(gated=True)))


def test_dataset_repos_are_not_listed(api, fixtures):
    listed = set(_ids(api.list_models()))
    assert listed == set(fixtures)
    assert not listed & set(load_dataset_fixtures())


# ---------------------------------------------------------------------- order, limit, pages


def test_sort_by_downloads_is_descending_and_decoys_outrank_drafters(api, fixtures):
    ids = _ids(api.list_models(search="Qwen3-8B", sort="downloads"))
    assert ids == [TARGET, DISTILL, GGUF, AWQ, DFLASH, EAGLE, DFLASH_GATED]
    downloads = [fixtures[i].listing.downloads for i in ids]
    assert downloads == sorted(downloads, reverse=True)
    by_tag = _ids(api.list_models(filter=BASE_8B, sort="downloads"))
    drafters = [i for i in by_tag if i in DRAFTERS_8B]
    assert drafters == [DFLASH, EAGLE, EAGLE_2, DFLASH_GATED]
    assert by_tag.index(DFLASH) > max(by_tag.index(d) for d in DECOYS_8B)
    assert _ids(api.list_models(filter=[BASE_8B, "eagle3"], sort="downloads")) == [EAGLE, EAGLE_2]


@pytest.mark.parametrize(
    ("sort", "value"),
    [
        ("likes", lambda r: r.listing.likes),
        ("trending_score", lambda r: r.listing.trending_score),
        ("created_at", lambda r: datetime.fromisoformat(r.created_at)),
        ("last_modified", lambda r: datetime.fromisoformat(r.last_modified)),
    ],
)
def test_every_sort_is_descending(api, fixtures, sort, value):
    ids = _ids(api.list_models(filter=BASE_8B, sort=sort))
    values = [value(fixtures[i]) for i in ids]
    assert len(ids) == 7 and values == sorted(values, reverse=True)


def test_default_order_is_trending_then_downloads(api, fixtures):
    ids = _ids(api.list_models(search="Qwen3-8B"))
    keys = [(fixtures[i].listing.trending_score, fixtures[i].listing.downloads) for i in ids]
    assert keys == sorted(keys, reverse=True)
    assert ids[0] == TARGET


def test_limit_takes_the_first_ones_in_one_request(api, hub):
    before = len(_searches(hub))
    assert _ids(api.list_models(search="Qwen3-8B", sort="downloads", limit=2)) == [TARGET, DISTILL]
    requests = _searches(hub)[before:]
    assert len(requests) == 1 and "limit=2" in requests[0].query


def test_pages_follow_the_link_header(fixtures):
    with HubEmulatorThread(fixtures, time_scale=10_000) as hub:
        hub.emulator.search_page_size = 3
        api = HfApi(endpoint=hub.url, token=False)
        ids = _ids(api.list_models(sort="downloads"))
        assert len(ids) == len(set(ids)) == len(fixtures)
        assert ids == sorted(fixtures, key=lambda i: (-fixtures[i].listing.downloads, i))
        pages = _searches(hub)
        assert len(pages) == math.ceil(len(fixtures) / 3)
        assert "cursor=" not in pages[0].query and all("cursor=" in p.query for p in pages[1:])
        assert all("sort=downloads" in p.query for p in pages)


def test_limit_is_the_page_size_and_repeated_filters_ride_along(api, hub):
    # paginate() (without list_models' islice) walks every page; the next links keep both filter values.
    before = len(_searches(hub))
    params = {"filter": [BASE_8B, "speculative-decoding"], "sort": "downloads", "limit": 2}
    items = list(paginate(f"{hub.url}/api/models", params=params, headers={}))
    assert [i["id"] for i in items] == [DFLASH, EAGLE, EAGLE_2, DFLASH_GATED]
    pages = _searches(hub)[before:]
    assert len(pages) == 2
    assert all(p.query.count("filter=") == 2 for p in pages)


# ---------------------------------------------------------------------- what an item holds


def test_items_parse_into_model_info(api, fixtures):
    (info,) = api.list_models(search=EAGLE)
    repo = fixtures[EAGLE]
    assert info.id == EAGLE and info.author == "AngelSlim"
    assert (info.downloads, info.likes, info.trending_score) == (4826, 23, 2)
    assert info.gated is False and info.private is False
    assert {"eagle3", "speculative-decoding", BASE_8B, "region:us"} <= set(info.tags)
    assert info.library_name == "transformers" and info.pipeline_tag is None
    assert info.created_at == datetime(2025, 7, 8, 9, 12, 45, tzinfo=UTC)
    assert info.last_modified == datetime.fromisoformat(repo.last_modified)
    assert info.siblings is None and info.sha is None and info.config is None and info.card_data is None
    (gated,) = api.list_models(search=DFLASH_GATED)
    assert gated.gated == "manual" and gated.downloads == 23
    (gguf,) = api.list_models(search=GGUF, fetch_config=True)
    assert gguf.library_name == "gguf" and gguf.config is None and "gguf" in gguf.tags


def test_full_lists_sha_and_file_names(api, fixtures):
    (info,) = api.list_models(search=DFLASH, full=True)
    main = fixtures[DFLASH].revision()
    assert info.sha == main.sha
    assert [s.rfilename for s in info.siblings] == [f.path for f in main.files]
    assert "model.safetensors" in {s.rfilename for s in info.siblings}
    assert all(s.size is None for s in info.siblings)  # sizes come with model_info(files_metadata=True)


def test_config_and_card_data_on_request(api):
    models = {m.id: m for m in api.list_models(filter=BASE_8B, fetch_config=True, cardData=True)}
    assert models[EAGLE].config["architectures"] == ["LlamaForCausalLMEagle3"]
    assert models[DFLASH].config["auto_map"] == {"AutoModel": "dflash.DFlashDraftModel"}
    assert models[AWQ].config["quantization_config"] == {"quant_method": "awq", "bits": 4}
    assert models[DISTILL].config["architectures"] == ["Qwen3ForCausalLM"]
    assert models[GGUF].config is None
    assert models[EAGLE].card_data.base_model == "Qwen/Qwen3-8B"
    assert models[EAGLE_2].card_data.base_model == ["Qwen/Qwen3-8B"]


def test_expand_answers_only_what_was_asked(api):
    (info,) = api.list_models(search=EAGLE, expand=["downloads", "gated"])
    assert info.downloads == 4826 and info.gated is False
    assert info.tags is None and info.likes is None and info.created_at is None


def test_model_info_agrees_with_the_listing(api):
    (listed,) = api.list_models(search=AWQ)
    info = api.model_info(AWQ)
    assert (info.downloads, info.likes, info.tags, info.library_name) == (
        listed.downloads,
        listed.likes,
        listed.tags,
        listed.library_name,
    )
    assert info.created_at == listed.created_at and info.pipeline_tag == "text-generation"


def test_a_gated_drafter_lists_and_answers_info_but_not_files(api, hub, tmp_path):
    assert api.model_info(DFLASH_GATED).gated == "manual"
    with pytest.raises(GatedRepoError) as anonymous:
        hf_hub_download(DFLASH_GATED, "config.json", endpoint=hub.url, cache_dir=str(tmp_path), token=False)
    assert anonymous.value.response.status_code == 401


def test_defaults_without_a_listing_block_and_auto_gating(fixtures, tmp_path):
    bare = fixtures[DFLASH].model_copy(update={"listing": RepoListing()})
    auto = fixtures[EAGLE].model_copy(update={"gated": "auto"})
    with HubEmulatorThread({DFLASH: bare, EAGLE: auto}, time_scale=10_000) as hub:
        api = HfApi(endpoint=hub.url, token=False)
        (info,) = api.list_models(author="z-lab")
        assert (info.downloads, info.likes, info.trending_score) == (0, 0, 0)
        assert info.tags == ["transformers", "region:us"] and info.library_name == "transformers"
        assert info.author == "z-lab" and info.pipeline_tag is None
        assert info.created_at == datetime.fromisoformat(fixtures[DFLASH].revision().date)
        (gated,) = api.list_models(gated=True)
        assert gated.id == EAGLE and gated.gated == "auto" and api.model_info(EAGLE).gated == "auto"
        with pytest.raises(GatedRepoError):
            hf_hub_download(EAGLE, "config.json", endpoint=hub.url, cache_dir=str(tmp_path), token=False)


# ---------------------------------------------------------------------- faults and errors


def test_missing_repo_is_not_listed_and_a_gated_fault_shows(fixtures):
    faults = [MissingRepo(repo_id=EAGLE), GatedRepo(repo_id=DFLASH)]
    with HubEmulatorThread(fixtures, faults=faults, time_scale=10_000) as hub:
        api = HfApi(endpoint=hub.url, token=False)
        assert _ids(api.list_models(filter=[BASE_8B, "eagle3"])) == [EAGLE_2]
        (zlab,) = api.list_models(search=DFLASH)
        assert zlab.gated == "manual"
        assert set(_ids(api.list_models(search="Qwen3-8B", gated=True))) == {DFLASH, DFLASH_GATED}


def test_throttle_answers_429_and_the_client_retries(fixtures):
    with HubEmulatorThread(fixtures, faults=[HubThrottle(requests=2, retry_after_s=0)]) as hub:
        with pytest.raises(urllib.error.HTTPError) as throttled:
            urllib.request.urlopen(f"{hub.url}/api/models?search=dflash")
        assert throttled.value.code == 429 and throttled.value.headers["Retry-After"] == "0"
        # paginate() goes through http_backoff, which waits out a 429 and asks again.
        api = HfApi(endpoint=hub.url, token=False)
        assert _ids(api.list_models(filter=[BASE_8B, "eagle3"], sort="downloads")) == [EAGLE, EAGLE_2]
        assert [r.status for r in _searches(hub)] == [429, 429, 200]
        assert hub.emulator.throttled == 2


def test_bad_queries_and_bad_tokens(api, hub):
    with pytest.raises(HfHubHTTPError) as bad_sort:
        list(api.list_models(sort="stars"))
    assert bad_sort.value.response.status_code == 400
    with pytest.raises(HfHubHTTPError) as bad_limit:
        list(paginate(f"{hub.url}/api/models", params={"limit": "many"}, headers={}))
    assert bad_limit.value.response.status_code == 400
    with pytest.raises(HfHubHTTPError) as bad_token:
        list(HfApi(endpoint=hub.url, token="not-a-token").list_models(search="dflash"))
    assert bad_token.value.response.status_code == 401
    assert _ids(HfApi(endpoint=hub.url, token="hf_user").list_models(search=DFLASH)) == [DFLASH]


# ---------------------------------------------------------------------- the fixtures behind the listing


def test_every_model_fixture_lists_believably(fixtures):
    for repo_id, repo in fixtures.items():
        first = min(r.date for r in repo.revisions)
        assert repo.created_at <= first, repo_id
        assert "region:us" in repo.tags, repo_id
        card = _card(repo)
        bases = card.get("base_model") or []
        bases = [bases] if isinstance(bases, str) else bases
        tagged = {t.split(":")[-1] for t in repo.tags if t.startswith("base_model:")}
        assert tagged == set(bases), repo_id  # base_model tags come from the card, as on the Hub
        if "library_name" in card:
            assert repo.listing.library_name == card["library_name"], repo_id


def test_drafters_name_their_targets(fixtures):
    for repo_id in DRAFTERS_8B:
        assert {BASE_8B, f"base_model:finetune:{TARGET}", "speculative-decoding"} <= set(fixtures[repo_id].tags)
    assert f"base_model:{'Qwen/Qwen3-4B'}" in fixtures[DFLASH_4B].tags
    for repo_id in (
        "lightseekorg/kimi-k2.6-eagle3.1-mla",
        "SubSir/Kimi-K2.6-DFlash-tmp-long",
        "SubSir/Kimi-K2.6-DFlash-bad-layers",
        "SubSir/Kimi-K2.6-DFlash2-b8",
    ):
        assert "base_model:moonshotai/Kimi-K2.6" in fixtures[repo_id].tags, repo_id
    for repo_id in (AWQ, GGUF):
        assert f"base_model:quantized:{TARGET}" in fixtures[repo_id].tags
    assert fixtures[DFLASH_GATED].gated_mode == "manual"
    assert fixtures["meta-llama/Llama-3.1-8B-Instruct"].gated_mode == "manual"


def test_new_drafter_configs_fit_their_targets(fixtures):
    target = _config(fixtures[TARGET])
    for repo_id in (EAGLE, EAGLE_2):
        config = _config(fixtures[repo_id])
        assert config["architectures"] == ["LlamaForCausalLMEagle3"] and config["model_type"] == "llama"
        assert config["num_hidden_layers"] == 1 and config["draft_vocab_size"] == 32000
        same = ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads", "head_dim")
        assert {k: config[k] for k in same} == {k: target[k] for k in same}
        assert config["vocab_size"] == target["vocab_size"] == 151936
        assert config["rope_theta"] == target["rope_theta"] and config["eos_token_id"] == target["eos_token_id"]
        assert fixtures[repo_id].revision().file("model.safetensors").size == pytest.approx(0.8e9, rel=0.01)
    small = _config(fixtures[DFLASH_4B])
    assert (small["hidden_size"], small["intermediate_size"], small["num_target_layers"]) == (2560, 9728, 36)
    assert small["dflash_config"]["target_layer_ids"] == [1, 9, 17, 25, 33]
    gated = _config(fixtures[DFLASH_GATED])
    assert max(gated["dflash_config"]["target_layer_ids"]) < target["num_hidden_layers"]


def test_decoys_are_full_models(fixtures):
    awq = _config(fixtures[AWQ])
    assert awq["architectures"] == ["Qwen3ForCausalLM"] and awq["quantization_config"]["quant_method"] == "awq"
    main = fixtures[AWQ].revision()
    index = json.loads(main.file("model.safetensors.index.json").content)
    shards = {f.path: f.size for f in main.files if f.path.endswith(".safetensors")}
    assert set(index["weight_map"].values()) == set(shards)
    assert sum(shards.values()) == index["metadata"]["total_size"]
    gguf = fixtures[GGUF].revision()
    with pytest.raises(KeyError):
        gguf.file("config.json")
    assert all(f.path.endswith(".gguf") for f in gguf.files if f.is_lfs)
    distill = fixtures[DISTILL].revision()
    assert _config(fixtures[DISTILL])["architectures"] == ["Qwen3ForCausalLM"]
    assert distill.total_size() == pytest.approx(16.4e9, rel=0.01)
