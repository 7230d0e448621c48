"""This machine's Hub token as huggingface_hub finds it (get_token): HF_TOKEN, else HF_TOKEN_PATH, else $HF_HOME/token.

huggingface_hub reads HF_TOKEN_PATH and HF_HOME when it is imported, so each case runs in a fresh process
with a real token file where that environment points.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from specops.tools.hub import local_hub_token

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

FILE_TOKEN = "hf_FileTokenAbcdefghijklmnopqrstuvw"
ENV_TOKEN = "hf_EnvTokenAbcdefghijklmnopqrstuvwx"

_PROBE = """
import json
from specops.tools.hub import HubTokenUnreadable, local_hub_token, local_hub_token_source
try:
    token = local_hub_token()
    print(json.dumps({"token": token.get_secret_value() if token else None, "source": local_hub_token_source(),
                      "shown": repr(token)}))
except HubTokenUnreadable as exc:
    print(json.dumps({"unreadable": exc.what, "remedy": exc.remedy}))
"""


def _probe(**env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE")}
    base.pop("HF_TOKEN_PATH", None)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env={**base, **env}, capture_output=True, text=True, timeout=50, check=True
    )
    return json.loads(done.stdout)


def test_the_token_file_at_hf_token_path_is_read(tmp_path):
    token_file = tmp_path / "secrets" / "hub-token"
    token_file.parent.mkdir()
    token_file.write_text(FILE_TOKEN + "\n")
    found = _probe(HF_HOME=str(tmp_path / "home"), HF_TOKEN_PATH=str(token_file))
    assert found["token"] == FILE_TOKEN and found["source"] == f"the token file {token_file}"
    assert FILE_TOKEN not in found["shown"]  # a SecretStr


def test_the_token_file_under_hf_home_is_read_and_hf_token_wins_over_it(tmp_path):
    home = tmp_path / "hf-home"
    home.mkdir()
    (home / "token").write_text(FILE_TOKEN)
    found = _probe(HF_HOME=str(home))
    assert found["token"] == FILE_TOKEN and found["source"] == f"the token file {home / 'token'}"
    found = _probe(HF_HOME=str(home), HF_TOKEN=ENV_TOKEN)
    assert found["token"] == ENV_TOKEN and found["source"] == "HF_TOKEN"


def test_no_token_anywhere_is_none(tmp_path):
    assert _probe(HF_HOME=str(tmp_path / "empty-home")) == {"token": None, "source": None, "shown": "None"}


def test_a_token_file_that_cannot_be_read_is_said_not_skipped(tmp_path):
    (tmp_path / "token").mkdir()  # a directory where the file goes: unreadable even as root
    found = _probe(HF_HOME=str(tmp_path / "home"), HF_TOKEN_PATH=str(tmp_path / "token"))
    assert found["unreadable"].startswith(f"cannot read the Hub token file {tmp_path / 'token'}")
    assert "HF_TOKEN" in found["remedy"]


def test_in_this_process_hf_token_is_read(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_TOKEN", ENV_TOKEN)
    token = local_hub_token()
    assert token is not None and token.get_secret_value() == ENV_TOKEN and ENV_TOKEN not in repr(token)
