"""Repo listings from the Hub emulator through the real huggingface_hub client."""

import pytest

from specops.sim.faults import GatedRepo, HubThrottle, MissingRepo
from specops.sim.hub.fixtures import load_fixtures
from specops.sim.hub.runner import HubEmulatorThread
from specops.tools.hub import HubUnavailable, RepoNotFound, RevisionNotFound, list_repo

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures()


def test_listing_gives_declared_sizes_and_selection(fixtures):
    with HubEmulatorThread(fixtures) as hub:
        listing = list_repo(DRAFTER, endpoint=hub.url)
    assert listing.sha == fixtures[DRAFTER].revision("main").sha
    assert listing.total_bytes == fixtures[DRAFTER].revision("main").total_size()
    weights = listing.selected(include=["*.safetensors"])
    assert [f.size for f in weights.files] == [4_970_000_000, 3_240_000_000]
    assert listing.selected(exclude=["*.safetensors"]).total_bytes < 10**6


def test_missing_repo_and_unknown_revision_are_typed_and_gated_repos_list(fixtures):
    faults = [MissingRepo(repo_id=DRAFTER), GatedRepo(repo_id="moonshotai/Kimi-K2.6")]
    with HubEmulatorThread(fixtures, faults=faults) as hub:
        with pytest.raises(RepoNotFound, match=DRAFTER):
            list_repo(DRAFTER, endpoint=hub.url)
        # As on the real Hub, a gated repo lists (downloads are what need the token).
        assert list_repo("moonshotai/Kimi-K2.6", endpoint=hub.url).gated
        with pytest.raises(RevisionNotFound):
            list_repo("Qwen/Qwen3-8B", endpoint=hub.url, revision="no-such-branch")


def test_throttling_is_retried_then_reported(fixtures):
    with HubEmulatorThread(fixtures, faults=[HubThrottle(requests=2, retry_after_s=0)]) as hub:
        assert list_repo(DRAFTER, endpoint=hub.url).files
    with HubEmulatorThread(fixtures, faults=[HubThrottle(requests=50, retry_after_s=0)]) as hub:
        with pytest.raises(HubUnavailable, match="after 2 tries"):
            list_repo(DRAFTER, endpoint=hub.url, attempts=2)
