"""SGLang-like log lines: `[YYYY-mm-dd HH:MM:SS TP0] message` on stderr, flushed per line.

SGLang logs through Python logging with the process role in brackets: the HTTP
server has none, the scheduler of each rank says `TP0` (with EP `TP0 EP0`, with
PP `PP0 TP0`, with DP attention `DP0 TP0 EP0`). Only one scheduler is echoed here:
rank 0's, or on a node of rank >= 1 of a multi-node server its first one (`TP8` on the
second node of tp 16 over two nodes).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class ServerLog:
    def __init__(
        self,
        stream: TextIO | None = None,
        scheduler_tag: str = "TP0",
        level: str = "info",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._stream = stream or sys.stderr
        self.clock = clock  # the host's clock (a sim world's modelled clock): what the stamps say
        self.scheduler_tag = scheduler_tag
        self._quiet = False
        self.set_level(level)

    def set_level(self, level: str) -> None:
        """SGLang's --log-level: at warning and above only warnings and raw text are printed."""
        self._quiet = level.lower() in ("warning", "error", "critical")

    def stamp(self) -> str:
        """The host's time as SGLang's log lines show it."""
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.clock()))

    def _emit(self, line: str) -> None:
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except (BrokenPipeError, ValueError):  # the log reader went away; keep serving
            pass

    def server(self, message: str) -> None:
        if not self._quiet:
            self._emit(f"[{self.stamp()}] {message}")

    def scheduler(self, message: str) -> None:
        if not self._quiet:
            self._emit(f"[{self.stamp()} {self.scheduler_tag}] {message}")

    def warning(self, message: str, scheduler: bool = False) -> None:
        # SGLang's format has no level name: a warning reads like any other line,
        # but it is still printed at --log-level warning.
        tag = f" {self.scheduler_tag}" if scheduler else ""
        self._emit(f"[{self.stamp()}{tag}] {message}")

    def uvicorn(self, message: str) -> None:
        if not self._quiet:
            self._emit(f"[{self.stamp()}] INFO:     {message}")

    def raw(self, text: str) -> None:
        """Text printed as it is: tracebacks, argparse errors, NCCL lines."""
        self._emit(text.rstrip("\n"))


def scheduler_tag(
    tp: int, ep: int, pp: int, dp_attention: bool, *, tp_rank: int = 0, pp_rank: int = 0, dp: int = 1
) -> str:
    """The tag of the scheduler a log echoes: rank 0's, or on another node of a multi-node server its first
    scheduler's (`tp_rank`, `pp_rank`); EP and attention-DP ranks are carved out of the TP rank as SGLang does."""
    parts = []
    if dp_attention:
        parts.append(f"DP{tp_rank // max(tp // max(dp, 1), 1)}")
    if pp > 1:
        parts.append(f"PP{pp_rank}")
    parts.append(f"TP{tp_rank}")
    if ep > 1:
        parts.append(f"EP{tp_rank // max(tp // ep, 1)}")
    return " ".join(parts)
