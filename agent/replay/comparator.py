"""Comparing the events a replay produces with the recorded ones, as they are written.

The stream is cut at model turns (model_request, model_response) and run
start/end, which must come in the same order. Between two turns, tool calls
may run concurrently and finish in any order, so the events there are matched
as a set: each must equal one recorded event of that stretch not yet matched.
What an event is compared on depends on its type (`_essence`); everything
passes through the Masker first. Live comparisons (real tools) look only at
what changes the run's course: the calls made, ok vs error and the error kind,
the plan, the status, not at measured numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from specops.transcripts import Event, EventBase, RunStartEvent, ToolResultEvent

from .divergence import Divergence
from .masking import Masker

_TURNS = frozenset({"run_start", "model_request", "model_response", "run_end"})
_OUTPUT_TOOL = "final_result"
_ENVELOPE = ("seq", "ts", "run_id", "schema_version")
# What a model response carries besides what the model said and called: which provider and model answered,
# where, when, why it stopped, at what cost. A replay cannot always reproduce it (a recording from before responses
# were served whole, a provider that numbers its answers), and it never changes the run's course.
_PROVIDER_METADATA = frozenset(
    {
        "provider_name",
        "provider_url",
        "provider_details",
        "provider_response_id",
        "finish_reason",
        "timestamp",
        "usage",
        "model_name",
        "run_id",
        "conversation_id",
        "history_digest",
    }
)
_PART_METADATA = frozenset({"provider_name", "provider_details"})


@dataclass
class _Stretch:
    turn: Event
    rest: list[Event] = field(default_factory=list)


def _reproduced(events: list[Event]) -> list[Event]:
    """The recorded events a replay can reproduce: a replay runs a resumed run in one go, so the marks the resume
    left (its resumed event, the host opened again) are not compared."""
    kept: list[Event] = []
    host_seen = False
    for event in events:
        if event.type == "resumed" or (event.type == "host_opened" and host_seen):
            continue
        host_seen = host_seen or event.type == "host_opened"
        kept.append(event)
    return kept


def _stretches(events: list[Event]) -> list[_Stretch]:
    out: list[_Stretch] = []
    for event in _reproduced(events):
        if event.type in _TURNS or not out:
            out.append(_Stretch(event))
        else:
            out[-1].rest.append(event)
    return out


class EventComparator:
    """Feed it each replayed event (`check`), then `finish`; the first Divergence is returned, else None.

    `until`: compare only events before this seq (a fork hands over there).
    """

    def __init__(self, recorded: list[Event], masker: Masker, *, until: int | None = None) -> None:
        self._stretches = _stretches(recorded)
        self._masker = masker
        self._live = masker.live
        self._until = until
        self._index = -1
        self._pending: list[Event] = []
        self._last_seq = -1
        self._keys: dict[int, tuple[EventBase, str]] = {}
        self._dumped: dict[int, tuple[EventBase, dict[str, Any]]] = {}

    def check(self, got: EventBase, written: dict[str, Any] | None = None) -> Divergence | None:
        """`written`: the event's JSON as the recorder wrote it, when at hand (saves dumping it again)."""
        if self._until is not None and got.seq >= self._until:
            return None
        if written is not None:
            self._dumped[id(got)] = (got, written)
        self._last_seq = got.seq
        if got.type in _TURNS:
            if self._pending:
                return self._diverged(
                    self._pending[0], got, f"expected a {self._pending[0].type} before this {got.type}"
                )
            self._index += 1
            if self._index >= len(self._stretches):
                return self._diverged(None, got, f"the recording ended, but today's code went on with a {got.type}")
            stretch = self._stretches[self._index]
            self._pending = list(stretch.rest)
            return self._compare(stretch.turn, got)
        have = self._key(got)
        for i, candidate in enumerate(self._pending):
            if candidate.type == got.type and self._key(candidate) == have:
                del self._pending[i]
                return None
        like = [e for e in self._pending if e.type == got.type and _same_subject(e, got)]
        like = like or [e for e in self._pending if e.type == got.type]
        if like:
            return self._compare(like[0], got) or self._diverged(like[0], got, f"{got.type} differs")
        expected = self._pending[0] if self._pending else self._next_turn()
        what = f"expected {expected.type}" if expected is not None else "the recording has nothing more here"
        return self._diverged(expected, got, f"{what}, got {_label(got)}")

    def finish(self) -> Divergence | None:
        """After the replayed run ended: what of the recording it never reached."""
        if self._until is not None:
            return None
        missing = self._pending[0] if self._pending else self._next_turn()
        if missing is None:
            return None
        return self._diverged(missing, None, f"the replay ended, but the recording goes on with {_label(missing)}")

    # -- comparing one pair ------------------------------------------------------------------------

    def _compare(self, expected: Event, got: EventBase) -> Divergence | None:
        if expected.type != got.type:
            return self._diverged(expected, got, f"expected {_label(expected)}, got {_label(got)}")
        if self._key(expected) == self._key(got):
            return None
        want, have = self._essence(expected), self._essence(got)
        return Divergence(seq=expected.seq, why=_why(expected, want, have), expected=want, got=have)

    def _key(self, event: EventBase) -> str:
        """What an event is compared on, masked, as one string (cached: recorded events are compared often)."""
        key = self._keys.get(id(event))
        if key is None or key[0] is not event:
            key = (event, self._masker.canonical(self._raw_essence(event)))
            self._keys[id(event)] = key
        return key[1]

    def _essence(self, event: EventBase) -> dict[str, Any]:
        """What an event is compared on, masked, as JSON (for the divergence's diff)."""
        essence: dict[str, Any] = json.loads(self._key(event))
        return essence

    def _raw_essence(self, event: EventBase) -> dict[str, Any]:
        dumped = self._dumped.pop(id(event), None)
        if dumped is not None and dumped[0] is event:
            data = {k: v for k, v in dumped[1].items() if k not in _ENVELOPE}
        else:
            data = event.model_dump(mode="json", exclude=set(_ENVELOPE))
        kind = event.type
        if kind == "run_start":
            data = {"goal": data["goal"], "policy": data["policy"]["name"]}
            if not self._live:
                assert isinstance(event, RunStartEvent), "a run_start event"
                data["host"] = event.host.get("spec")
        elif kind == "model_request":
            if self._live:  # the tool results in it are live ones
                data = {"type": kind}
            else:
                data = {"history": data["history"], "messages": [_sent(m) for m in data["messages"]]}
        elif kind == "model_response":
            data = {"parts": [_part(p, self._live) for p in data["response"].get("parts", [])]}
        elif kind == "tool_result":
            error = data.get("error") or {}
            data = {"call_id": data["call_id"], "tool": data["tool"], "ok": data["ok"], "error_kind": error.get("kind")}
            if not self._live:
                assert isinstance(event, ToolResultEvent), "a tool_result event"
                data.update(result=event.result, error=error)
        elif kind == "note":
            data = {"text": data["text"].split(":", 1)[0] if self._live else data["text"]}
        elif kind == "host_opened":
            data = {"spec": data["host"]["spec"]}  # where it opened is the machine's (a world's new directory)
        elif kind == "error":
            data = {
                "where": data["where"],
                "kind": data["kind"],
                **({} if self._live else {"message": data["message"]}),
            }
        elif kind == "run_end":
            data = {"status": data["status"], **({} if self._live else {"reason": data["reason"]})}
        elif kind == "approval":
            data = {"asked": data["asked"], "approved": data["approved"], "by": data["by"]}
        return data

    def _next_turn(self) -> Event | None:
        following = self._index + 1
        return self._stretches[following].turn if following < len(self._stretches) else None

    def _diverged(self, expected: Event | None, got: EventBase | None, why: str) -> Divergence:
        seq = expected.seq if expected is not None else (got.seq if got is not None else self._last_seq + 1)
        return Divergence(
            seq=seq,
            why=why,
            expected=self._essence(expected) | {"type": expected.type} if expected is not None else None,
            got=self._essence(got) | {"type": got.type} if got is not None else None,
        )


def _sent(message: dict[str, Any]) -> dict[str, Any]:
    """A message sent to the model, as compared: a response in it without its provider metadata."""
    if message.get("kind") != "response":
        return message
    out = {k: v for k, v in message.items() if k not in _PROVIDER_METADATA}
    out["parts"] = [{k: v for k, v in p.items() if k not in _PART_METADATA} for p in message.get("parts") or []]
    return out


def _part(part: dict[str, Any], live: bool) -> dict[str, Any]:
    """A response part as compared: the call (tool, id, arguments), the text or the thinking; live, not the prose
    (the final answer's words, the text, the thinking), which a live policy words from live numbers."""
    kind = part.get("part_kind")
    if kind == "tool-call":
        args = _args(part.get("args"))
        if live and part.get("tool_name") == _OUTPUT_TOOL and isinstance(args, dict):
            args = {"status": args.get("status")}
        return {"tool": part.get("tool_name"), "id": part.get("tool_call_id"), "args": args}
    if kind == "text":
        return {"text": None if live else part.get("content")}
    if kind == "thinking":
        return {"part_kind": kind, "thinking": None if live else part.get("content")}
    return {k: v for k, v in part.items() if k not in _PART_METADATA}


def _args(args: Any) -> Any:
    """A call's arguments: a model over the wire gives them as a JSON string, the playbook as a dict; both alike."""
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def _same_subject(a: EventBase, b: EventBase) -> bool:
    return getattr(a, "call_id", None) == getattr(b, "call_id", None) and getattr(a, "tool", None) == getattr(
        b, "tool", None
    )


def _label(event: EventBase) -> str:
    tool = getattr(event, "tool", None)
    return f"{event.type} {tool}" if tool else event.type


def _why(expected: Event, want: dict[str, Any], have: dict[str, Any]) -> str:
    if expected.type == "model_response":

        def calls(d: dict[str, Any]) -> list[str]:
            return [p.get("tool") or p.get("part_kind") or "text" for p in d.get("parts", [])]

        if calls(want) != calls(have):
            return f"the policy answered differently: recorded {calls(want)}, today {calls(have)}"
        return "the policy called the same tools with different arguments"
    if expected.type == "tool_result":
        if want.get("ok") != have.get("ok") or want.get("error_kind") != have.get("error_kind"):
            return (
                f"{want.get('tool')} ended differently: recorded "
                f"{'ok' if want.get('ok') else want.get('error_kind')}, today {'ok' if have.get('ok') else have.get('error_kind')}"
            )
        return f"{want.get('tool')} returned a different result"
    if expected.type == "tool_call":
        return f"{_label(expected)} was called with different arguments"
    if expected.type == "model_request":
        return "the model was sent different messages (prompt, instructions or history)"
    changed = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
    return f"{expected.type} differs in {', '.join(changed)}"
