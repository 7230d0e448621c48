"""The host of an offline replay: none. It answers as the recorded host did where the loop asks (home,
writable roots, the host_opened event) and refuses every command, so nothing can reach a real machine."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

from specops.tools.context import ToolContext
from specops.tools.hosts import Host, HostError, HostRequest

from ..host import HostOpener, RunHost
from .recorded_run import RecordedRun

_PROMPT_HOST = re.compile(r"\(home (?P<home>[^;]+); this run may write under (?P<roots>[^)]*)\)")


class NoHostInReplay(HostError):
    """A replay touched the host: everything a tool does is served from the recording instead."""


class OfflineHost(Host):
    def __init__(self, spec: str) -> None:
        self.spec = spec

    def _refuse(self, what: str) -> NoHostInReplay:
        return NoHostInReplay(
            f"replay has no host: {what} was not run (tool results come from the recording)", host=self.spec
        )

    def run(self, argv: Sequence[str], **_: Any) -> NoReturn:
        raise self._refuse(" ".join(argv))

    def read_file(self, path: str) -> bytes:
        raise self._refuse(f"reading {path}")

    def write_file(self, path: str, data: bytes, *, mode: int | None = None) -> None:
        raise self._refuse(f"writing {path}")

    def exists(self, path: str) -> bool:
        raise self._refuse(f"looking for {path}")

    def forward(self, port: int) -> NoReturn:
        raise self._refuse(f"forwarding port {port}")

    def close(self) -> None:
        pass


def recorded_host(recorded: RecordedRun) -> dict[str, Any]:
    """The recorded host's description; transcripts from before home and roots were noted get them from the prompt."""
    described = dict(recorded.host)
    if "home" not in described and recorded.requests:
        match = _PROMPT_HOST.search(str(recorded.requests[0].messages))
        if match:
            described["home"] = match["home"]
            described["allowed_roots"] = [r.strip() for r in match["roots"].split(",") if r.strip()]
    described.setdefault("spec", recorded.start.host.get("spec", "offline"))
    described.setdefault("opened", described["spec"])
    described.setdefault("home", "/root")
    described.setdefault("allowed_roots", [described["home"]])
    return described


def offline_opener(described: dict[str, Any]) -> HostOpener:
    """A HostOpener that yields the described host (`recorded_host`), offline."""

    @contextmanager
    def open_offline(request: HostRequest) -> Iterator[RunHost]:
        host = OfflineHost(str(described["opened"]))
        context = ToolContext(host=host, home=str(described["home"]), allowed_roots=tuple(described["allowed_roots"]))
        yield RunHost(spec=request.spec, host=host, context=context, sim=dict(described.get("sim") or {}))

    return open_offline
