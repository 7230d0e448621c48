"""The catalogue of tools: each tool function registers itself with its argument and result types.

The agent builds its pydantic-ai toolset from this catalogue; the transcript
records each tool's JSON schema from it. A tool is `fn(ctx, args) -> result`
with one pydantic model in and one out; `mutates` says whether it changes the
host (a download, a launch, freeing space) or only looks (facts, checks);
`view` is what the model is shown of the result (model_view.py), when the
whole of it is more than a planner needs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints

from pydantic import BaseModel

from .context import ToolContext
from .model_view import View

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[[ToolContext, Any], BaseModel]
    args: type[BaseModel]
    result: type[BaseModel]
    mutates: bool
    description: str
    view: View | None = None


REGISTRY: dict[str, ToolSpec] = {}


def tool(name: str, *, mutates: bool, view: View | None = None) -> Callable[[F], F]:
    """Register `fn(ctx: ToolContext, args: Args) -> Result` under `name`; its docstring is its description.

    `view(result) -> JSON data` is what the model is shown instead of the whole result (compacted and capped either way).
    """

    def register(fn: F) -> F:
        hints = get_type_hints(fn)
        params = list(inspect.signature(fn).parameters)
        if len(params) != 2:
            raise TypeError(f"tool {name}: expected fn(ctx, args), got {params}")
        args, result = hints[params[1]], hints["return"]
        if not (issubclass(args, BaseModel) and issubclass(result, BaseModel)):
            raise TypeError(f"tool {name}: arguments and result must be pydantic models")
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"tool {name!r} registered twice")
        REGISTRY[name] = ToolSpec(
            name=name,
            fn=fn,
            args=args,
            result=result,
            mutates=mutates,
            description=inspect.cleandoc(fn.__doc__ or ""),
            view=view,
        )
        return fn

    return register
