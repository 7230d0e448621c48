"""Running one typed tool from the command line: arguments checked first, errors as exit codes.

Bad arguments exit 2 before anything runs; a host or tool failure exits 1 with
the tool's own message (what happened, what to do).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..tools.context import ToolContext
from ..tools.errors import ToolError
from ..tools.hosts import HostError, open_host
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
        raise fail(str(exc), 1) from None
