"""`specops bench` / `specops accept`: bad arguments exit 2 before anything runs; an unreachable host exits 1."""

from __future__ import annotations

import socket

import pytest
from typer.testing import CliRunner

from specops.agent.host import hub_token_from_env
from specops.cli.main import app


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("command", [["bench", "--levels", "0"], ["accept", "--port", "0"]])
def test_bad_arguments_exit_2_before_any_host_is_opened(command):
    # The host would not answer either: exit 2, not 1, shows nothing was tried.
    result = CliRunner().invoke(app, [*command, "--host", f"ssh://root@127.0.0.1:{_closed_port()}"])
    assert result.exit_code == 2, result.output


@pytest.mark.parametrize("command", [["bench", "--levels", "1"], ["accept"]])
def test_a_host_that_does_not_answer_exits_1_with_its_message(command):
    result = CliRunner().invoke(app, [*command, "--host", f"ssh://root@127.0.0.1:{_closed_port()}"])
    assert result.exit_code == 1
    assert "127.0.0.1" in result.output


def test_the_agents_tools_get_the_hub_token_from_the_environment(monkeypatch):
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert hub_token_from_env() is None
    monkeypatch.setenv("HF_TOKEN", "hf_granted_test")
    token = hub_token_from_env()
    assert token is not None and token.get_secret_value() == "hf_granted_test" and "hf_granted" not in repr(token)
