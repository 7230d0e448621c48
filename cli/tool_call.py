"""Running one typed tool from the command line: arguments checked first, errors as exit codes.

Bad arguments exit 2 before anything runs; a host or tool failure exits 1 with
the tool's own message (what happened, what to do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError

from ..tools.context import ToolContext
from ..tools.errors import ToolError
from ..tools.hosts import HostError, open_host

R = TypeVar("R", bound=BaseModel)


def tool_args(args_type: type[BaseModel], /, **fields: Any) -> BaseModel:
    """The tool's arguments, or exit 2 with what is wrong (positional-only: `model` is a field name too)."""
    try:
        return args_type(**fields)
    except ValidationError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None


def call_tool(host: str, tool: Callable[[ToolContext, Any], R], args: BaseModel) -> R:
    try:
        with open_host(host) as opened:
            return tool(ToolContext.for_host(opened), args)
    except (ToolError, HostError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
