"""How the playbook picks a drafter from Hub search results when the goal names none.

The listing only says what names and tags claim; the playbook ranks on that evidence and then reads the first
candidates' configs, which settle what each really is. The order: the algorithm asked for in the repo's name or
tags, then a base model that is the target itself (a card's claim) over a name that merely contains the target's,
then open repos over gated ones (a gated one needs a token whose account was granted access), then downloads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from specops.tools.hub_search import HubModel

# What to search the Hub for, per algorithm asked: the word repos of that kind carry in their names.
SEARCH_WORD = {"DFLASH": "dflash", "EAGLE3": "eagle3", "EAGLE": "eagle"}
MAX_CONFIGS_READ = 3  # candidates whose config is read before giving up


def _squashed(name: str) -> str:
    """A name without case and separators: Qwen3-8B, qwen3_8b and Qwen3.8B read alike."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True)
class DrafterCandidate:
    model: HubModel
    base_is_target: bool  # its card names the target as its base model

    @property
    def repo_id(self) -> str:
        return self.model.repo_id

    def why(self, asked: str | None) -> str:
        """The listing's evidence, in a few words."""
        words = f"{'/'.join(self.model.algorithm_words)} in its name or tags"
        if asked is not None and asked not in self.model.algorithm_words:
            words = f"a {'/'.join(self.model.algorithm_words)} drafter by its name or tags"
        base = "its card names the target as its base model" if self.base_is_target else "the target's name in its id"
        return f"{words}, {base}, {self.model.downloads:,} downloads" + (" (gated)" if self.model.gated else "")


def drafter_candidates(found: list[HubModel], target_name: str, asked: str | None) -> list[DrafterCandidate]:
    """The repos that claim to be drafters for `target_name` (of algorithm `asked`, when one is), best first."""
    target = _squashed(target_name)
    ranked: dict[str, DrafterCandidate] = {}
    for model in found:
        words = [w for w in model.algorithm_words if w != "SPECULATIVE"]
        if asked is not None and asked not in words and not (asked == "EAGLE" and "EAGLE3" in words):
            continue
        if asked is None and not words:
            continue
        bases = [_squashed(b.split(" ")[0].split("/")[-1]) for b in model.base_models]
        base_is_target = target in bases
        if not base_is_target and target not in _squashed(model.repo_id.split("/")[-1]):
            continue
        ranked.setdefault(model.repo_id, DrafterCandidate(model, base_is_target))
    return sorted(
        ranked.values(),
        key=lambda c: (
            asked is not None and asked not in c.model.algorithm_words,
            not c.base_is_target,
            c.model.gated,
            -c.model.downloads,
        ),
    )
