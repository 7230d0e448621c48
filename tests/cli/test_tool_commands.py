"""`specops bench` / `specops accept`: bad arguments exit 2 before anything runs; an unreachable host exits 1."""

from __future__ import annotations

import socket

import pytest
from typer.testing import CliRunner

from specops.agent.host import open_run_host
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


def test_the_agents_tools_get_the_hub_token_as_huggingface_hub_finds_it(monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "token"))  # what `hf auth login` writes
    with open_run_host("local") as run_host:
        assert run_host.context.hub_token is None
    (tmp_path / "token").write_text("hf_from_the_token_file\n")
    with open_run_host("local") as run_host:
        token = run_host.context.hub_token
    assert token is not None and token.get_secret_value() == "hf_from_the_token_file"
    monkeypatch.setenv("HF_TOKEN", "hf_granted_test")  # the environment first, as huggingface_hub reads it
    with open_run_host("local") as run_host:
        token = run_host.context.hub_token
    assert token is not None and token.get_secret_value() == "hf_granted_test" and "hf_granted" not in repr(token)
