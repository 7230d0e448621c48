"""The deterministic graders, one per file, and the optional LLM judge of the report.

GRADERS   every deterministic grader, in the order tables show them
"""

from __future__ import annotations

from ._base import Grader, Verdict
from .acceptance_per_dataset import AcceptancePerDataset
from .algorithm_chosen import AlgorithmChosen
from .best_baseline import BestBaselinePerConcurrency
from .budgets import BudgetsRespected
from .crossover_bracketed import CrossoverBracketed
from .disk_checked import DiskCheckedBeforeDownload
from .drafter_chosen import DrafterChosen
from .drafters_compared import DraftersCompared
from .host_left_clean import HostLeftClean
from .no_question import NoQuestionAsked
from .no_repeated_failure import NoRepeatedFailure
from .nothing_deleted import NothingUnallowedDeleted
from .numbers_match_truth import NumbersMatchTruth
from .outcome import ExpectedOutcome
from .plan_first import PlanFirst
from .recommendation_follows import RecommendationFollowsMeasurements
from .settings_tried import SettingsTried
from .todos_closed import TodosClosed

GRADERS: tuple[type[Grader], ...] = (
    ExpectedOutcome,
    PlanFirst,
    TodosClosed,
    DiskCheckedBeforeDownload,
    NothingUnallowedDeleted,
    NoQuestionAsked,
    NumbersMatchTruth,
    BestBaselinePerConcurrency,
    AlgorithmChosen,
    DrafterChosen,
    DraftersCompared,
    SettingsTried,
    AcceptancePerDataset,
    CrossoverBracketed,
    RecommendationFollowsMeasurements,
    NoRepeatedFailure,
    BudgetsRespected,
    HostLeftClean,
)
GRADER_NAMES: tuple[str, ...] = tuple(g.name for g in GRADERS)


def all_graders() -> list[Grader]:
    return [g() for g in GRADERS]


__all__ = ["GRADERS", "GRADER_NAMES", "Grader", "Verdict", "all_graders"]
