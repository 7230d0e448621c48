"""Typed tools and the hosts they run on.

`hosts/` is the Host interface and its backends (local, ssh, sim). Each tool
is a function `tool(ctx: ToolContext, args: XArgs) -> XResult` with pydantic
arguments and results that raises a ToolError subclass (errors.py) on failure.
Nothing here imports the agent.
"""
