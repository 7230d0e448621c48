"""Reading version-1 transcripts: the notes that carried a protocol become the events version 2 has.

Version 1 wrote what a run opened as a note `host opened: {json}` and a resume
as a note `resumed after event N[ (its torn last line was dropped)]; policy P
[at URL]; K call(s) of the last turn to carry out`. Read back, they are the
typed HostOpenedEvent and ResumedEvent, so nothing past the reader knows the
old wording. Other notes stay notes.
"""

from __future__ import annotations

import json
import re

from .events import Event, HostOpenedEvent, NoteEvent, OpenedHost, ResumedEvent

_HOST_OPENED = "host opened: "
_RESUMED = re.compile(
    r"resumed after event (?P<seq>\d+)(?P<torn> \(its torn last line was dropped\))?; policy (?P<policy>\S+)"
    r"(?: at (?P<url>\S+))?; (?P<pending>\d+) call\(s\) of the last turn to carry out"
)


def upgraded(event: Event) -> Event:
    """A version-1 note in its typed form; any other event as it is."""
    if not isinstance(event, NoteEvent) or event.schema_version != "1":
        return event
    envelope = {"seq": event.seq, "ts": event.ts, "run_id": event.run_id, "schema_version": "1"}
    if event.text.startswith(_HOST_OPENED):
        try:
            described = OpenedHost.model_validate(json.loads(event.text[len(_HOST_OPENED) :]))
        except ValueError:
            return event
        return HostOpenedEvent(host=described, **envelope)
    found = _RESUMED.fullmatch(event.text)
    if found is not None:
        return ResumedEvent(
            after_seq=int(found["seq"]),
            torn_tail_dropped=bool(found["torn"]),
            policy=found["policy"],
            base_url=found["url"],
            pending_calls=int(found["pending"]),
            **envelope,
        )
    return event
