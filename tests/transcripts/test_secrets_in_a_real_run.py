"""Secrets planted in every channel of a real run (environment, flags, command lines, tool arguments and output,
model messages, the plan, the final answer, log lines) reach none of the files the run writes."""

from __future__ import annotations

import asyncio

import pytest
import structlog
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from specops.agent.budget import Budgets
from specops.agent.run import RunOptions, run_goal_async

from ..jobs import job_timeout

ENV_API_KEY = "plain-env-key-Zx81qq"  # no recognisable format: only the environment net catches it
ENV_HF_TOKEN = "hf_RealRunTokenAbcdefghijklmnopqrst"
ENV_DB_PASSWORD = "staple-battery-horse-93"
FLAG_TOKEN = "flag-token-4r4r4r"  # only after --token: free text naming no pattern is not caught (README)
FILE_SK = "sk-proj-FileKey0123456789abcdefXYZ"
MODEL_GH = "ghp_ModelSaid0123456789abcdefghijklmnopq"
PLANTED = [ENV_API_KEY, ENV_HF_TOKEN, ENV_DB_PASSWORD, FLAG_TOKEN, FILE_SK, MODEL_GH]


@pytest.mark.slow
@job_timeout()  # a whole run: only a hang fails
def test_no_planted_secret_reaches_any_file_of_a_real_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_API_KEY)
    monkeypatch.setenv("HF_TOKEN", ENV_HF_TOKEN)
    monkeypatch.setenv("SPECOPS_DB_PASSWORD", ENV_DB_PASSWORD)
    leaky = tmp_path / "notes.txt"  # what a tool will read back: secrets in its output
    leaky.write_text(f"api_key={FILE_SK}\nhub {ENV_HF_TOKEN}\ndb {ENV_DB_PASSWORD}\n")
    log = structlog.get_logger("test.policy")

    def respond(messages, info):
        turn = sum(1 for m in messages if m.kind == "response")
        log.info("policy turn", turn=turn, api_key=ENV_API_KEY, said=f"token {MODEL_GH} and {ENV_DB_PASSWORD}")
        if turn == 0:  # the plan itself carries secrets
            return ModelResponse(
                parts=[
                    ToolCallPart(
                        "todowrite",
                        {
                            "todos": [
                                {
                                    "id": "look",
                                    "content": f"look with {MODEL_GH} / {ENV_API_KEY}",
                                    "status": "in_progress",
                                    "priority": "high",
                                },
                            ]
                        },
                    )
                ]
            )
        if turn == 1:  # a command line with a secret flag, and tool output holding secrets
            return ModelResponse(
                parts=[
                    TextPart(f"I will use {MODEL_GH} and {ENV_HF_TOKEN}"),
                    ToolCallPart("shell", {"argv": ["cat", str(leaky)], "reason": f"read it, key {ENV_API_KEY}"}),
                    ToolCallPart("shell", {"argv": ["ls", "--token", FLAG_TOKEN, str(tmp_path)], "reason": "list"}),
                ]
            )
        return ModelResponse(
            parts=[
                ToolCallPart(
                    info.output_tools[0].name,
                    {
                        "status": "completed",
                        "summary": f"done with {MODEL_GH}, {ENV_HF_TOKEN} and {FILE_SK}",
                        "unresolved": [f"password {ENV_DB_PASSWORD}"],
                    },
                )
            ]
        )

    outcome = asyncio.run(
        run_goal_async(
            f"benchmark SubSir/Kimi-K2.6-DFlash-tmp-long (key {ENV_API_KEY})",
            host="local",
            policy=FunctionModel(respond, model_name="scripted"),
            run_dir=tmp_path / "run",
            options=RunOptions(fsync=False, allow_delete=(f"/tmp/{ENV_API_KEY}",)),
            budgets=Budgets(max_requests=6),
        )
    )
    assert outcome.status == "completed", outcome.reason
    written = {p.name: p.read_bytes().decode("utf-8", "replace") for p in outcome.run_dir.iterdir() if p.is_file()}
    for name in ("transcript.jsonl", "run.log", "log.jsonl", "report.md", "report.json", "todos.json"):
        assert name in written, f"the run wrote no {name}"
    # The secrets were there to leak: the tool really read them, the log line really was written.
    assert "[REDACTED" in written["transcript.jsonl"] and "policy turn" in written["log.jsonl"]
    leaks = {name: [s for s in PLANTED if s in text] for name, text in written.items()}
    assert {name: found for name, found in leaks.items() if found} == {}
