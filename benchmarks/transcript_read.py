"""How long reading a 1,000-event transcript takes (issue 5: replaying 1,000 events must take under 2 s).

Writes a transcript shaped like an agent run through the real Recorder: a
run_start, then rounds of model_request (the whole history so far, as
pydantic-ai sends it; the recorder stores what an earlier request already
sent as a reference), model_response, tool_call and
tool_result (a couple of KiB of output), with a todo change every few rounds;
then times `read_transcript` on it (best of a few runs) and, separately,
turning every request's messages back into pydantic-ai objects.

    .venv/bin/python benchmarks/transcript_read.py [--events 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage  # noqa: E402

from specops.transcripts import (  # noqa: E402
    ModelRequestEvent,
    PolicyInfo,
    Recorder,
    RunEndEvent,
    RunStartEvent,
    TodoItem,
    ToolCallEvent,
    ToolResultEvent,
    read_transcript,
)

TOOL_OUTPUT = "\n".join(
    f"[2026-12-02 10:{i // 60:02d}:{i % 60:02d}] Decode batch. #running-req: 8, gen throughput (token/s): 812.4"
    for i in range(24)
)


def write_run(path: Path, events: int, *, fsync: bool) -> float:
    started = time.perf_counter()
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content="deploy z-lab/Qwen3-8B-DFlash-b16 and benchmark it")])
    ]
    plan = [TodoItem(id=str(i), content=f"step {i}", status="pending") for i in range(8)]
    with Recorder(path, "bench-run", environ={}, fsync=fsync) as recorder:
        recorder.record(RunStartEvent, goal="deploy and benchmark", policy=PolicyInfo(name="playbook"))
        round_no = 0
        while recorder.next_seq + 6 < events:  # a round writes at most 5 events; run_end is the last
            call_id = f"call-{round_no}"
            recorder.model_request(history)
            response = ModelResponse(
                parts=[
                    TextPart(content=f"Round {round_no}: checking the server log before the next step."),
                    ToolCallPart(
                        tool_name="shell", args={"argv": ["tail", "-n", "24", "/data/server.log"]}, tool_call_id=call_id
                    ),
                ],
                usage=RequestUsage(input_tokens=1000 + 300 * round_no, output_tokens=40),
                model_name="playbook",
            )
            recorder.model_response(response, duration_s=0.01)
            recorder.record(
                ToolCallEvent, call_id=call_id, tool="shell", args={"argv": ["tail", "-n", "24", "/data/server.log"]}
            )
            result = {"exit_code": 0, "stdout": TOOL_OUTPUT, "stderr": ""}
            recorder.record(
                ToolResultEvent,
                call_id=call_id,
                tool="shell",
                ok=True,
                result=result,
                duration_s=0.05,
                host="sim:seed-ct200",
            )
            history += [
                response,
                ModelRequest(parts=[ToolReturnPart(tool_name="shell", content=result, tool_call_id=call_id)]),
            ]
            if round_no % 5 == 4:
                previous, plan = (
                    plan,
                    [
                        item.model_copy(update={"status": "completed"}) if int(item.id) <= round_no // 5 else item
                        for item in plan
                    ],
                )
                recorder.todo_change(plan, previous=previous)
            round_no += 1
        while recorder.next_seq < events - 1:
            recorder.note("padding to the exact event count")
        recorder.record(RunEndEvent, status="completed", report={"benchmarks": []}, duration_s=1.0)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "transcript.jsonl"
        write_s = write_run(path, args.events, fsync=True)
        read_s = float("inf")
        for _ in range(args.repeat):
            started = time.perf_counter()
            read = read_transcript(path)
            read_s = min(read_s, time.perf_counter() - started)
        started = time.perf_counter()
        requests = [event for event in read.events if isinstance(event, ModelRequestEvent)]
        for event in requests:
            read.model_messages_sent(event)
        decode_s = time.perf_counter() - started
        max_sent = max(len(read.messages_sent(event)) for event in requests)
        count = len(read.events)
        size_mib = path.stat().st_size / 2**20
    print(
        f"transcript: {count} events, {size_mib:.1f} MiB ({len(requests)} model requests, up to {max_sent} messages each)"
    )
    print(f"write (fsync per event): {write_s:.2f} s, {write_s / count * 1e3:.2f} ms/event")
    print(f"read_transcript: {read_s:.3f} s (best of {args.repeat}), {read_s / count * 1e6:.0f} us/event")
    # Quadratic by nature (every request decoded whole): a replay that compares the
    # serialised messages (messages_sent) instead of objects does not pay it.
    print(f"decode every request's full messages into pydantic-ai objects: {decode_s:.3f} s")
    print(f"budget for replaying {count} events: 2 s; reading uses {read_s / 2 * 100:.0f}% of it")


if __name__ == "__main__":
    main()
