"""What the one round of questions (ask_user, questions.py) answers: its result type, apart from the tool so that
the toolset and the playbook read it back without importing the tool."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .loop_tools import ASK_TOOL as ASK_TOOL  # its name, where it always was


class DeletionAnswer(BaseModel):
    question: str = Field(description="As the user saw it: what it is and what it frees")
    answer: str
    approved: bool = Field(description="True: free_space may delete it in this run")


class Answers(BaseModel):
    answers: dict[str, str]
    deletions: dict[str, DeletionAnswer] = Field(default_factory=dict, description="Per `delete` entry")
