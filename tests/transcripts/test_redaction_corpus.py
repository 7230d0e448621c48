"""Redaction with no false positives: ordinary text from reports, configs and tool results is left as it was,
while the secrets beside it are still taken out.

The corpus (data/ordinary_text.txt) holds what specops really writes: benchmark sentences ("512-token prompts"),
SGLang argv (--speculative-num-draft-tokens 16, --mask-token "<|MASK|>"), config.json and tokenizer values
("mask_token": "<|MASK|>"), tool-result JSON, SGLang logs, hashes, revisions, HF cache paths and model ids. Each
line goes through every net: as text, as JSON when it is JSON (keys naming secrets), as an argv list, as a
structlog event, and with a host environment of ordinary variables whose names hold TOKEN or KEY.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from specops.tools.facts import redact_argv
from specops.transcripts import Redactor
from specops.transcripts.redaction import is_secret_env_name, is_secret_flag, is_secret_name

CORPUS = Path(__file__).parent / "data" / "ordinary_text.txt"
LINES = [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]

# A host's environment: ordinary variables with TOKEN or KEY in their names (none is a secret), and real secrets
# whose values appear nowhere in the corpus.
HOST_ENVIRON = {
    "MAX_TOTAL_TOKENS": "8192",
    "SGLANG_MAX_PREFILL_TOKENS": "16384",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
    "HF_TOKEN_PATH": "/root/.cache/huggingface/token",
    "SGLANG_MASK_TOKEN": "<|MASK|>",
    "KEYBOARD_LAYOUT": "us-intl",
    "OPENAI_API_KEY": "EMPTY",
    "HF_TOKEN": "hf_HostEnvTokenAbcdefghijklmnopqrstu12",
    "SPECOPS_DB_PASSWORD": "host-env-db-password-771",
}


def _redactor() -> Redactor:
    return Redactor(environ=HOST_ENVIRON)


def test_the_corpus_is_large_and_holds_the_cases_seen_on_real_runs():
    assert len(LINES) >= 200 and len(set(LINES)) == len(LINES)
    text = "\n".join(LINES)
    seen_on_real_runs = (
        "512-token prompts, 256 output tokens",
        '"mask_token": "<|MASK|>"',
        "--speculative-num-draft-tokens 16",
        "--max-total-tokens",
        "--mask-token",
    )
    assert [seen for seen in seen_on_real_runs if seen not in text] == []


def test_no_line_of_the_corpus_is_changed_as_text():
    redactor = _redactor()
    changed = {line: out for line in LINES if (out := redactor.redact_text(line)) != line}
    assert changed == {}


def _as_json(line: str) -> object | None:
    for candidate in (line, "{" + line + "}"):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def test_no_json_line_is_changed_as_a_value():
    """Keys that name a vocabulary token or a count (mask_token, eos_token, max_total_tokens) are not secrets."""
    redactor = _redactor()
    values = [value for line in LINES if isinstance(value := _as_json(line), (dict, list))]
    assert len(values) >= 50
    assert [value for value in values if redactor.redact(value) != value] == []


COMMANDS = {"python", "python3", "hf", "huggingface-cli", "docker", "env", "ssh", "nvidia-smi", "4123"}


def _argv(line: str) -> list[str] | None:
    """The line as argv when it is a command line: a command, or flags each followed by at most one value."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if not words or not any(word.startswith("-") for word in words):
        return None
    if words[0] in COMMANDS:
        return words
    flags_and_values = words[0].startswith("-") and all(
        word.startswith("-") or words[i - 1].startswith("-") for i, word in enumerate(words) if i
    )
    return words if flags_and_values else None


def test_no_command_line_is_changed_as_an_argv_list():
    redactor = _redactor()
    argvs = [argv for line in LINES if (argv := _argv(line))]
    assert len(argvs) >= 30
    assert [argv for argv in argvs if redactor.redact(argv) != argv] == []


def test_host_facts_keeps_the_values_of_ordinary_flags():
    for line in LINES:
        argv = _argv(line)
        if argv and "launch_server" in argv and not any(is_secret_flag(word.split("=")[0]) for word in argv):
            assert redact_argv(argv) == argv, line


def test_no_structlog_event_of_key_value_pairs_is_changed():
    redactor = _redactor()
    events = []
    for line in LINES:
        pairs = [word.split("=", 1) for word in line.split(" ")]
        if all(len(pair) == 2 and pair[0].isidentifier() for pair in pairs):
            events.append(dict(pairs))
    assert len(events) >= 5
    assert [event for event in events if redactor(None, "info", dict(event)) != event] == []


def test_ordinary_events_keep_the_fast_path():
    """Lines that name no secret word are written without the full walk."""
    redactor = Redactor(environ={})
    plain = [line for line in LINES if not any(word in line.lower() for word in ("token", "key", "secret", "pass"))]
    assert len(plain) >= 80
    for line in plain:
        event = json.dumps({"text": line}, ensure_ascii=False, separators=(",", ":"))
        assert not redactor.may_hold_secrets(event), line


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("--token", True),
        ("--hf-token", True),
        ("--api-key", True),
        ("--admin-api-key", True),
        ("--password", True),
        ("--db-passwd", True),
        ("--client-secret", True),
        ("--authtoken", True),
        ("api_key", True),
        ("hub_token", True),
        ("apiKey", True),
        ("accessToken", True),
        ("HFToken", True),
        ("Authorization", True),
        ("X-Api-Key", True),
        ("PRIVATE-TOKEN", True),
        ("aws_secret_access_key", True),
        ("credentials", True),
        ("Set-Cookie", True),
        ("--speculative-num-draft-tokens", False),
        ("--max-total-tokens", False),
        ("--mask-token", False),
        ("--dflash-mask-token", False),
        ("--token-file", False),
        ("--hub-token-env", False),
        ("--api-key-env", False),
        ("mask_token", False),
        ("eos_token", False),
        ("pad_token", False),
        ("image_token", False),
        ("maskToken", False),
        ("input_tokens", False),
        ("tokenizer", False),
        ("token_weighted", False),
        ("itl_per_token", False),
        ("mask_token_id", False),
        ("cache_key", False),
        ("key", False),
        ("secret_names", False),
        ("keyboard", False),
    ],
)
def test_which_names_are_secret(name, secret):
    assert is_secret_name(name) is secret
    if name.startswith("-"):
        assert is_secret_flag(name) is secret


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("HF_TOKEN", True),
        ("HUGGING_FACE_HUB_TOKEN", True),
        ("OPENAI_API_KEY", True),
        ("AWS_ACCESS_KEY_ID", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("SPECOPS_DB_PASSWORD", True),
        ("NGROK_AUTHTOKEN", True),
        ("WANDB_KEY", True),
        ("HF_TOKEN_PATH", False),
        ("HF_TOKEN_FILE", False),
        ("MAX_TOTAL_TOKENS", False),
        ("TOKENIZERS_PARALLELISM", False),
        ("SGLANG_MASK_TOKEN", False),
        ("KEYBOARD_LAYOUT", False),
        ("CUDA_VISIBLE_DEVICES", False),
    ],
)
def test_which_environment_variables_hold_secrets(name, secret):
    assert is_secret_env_name(name) is secret


# (text, the secret in it): every format the nets know, in the places specops meets them.
SECRETS = [
    ("HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    ("HF_TOKEN=plain-hub-token-6611", "plain-hub-token-6611"),
    ("export OPENAI_API_KEY=sk-proj-Zx81qqAbCdEfGhIjKlMnOp", "sk-proj-Zx81qqAbCdEfGhIjKlMnOp"),
    ("OPENAI_API_KEY='quoted-openai-key-4410'", "quoted-openai-key-4410"),
    ("the key is sk-ant-api03-AbCdEfGhIjKlMnOpQrSt here", "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt"),
    ("HF token: hf_StdoutTokenZyxwvutsrqponmlkjihgf98", "hf_StdoutTokenZyxwvutsrqponmlkjihgf98"),
    ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --api-key s3rv3r-k3y-88 --port 30000", "s3rv3r-k3y-88"),
    ("python -m sglang.launch_server --admin-api-key adm1n-k3y-42 --speculative-num-draft-tokens 16", "adm1n-k3y-42"),
    ("vllm serve Qwen/Qwen3-8B --hf-token=tok-hf-91xq", "tok-hf-91xq"),
    ("hf download z-lab/Qwen3-8B-DFlash-b16 --token tok-cli-7Hq2", "tok-cli-7Hq2"),
    ("--api-key=abc123 --port 30000", "abc123"),
    ("mysql --password=my-sql-pw-77 runs", "my-sql-pw-77"),
    ("mysql --db-passwd 'quoted pw 12' runs", "quoted pw 12"),
    ("--client-secret cs-4455-abc", "cs-4455-abc"),
    ("ngrok http 30000 --authtoken 2abcDEFngrok66", "2abcDEFngrok66"),
    (
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig' http://127.0.0.1:30000/v1/models",
        "eyJhbGciOiJIUzI1NiJ9.payload.sig",
    ),
    ("> Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("sent with Bearer tok-bearer-2291", "tok-bearer-2291"),
    ("X-Api-Key: k-header-991", "k-header-991"),
    ("PRIVATE-TOKEN: glpat-AbCdEfGh12345", "glpat-AbCdEfGh12345"),
    ("> GET /v1/models\n> Cookie: session=cookie-val-5150", "cookie-val-5150"),
    ("git clone https://bot:gh-pass-771@hub.internal/z-lab/drafter", "gh-pass-771"),
    ("postgres://specops:db-pw-5521@db.internal:5432/runs", "db-pw-5521"),
    ("GET https://huggingface.co/api/models?access_token=tok-query-112&full=1", "tok-query-112"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("aws key AKIAIOSFODNN7EXAMPLE in the log", "AKIAIOSFODNN7EXAMPLE"),
    ("GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
    ("slack token xoxb-123456789012-abcdefghij", "xoxb-123456789012-abcdefghij"),
    ('{"hf_token": "tok-json-55aa", "mask_token": "<|MASK|>"}', "tok-json-55aa"),
    ('{"apiKey": "k-camel-8812"}', "k-camel-8812"),
    ("settings {'api_key': 'k-repr-9931', 'base_url': 'http://127.0.0.1:8000/v1'}", "k-repr-9931"),
    ("SPECOPS_DB_PASSWORD=pw-env-0042 specops run", "pw-env-0042"),
    ("HUGGING_FACE_HUB_TOKEN=tok-legacy-3322", "tok-legacy-3322"),
    ("docker run -e HF_TOKEN=tok-docker-8181 lmsysorg/sglang", "tok-docker-8181"),
    ("NGROK_AUTHTOKEN=2abcDEFghiJKL", "2abcDEFghiJKL"),
    ("WANDB_API_KEY=wandb-key-0042", "wandb-key-0042"),
    ("  hf_token: tok-yaml-77", "tok-yaml-77"),
    ("AWS_ACCESS_KEY_ID=access-key-id-3", "access-key-id-3"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_are_still_taken_out(text, secret):
    redactor = Redactor(environ={})
    out = redactor.redact_text(text)
    assert secret not in out and "[REDACTED" in out
    assert redactor.may_hold_secrets(json.dumps({"text": text}, ensure_ascii=False, separators=(",", ":")))


def test_enough_secret_formats_are_tried():
    assert len(SECRETS) >= 30 and len({secret for _, secret in SECRETS}) == len(SECRETS)


def test_secrets_beside_ordinary_text_are_taken_out_and_the_rest_kept():
    redactor = _redactor()
    value = {
        "config": {"mask_token": "<|MASK|>", "eos_token": "<|im_end|>", "hf_token": "tok-dict-1"},
        "argv": [
            "python3",
            "-m",
            "sglang.launch_server",
            "--speculative-num-draft-tokens",
            "16",
            "--mask-token",
            "<|MASK|>",
            "--api-key",
            "tok-argv-2",
            "--max-total-tokens",
            "8192",
        ],
        "text": "512-token prompts, 256 output tokens; HF token hf_HostEnvTokenAbcdefghijklmnopqrstu12",
        "apiKey": "tok-camel-3",
    }
    assert redactor.redact(value) == {
        "config": {"mask_token": "<|MASK|>", "eos_token": "<|im_end|>", "hf_token": "[REDACTED]"},
        "argv": [
            "python3",
            "-m",
            "sglang.launch_server",
            "--speculative-num-draft-tokens",
            "16",
            "--mask-token",
            "<|MASK|>",
            "--api-key",
            "[REDACTED]",
            "--max-total-tokens",
            "8192",
        ],
        "text": "512-token prompts, 256 output tokens; HF token [REDACTED:HF_TOKEN]",
        "apiKey": "[REDACTED]",
    }
    assert redact_argv(value["argv"]) == [
        "python3",
        "-m",
        "sglang.launch_server",
        "--speculative-num-draft-tokens",
        "16",
        "--mask-token",
        "<|MASK|>",
        "--api-key",
        "***",
        "--max-total-tokens",
        "8192",
    ]
