"""What loading the standard datasets hands back: each dataset's prompts, and the ones that failed."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ToolErrorRecord
from .catalog import PromptCategory
from .errors import DatasetsIncomplete


class DatasetPrompts(BaseModel):
    """One standard dataset's prompts, formatted as the DFlash benchmark formats them, ready to send."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The catalog's short name: gsm8k, math500, humaneval, mbpp, mt-bench")
    repo_id: str
    config: str | None
    split: str
    path: str = Field(description="The file read, in the repo")
    revision: str = Field(description="The revision asked for (a branch or a commit)")
    commit: str | None = Field(description="The commit the file came from, as the download recorded it")
    category: PromptCategory
    prompts: list[str] = Field(description="The first rows of the file (file order), formatted")
    rows_in_file: int = Field(description="Rows the file holds")
    local_path: str = Field(description="Where the file lies on the host")
    source: str = Field(description="Where the prompts come from and how they were made, in one sentence")


class DatasetFailure(BaseModel):
    """A dataset that did not load, and why (the typed error as a record)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    repo_id: str
    error: ToolErrorRecord


class StandardPrompts(list[DatasetPrompts]):
    """The datasets that loaded, in the order asked (a list); `failures` names those that did not, and why.

    A dataset the host cannot fetch does not lose the others: the caller decides
    whether what loaded is enough or the shipped prompt sets should be used instead.
    """

    def __init__(self, loaded: Iterable[DatasetPrompts] = (), failures: Iterable[DatasetFailure] = ()) -> None:
        super().__init__(loaded)
        self.failures: list[DatasetFailure] = list(failures)

    @property
    def complete(self) -> bool:
        return not self.failures

    def by_name(self) -> dict[str, DatasetPrompts]:
        return {d.name: d for d in self}

    def raise_for_failures(self) -> None:
        """Raise DatasetsIncomplete (with what loaded and what failed in details) if any dataset failed."""
        if not self.failures:
            return
        failed = "; ".join(f"{f.name}: {f.error.what}" for f in self.failures)
        loaded = ", ".join(d.name for d in self) or "none"
        raise DatasetsIncomplete(
            f"{len(self.failures)} of {len(self.failures) + len(self)} standard datasets did not load ({failed})",
            remedy=f"fix the cause named for each (loaded: {loaded}), or measure on the shipped prompt sets "
            "(the offline fallback)",
            details={
                "loaded": [d.name for d in self],
                "failures": [f.model_dump(mode="json") for f in self.failures],
            },
        )
