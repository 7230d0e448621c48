"""`specops bench`: a concurrency sweep against a server on a host (the `benchmark` tool)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..tools.benchmark import BenchmarkArgs, BenchmarkResult, LatencySummary, run_benchmark
from .tool_call import call_tool, tool_args

_LEVELS_HOW = "give positive integers separated by commas, e.g. 1,8,32"
MAX_CONCURRENCY = 4096  # tools.inputs.Concurrency
MAX_LEVELS = 32  # BenchmarkArgs.levels

# Each BenchmarkArgs field by the flag that sets it, for errors in the user's words.
FLAGS = {
    "port": "--port",
    "levels": "--levels",
    "prompts": "--prompts",
    "input_len": "--input-len",
    "output_len": "--output-len",
    "rounds": "--rounds",
    "requests_per_level": "--requests",
    "duration_s": "--duration",
    "warmup_requests": "--warmup",
    "api": "--api",
    "model": "--model",
    "client": "--client",
    "ignore_eos": "--eos/--ignore-eos",
    "flush_cache": "--no-flush",
}


def parse_levels(text: str) -> list[int]:
    """`1,8,32` as [1, 8, 32]; ValueError (one line, in the user's words) for anything else."""
    levels: list[int] = []
    for position, item in enumerate(text.split(","), start=1):
        item = item.strip()
        if not item:
            what = "no level given" if not text.strip() else f"{text!r} has an empty item (item {position})"
            raise ValueError(f"{what}; {_LEVELS_HOW}")
        if not (item.isascii() and item.isdigit()):
            raise ValueError(f"{item!r} is not a concurrency; {_LEVELS_HOW}")
        level = int(item)
        if level < 1:
            raise ValueError(f"{level} is not a concurrency; {_LEVELS_HOW}")
        if level > MAX_CONCURRENCY:
            raise ValueError(f"{level} is more than {MAX_CONCURRENCY} requests in flight; {_LEVELS_HOW}")
        if level in levels:
            raise ValueError(f"{level} is given twice; give each concurrency once, e.g. 1,8,32")
        levels.append(level)
    if len(levels) > MAX_LEVELS:
        raise ValueError(f"{len(levels)} levels; a sweep takes at most {MAX_LEVELS}")
    return levels


def _check_levels(text: str) -> str:
    try:
        parse_levels(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return text


def _print_table(result: BenchmarkResult) -> None:
    """The result, on stdout; its warnings are part of it (they qualify the numbers, as in --json)."""
    typer.echo(
        f"{result.host} port {result.port}  api {result.api}  client {result.client}  server {result.server_version}"
    )
    typer.echo(
        f"{'C':>5} {'ach.C':>7} {'tok/s':>9} {'+-95%':>6} {'req/s':>7} {'TTFT p50':>9} {'TPOT p50':>9} "
        f"{'ITL/tok p50':>11} {'gap p50':>8} {'E2E p99':>9} {'tok/chunk':>9} {'accept':>7} {'err':>4}  flags"
    )
    for lv in result.levels:
        spread = "-"
        if lv.output_tok_s_ci95 is not None and lv.output_tok_s > 0:
            spread = f"{50 * (lv.output_tok_s_ci95[1] - lv.output_tok_s_ci95[0]) / lv.output_tok_s:.1f}%"
        flags = [
            name for name, on in (("unstable", lv.unstable), ("client-bound", lv.client and lv.client.limited)) if on
        ]

        def ms(summary: LatencySummary | None) -> str:
            return f"{summary.p50_ms:.2f}" if summary is not None and summary.p50_ms is not None else "-"

        e2e = f"{lv.e2e.p99_ms:.0f}" if lv.e2e.p99_ms is not None else "-"
        typer.echo(
            f"{lv.concurrency:>5} {lv.achieved_concurrency:>7.1f} {lv.output_tok_s:>9.1f} {spread:>6} {lv.request_rate_per_s:>7.2f} "
            f"{ms(lv.ttft):>9} {ms(lv.tpot):>9} {ms(lv.itl_per_token):>11} {ms(lv.inter_chunk_gap):>8} {e2e:>9} "
            f"{(lv.tokens_per_chunk or 0):>9.2f} {(f'{lv.accept_length:.2f}' if lv.accept_length else '-'):>7} "
            f"{lv.requests_failed:>4}  {','.join(flags) or '-'}"
        )
    for warning in result.warnings:
        typer.echo(f"warning: {warning}")
    typer.echo(f"method: {result.method}")


def bench(
    host: Annotated[
        str, typer.Option(help="local, ssh://user@host[:port], an inventory name, or sim:NAME (a running world)")
    ] = "local",
    port: Annotated[int, typer.Option(help="The server's port on the host")] = 30000,
    levels: Annotated[
        str, typer.Option(help="Concurrency levels, comma separated (e.g. 1,8,32)", callback=_check_levels)
    ] = "1,8,32,64",
    prompts: Annotated[
        str,
        typer.Option(
            help="random; gsm8k, math500, humaneval, mbpp or mt-bench (fetched on the host); math, code, chat or acceptance-mix"
        ),
    ] = "random",
    input_len: Annotated[int, typer.Option(help="Prompt tokens (random prompts)")] = 512,
    output_len: Annotated[int, typer.Option(help="Output tokens per request")] = 256,
    rounds: Annotated[int, typer.Option(help="Requests per level = rounds x concurrency")] = 3,
    requests: Annotated[int | None, typer.Option(help="A fixed request count per level instead")] = None,
    duration: Annotated[float | None, typer.Option(help="Seconds of requests per level instead")] = None,
    warmup: Annotated[int, typer.Option(help="Warm-up requests per level (not counted)")] = 1,
    api: Annotated[str, typer.Option(help="auto, sglang (native /generate) or openai (/v1/completions)")] = "auto",
    model: Annotated[
        str | None, typer.Option(help="Model name for the OpenAI API (default: the first of /v1/models)")
    ] = None,
    client: Annotated[
        str, typer.Option(help="host (default), local (through a port forward) or bench_serving")
    ] = "host",
    eos: Annotated[
        bool, typer.Option("--eos/--ignore-eos", help="Let answers stop at EOS (default: ignore EOS)")
    ] = False,
    no_flush: Annotated[bool, typer.Option("--no-flush", help="Do not flush the prefix cache between levels")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
) -> None:
    """Concurrency sweep against an OpenAI-compatible or SGLang server: tok/s, TTFT, TPOT, ITL, E2E, accept length."""
    args = tool_args(
        BenchmarkArgs,
        FLAGS,
        port=port,
        levels=parse_levels(levels),
        prompts=prompts,
        input_len=input_len,
        output_len=output_len,
        rounds=rounds,
        requests_per_level=requests,
        duration_s=duration,
        warmup_requests=warmup,
        api=api,
        model=model,
        client=client,
        ignore_eos=not eos,
        flush_cache=not no_flush,
    )
    result = call_tool(host, run_benchmark, args)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_table(result)
