"""`specops doctor`: the hosts `specops run --host` takes (sim:PROFILE too), `--json`, exit codes, no secret shown."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from specops.cli.main import app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

SPECOPS = [sys.executable, "-m", "specops.cli.main"]
FILE_TOKEN = "hf_DoctorFileTokenAbcdefghijklmnopqr"


def invoke(*args: str):  # noqa: ANN201 - click's Result, stdout and stderr apart
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def no_hub_token(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(name, raising=False)


def test_doctor_json_on_a_sim_profile_run_accepts(no_hub_token):
    result = invoke("doctor", "sim:seed-ct200", "--json")
    assert result.exit_code == 1, (result.stdout, result.stderr)  # the seed host's problems: a check failed
    found = json.loads(result.stdout)  # stdout is the JSON alone
    assert found["host"] == "sim:seed-ct200" and found["reached"] and not found["ok"]
    assert found["opened"].startswith("sim:seed-ct200-") and found["error"] is None
    assert found["facts"]["gpus"] and "RTX PRO 6000" in found["facts"]["gpus"][0]["model"]
    assert any("98% full" in p["what"] for p in found["problems"]) and all(p["remedy"] for p in found["problems"])
    assert set(found["hub_token"]) == {"found", "source", "error"}  # where this machine keeps one, if it does
    assert "reached sim:seed-ct200" in result.stderr


def test_doctor_on_a_sim_profile_without_problems_exits_0(no_hub_token):
    result = invoke("doctor", "sim:h200x8-nvlink")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "no problems found" in result.stdout and "hub token (here)" in result.stdout
    found = json.loads(invoke("doctor", "sim:h200x8-nvlink", "--json").stdout)
    assert found["ok"] and found["problems"] == []


@pytest.mark.parametrize(
    ("host", "words"),
    [
        ("ssh://root@127.0.0.1:CLOSED", "cannot reach SSH on root@127.0.0.1"),
        ("sim:no-such-profile", "no simulated host profile 'no-such-profile'"),
        ("ssh://root@bad;host", "';'"),
    ],
)
def test_doctor_json_on_a_host_it_cannot_reach_exits_2_with_the_reason(no_hub_token, host, words):
    host = host.replace("CLOSED", str(_closed_port()))
    result = invoke("doctor", host, "--json")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    found = json.loads(result.stdout)
    assert (found["host"], found["reached"], found["ok"], found["facts"]) == (host, False, False, None)
    assert words in found["error"]
    assert len(result.stderr.strip().splitlines()) == 1 and f"cannot reach {host}: " in result.stderr


def test_doctor_reports_the_hub_token_file_and_never_its_value(tmp_path):
    """A real token file where HF_TOKEN_PATH points (huggingface_hub reads it when imported: a fresh process)."""
    token_file = tmp_path / "hub" / "token"
    token_file.parent.mkdir()
    token_file.write_text(FILE_TOKEN + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE")}
    env |= {"HF_HOME": str(tmp_path / "hf-home"), "HF_TOKEN_PATH": str(token_file)}
    done = subprocess.run(
        [*SPECOPS, "doctor", "sim:h200x8-nvlink", "--json"], env=env, capture_output=True, text=True, timeout=100
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["hub_token"] == {"found": True, "source": f"the token file {token_file}", "error": None}
    # Pasted by mistake where the host goes: the message that names the host shows no token either.
    done = subprocess.run([*SPECOPS, "doctor", FILE_TOKEN], env=env, capture_output=True, text=True, timeout=100)
    assert done.returncode == 2 and "[REDACTED" in done.stderr, done.stderr
    for text in (done.stdout, done.stderr):
        assert FILE_TOKEN not in text


@pytest.fixture(scope="module")
def seed_facts():
    from specops.tools.facts import HostFacts

    found = json.loads(CliRunner().invoke(app, ["doctor", "sim:seed-ct200", "--json"]).stdout)
    return HostFacts.model_validate(found["facts"])


def test_a_full_mount_is_a_problem_only_where_downloads_go(seed_facts):
    """The seed's / is 98% full and holds the home: a problem. A full mount the home is not on (an HF_HOME cache
    on its own disk, say) takes no download: not one."""
    from specops.cli.doctor import find_problems

    full = [p.what for p in find_problems(seed_facts, "/root") if "full" in p.what]
    assert full and full[0].startswith("/ is 98% full")
    root = next(m for m in seed_facts.mounts if m.mount_point == "/")
    cache = root.model_copy(update={"mount_point": "/hf-cache", "use_percent": 99})
    roomy = root.model_copy(update={"use_percent": 10})
    moved = seed_facts.model_copy(update={"mounts": [roomy, cache]})
    assert not [p for p in find_problems(moved, "/root") if "full" in p.what]
    assert [p for p in find_problems(moved, "/hf-cache/root") if "/hf-cache is 99% full" in p.what]


def test_without_huggingface_hub_the_clis_are_not_called_broken(seed_facts):
    from specops.cli.doctor import _cli_row, find_problems

    clis = [
        c.model_copy(update={"works": False, "detail": "ModuleNotFoundError: huggingface_hub"}) for c in seed_facts.clis
    ]
    bare = seed_facts.model_copy(update={"huggingface_hub_version": None, "clis": clis})
    said = " ".join(p.what for p in find_problems(bare, "/root"))
    assert "broken" not in said and "does not work" not in said
    assert all(_cli_row(c, bare) == "unusable: huggingface_hub is not installed for python3" for c in clis)
