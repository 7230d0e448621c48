"""Which speculative algorithm serves a draft model, by its config's architecture, as SGLang's releases say.

Every table comes from the releases' wheels (`specops.sglang_releases`): an architecture
maps to the algorithm whose worker loads it and to the first modelled release that has it.
"""

from __future__ import annotations

import functools

from ...sglang_releases.facts import ReleaseFacts, load, modelled_versions
from ..sglang.config import SpeculativeAlgorithm

DFLASH_ARCHITECTURE = "DFlashDraftModel"
# What people call each algorithm, for summaries and reports.
SPOKEN_NAMES = {
    SpeculativeAlgorithm.DFLASH: "DFlash",
    SpeculativeAlgorithm.EAGLE3: "EAGLE-3",
    SpeculativeAlgorithm.EAGLE: "EAGLE",
    SpeculativeAlgorithm.NEXTN: "MTP",
    SpeculativeAlgorithm.STANDALONE: "standalone",
    SpeculativeAlgorithm.NGRAM: "n-gram",
}


def served_by(release: ReleaseFacts, algorithm: SpeculativeAlgorithm) -> tuple[str, ...]:
    """The draft architectures `release` loads under `algorithm`."""
    if algorithm is SpeculativeAlgorithm.DFLASH:
        return release.dflash_architectures
    return release.draft_architectures.get(algorithm.value, ())


@functools.cache
def _first_releases(algorithm: SpeculativeAlgorithm) -> dict[str, str]:
    first: dict[str, str] = {}
    for version in modelled_versions():
        for name in served_by(load(version), algorithm):
            first.setdefault(name, version)
    return first


def dflash_family() -> dict[str, str]:
    """Each DFlash-family drafter architecture with the first modelled SGLang release that serves it."""
    return _first_releases(SpeculativeAlgorithm.DFLASH)


def family(algorithm: SpeculativeAlgorithm) -> dict[str, str]:
    """The draft architectures `algorithm` loads (DFLASH, EAGLE3, EAGLE, NEXTN), each with its first release."""
    return _first_releases(algorithm)


def algorithm_of(architectures: list[str]) -> tuple[SpeculativeAlgorithm, str] | None:
    """The algorithm whose worker loads one of these architectures, and that architecture; None for a model no
    speculative worker loads as its own kind of drafter (a plain causal LM: a target, or a STANDALONE drafter)."""
    for algorithm in (
        SpeculativeAlgorithm.DFLASH,
        SpeculativeAlgorithm.EAGLE3,
        SpeculativeAlgorithm.EAGLE,
        SpeculativeAlgorithm.NEXTN,
    ):
        served = family(algorithm)
        for name in architectures:
            if name in served:
                return algorithm, name
    return None
