"""requests.jsonl: every benchmarked request, one JSON line each, with its configuration and level.

Where the rows come from: the benchmark tool keeps each level's requests in its
result (LevelResult.requests, compact columns), so they are recorded in the
transcript's tool_result like every other figure, and a replay, which serves the
recorded results, gives the same rows. The model never sees them (the tool's view,
for_model.py, is a per-level table). The report reads them back from the
evidence, names their configuration as the benchmark rows do, and writes them
beside report.json; report.json itself leaves them out (Report.requests is
excluded from it). Results recorded before the tool kept requests have none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from specops.tools.benchmark.goodput import request_tpot_s
from specops.tools.benchmark.models import STATUS_LETTERS, LevelRequests

from .evidence import Evidence
from .schema import RequestRow
from .servers import ServerTimeline

REQUESTS_FILE = "requests.jsonl"


def _tpot(log: LevelRequests, i: int, status: str) -> float | None:
    ttft, e2e, tokens = log.ttft_s[i], log.e2e_s[i], log.output_tokens[i]
    if status != "ok" or ttft is None or e2e is None or tokens is None or tokens < 2:
        return None
    return round(request_tpot_s(ttft, e2e, tokens), 7)


def level_request_rows(log: LevelRequests, *, config: str, concurrency: int, seq: int, valid: bool) -> list[RequestRow]:
    rows = []
    for i, letter in enumerate(log.status):
        status, good = STATUS_LETTERS[letter]
        rows.append(
            RequestRow(
                config=config,
                concurrency=concurrency,
                seq=seq,
                level_valid=valid,
                index=i,
                start_s=log.start_s[i],
                scheduled_s=log.scheduled_s[i] if log.scheduled_s is not None else None,
                ttft_s=log.ttft_s[i],
                e2e_s=log.e2e_s[i],
                tpot_s=_tpot(log, i, status),
                output_tokens=log.output_tokens[i],
                status=status,
                good=good,
                spec_verify_ct=log.spec_verify_ct[i] if log.spec_verify_ct is not None else None,
            )
        )
    return rows


def request_rows(evidence: Evidence, timeline: ServerTimeline) -> list[RequestRow]:
    """Every request of every benchmark level the evidence holds, in transcript order, invalid levels included."""
    rows: list[RequestRow] = []
    for parsed in evidence.benchmarks:
        result = parsed.value
        config = timeline.at(result.port, parsed.call_seq, result.speculative_algorithm).config
        for level in result.levels:
            if level.requests is not None:
                rows += level_request_rows(
                    level.requests, config=config, concurrency=level.concurrency, seq=parsed.seq, valid=level.valid
                )
    return rows


def write_requests_jsonl(rows: Sequence[RequestRow], path: Path) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row.model_dump(mode="json"), separators=(",", ":")) + "\n")
    return path
