"""The names of the tools the loop answers itself, never on the host: the plan, the comparison, the one round of
questions. Apart from the tools, so that the report can tell a host call from the loop's own without importing them."""

from __future__ import annotations

TODO_TOOL = "todowrite"
COMPARE_TOOL = "compare"
ASK_TOOL = "ask_user"
LOOP_TOOLS = frozenset({TODO_TOOL, COMPARE_TOOL, ASK_TOOL})
