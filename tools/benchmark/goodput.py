"""Goodput: the output a level delivered within latency targets, and the share of requests that met them.

A request is good when it completed (the server finished it: not failed, not cut by
the client at a timed level's end) with TTFT <= `ttft_ms` and TPOT <= `tpot_ms`
(TPOT = (e2e - TTFT) / (output tokens - 1); a one-token request has no TPOT and
meets that target, as in vLLM's `--goodput`). Targets apply to the latencies as the
client measured them: in the seconds of the host it ran on.

How the level's goodput in tok/s and its good fraction are taken is said in
LevelResult's field descriptions (models.py) and computed in statistics.py.

The default targets, DEFAULT_GOODPUT_TARGETS: TTFT 2000 ms, TPOT 50 ms.
- TTFT 2 s is MLPerf Inference's first-token limit for Llama-2-70B in its server
  scenario, the common "the answer has started" bound for chat serving; it leaves
  room for long prompts and queueing at high load, so TTFT alone rarely decides.
- TPOT 50 ms (20 tok/s per user) is an interactive decode target, between MLPerf's
  interactive (40 ms) and server (200 ms) TPOT limits, and several times reading
  speed. It is the one that binds: as concurrency rises, per-user decode speed falls
  past it, which is where speculative decoding's per-token gain matters, so the
  targets separate configurations where serving teams compare them.
Both are what vLLM's and AIPerf's `--goodput ttft:2000 tpot:50` would state; a caller
with its own service-level objectives passes other GoodputTargets.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field

# A latency at the target meets it: a float computed from rounded times may land a hair above an exact target.
_AT_TARGET = 1e-9


class GoodputTargets(BaseModel):
    """The latency targets a request must meet to count as good (milliseconds)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ttft_ms: float = Field(2000.0, gt=0, description="Time to first token at most this")
    tpot_ms: float = Field(50.0, gt=0, description="Time per output token after the first at most this")

    def words(self) -> str:
        return f"TTFT <= {self.ttft_ms:g} ms and TPOT <= {self.tpot_ms:g} ms"


DEFAULT_GOODPUT_TARGETS: Final = GoodputTargets()


def request_tpot_s(ttft_s: float, e2e_s: float, output_tokens: int) -> float:
    """(e2e - TTFT) / (tokens - 1); 0 for a one-token request (no gap to time)."""
    return (e2e_s - ttft_s) / (output_tokens - 1) if output_tokens > 1 else 0.0


def meets(ttft_s: float, tpot_s: float, targets: GoodputTargets) -> bool:
    """Whether a completed request's TTFT and TPOT (seconds) meet the targets; a value at a target meets it."""
    return ttft_s * 1e3 <= targets.ttft_ms * (1 + _AT_TARGET) and tpot_s * 1e3 <= targets.tpot_ms * (1 + _AT_TARGET)


def goodput_method(targets: GoodputTargets) -> str:
    """The goodput sentence of a benchmark's method."""
    return (
        f" Goodput: a request is good when the server finished it with {targets.words()} (a "
        "one-token request meets the TPOT target); goodput tok/s = output tok/s x the share of the tokens completed "
        "requests streamed in the same window that good ones streamed (exactly good tokens / window when no request "
        "was cut); good fraction = good / (completed + failed), cut requests not judged."
    )
