"""Short handles: the servers and downloads this run started, named `s1`, `d1`, ... in the order they started.

A model passes `"s1"` back to server_status or stop_server instead of the whole
RunningServer it was given (11 fields, the argv, the config): what it sends
back is short and cannot be edited into a handle of something else. The ids
count up per run, so a replay against a live host (which starts the same
things in the same order) gives each the id the recorded run gave it.

The full objects stay in the transcript and the report. A resumed run
rebuilds its handles from the recorded results (`restore`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import ErrorKind, InvalidToolInput

if TYPE_CHECKING:
    from .download.models import DownloadHandle
    from .sglang.handle import RunningServer

SERVER_PREFIX = "s"
DOWNLOAD_PREFIX = "d"


class UnknownHandle(InvalidToolInput):
    """An id no server or download of this run carries."""

    kind = ErrorKind.UNKNOWN_HANDLE


@dataclass
class RunHandles:
    """The run's servers and downloads by short id; a stopped server keeps its id, marked stopped."""

    servers: dict[str, RunningServer] = field(default_factory=dict)
    downloads: dict[str, DownloadHandle] = field(default_factory=dict)
    stopped: set[str] = field(default_factory=set)

    def add_server(self, server: RunningServer) -> RunningServer:
        """`server` with the next id (s1, s2, ...), remembered."""
        named = server.model_copy(update={"id": f"{SERVER_PREFIX}{len(self.servers) + 1}"})
        self.servers[named.id] = named
        return named

    def add_download(self, download: DownloadHandle) -> DownloadHandle:
        named = download.model_copy(update={"id": f"{DOWNLOAD_PREFIX}{len(self.downloads) + 1}"})
        self.downloads[named.id] = named
        return named

    def server(self, server_id: str) -> RunningServer:
        return _named(
            self.servers,
            server_id,
            "server",
            "pass the id launch_server or restart_server returned (e.g. 's1'); without one, use `port`",
        )

    def download(self, download_id: str) -> DownloadHandle:
        return _named(self.downloads, download_id, "download", "pass the id start_download returned (e.g. 'd1')")

    def mark_stopped(self, server_id: str) -> None:
        self.stopped.add(server_id)

    def running(self) -> list[RunningServer]:
        return [s for i, s in self.servers.items() if i not in self.stopped]

    def restore(self, outcomes: Iterable[tuple[str, bool, dict[str, Any]]]) -> None:
        """Rebuild from recorded (tool, ok, result or error record) triples, in call order (resume)."""
        from .download.models import DownloadHandle
        from .sglang.handle import RunningServer

        for tool, ok, result in outcomes:
            if not ok:  # a restart whose relaunch failed has still stopped the old server
                stopped = result.get("details", {}).get("stopped_server") if tool == "restart_server" else None
                if stopped:
                    self.mark_stopped(str(stopped))
            elif tool == "launch_server":
                self._keep(RunningServer.model_validate(result))
            elif tool == "restart_server":
                stopped = (result.get("stopped") or {}).get("server")
                if stopped:
                    self.mark_stopped(str(stopped))
                self._keep(RunningServer.model_validate(result["server"]))
            elif tool == "stop_server" and result.get("server"):
                self.mark_stopped(str(result["server"]))
            elif tool == "start_download":
                handle = DownloadHandle.model_validate(result)
                self.downloads[handle.id] = handle

    def _keep(self, server: RunningServer) -> None:
        self.servers[server.id] = server


T = TypeVar("T")


def _named(items: dict[str, T], wanted: str, what: str, remedy: str) -> T:
    """items[wanted], or UnknownHandle naming the ids the run has."""
    if wanted not in items:
        known = f"its {what}s: {', '.join(sorted(items))}" if items else f"it has no {what}s"
        raise UnknownHandle(
            f"no {what} {wanted!r} in this run ({known})", remedy=remedy, details={"id": wanted, "known": sorted(items)}
        )
    return items[wanted]
