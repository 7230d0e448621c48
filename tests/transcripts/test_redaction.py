"""Secrets planted in every channel of a run never reach the transcript or the logs."""

from __future__ import annotations

import json
import logging

import structlog
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart

from specops.transcripts import (
    ErrorEvent,
    Recorder,
    Redactor,
    RunEndEvent,
    RunStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    configure_logging,
    read_transcript,
)

# No recognisable format: only the environment net can catch these two.
ENV_API_KEY = "plain-env-secret-7Q2xv9"
ENV_DB_PASSWORD = "correct-horse-battery-staple"
ENV_HF_TOKEN = "hf_EnvTokenAbcdefghijklmnopqrstuvwxyz12"
ARGV_TOKEN = "argv-token-5kq8zz"
ARGV_PASSWORD = "argv-pass-w0rd"
STDOUT_BEARER = "eyJhbGciOiJIUzI1NiJ9.stdout-bearer"
STDOUT_HF = "hf_StdoutTokenZyxwvutsrqponmlkjihgf98"
URL_PASSWORD = "url-pass-3x8"
MODEL_SK = "sk-proj-ModelKey0123456789abcdefXYZ"
REGISTERED = "ssh-passphrase-only-we-know"
REPORT_TOKEN = "report-token-val-77"
ASSIGNED = "assigned-secret-41"

PLANTED = [
    ENV_API_KEY,
    ENV_DB_PASSWORD,
    ENV_HF_TOKEN,
    ARGV_TOKEN,
    ARGV_PASSWORD,
    STDOUT_BEARER,
    STDOUT_HF,
    URL_PASSWORD,
    MODEL_SK,
    REGISTERED,
    REPORT_TOKEN,
    ASSIGNED,
]


def _plant_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_API_KEY)
    monkeypatch.setenv("SPECOPS_DB_PASSWORD", ENV_DB_PASSWORD)
    monkeypatch.setenv("HF_TOKEN", ENV_HF_TOKEN)


def _record_a_run_with_secrets_everywhere(recorder: Recorder) -> None:
    recorder.record(
        RunStartEvent,
        goal=f"deploy the drafter; the key is {ENV_API_KEY}",
        policy={"name": "openai-chat:qwen", "settings": {"api_key": ENV_API_KEY, "base_url": "http://127.0.0.1:1/v1"}},
        config={"argv": ["specops", "run", "--hub-token", ENV_HF_TOKEN], "db": f"password is {ENV_DB_PASSWORD}"},
    )
    recorder.model_request(
        [ModelRequest(parts=[UserPromptPart(content=f"use token {ENV_HF_TOKEN} and password {ENV_DB_PASSWORD}")])]
    )
    recorder.model_response(
        ModelResponse(
            parts=[
                TextPart(content=f"I will export OPENAI_API_KEY={MODEL_SK}"),
                ToolCallPart(
                    tool_name="shell", args={"argv": ["hf", "download", "--token", ARGV_TOKEN]}, tool_call_id="c1"
                ),
            ],
            model_name="qwen",
        ),
        duration_s=0.2,
    )
    recorder.record(
        ToolCallEvent,
        call_id="c1",
        tool="shell",
        args={"argv": ["hf", "download", "--token", ARGV_TOKEN], "line": f"mysql --password={ARGV_PASSWORD} db"},
    )
    recorder.record(
        ToolResultEvent,
        call_id="c1",
        tool="shell",
        ok=True,
        result={
            "stdout": (
                f"> GET /api/models\n> Authorization: Bearer {STDOUT_BEARER}\n"
                f"cloning https://bot:{URL_PASSWORD}@hub.internal/z-lab/drafter\nHF token: {STDOUT_HF}\n"
            ),
            "exit_code": 0,
        },
        duration_s=1.5,
        host="sim:seed-ct200",
    )
    recorder.add_secret(REGISTERED, "ssh_passphrase")
    recorder.record(ErrorEvent, where="tools.ssh", message=f"key rejected with passphrase {REGISTERED}", kind="auth")
    recorder.record(
        RunEndEvent,
        status="failed",
        report={"hub": {"token": REPORT_TOKEN}, "repro": f"env HF_HUB_TOKEN={ASSIGNED} specops run ..."},
        duration_s=3.0,
    )


def test_no_planted_secret_reaches_the_transcript(tmp_path, monkeypatch):
    _plant_env(monkeypatch)
    path = tmp_path / "transcript.jsonl"
    with Recorder(path, "run-secrets") as recorder:
        _record_a_run_with_secrets_everywhere(recorder)
    text = path.read_text()
    leaked = [secret for secret in PLANTED if secret in text]
    assert leaked == []
    # What was there is still visible as redacted, with names where known.
    assert "[REDACTED:OPENAI_API_KEY]" in text and "[REDACTED:HF_TOKEN]" in text
    assert "[REDACTED:ssh_passphrase]" in text
    assert '"--token","[REDACTED]"' in text and "--password=[REDACTED]" in text
    assert "Authorization: Bearer [REDACTED]" in text and "https://bot:[REDACTED]@hub.internal" in text
    # The redacted messages are still pydantic-ai messages.
    events = read_transcript(path).events
    assert events[2].model_response().parts[0].content == "I will export OPENAI_API_KEY=[REDACTED]"


def test_no_planted_secret_reaches_the_logs(tmp_path, monkeypatch):
    _plant_env(monkeypatch)
    with (
        Recorder(tmp_path / "transcript.jsonl", "run-logs") as recorder,
        configure_logging(tmp_path, redactor=recorder.redactor) as logs,
    ):
        recorder.add_secret(REGISTERED, "ssh_passphrase")
        log = structlog.get_logger("specops.agent")
        log.info("tool call", argv=["hf", "download", "--token", ARGV_TOKEN], env_key=ENV_API_KEY)
        log.warning("model said", text=f"export OPENAI_API_KEY={MODEL_SK}", auth=f"Bearer {STDOUT_BEARER}")
        log.info(
            "context", hub_token=REPORT_TOKEN, db=ENV_DB_PASSWORD, hf=STDOUT_HF, line=f"--password {ARGV_PASSWORD}"
        )
        logging.getLogger("httpx").warning("GET https://bot:%s@hub.internal/ (token %s)", URL_PASSWORD, ENV_HF_TOKEN)
        try:
            raise RuntimeError(f"ssh refused passphrase {REGISTERED} and {ASSIGNED}")
        except RuntimeError:
            recorder.add_secret(ASSIGNED)
            log.exception("ssh failed")
    human, machine = logs.human.read_text(), logs.machine.read_text()
    for output in (human, machine):
        assert [secret for secret in PLANTED if secret in output] == []
    records = [json.loads(line) for line in machine.splitlines()]
    assert [r["event"] for r in records] == [
        "tool call",
        "model said",
        "context",
        "GET https://bot:[REDACTED]@hub.internal/ (token [REDACTED:HF_TOKEN])",
        "ssh failed",
    ]
    assert records[0]["argv"] == ["hf", "download", "--token", "[REDACTED]"] and records[2]["hub_token"] == "[REDACTED]"
    assert "RuntimeError: ssh refused passphrase [REDACTED:ssh_passphrase]" in records[-1]["exception"]
    assert "tool call" in human and "ssh failed" in human and "RuntimeError" in human


def test_ordinary_text_is_left_alone():
    redactor = Redactor(
        environ={"HF_HUB_DISABLE_IMPLICIT_TOKEN": "1", "KEYBOARD": "us", "HF_TOKEN_PATH": "/root/.cache/hf/token"}
    )
    untouched = {
        "usage": {"input_tokens": 120, "output_tokens": 30},
        "tokenizer": "Qwen/Qwen3-8B",
        "acceptance": {"token_weighted": 3.4},
        "remedy": "set HF_TOKEN (or pass --hub-token-env HF_TOKEN), then retry; see /root/.cache/hf/token",
        "argv": [
            "python",
            "-m",
            "sglang.launch_server",
            "--max-total-tokens",
            "8192",
            "--speculative-num-draft-tokens",
            "16",
        ],
        "text": "hf_hub_download and sk-learn, the key metric is 1 token per step; https://huggingface.co/z-lab",
    }
    assert redactor.redact(untouched) == untouched


def test_patterns_catch_each_format():
    redactor = Redactor(environ={})
    cases = {
        "curl -H 'Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123456789'": "curl -H 'Authorization: token [REDACTED]'",
        "--api-key=abc123 --token 'quoted secret'": "--api-key=[REDACTED] --token [REDACTED]",
        "AWS key AKIAABCDEFGHIJKLMNOP": "AWS key [REDACTED]",
        "postgres://admin:s3cr3t@db:5432/x": "postgres://admin:[REDACTED]@db:5432/x",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----": "[REDACTED]",
        "HF_TOKEN=hf_notreallyatokenbutlongenough": "HF_TOKEN=[REDACTED]",
        "HF_TOKEN_FILE=/run/secrets/hf": "HF_TOKEN_FILE=/run/secrets/hf",
    }
    assert {text: redactor.redact_text(text) for text in cases} == cases
    assert redactor.redact({"Authorization": "Basic dXNlcjpwYXNz", "password": 1234}) == {
        "Authorization": "[REDACTED]",
        "password": 1234,
    }


def test_a_registered_secret_is_redacted_from_then_on_even_inside_words(tmp_path):
    with Recorder(tmp_path / "t.jsonl", "run-add", environ={}) as recorder:
        recorder.note("before: pw=opensesame42")
        recorder.add_secret("opensesame42", "vault")
        recorder.note("after: xopensesame42x")
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    assert "opensesame42" in lines[0]  # not known yet: the caller registers secrets before use
    assert "x[REDACTED:vault]x" in lines[1]
