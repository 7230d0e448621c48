"""Which of a host profile's targets a launch serves: the serving spec of the model it loads.

A profile lists a serving spec per target model (`serving`, the primary, and `additional_serving`). A launch is
served by the spec of the checkpoint it loaded, found by the first of:
1. --model-path is a Hub repo id (`Qwen/Qwen3-32B`) that a spec names;
2. the checkpoint lies in a Hugging Face cache (`.../models--org--name/snapshots/<sha>`): that repo id;
3. the checkpoint is a model the profile lays down on the host (`models:`, by path): its repo id;
4. the checkpoint's architecture (config.json architectures[0]) is the stated architecture of exactly one spec's
   target, whose weight it roughly has (within a factor of two, when the checkpoint has weight files);
5. else the primary spec (a checkpoint the profile knows nothing of serves at the primary target's speed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..profiles.schema import Profile, ServingSpec
from ..world.layout import WorldLayout
from .checkpoint import Checkpoint


@dataclass(frozen=True)
class TargetChoice:
    serving: ServingSpec
    how: str  # which rule picked it, for the simulator's own log


def _cache_repo_id(path: Path) -> str | None:
    for part in reversed(path.parts):
        if part.startswith("models--"):
            org, _, name = part[len("models--") :].partition("--")
            return f"{org}/{name}" if name else None
    return None


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def choose_target(profile: Profile, model_path: str, checkpoint: Checkpoint, layout: WorldLayout) -> TargetChoice:
    """The serving spec of the model a launch loaded (see the module docstring)."""
    if model_path.count("/") == 1 and not PurePosixPath(model_path).is_absolute():
        found = profile.serving_for(model_path)
        if found is not None:
            return TargetChoice(found, f"--model-path names {found.target.repo_id}")
    cached = _cache_repo_id(checkpoint.path)
    if cached is not None:
        found = profile.serving_for(cached)
        if found is not None:
            return TargetChoice(found, f"the checkpoint is {cached} in a Hugging Face cache")
    for model in profile.models:
        if model.layout == "local_dir" and _same_dir(layout.host_path(model.path), checkpoint.path):
            found = profile.serving_for(model.repo_id)
            if found is not None:
                return TargetChoice(found, f"the checkpoint is the host's {model.repo_id} at {model.path}")
    candidates = [s for s in profile.serving_specs if s.target.architecture == checkpoint.architecture]
    if checkpoint.shard_count and checkpoint.weight_gib > 0:
        candidates = [s for s in candidates if 0.5 <= checkpoint.weight_gib / s.target.weights_gib <= 2.0]
    if len(candidates) == 1:
        return TargetChoice(candidates[0], f"the checkpoint's architecture is {checkpoint.architecture}")
    return TargetChoice(profile.serving, "no target matches the checkpoint: the primary target")
