"""Golden transcripts: short runs on the simulated host, stored, and replayed by the tests.

A change that alters what the agent does (the playbook's calls, the loop's
events, the prompts, what a model is sent) makes a golden replay diverge, and
the test fails with the first divergence. When the change is meant, record
them again, from the repository's root:

    .venv/bin/python -m specops.cli.golden --rerecord

which runs each scenario below for real (its policy, sim:seed-ct200, its
faults) and writes transcripts/golden/<name>.jsonl.gz. Without --rerecord it
replays them and exits 1 on a divergence. The scenarios are chosen short: the
whole set records in about a minute and stores in a few hundred KiB.

Most are the playbook's runs (replayed with today's playbook). One is a
model's: an `openai-chat:` policy through the real openai client over HTTP,
answered by the tests' scripted Chat Completions server (tests/agent/
openai_chat_script.py, imported only to record it); its replay serves the
recorded responses, so what it checks is everything around the model: the
messages it is sent, the tools, the loop.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import importlib
import shutil
import sys
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import specops.transcripts
from specops.tools.hosts import HostRequest

from ..run import TRANSCRIPT, RunOptions, run_goal_async
from .replay import ReplayResult, replay_async

GOLDEN_DIR = Path(specops.transcripts.__file__).resolve().parent / "golden"
# The entry point lives with the CLI, which offers the simulated host these runs need (the agent imports no simulator).
RERECORD = ".venv/bin/python -m specops.cli.golden --rerecord"


@dataclass(frozen=True)
class GoldenScenario:
    name: str
    goal: str
    faults: tuple[str, ...] = ()
    why: str = ""
    allow_delete: tuple[str, ...] = ()  # the user's approvals (--allow-delete) the run is recorded with
    policy: str = "playbook"
    # A model's run: "module:function" of a context manager that serves the model on loopback while the scenario is
    # recorded and yields its base URL (a test module, importable from the repository's root; only --rerecord uses it).
    server: str | None = None

    @property
    def path(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.jsonl.gz"


SCENARIOS: tuple[GoldenScenario, ...] = (
    GoldenScenario(
        "evaluate-acceptance",
        "evaluate the acceptance length of SubSir/Kimi-K2.6-DFlash-tmp-long",
        why="the acceptance-only pipeline: facts, target, drafter config, disk, download, launch DFlash, acceptance, stop",
    ),
    GoldenScenario(
        "evaluate-full-disk-broken-cli",
        "evaluate the acceptance length of SubSir/Kimi-K2.6-DFlash-tmp-long",
        faults=("full_disk", "broken_cli"),
        allow_delete=("cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",),
        why="the seed's two faults: the approved cache freed after a dry run, the download through the library",
    ),
    GoldenScenario(
        "incompatible-drafter",
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-bad-layers",
        why="a drafter that does not fit its target: stopped before anything is downloaded",
    ),
    GoldenScenario(
        "openai-chat-incompatible-drafter",
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-bad-layers",
        policy="openai-chat:scripted-agent",
        server="tests.agent.openai_chat_script:serve",
        why="a model's run over HTTP (scripted Chat Completions server): several calls in one answer, text, "
        "reasoning, usage and provider metadata in the responses; stopped before anything is downloaded",
    ),
    GoldenScenario(
        "openai-chat-find-drafter",
        "is there an EAGLE-3 drafter for Kimi-K2.6 worth trying?",
        policy="openai-chat:scripted-agent",
        server="tests.agent.openai_chat_find_script:serve",
        why="a goal as people say it, naming no repo, given to a model with its hints: it searches the Hub, picks "
        "the drafter its listing and config support, and answers without downloading",
    ),
)


async def record(scenario: GoldenScenario) -> str:
    """Run the scenario for real and store its transcript; its ending status."""
    with tempfile.TemporaryDirectory(prefix="specops-golden-") as tmp, _serving(scenario) as base_url:
        outcome = await run_goal_async(
            scenario.goal,
            host=HostRequest(spec="sim:seed-ct200", options={"faults": tuple(scenario.faults)}),
            policy=scenario.policy,
            run_dir=Path(tmp) / scenario.name,
            options=RunOptions(fsync=False, base_url=base_url, allow_delete=scenario.allow_delete),
        )
        GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
        data = (outcome.run_dir / TRANSCRIPT).read_bytes()
        partial = scenario.path.with_suffix(".tmp")
        with gzip.GzipFile(partial, "wb", mtime=0) as out:  # mtime 0: the same run gives the same bytes
            out.write(data)
        shutil.move(partial, scenario.path)
    return outcome.status


def _serving(scenario: GoldenScenario) -> AbstractContextManager[str | None]:
    """The scenario's model server while it is recorded (its base URL), or nothing (the playbook)."""
    if scenario.server is None:
        return nullcontext(None)
    module, _, name = scenario.server.partition(":")
    if (
        str(Path.cwd()) not in sys.path
    ):  # `python -m` puts the working directory first; an import from elsewhere may not
        sys.path.insert(0, str(Path.cwd()))
    try:
        serve: Callable[[], AbstractContextManager[str | None]] = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise SystemExit(
            f"{scenario.name}: cannot import {module} ({exc}): record it from the repository's root"
        ) from None
    return serve()


async def check(scenario: GoldenScenario) -> ReplayResult:
    return await replay_async(scenario.path)


def mismatch_message(scenario: GoldenScenario, result: ReplayResult) -> str:
    return (
        f"golden transcript {scenario.name} no longer replays: the agent's behaviour changed.\n"
        f"{result.summary()}\n"
        f"If the change is meant, record the golden transcripts again: {RERECORD}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specops.cli.golden", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rerecord", action="store_true", help="run every scenario for real and store its transcript")
    parser.add_argument("--only", action="append", default=[], help="only this scenario (repeatable)")
    args = parser.parse_args(argv)
    chosen = [s for s in SCENARIOS if not args.only or s.name in args.only]
    failed = 0
    for scenario in chosen:
        if args.rerecord:
            status = asyncio.run(record(scenario))
            size = scenario.path.stat().st_size
            print(f"recorded {scenario.name}: run {status}, {size / 1024:.0f} KiB -> {scenario.path}")
            continue
        if not scenario.path.exists():
            print(f"{scenario.name}: no golden transcript at {scenario.path}; record it: {RERECORD}")
            failed += 1
            continue
        result = asyncio.run(check(scenario))
        print(result.summary() if result.ok else mismatch_message(scenario, result))
        failed += not result.ok
    return 1 if failed else 0
