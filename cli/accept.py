"""`specops accept`: acceptance length of a running speculative server (the `acceptance` tool)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..agent.report.naming import acceptance_rows, stat_label
from ..tools.acceptance import AcceptanceArgs, measure_acceptance
from .tool_call import call_tool, tool_args


def _ci(interval: tuple[float, float] | None) -> str:
    return f"[{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "-"


# Each AcceptanceArgs field by the flag that sets it, for errors in the user's words.
FLAGS = {
    "port": "--port",
    "categories": "--category",
    "prompts_per_category": "--prompts-per-category",
    "max_new_tokens": "--max-new-tokens",
    "ignore_eos": "--ignore-eos",
    "concurrency": "--concurrency",
    "break_even_accept_length": "--break-even",
    "prompt_template": "--template",
    "thinking": "--thinking",
}


def accept(
    host: Annotated[
        str, typer.Option(help="local, ssh://user@host[:port], an inventory name, or sim:NAME (a running world)")
    ] = "local",
    port: Annotated[int, typer.Option(help="The server's port on the host")] = 30000,
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category",
            help="gsm8k, math500, humaneval, mbpp, mt-bench (fetched on the host), or the shipped math, code, chat "
            "(repeatable; default the five datasets)",
        ),
    ] = None,
    prompts_per_category: Annotated[int | None, typer.Option(help="Use the first N prompts of each")] = None,
    max_new_tokens: Annotated[int, typer.Option(help="Tokens per answer")] = 1024,
    ignore_eos: Annotated[bool, typer.Option(help="Run every answer to max_new_tokens")] = False,
    concurrency: Annotated[int, typer.Option(help="Requests in flight")] = 8,
    break_even: Annotated[
        float | None, typer.Option(help="The accept length the drafter needs to beat the baseline")
    ] = None,
    template: Annotated[
        str, typer.Option(help="How a prompt becomes /generate text; {prompt} is replaced")
    ] = "{prompt}",
    thinking: Annotated[
        str,
        typer.Option(
            help="auto (both modes when the model's chat template has a thinking switch), raw, on, off or both"
        ),
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
) -> None:
    """Acceptance length per dataset and overall: request mean and token weighted, with 95% intervals."""
    fields = {"categories": category} if category else {}
    args = tool_args(
        AcceptanceArgs,
        FLAGS,
        port=port,
        prompts_per_category=prompts_per_category,
        max_new_tokens=max_new_tokens,
        ignore_eos=ignore_eos,
        concurrency=concurrency,
        break_even_accept_length=break_even,
        prompt_template=template,
        thinking=thinking,
        **fields,
    )
    result = call_tool(host, measure_acceptance, args)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    typer.echo(
        f"{result.host} port {result.port}  {result.speculative_algorithm} block {result.block_size}  "
        f"server {result.server_version}"
    )
    typer.echo(f"{'dataset':<22} {'n':>4} {'request mean':>12} {'95% (t)':>14} {'token wtd':>10} {'95% (boot)':>14}")
    for row in acceptance_rows(result):
        typer.echo(
            f"{stat_label(row):<22} {row.prompts:>4} {row.request_mean:>12.3f} {_ci(row.request_mean_ci95):>14} "
            f"{row.token_weighted:>10.3f} {_ci(row.token_weighted_ci95):>14}"
        )
    if result.warning:
        typer.echo(f"warning: {result.warning}")
    typer.echo(f"method: {result.method}")
