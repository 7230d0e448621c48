"""Which goals the playbook carries out, and what it reads from one: the drafter repo, the intents, the target's name.

The playbook knows one job: take a drafter from the Hub (DFlash, EAGLE-3, EAGLE, a
standalone model) or a target's own MTP heads or n-gram speculation to measured
(and, if asked, served) speculative decoding on the host, with its autoregressive
baseline. Goals asking for something else (training, quantizing, upgrading
software, ...) or naming no repo are answered `cannot_do` with the reason,
before any tool runs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from specops.agent.budget import read_host_budget
from specops.agent.goal import Goal, GoalRefused, Intent, parse_goal
from specops.tools.sglang.config import SpeculativeAlgorithm

# Work outside the playbook's pipeline, by the words a goal would use for it.
_OUT_OF_SCOPE: dict[str, tuple[str, ...]] = {
    "train or fine-tune a model": ("fine-tune", "finetune", "fine tune", "train ", "training", "distill"),
    "quantize or convert weights": ("quantiz", "convert ", "gguf", "awq", "merge ", "prune"),
    "install or upgrade software": ("install", "upgrade", "update sglang", "pip "),
    "serve with a speculative method SGLang does not offer": ("medusa", "lookahead"),
}
# A drafter repo name is the target's name with a suffix like these.
_DRAFTER_SUFFIX = re.compile(r"[-_.](dflash\d*|draft|drafter|spec|eagle3?)\b.*$", re.IGNORECASE)  # DFlash2 too
_GOAL_FIELD = re.compile(r"\{[^{}]*\"(?:repo_id|target)\"[^{}]*\}")


@dataclass(frozen=True)
class Understood:
    goal: Goal | None
    cannot_do: str | None = None  # why, when the playbook cannot carry it out
    host_budget_s: float | None = None  # the job's host-time budget, as the prompt states it (None: none)

    @property
    def intents(self) -> tuple[Intent, ...]:
        return self.goal.intents if self.goal else ()

    def wants(self, *intents: Intent) -> bool:
        return any(i in self.intents for i in intents)


def _goal_line(prompt: str) -> str:
    """The goal's own text: the loop may wrap it ('Goal: ...', then the parsed goal as JSON)."""
    for line in prompt.splitlines():
        stripped = line.strip()
        if stripped.lower().startswith("goal:"):
            return stripped[5:].strip()
    return prompt.strip()


def _parsed_by_loop(prompt: str) -> Goal | None:
    """The goal as the loop parsed it, when the prompt carries it as JSON ({"repo_id": ..., "intents": [...]})."""
    for match in _GOAL_FIELD.finditer(prompt):
        try:
            data = json.loads(match.group(0))
            return Goal(
                text=data.get("text") or _goal_line(prompt),
                repo_id=data.get("repo_id"),
                intents=tuple(data.get("intents") or ("deploy", "evaluate", "benchmark")),
                target=data.get("target"),
                # Only an algorithm SGLang knows: anything else is as if the goal named none.
                algorithm=data.get("algorithm") if data.get("algorithm") in set(SpeculativeAlgorithm) else None,
                drafters=tuple(data.get("drafters") or ([data["repo_id"]] if data.get("repo_id") else [])),
            )
        except (ValueError, TypeError):
            continue
    return None


def understand(prompt: str) -> Understood:
    text = _goal_line(prompt)
    lowered = f" {text.lower()} "
    for job, words in _OUT_OF_SCOPE.items():
        hit = next((w for w in words if w in lowered), None)
        if hit is not None:
            return Understood(
                goal=None,
                cannot_do=(
                    f"the goal asks to {job} ('{hit.strip()}'): the playbook only downloads a drafter (or uses MTP "
                    "heads or n-gram), checks it against its target, measures acceptance, benchmarks it against the "
                    "autoregressive baseline and deploys it; use a model policy (--model) or do that step by hand"
                ),
            )
    goal = _parsed_by_loop(prompt)
    if goal is None:
        try:
            goal = parse_goal(text)
        except GoalRefused as exc:
            return Understood(goal=None, cannot_do=str(exc))
    missing = nothing_to_go_on(goal)
    if missing is not None:
        return Understood(goal=None, cannot_do=missing)
    return Understood(goal=goal, host_budget_s=read_host_budget(prompt))


def nothing_to_go_on(goal: Goal) -> str | None:
    """Why the playbook cannot start on `goal` (one line, what to write instead); None when it can: the goal names a
    drafter repo, or a target to find one for on the Hub (or to run MTP heads or n-gram on)."""
    if goal.repo_id is not None or goal.target is not None:
        return None
    return (
        "the goal names no drafter repo and no target model to find one for: name the drafter (ORG/NAME or its "
        "https://huggingface.co URL) or its target ('find a DFlash drafter for Qwen3-8B')"
    )


def target_name_for(drafter_repo: str) -> str | None:
    """The target a drafter's name points at: `Kimi-K2.6-DFlash-tmp-long` -> `Kimi-K2.6`; None when it does not."""
    name = drafter_repo.split("/")[-1]
    stripped = _DRAFTER_SUFFIX.sub("", name)
    return stripped if stripped and stripped != name else None
