"""The recorder's fast path (`Redactor.may_hold_secrets`) never lets through an event that redaction would change.

Its per-pattern literals are read from the redaction patterns themselves, so a pattern added later is covered
without a second table to keep in step.
"""

from __future__ import annotations

import json

import pytest

from specops.transcripts import Redactor
from specops.transcripts.redaction import _GATED, _PATTERNS

SAMPLES = [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "git clone https://bot:pa55word@hub.internal/x",
    "Proxy-Authorization: Basic dXNlcjpwYXNz",
    "curl -H 'authorization: token abc123'",
    "sent with Bearer eyJhbGciOiJIUzI1NiJ9.payload",
    "hf download --token s3cret-value --password=x1y2",
    "mysql --db-passwd 'quoted value'",
    "--api_key=abc --apikey xyz --credentials c --secret s",
    "env HF_HUB_TOKEN=abc OPENAI_API_KEY=def AWS_ACCESS_KEY_ID=ghi DB_PASSWORD=jkl",
    "token hf_AbCdEfGhIjKlMnOpQrStUvWxYz here",
    "key sk-proj-ABCDEFGHIJKLMNOPQRSTUV here",
    "gh ghp_abcdefghijklmnopqrstuvwxyz0123456789 and github_pat_abcdefghijklmnopqrstuvwxyz0123456789",
    "aws AKIAABCDEFGHIJKLMNOP here",
    "slack xoxb-1234567890-abcdef",
    '{"hf_token": "s3cret-in-json", "mask_token": "<|MASK|>"}',
    "settings {'api_key': 'k-in-a-repr'}",
    "GET /api/models?access_token=tok-in-a-query&full=1 HTTP/1.1",
    "X-Api-Key: k-in-a-header",
    "> GET /v1/models\n> Cookie: session=abc123",
    # Letters `re` matches with ASCII ones when it ignores case: İ ı ſ K.
    "AUTHORİZATİON: Bearer abc123",
    "authorızation: x",
    "--paſſword=hunter2x",
    "--api-\u212aey=hunter2x",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_every_text_redaction_changes_takes_the_full_walk(text):
    redactor = Redactor(environ={})
    assert redactor.redact_text(text) != text, "a sample that holds no secret tests nothing"
    for line in (
        json.dumps({"text": text}, ensure_ascii=False, separators=(",", ":")),
        json.dumps({"argv": text.split(" ")}, ensure_ascii=False, separators=(",", ":")),
    ):
        if redactor.redact(json.loads(line)) != json.loads(line):
            assert redactor.may_hold_secrets(line), line


def test_each_pattern_is_caught_by_the_fast_path_on_its_own():
    """Every pattern has samples it matches, and the fast path sees each: no pattern is left out of the check."""
    redactor = Redactor(environ={})
    for pattern, _ in _PATTERNS:
        own = [s for s in SAMPLES if pattern.search(s)]
        assert own, f"no sample for {pattern.pattern!r}"
        for text in own:
            assert redactor.may_hold_secrets(json.dumps({"text": text}, ensure_ascii=False)), (pattern.pattern, text)


def test_every_pattern_has_literals_so_ordinary_events_skip_its_scan():
    """The fast path stays fast: each pattern is scanned only in text that holds one of its literals."""
    assert len(_GATED) == len(_PATTERNS)
    for pattern, literals, _ in _GATED:
        assert "" not in literals and min(map(len, literals)) >= 3, (pattern.pattern, literals)


def test_ordinary_events_take_the_fast_path():
    redactor = Redactor(environ={})
    event = {
        "type": "tool_result",
        "result": {"stdout": "Linux 6.1 x86_64\n8 GPUs, input_tokens 120", "exit_code": 0},
        "usage": {"input_tokens": 120},
        "note": "high throughput; the tokenizer is Qwen's",
    }
    assert not redactor.may_hold_secrets(json.dumps(event, separators=(",", ":")))
