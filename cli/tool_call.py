"""Running one typed tool from the command line: arguments checked first, errors as exit codes.

Bad input exits 2: arguments before anything runs, a host spec (or its inventory entry)
that names no host, a value only the tool can judge (its invalid_input). A host or tool failure exits 1 with
the tool's own message (what happened, what to do). The same codes as `run`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..tools.context import ToolContext
from ..tools.errors import ErrorKind, ToolError
from ..tools.hosts import HostError, InvalidHostSpec, open_host
from ..tools.inputs import validation_message
from .streams import fail

R = TypeVar("R", bound=BaseModel)


def tool_args(args_type: type[BaseModel], flags: Mapping[str, str], /, **fields: Any) -> BaseModel:
    """The tool's arguments, or exit 2 with what is wrong in one line, each field named by its flag (`flags`:
    field name -> flag). Positional-only: `model` is a field name too."""
    try:
        return args_type(**fields)
    except ValidationError as exc:
        raise fail(validation_message(exc, flags), 2) from None


def call_tool(host: str, tool: Callable[[ToolContext, Any], R], args: BaseModel) -> R:
    try:
        with open_host(host) as opened:
            return tool(ToolContext.for_host(opened), args)
    except (ToolError, HostError) as exc:
        raise fail(str(exc), 2 if is_bad_input(exc) else 1) from None


def is_bad_input(error: ToolError | HostError) -> bool:
    """What the user typed is wrong (exit 2), not what the host or tool met (exit 1)."""
    if isinstance(error, ToolError):
        return error.kind == ErrorKind.INVALID_INPUT
    return isinstance(error, InvalidHostSpec)  # a spec no host answers to, or an inventory entry that is not one
